/*
Copyright 2026 The myapp-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
)

// TestTheBannerListsTheBackupsOfTheLocalS3Server starts the S3 server as
// `make run BACKUP_PROVIDER=s3` does, stores a backup through a client built
// from the flags devenv gives the manager (keys read from the files it
// wrote), then runs each command the banner prints, as a person would
// paste it: the file of the backup is found, reads as the backup's
// content, and the signed list names its key.
func TestTheBannerListsTheBackupsOfTheLocalS3Server(t *testing.T) {
	if _, err := controlplane.VersityGWPath(); err != nil {
		controlplane.RequireS3(t, err)
	}
	addr, err := controlplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	srv, args, err := startS3(t.Context(), addr, t.TempDir())
	controlplane.RequireS3(t, err)
	t.Cleanup(func() { stopS3(srv) })

	flags := flagsOf(args)
	for _, want := range []string{"backup-provider", "s3-endpoint", "s3-bucket", "s3-region", "s3-path-style",
		"s3-access-key-id-file", "s3-secret-access-key-file"} {
		if _, ok := flags[want]; !ok {
			t.Fatalf("the manager gets no --%s: %v", want, args)
		}
	}
	all := managerArgs("kubeconfig", nil, args, nil)
	if slices.ContainsFunc(all, func(a string) bool { return strings.HasPrefix(a, "--backup-url") }) {
		t.Fatalf("with s3 the manager gets no --backup-url: %v", all)
	}

	c, err := s3.New(s3.Config{
		ReadContent: backupcontent.Identity,
		Endpoint:    flags["s3-endpoint"], Bucket: flags["s3-bucket"], Region: flags["s3-region"], PathStyle: true,
		OwnerID:     "local",
		Credentials: s3.FileCredentials(flags["s3-access-key-id-file"], flags["s3-secret-access-key-file"], ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	owner := "backupconfig/bc-uid"
	key := owner + "/manual/app-uid/k"
	payload, err := backupcontent.EncodePayload(&backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{Trigger: "Manual", MyAppUID: "app-uid", MyAppGeneration: 1, TakenAt: time.Now(),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: "default", Name: "web-nightly", UID: "bc-uid"},
			OwnerID:      "local", Owner: owner, IdempotencyKey: key},
		MyApp: backupcontent.AppSnapshot{APIVersion: "apps.myapp.dev/v1alpha1", Kind: "MyApp", Namespace: "default", Name: "web"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Start(t.Context(), backup.StartRequest{App: "default-web", Owner: owner, IdempotencyKey: key,
		Namespace: "default", Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	objectKey := "local/" + b.ID + ".json.gz"

	var commands []string
	// A command continued on the next line is one command.
	banner := strings.ReplaceAll(s3Banner(srv), "\\\n", " ")
	for _, line := range strings.Split(banner, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "find ") || strings.HasPrefix(line, "gunzip ") || strings.HasPrefix(line, "curl ") {
			// The comment after the command is for the reader.
			cmd, _, _ := strings.Cut(line, "  #")
			commands = append(commands, cmd)
		}
	}
	if len(commands) != 3 {
		t.Fatalf("the banner shows %d commands, want find, gunzip and curl:\n%s", len(commands), s3Banner(srv))
	}
	want := []string{filepath.Join(srv.DataDir, s3Bucket, objectKey), `"formatVersion":1`, "<Key>" + objectKey + "</Key>"}
	for i, command := range commands {
		out, err := exec.Command("sh", "-c", command).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", command, err, out)
		}
		if !strings.Contains(string(out), want[i]) {
			t.Errorf("%s printed\n%s\nwithout %s", command, out, want[i])
		}
	}
}

// TestMakeRunPassesTheProviders dry-runs `make run` with each DNS_PROVIDER
// and BACKUP_PROVIDER that starts a server: devenv is asked for the provider
// named (http by default), and each server's binary is a prerequisite of its
// own provider only.
func TestMakeRunPassesTheProviders(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	closed, err := controlplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	// A local cluster would build the control plane first; a missing one
	// changes nothing of what is asked of devenv.
	kubeconfig := writeKubeconfig(t, "http://"+closed)
	dir := t.TempDir()
	missing := []string{"VERSITYGW=" + filepath.Join(dir, "versitygw"),
		"EXTERNAL_DNS_WEBHOOK=" + filepath.Join(dir, "external-dns-webhook")}
	// What make prints when it would build each server.
	builds := map[string]string{"versitygw": "github.com/versity/versitygw/cmd/versitygw",
		"the webhook server": "hack/external-dns-webhook"}
	for _, tc := range []struct {
		vars  []string
		want  []string
		build string
	}{
		{want: []string{"--dns-provider=http", "--backup-provider=http"}},
		{vars: []string{"BACKUP_PROVIDER=s3"}, want: []string{"--backup-provider=s3"}, build: "versitygw"},
		{vars: []string{"DNS_PROVIDER=webhook"}, want: []string{"--dns-provider=webhook"}, build: "the webhook server"},
	} {
		out := dryRunMake(t, "run", kubeconfig, "", append(tc.vars, missing...)...)
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("make -n run %v does not pass %s to devenv:\n%s", tc.vars, want, out)
			}
		}
		for server, marker := range builds {
			if got := strings.Contains(out, marker); got != (server == tc.build) {
				t.Errorf("make -n run %v builds %s: %t, want %t:\n%s", tc.vars, server, got, server == tc.build, out)
			}
		}
	}
}

// flagsOf are the values of the --name=value flags in args, by name.
func flagsOf(args []string) map[string]string {
	flags := map[string]string{}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		flags[name] = value
	}
	return flags
}
