//go:build !linux

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

// sysProcAttr puts a component in its own process group. Without Linux's
// parent-death signal, a component outlives a crashed owner until the
// next Start sweeps it.
func sysProcAttr(syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// KilledWithParent returns no attributes: only Linux has a parent-death
// signal, so elsewhere a child outlives a parent that is killed (one that
// exits normally still stops its children itself).
func KilledWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
