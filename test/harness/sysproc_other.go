//go:build !linux

package harness

import "syscall"

// sysProcAttr puts a component in its own process group. Without Linux's
// parent-death signal, a component outlives a crashed harness until the
// next Start sweeps it.
func sysProcAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
