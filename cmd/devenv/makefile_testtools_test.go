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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
)

// TestMakeTestBuildsItsToolsSideBySide runs the Makefile's test-tools recipe,
// the one `make test` builds the control plane and its tools with, over
// stand-in targets (a makefile that includes the real one and adds them):
// the targets run at the same time, each one's output comes out whole, and a
// failing one fails the run with its output shown.
func TestMakeTestBuildsItsToolsSideBySide(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	// Each of slow and fast waits for the other to have started: they pass
	// only when they run side by side.
	waitFor := func(name, other string) string {
		marker := filepath.Join(dir, name)
		return fmt.Sprintf("\t@echo %[1]s begins; touch %[2]q; "+
			"for i in $$(seq 200); do [ -f %[3]q ] && break; sleep 0.05; done; "+
			"[ -f %[3]q ] || { echo \"%[1]s: %[4]s never started\"; exit 1; }; sleep 0.3; echo %[1]s ends\n",
			name, marker, filepath.Join(dir, other), other)
	}
	makefile := filepath.Join(dir, "test-tools.mk")
	content := "include Makefile\n" +
		".PHONY: slow fast broken\n" +
		"slow:\n" + waitFor("slow", "fast") +
		"fast:\n" + waitFor("fast", "slow") +
		"broken:\n\t@echo broken: the build log of broken; exit 3\n"
	if err := os.WriteFile(makefile, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(tools string) (string, error) {
		t.Helper()
		for _, marker := range []string{"slow", "fast"} {
			_ = os.Remove(filepath.Join(dir, marker))
		}
		cmd := exec.Command("make", "-f", makefile, "--no-print-directory", "test-tools",
			"TEST_TOOLS="+tools, "TEST_TOOLS_JOBS=2")
		cmd.Dir = controlplane.RepoRoot()
		cmd.Env = append(os.Environ(), "MAKEFLAGS=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run("slow fast")
	if err != nil {
		t.Fatalf("make test-tools with two targets that wait for each other: %v\n%s", err, out)
	}
	for _, whole := range []string{"slow begins\nslow ends\n", "fast begins\nfast ends\n"} {
		if !strings.Contains(out, whole) {
			t.Errorf("the output does not hold %q in one piece:\n%s", whole, out)
		}
	}

	out, err = run("slow broken")
	if err == nil {
		t.Fatalf("make test-tools succeeded with a target that fails:\n%s", out)
	}
	for _, want := range []string{"broken: the build log of broken", "broken] Error 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("a failed make test-tools does not show %q:\n%s", want, out)
		}
	}
}

// TestMakeTestBuildsEveryToolItsTestsRun reads make's database: `make test`
// runs test-tools before its tests, and TEST_TOOLS, what test-tools builds
// side by side, holds the control plane and every tool and server the tests
// look for.
func TestMakeTestBuildsEveryToolItsTestsRun(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	// -q -p prints the database without running a recipe; the goal need
	// not exist, so make exits non-zero and only its output counts.
	cmd := exec.Command("make", "-q", "-p", "--no-print-directory", "no-such-target")
	cmd.Dir = controlplane.RepoRoot()
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	out, _ := cmd.Output()
	lines := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		for _, prefix := range []string{"test:", "TEST_TOOLS ="} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				lines[prefix] = strings.Fields(rest)
			}
		}
	}
	if !slices.Contains(lines["test:"], "test-tools") {
		t.Errorf("make test's prerequisites %q lack test-tools", lines["test:"])
	}
	for _, want := range []string{"controlplane", "kustomize", "helm", "helm4", "versitygw", "external-dns-webhook", "apt-servers"} {
		if !slices.Contains(lines["TEST_TOOLS ="], want) {
			t.Errorf("TEST_TOOLS = %q lacks %s", lines["TEST_TOOLS ="], want)
		}
	}
}
