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

package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// TestFlagsDocMatchesTheFlags fails when docs/flags.md is not what the
// manager's flag set renders: a flag added, removed or reworded without
// `make generate`.
func TestFlagsDocMatchesTheFlags(t *testing.T) {
	fs, _, _ := newFlagSet()
	want := flagsMarkdown(fs)
	got, err := os.ReadFile("../../docs/flags.md")
	if err != nil {
		t.Fatalf("reading docs/flags.md: %v", err)
	}
	if string(got) != want {
		t.Fatalf("docs/flags.md differs from the manager's flags; run `make generate` (it runs "+
			"`go run ./cmd/manager %s > docs/flags.md`).\nFirst difference at line %d:\n  file: %q\n  want: %q",
			printFlagsMarkdown, firstDiffLine(string(got), want), lineAt(string(got), firstDiffLine(string(got), want)),
			lineAt(want, firstDiffLine(string(got), want)))
	}
}

// TestFlagsDocListsEveryFlag checks the renderer itself: a flag added to the
// set shows up in the page, with its default and usage, and the hidden
// argument does not.
func TestFlagsDocListsEveryFlag(t *testing.T) {
	fs, _, _ := newFlagSet()
	fs.Duration("some-new-interval", 0, "How often | something happens.")
	page := flagsMarkdown(fs)
	if !strings.Contains(page, "| `--some-new-interval` | duration | `0s` | How often \\| something happens. |\n") {
		t.Errorf("the page lacks the added flag's row:\n%s", page)
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if !strings.Contains(page, "| `--"+f.Name+"` |") {
			t.Errorf("the page lacks --%s", f.Name)
		}
	})
	if rows := strings.Count(page, "\n| `--"); rows != n {
		t.Errorf("the page has %d flag rows, the set %d flags", rows, n)
	}
	if strings.Contains(page, printFlagsMarkdown) && !strings.Contains(page, "go run ./cmd/manager "+printFlagsMarkdown) {
		t.Errorf("the hidden %s appears as a flag", printFlagsMarkdown)
	}
}

func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

func lineAt(s string, n int) string {
	l := strings.Split(s, "\n")
	if n-1 < len(l) {
		return l[n-1]
	}
	return "(end of file)"
}
