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

// Package docs_test checks the Markdown of README.md and docs/: every
// relative link leads to a file that exists, and every #anchor to a heading
// (or an <a id>/<a name>) of its target, by GitHub's anchor rules.
package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinksResolve checks the repository's own Markdown.
func TestDocsLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files under %s, expected README.md and docs/**: %v", len(files), root, files)
	}
	for _, p := range deadLinks(root, files) {
		t.Error(p)
	}
}

// TestDeadLinksFindsEachKind runs the checker on a made-up tree with one
// link of each kind, good and bad, so it is known to catch what it must.
func TestDeadLinksFindsEachKind(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Top",
		"[ok](docs/a.md) [ok](docs/a.md#status-and-conditions) [ok](#top) [ok](docs/)",
		"[ok](https://example.com/x#y) [ok](docs/a.md#make-test) [ok](docs/a.md#dns-over-rfc-2136-bind-knot-)",
		"[ok](docs/a.md#status-and-conditions-1) [ok](docs/a.md#custom) [ok](<docs/a.md> \"title\")",
		"[dead file](docs/missing.md) [a wrapped",
		"dead anchor](docs/a.md#wrapped)",
		"[dead anchor](docs/a.md#status)",
		"[dead local anchor](#nowhere)",
		"`[in code](nowhere.md)`",
		"```",
		"[in a fence](nowhere.md)",
		"```",
	}, "\n"))
	write("docs/open.md", "# Open\n```sh\nmake run\n")
	write("docs/a.md", strings.Join([]string{
		"# A",
		"## Status and conditions",
		"## `make test`",
		"## DNS over RFC 2136 (BIND, Knot, ...)",
		"## Status and conditions",
		"<a id=\"custom\"></a>",
		"```sh",
		"# Not a heading",
		"```",
		"[dead anchor from docs](../README.md#not-a-heading)",
		"[dead relative](spec/x.md)",
	}, "\n"))
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	got := deadLinks(root, files)
	want := []string{
		"README.md: [dead file](docs/missing.md): no such file docs/missing.md",
		"README.md: [a wrapped\ndead anchor](docs/a.md#wrapped): docs/a.md has no anchor #wrapped",
		"README.md: [dead anchor](docs/a.md#status): docs/a.md has no anchor #status",
		"README.md: [dead local anchor](#nowhere): README.md has no anchor #nowhere",
		"docs/a.md: [dead anchor from docs](../README.md#not-a-heading): README.md has no anchor #not-a-heading",
		"docs/a.md: [dead relative](spec/x.md): no such file docs/spec/x.md",
		"docs/open.md: 1 code fences, one left open: what follows is read as code",
	}
	if !slices.Equal(got, want) {
		t.Errorf("dead links:\n got  %q\n want %q", got, want)
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Several clusters, one zone":                    "several-clusters-one-zone",
		"`make test-reliability`":                       "make-test-reliability",
		"DNS over RFC 2136 (BIND, Knot, PowerDNS, ...)": "dns-over-rfc-2136-bind-knot-powerdns-",
		"The manager's flags":                           "the-managers-flags",
		"RFC 2136: deletion cost against zone size":     "rfc-2136-deletion-cost-against-zone-size",
		"A [link](x.md) and **bold** _under_":           "a-link-and-bold-_under_",
		"Moves, in order":                               "moves-in-order",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// markdownFiles lists README.md and every .md under docs/, relative to root.
func markdownFiles(root string) ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

var (
	fence     = regexp.MustCompile("(?m)^\\s*(```|~~~)")
	codeSpan  = regexp.MustCompile("`+[^`]*`+")
	link      = regexp.MustCompile(`\[([^\]]*)\]\((<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\)`)
	heading   = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlID    = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	hasScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose returns the lines of a Markdown file outside fenced code blocks.
func prose(text string) []string {
	var out []string
	inFence := false
	for l := range strings.SplitSeq(text, "\n") {
		if fence.MatchString(l) {
			inFence = !inFence
			continue
		}
		if !inFence {
			out = append(out, l)
		}
	}
	return out
}

// anchors returns the anchors a Markdown file defines: one per heading by
// GitHub's rules, duplicates suffixed -1, -2, ..., and explicit <a id>.
func anchors(text string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		if m := heading.FindStringSubmatch(l); m != nil {
			a := anchor(m[1])
			if n := seen[a]; n > 0 {
				set[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				set[a] = true
			}
			seen[a]++
		}
		for _, m := range htmlID.FindAllStringSubmatch(l, -1) {
			set[m[1]] = true
		}
	}
	return set
}

// anchor is GitHub's anchor of a heading: the text of its links, lower
// case, every character but letters, digits, '_', '-' and spaces dropped,
// and each space turned into '-'.
func anchor(h string) string {
	h = link.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// deadLinks returns one line per relative link of files (relative to root)
// that leads nowhere: a missing file, or an anchor its target lacks.
func deadLinks(root string, files []string) []string {
	var dead []string
	anchorsOf := map[string]map[string]bool{}
	read := func(rel string) (map[string]bool, error) {
		if a, ok := anchorsOf[rel]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		anchorsOf[rel] = anchors(string(b))
		return anchorsOf[rel], nil
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			dead = append(dead, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		if fences := len(fence.FindAllString(string(b), -1)); fences%2 != 0 {
			dead = append(dead, fmt.Sprintf("%s: %d code fences, one left open: what follows is read as code", f, fences))
		}
		// Whole paragraphs, not lines: a link's text may wrap.
		text := codeSpan.ReplaceAllString(strings.Join(prose(string(b)), "\n"), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := strings.Trim(m[2], "<>")
			if target == "" || hasScheme.MatchString(target) {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			rel := f
			if path != "" {
				rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), filepath.FromSlash(path))))
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					dead = append(dead, fmt.Sprintf("%s: %s: no such file %s", f, m[0], rel))
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(rel, ".md") {
				continue
			}
			a, err := read(rel)
			if err != nil {
				dead = append(dead, fmt.Sprintf("%s: %s: %v", f, m[0], err))
				continue
			}
			if !a[frag] {
				dead = append(dead, fmt.Sprintf("%s: %s: %s has no anchor #%s", f, m[0], rel, frag))
			}
		}
	}
	return dead
}
