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

import "syscall"

// sysProcAttr puts a component in its own process group and has the kernel
// send it deathSignal when the owning process dies, so a test binary killed
// by -timeout or a crashed `make run` leaves nothing running.
//
// The kernel sends the signal when the thread that forked the child exits,
// not the process (golang/go#27505). Go only ends a thread when a goroutine
// exits while locked to it with runtime.LockOSThread; this package never
// locks threads, so its children see the signal only when the process dies.
// Code that starts components from a locked goroutine must not use this.
func sysProcAttr(deathSignal syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSignal}
}

// KilledWithParent returns process attributes that have the kernel SIGKILL
// the child when the process that started it dies, for a manager or tool a
// test or `make run` starts and must not leave behind. The child stays in
// its parent's process group, so a terminal's Ctrl-C reaches it too. The
// thread caveat of sysProcAttr applies.
func KilledWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
