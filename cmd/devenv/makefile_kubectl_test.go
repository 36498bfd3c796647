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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
)

// TestMakeDeploymentTargetsNeedNoControlPlane dry-runs `make install`,
// `uninstall`, `deploy` and `undeploy` in machine states with and without
// the control plane build, and checks that the kubectl each one runs is one
// the dry run provides (built alone, or linked from the control plane), one
// that already exists, or the one the user named; never the control plane's
// kubectl on a machine that has not built it.
func TestMakeDeploymentTargetsNeedNoControlPlane(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	version := makefileVersion(t)
	assets := filepath.Join("k8s", version+"-"+runtime.GOOS+"-"+runtime.GOARCH, "kubectl") // under ENVTEST_STORE
	for _, tc := range []struct {
		name string
		// controlPlane builds a (fake) control-plane kubectl into the store;
		// haveKubectl puts kubectl-v<version> into LOCALBIN already.
		controlPlane, haveKubectl bool
		kubectlArg                string // KUBECTL=...
		wantBuild, wantLink       bool
		wantKubectl               string // the kubectl run; LOCALBIN and STORE are replaced
	}{
		{name: "a fresh machine builds kubectl alone", wantBuild: true, wantKubectl: "LOCALBIN/kubectl-v" + version},
		{name: "the control plane's kubectl is linked", controlPlane: true, wantLink: true, wantKubectl: "LOCALBIN/kubectl-v" + version},
		{name: "a kubectl already provided is used", haveKubectl: true, wantKubectl: "LOCALBIN/kubectl-v" + version},
		{name: "KUBECTL=kubectl uses the PATH's", kubectlArg: "kubectl", wantKubectl: "kubectl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, localBin := t.TempDir(), t.TempDir()
			if tc.controlPlane {
				writeExecutable(t, filepath.Join(store, assets))
			}
			if tc.haveKubectl {
				writeExecutable(t, filepath.Join(localBin, "kubectl-v"+version))
			}
			kubectl := strings.NewReplacer("LOCALBIN", localBin).Replace(tc.wantKubectl)
			for _, target := range []string{"install", "uninstall", "deploy", "undeploy"} {
				args := []string{"-n", "--no-print-directory", target, "ENVTEST_STORE=" + store, "LOCALBIN=" + localBin}
				if tc.kubectlArg != "" {
					args = append(args, "KUBECTL="+tc.kubectlArg)
				}
				cmd := exec.Command("make", args...)
				cmd.Dir = controlplane.RepoRoot()
				cmd.Env = append(withoutEnv(os.Environ(), "KUBECTL"), "MAKEFLAGS=")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				dry := string(out)
				if !tc.controlPlane && strings.Contains(dry, filepath.Join(store, assets)) {
					t.Errorf("make -n %s runs the control plane's kubectl, which this machine has not built:\n%s", target, dry)
				}
				if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(kubectl) + ` (apply|delete) `).MatchString(dry) {
					t.Errorf("make -n %s does not pipe to %s:\n%s", target, kubectl, dry)
				}
				build := `hack/controlplane/build.sh --kubectl "` + kubectl + `"`
				if got := strings.Contains(dry, build); got != tc.wantBuild {
					t.Errorf("make -n %s runs %s: %t, want %t:\n%s", target, build, got, tc.wantBuild, dry)
				}
				link := `ln -sf "` + filepath.Join(store, assets) + `" "` + kubectl + `"`
				if got := strings.Contains(dry, link); got != tc.wantLink {
					t.Errorf("make -n %s runs %s: %t, want %t:\n%s", target, link, got, tc.wantLink, dry)
				}
			}
		})
	}
}

// makefileVersion is the Makefile's ENVTEST_K8S_VERSION.
func makefileVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENVTEST_K8S_VERSION \?= (\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("the Makefile does not set ENVTEST_K8S_VERSION")
	}
	return string(m[1])
}

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// withoutEnv is env without name's entries.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestControlPlaneVersionIsSetOnce checks that the Makefile's
// ENVTEST_K8S_VERSION is the version everything else uses: the default
// control-plane directory of the test harness, the source go.mod pins, and
// that build.sh refuses to stamp another version on that source.
func TestControlPlaneVersionIsSetOnce(t *testing.T) {
	t.Setenv("ENVTEST_K8S_VERSION", "")
	version := makefileVersion(t)
	if got := controlplane.KubernetesVersion(); got != version {
		t.Errorf("controlplane.KubernetesVersion() = %q, the Makefile says %q", got, version)
	}
	gomod, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "hack", "controlplane", "kubernetes", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes v` + regexp.QuoteMeta(version) + `\b`).Match(gomod) {
		t.Errorf("hack/controlplane/kubernetes/go.mod does not pin k8s.io/kubernetes v%s (make controlplane-gomod)", version)
	}
	if m := regexp.MustCompile(`(?m)^// .*\b(hack/\S+\.sh)\b`).FindSubmatch(gomod); m != nil {
		if _, err := os.Stat(filepath.Join(controlplane.RepoRoot(), string(m[1]))); err != nil {
			t.Errorf("hack/controlplane/kubernetes/go.mod points at %s: %v", m[1], err)
		}
	}

	for _, tc := range []struct{ env, want string }{
		{"CONTROLPLANE_VERSION=0.0.1", "run hack/controlplane/gen-kubernetes-gomod.sh 0.0.1"},
		{"CONTROLPLANE_VERSION=", "CONTROLPLANE_VERSION"},
	} {
		build := exec.Command(filepath.Join(controlplane.RepoRoot(), "hack", "controlplane", "build.sh"), "--kubectl", filepath.Join(t.TempDir(), "kubectl"))
		build.Env = append(os.Environ(), tc.env, "ENVTEST_STORE="+t.TempDir())
		out, err := build.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("build.sh with %s: %v, want a refusal saying %q:\n%s", tc.env, err, tc.want, out)
		}
	}
}
