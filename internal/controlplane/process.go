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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ownerFile in a run directory holds the PID and start time of the process
// that owns the run.
const ownerFile = "owner"

// process is one control-plane component started by this package.
type process struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startProcess starts path with args, its output in logDir/name.log. The
// process gets its own process group, so stop reaches anything it forks, and
// on Linux it is killed when this process dies, whatever the reason.
func startProcess(name, path string, args []string, logDir string) (*process, error) {
	return startProcessWithDeathSignal(name, path, args, logDir, syscall.SIGKILL)
}

// startProcessWithDeathSignal is startProcess with the signal the process
// gets when the owning process dies.
func startProcessWithDeathSignal(name, path string, args []string, logDir string, deathSignal syscall.Signal) (*process, error) {
	logFile, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr(deathSignal)
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// reaperScript waits, and kills the PIDs it was given when it is told to
// stop. Its parent-death signal is SIGTERM, so it fires when the owning
// process dies. It writes reaperReadyFile into the run directory ($0) once
// its trap is set: a SIGTERM before that would end it without the trap.
const reaperScript = `trap 'kill -KILL "$@" 2>/dev/null; exit 0' TERM; : > "$0/` + reaperReadyFile +
	`"; while :; do sleep 1; done`

const reaperReadyFile = "reaper-ready"

// startReaper covers the processes envtest starts (etcd, kube-apiserver):
// envtest gives no way to set their parent-death signal, so a reaper that
// has one kills them when the owner dies without stopping. The run
// directory is its $0, so a sweep finds it like any component.
func startReaper(runDir string, pids []int, logDir string) (*process, error) {
	args := make([]string, 0, 3+len(pids))
	args = append(args, "-c", reaperScript, runDir)
	for _, pid := range pids {
		args = append(args, strconv.Itoa(pid))
	}
	p, err := startProcessWithDeathSignal("reaper", "/bin/sh", args, logDir, syscall.SIGTERM)
	if err != nil {
		return nil, err
	}
	ready := filepath.Join(runDir, reaperReadyFile)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			return p, nil
		}
		if done, err := p.exited(); done {
			return nil, fmt.Errorf("the reaper exited before it was ready: %v", err)
		}
	}
	_ = p.stop(time.Second)
	return nil, errors.New("the reaper did not become ready within 10s")
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop asks the process group to terminate and kills it after timeout.
func (p *process) stop(timeout time.Duration) error {
	if done, _ := p.exited(); done {
		return nil
	}
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// processStartTime identifies a process incarnation: a PID can be reused, a
// PID with the same start time cannot. It is empty where /proc is missing.
func processStartTime(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name in field 2 may contain spaces; fields after the
	// closing parenthesis are plain. starttime is field 22.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// ownerRecord is what newRunDir writes into ownerFile.
func ownerRecord(pid int) string {
	return strconv.Itoa(pid) + " " + processStartTime(pid)
}

// ownerAlive reports whether the process recorded in a run directory's
// owner file still runs.
func ownerAlive(runDir string) bool {
	data, err := os.ReadFile(filepath.Join(runDir, ownerFile))
	if err != nil {
		// A run directory being created right now has no owner file yet;
		// treat it as alive rather than racing its creator.
		info, statErr := os.Stat(runDir)
		return statErr == nil && time.Since(info.ModTime()) < time.Minute
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return false
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil {
		return false
	}
	if len(fields) == 1 {
		return processStartTime(pid) != ""
	}
	return processStartTime(pid) == fields[1]
}

// sweepStaleRuns kills the processes of every run under root whose owner is
// gone and removes those run directories.
func sweepStaleRuns(root string) error {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run-") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if ownerAlive(dir) {
			continue
		}
		if err := killProcessesUsing(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killProcessesUsing kills every process whose command line names dir and
// waits for them to go. Every component of a run names its run directory
// (data, certificates, kubeconfig or config file), so this finds them all.
func killProcessesUsing(dir string) error {
	pids := processesUsing(dir)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(processesUsing(dir)) == 0 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	if left := processesUsing(dir); len(left) > 0 {
		return fmt.Errorf("processes %v of run %s survived SIGKILL", left, dir)
	}
	return nil
}

// processesUsing lists the PIDs of live processes whose command line
// contains dir as a path prefix.
func processesUsing(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a zombie already waiting for its parent
		}
		for _, arg := range strings.Split(string(cmdline), "\x00") {
			if arg == dir || strings.Contains(arg, dir+string(filepath.Separator)) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
