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

package controlplane

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
)

// stubGo is a go command for hack/controlplane/build.sh that builds nothing:
// `go build -o FILE` logs FILE, takes a while, then writes an empty
// executable there, as the real build writes its output only at the end;
// `go env` and `go list -m` answer what the script asks.
const stubGo = `#!/bin/sh
case "$1" in
env)
  case "$2" in GOOS) echo linux ;; GOARCH) echo amd64 ;; esac ;;
list)
  echo "$STUB_KWOK_DIR" ;;
build)
  out=""
  while [ $# -gt 0 ]; do
    if [ "$1" = "-o" ]; then out="$2"; fi
    shift
  done
  echo "$(basename "$out")" >> "$STUB_LOG"
  sleep 0.4
  printf '#!/bin/sh\n' > "$out"
  chmod +x "$out" ;;
esac
`

// TestTwoControlPlaneBuildsAtOnceBuildOnce (issue 32 item 8): two builds of
// the control plane started together on one machine, as a `make run` and a
// `make demo` in two terminals on a fresh clone. The second waits for the
// first and then finds everything built: both succeed, and each binary is
// built once.
func TestTwoControlPlaneBuildsAtOnceBuildOnce(t *testing.T) {
	g := NewWithT(t)
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock (util-linux) is not installed: build.sh cannot lock the store here")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	g.Expect(os.MkdirAll(bin, 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(bin, "go"), []byte(stubGo), 0o755)).To(Succeed())
	kwok := filepath.Join(dir, "kwok")
	for _, f := range []string{"node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
		"pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"} {
		path := filepath.Join(kwok, "kustomize", "stage", f)
		g.Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		g.Expect(os.WriteFile(path, []byte("kind: Stage\n"), 0o644)).To(Succeed())
	}
	gomod, err := os.ReadFile(filepath.Join(RepoRoot(), "hack", "controlplane", "kubernetes", "go.mod"))
	g.Expect(err).NotTo(HaveOccurred())
	pinned := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes v(\S+)`).FindSubmatch(gomod)
	g.Expect(pinned).NotTo(BeNil(), "kubernetes/go.mod pins k8s.io/kubernetes")
	version := string(pinned[1])
	store := filepath.Join(dir, "store")
	log := filepath.Join(dir, "builds.log")

	outputs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(RepoRoot(), "hack", "controlplane", "build.sh"))
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "ENVTEST_STORE="+store,
				"CONTROLPLANE_VERSION="+version, "STUB_KWOK_DIR="+kwok, "STUB_LOG="+log)
			cmd.Stdout, cmd.Stderr = &outputs[i], &outputs[i]
			errs[i] = cmd.Run()
		})
	}
	wg.Wait()
	for i := range 2 {
		g.Expect(errs[i]).NotTo(HaveOccurred(), "build %d:\n%s", i+1, outputs[i].String())
	}
	built, err := os.ReadFile(log)
	g.Expect(err).NotTo(HaveOccurred())
	names := strings.Fields(regexp.MustCompile(`\.tmp\.[A-Za-z0-9]{6}`).ReplaceAllString(string(built), ".tmp"))
	slices.Sort(names)
	g.Expect(names).To(Equal([]string{".etcd.tmp", ".kube-apiserver.tmp", ".kube-controller-manager.tmp",
		".kube-scheduler.tmp", ".kubectl.tmp", ".kwok.tmp"}), "each binary is built once:\n%s\n%s", outputs[0].String(), outputs[1].String())
	dest := filepath.Join(store, "k8s", version+"-linux-amd64")
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", "kwok-stages.yaml", ".stamp"} {
		g.Expect(filepath.Join(dest, b)).To(BeAnExistingFile())
	}
	g.Expect(outputs[0].String()+outputs[1].String()).To(ContainSubstring("is up to date"), "the second build reuses the first's")
}
