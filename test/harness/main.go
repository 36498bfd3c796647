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
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// RunMain is the body of a test package's TestMain: it starts a control plane
// of the tier opts asks for, stores it in *cp, runs each setup (which may
// start a manager or a simulator and returns a teardown), runs the tests, and
// tears down in reverse order before it stops the control plane. An
// interrupt (Ctrl-C, SIGTERM) stops the control plane too before the test
// binary exits. It returns the exit code for os.Exit.
//
//	var cp *harness.ControlPlane
//
//	func TestMain(m *testing.M) {
//		os.Exit(harness.RunMain(m, harness.Options{Tier: harness.TierCluster}, &cp))
//	}
func RunMain(m *testing.M, opts Options, cp **ControlPlane, setups ...func(*ControlPlane) (teardown func(), err error)) int {
	started, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the %s control plane: %v\n", opts.Tier, err)
		return 1
	}
	*cp = started
	stopOnSignal(started)

	code := 0
	var teardowns []func()
	for _, setup := range setups {
		teardown, err := setup(started)
		if err != nil {
			fmt.Fprintf(os.Stderr, "setting up the tests: %v\n", err)
			code = 1
			break
		}
		teardowns = append(teardowns, teardown)
	}
	if code == 0 {
		code = m.Run()
	}
	for i := len(teardowns) - 1; i >= 0; i-- {
		teardowns[i]()
	}
	if err := started.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// stopOnSignal stops cp and exits when the process is interrupted, so that
// Ctrl-C on a test run or `make run` leaves nothing behind.
func stopOnSignal(cp *ControlPlane) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "received %s, stopping the control plane\n", sig)
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
		os.Exit(130)
	}()
}
