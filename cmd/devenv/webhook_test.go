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
	"slices"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// TestTheBannerListsTheRecordsOfTheLocalWebhookServer starts external-dns's
// webhook server as `make run DNS_PROVIDER=webhook` does, writes the sample
// MyApp's record through a client built from the flags devenv gives the
// manager, then runs each command the banner prints, as a person would
// paste it: both show the record, the second only the sample's name.
func TestTheBannerListsTheRecordsOfTheLocalWebhookServer(t *testing.T) {
	addr, err := controlplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	w, args, err := startWebhook(t.Context(), addr, t.TempDir())
	controlplane.RequireWebhookServer(t, err)
	t.Cleanup(func() { stopWebhook(w) })

	flags := flagsOf(args)
	if flags["dns-provider"] != "webhook" || flags["dns-webhook-url"] == "" || flags["dns-webhook-zone"] != bindZone {
		t.Fatalf("the manager's DNS flags are %v, want --dns-provider=webhook with a URL and zone %s", args, bindZone)
	}
	all := managerArgs("kubeconfig", args, nil, nil)
	if slices.ContainsFunc(all, func(a string) bool { return strings.HasPrefix(a, "--dns-url") }) {
		t.Fatalf("with webhook the manager gets no --dns-url: %v", all)
	}

	c, err := webhook.New(webhook.Config{URL: flags["dns-webhook-url"], Zone: flags["dns-webhook-zone"]})
	if err != nil {
		t.Fatal(err)
	}
	web := extdns.Record{Name: "web." + bindZone, Type: extdns.TypeA, Value: "192.0.2.10", TTL: 300, Owner: "local/default/web"}
	other := extdns.Record{Name: "api." + bindZone, Type: extdns.TypeA, Value: "192.0.2.11", TTL: 300, Owner: "local/default/api"}
	for _, r := range []extdns.Record{web, other} {
		if _, err := c.Upsert(t.Context(), r); err != nil {
			t.Fatalf("upsert %s through the flags devenv gives: %v", r.Name, err)
		}
	}

	var commands []string
	for _, line := range strings.Split(webhookBanner(w), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "curl ") {
			// The comment after the command is for the reader.
			cmd, _, _ := strings.Cut(line, "  #")
			commands = append(commands, cmd)
		}
	}
	if len(commands) != 2 {
		t.Fatalf("the banner shows %d commands, want two curl lines:\n%s", len(commands), webhookBanner(w))
	}
	for i, command := range commands {
		out, err := exec.Command("sh", "-c", command).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", command, err, out)
		}
		if !strings.Contains(string(out), `"web.`+bindZone+`"`) || !strings.Contains(string(out), web.Value) {
			t.Errorf("%s printed\n%s\nwithout the sample's record", command, out)
		}
		if showsOther := strings.Contains(string(out), other.Name); showsOther != (i == 0) {
			t.Errorf("%s shows %s: %t, want %t (the first lists all, the second only the sample):\n%s",
				command, other.Name, showsOther, i == 0, out)
		}
	}
}
