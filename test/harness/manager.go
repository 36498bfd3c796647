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

package harness

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildManager builds cmd/manager into dir and returns the binary's path.
// Suites that run the manager as a process (e2e, the reliability campaign's
// failover family) build it once per test binary.
func BuildManager(dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir = RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the manager: %w\n%s", err, out)
	}
	return bin, nil
}

// ManagerProcess is a manager binary running for a test.
type ManagerProcess struct {
	name   string
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
}

// StartManagerProcess runs the manager binary bin with args. It is stopped
// gracefully when the test ends, and its output is logged if the test
// failed. The kernel kills it if the test process dies.
func StartManagerProcess(t testing.TB, name, bin string, args ...string) *ManagerProcess {
	t.Helper()
	p := &ManagerProcess{name: name, logs: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.logs.String())
		}
	})
	return p
}

// Name is the name the test gave the process.
func (p *ManagerProcess) Name() string { return p.name }

// Logs is everything the process has written so far.
func (p *ManagerProcess) Logs() string { return p.logs.String() }

// acquiredLease is what controller-runtime logs when a manager becomes
// leader.
const acquiredLease = `"msg":"Successfully acquired lease"`

// Leads reports whether the manager has logged that it acquired the
// leader-election lease.
func (p *ManagerProcess) Leads() bool { return strings.Contains(p.logs.String(), acquiredLease) }

// Stop ends the manager gracefully, as a kubelet would.
func (p *ManagerProcess) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// Kill ends the manager at once with SIGKILL, as a node failure would, and
// waits until it is gone.
func (p *ManagerProcess) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// syncBuffer is a bytes.Buffer safe for a process to write while a test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
