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

// Package planrule holds the one rule every planner keeps (myapp/dnsplan,
// backupconfig/backupplan, restore/restoreplan), and the check each
// planner's tests run: a planner imports the standard library and the
// API's types (this module's api/ packages) for the values it decides
// over, and nothing else: no client, no controller-runtime, no k8s.io
// package, no other internal/ package; of the standard library, nothing
// that reaches outside the process (os, net, syscall, plugin) or draws
// chance (math/rand, crypto/rand); and it calls no clock (time.Now and the
// timers): the observation carries the time. So a planner's decisions are
// a function of its observation, its tests need no control plane, and the
// shell of each controller is the only place that reads, calls or waits.
package planrule

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// apiPrefix is the import path under which this module's API types live.
const apiPrefix = "github.com/myapp-operator/myapp-operator/api/"

// outside are the standard library's trees a planner may not import: they
// reach outside the process, or draw chance.
var outside = []string{"os", "net", "syscall", "plugin", "math/rand", "crypto/rand"}

// clock are the functions of package time that read the clock or wait.
var clock = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"}

// Check fails t once for each break of the rule by the package in dir
// (its non-test files), and fails it too when it checked nothing, so a
// wrong dir cannot pass.
func Check(t testing.TB, dir string) {
	t.Helper()
	broken, imports, err := Breaks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if imports == 0 {
		t.Fatalf("%s: no import checked", dir)
	}
	for _, b := range broken {
		t.Error(b)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = filepath.Base(abs)
	}
	t.Logf("checked %d imports of package %s, %d breaks of the planners' rule", imports, dir, len(broken))
}

// Breaks lists what breaks the rule in the package in dir, one line each,
// and counts the imports it checked.
func Breaks(dir string) (broken []string, imports int, err error) {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the package in %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, err
		}
		timeName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			imports++
			if why := forbidden(path); why != "" {
				broken = append(broken, fmt.Sprintf("%s imports %s: %s", name, path, why))
			}
			if path == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		if timeName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == timeName && slices.Contains(clock, sel.Sel.Name) {
				broken = append(broken, fmt.Sprintf("%s calls time.%s: a planner reads no clock; the observation carries the time",
					fset.Position(sel.Pos()), sel.Sel.Name))
			}
			return true
		})
	}
	return broken, imports, nil
}

// forbidden says why a planner may not import path, "" when it may.
func forbidden(path string) string {
	first, _, _ := strings.Cut(path, "/")
	switch {
	case strings.HasPrefix(path, apiPrefix):
		return ""
	case strings.Contains(first, "."):
		return "a planner imports no client and no library but the API's types"
	}
	for _, tree := range outside {
		if path == tree || strings.HasPrefix(path, tree+"/") {
			return "a planner reads nothing, calls nothing and draws no chance"
		}
	}
	return ""
}
