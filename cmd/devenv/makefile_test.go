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
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
)

// actAsDevenv makes the test binary behave as devenv itself when the
// Makefile runs it as $(DEVENV), so the decision `make run` takes is the one
// the real probe takes, without building another binary.
const actAsDevenv = "MYAPP_DEVENV_TEST_ACT_AS_DEVENV"

func TestMain(m *testing.M) {
	if os.Getenv(actAsDevenv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// controlPlaneBuild is what `make controlplane` runs to build the control
// plane from source: the 15-minute step that only a local cluster needs.
const controlPlaneBuild = "hack/controlplane/build.sh"

// TestMakeBuildsTheControlPlaneOnlyForALocalCluster dry-runs `make run` and
// `make demo` (make -n still runs the recipe line that probes the cluster
// and the sub-make it decides on) and checks which prerequisites each path
// pulls in: the manager and devenv always, the control plane only when a
// local cluster will be started.
func TestMakeBuildsTheControlPlaneOnlyForALocalCluster(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	// Reachability is all the probe asks a server: its version. A server
	// that answers /version is a reachable cluster for that question.
	apiServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.1"}`))
	}))
	defer apiServer.Close()
	reachable := writeKubeconfig(t, apiServer.URL)
	closed, err := controlplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	unreachable := writeKubeconfig(t, "http://"+closed)

	for _, tc := range []struct {
		name         string
		target       string
		kubeconfig   string
		localCluster string
		wantBuild    bool
	}{
		{name: "run against a reachable cluster", target: "run", kubeconfig: reachable, wantBuild: false},
		{name: "run with no reachable cluster", target: "run", kubeconfig: unreachable, wantBuild: true},
		{name: "run with LOCAL_CLUSTER=true", target: "run", kubeconfig: reachable, localCluster: "true", wantBuild: true},
		{name: "demo, which always runs locally", target: "demo", kubeconfig: reachable, wantBuild: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := dryRunMake(t, tc.target, tc.kubeconfig, tc.localCluster)
			for _, want := range []string{"go build -o bin/manager -ldflags", "go build -o bin/devenv ./cmd/devenv"} {
				if !strings.Contains(out, want) {
					t.Errorf("make -n %s does not run %q:\n%s", tc.target, want, out)
				}
			}
			if got := strings.Contains(out, controlPlaneBuild); got != tc.wantBuild {
				t.Errorf("make -n %s runs %s: %t, want %t:\n%s", tc.target, controlPlaneBuild, got, tc.wantBuild, out)
			}
		})
	}
}

// dryRunMake runs `make -n target` in the repository with the test binary
// as devenv, and makeVars (NAME=value) on the command line.
func dryRunMake(t *testing.T, target, kubeconfig, localCluster string, makeVars ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", append([]string{"-n", "--no-print-directory", target, "DEVENV=" + self}, makeVars...)...)
	cmd.Dir = controlplane.RepoRoot()
	cmd.Env = append(os.Environ(),
		actAsDevenv+"=1",
		"KUBECONFIG="+kubeconfig,
		"LOCAL_CLUSTER="+localCluster,
		"MAKEFLAGS=",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", target, err, out)
	}
	return string(out)
}

// writeKubeconfig writes a kubeconfig whose current context is server.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
