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

package planrule

import (
	"slices"
	"strings"
	"testing"
)

// TestBreaksFindsEachBreakOfTheRule: a package that imports a client, an
// internal package and os and calls the clock under another name breaks
// the rule four times; one that imports the standard library and the
// API's types and uses time only as values breaks it never; test files are
// not the planner's code.
func TestBreaksFindsEachBreakOfTheRule(t *testing.T) {
	broken, imports, err := Breaks("testdata/impure")
	if err != nil {
		t.Fatal(err)
	}
	if imports != 4 {
		t.Errorf("checked %d imports of testdata/impure, want 4 (its test file is not the planner's)", imports)
	}
	for _, want := range []string{"imports os", "imports github.com/myapp-operator/myapp-operator/internal/external/backup",
		"imports sigs.k8s.io/controller-runtime/pkg/client", "calls time.Now"} {
		if !slices.ContainsFunc(broken, func(b string) bool { return strings.Contains(b, want) }) {
			t.Errorf("no break says %q; breaks: %q", want, broken)
		}
	}
	if len(broken) != 4 {
		t.Errorf("%d breaks, want 4: %q", len(broken), broken)
	}

	broken, imports, err = Breaks("testdata/pure")
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) != 0 || imports != 3 {
		t.Errorf("testdata/pure: breaks %q over %d imports, want none over 3", broken, imports)
	}
}
