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

package backupplan

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The planners are pure, so their promises are checked over every
// observation of a bounded space, and over seeded sequences against a
// model of the world, without a cluster. The promises are the docs'
// (docs/spec/backupconfig.md), written from the world's point of view; no
// test restates a planner's body, and no generator takes one planner's
// answer as a free input.

var planNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

const (
	planMaxAttempts   = 3
	planTeardownLimit = 10 * time.Minute
	planGrace         = 5 * time.Second
	planRetryDelay    = time.Minute
)

// promises collects the promises a planner broke over many observations:
// how many times each, and the first few cases, for the log.
type promises struct {
	t       *testing.T
	checked int
	broken  map[string]int
	first   []string
}

func newPromises(t *testing.T) *promises {
	return &promises{t: t, broken: map[string]int{}}
}

// check records one observation and the promises its plan broke.
func (p *promises) check(broken []string, describe func() string) {
	p.checked++
	for _, rule := range broken {
		p.broken[rule]++
		if len(p.first) < 5 {
			p.first = append(p.first, rule+": "+describe())
		}
	}
}

// report logs the count and fails the test on any broken promise.
func (p *promises) report(what string) {
	p.t.Helper()
	p.t.Logf("checked %d %s; broken promises by rule: %v", p.checked, what, p.broken)
	if len(p.broken) > 0 {
		p.t.Errorf("%s: broken promises %v\nfirst: %s", what, p.broken, strings.Join(p.first, "\n"))
	}
}

// TestThePlansImportOnlyTheStandardLibrary keeps the planners pure: no
// client, no service, no clock, nothing of the project, so their tests
// need no control plane and build in seconds.
func TestThePlansImportOnlyTheStandardLibrary(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked, sources := 0, 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		sources++
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, file, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") || slices.Contains([]string{"net", "os", "syscall"}, first) {
				t.Errorf("%s imports %s: a planner reads nothing and calls nothing", file, path)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no import checked")
	}
	t.Logf("checked %d imports of %d source files", checked, sources)
}

func describe(v any) func() string { return func() string { return fmt.Sprintf("%+v", v) } }
