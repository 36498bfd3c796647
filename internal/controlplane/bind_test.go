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
	"strings"
	"testing"
)

// recorder is a TB that records how a test would have ended.
type recorder struct{ skipped, failed string }

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

// TestRequireBIND: without named, a machine that cannot install it skips the
// RFC 2136 tests naming the install command; one where `make bind9` could
// have installed it fails them, and so does any other error from named.
func TestRequireBIND(t *testing.T) {
	other := errors.New("named exited (exit status 1)")
	for _, tc := range []struct {
		name               string
		err                error
		installable        bool
		wantSkip, wantFail bool
	}{
		{name: "named is there", err: nil, installable: true},
		{name: "no named, not installable here", err: ErrNoNamed, wantSkip: true},
		{name: "no named, wrapped", err: fmt.Errorf("starting BIND: %w", ErrNoNamed), wantSkip: true},
		{name: "no named, but make bind9 could install it", err: ErrNoNamed, installable: true, wantFail: true},
		{name: "named failed", err: other, wantFail: true},
		{name: "named failed where it is not installable", err: other, installable: false, wantFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			requireBIND(&r, tc.err, tc.installable)
			if (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantFail {
				t.Fatalf("skipped=%q failed=%q; want skip=%v fail=%v", r.skipped, r.failed, tc.wantSkip, tc.wantFail)
			}
			if tc.wantSkip && !strings.Contains(r.skipped, InstallBINDHint) {
				t.Errorf("the skip says %q; want the install command: %q", r.skipped, InstallBINDHint)
			}
		})
	}
}
