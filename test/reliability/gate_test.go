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

package reliability

import "github.com/myapp-operator/myapp-operator/test/fixtures"

// crashGate is the gate every manager of the campaign runs behind: it numbers
// the manager's writes to the API server and both external services and,
// with a crash point, lets that write through and fails every later call,
// reads included (fixtures.CrashGate, which the Restore suite's crash test
// uses too). The alias keeps the scenarios' call sites short.
type crashGate = fixtures.CrashGate

// newCrashGate returns a gate that crashes the manager right after its write
// crashAt, or never when crashAt is 0.
func newCrashGate(crashAt int) *crashGate {
	return &crashGate{CrashAt: crashAt}
}
