package harness

import "syscall"

// sysProcAttr puts a component in its own process group and has the kernel
// send it deathSignal when the harness process dies, so a test binary killed
// by -timeout or a crashed `make run` leaves nothing running.
func sysProcAttr(deathSignal syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSignal}
}
