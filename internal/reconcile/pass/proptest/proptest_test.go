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

package proptest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that keeps what a Collector reports to it.
type recorder struct {
	testing.TB
	logs, errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestTheReportCountsEveryObservationAndEveryBreak: whatever mix of
// observations a test hands it (kept, breaking one promise or two, by name
// or by error), the report fails once per promise broken, says how many of
// how many observations broke it, shows at most Keep of them, describes
// only those, and logs the count of all observations; a test with no break
// passes.
func TestTheReportCountsEveryObservationAndEveryBreak(t *testing.T) {
	for _, n := range []int{1, 7, 100} {
		r := &recorder{}
		c := New(r, "worlds")
		described := 0
		wantA, wantB := 0, 0
		for i := range n {
			describe := func() string { described++; return fmt.Sprintf("world %d", i) }
			switch i % 4 {
			case 0:
				c.Observe(describe)
			case 1:
				c.Observe(describe, "a")
				wantA++
			case 2:
				c.ObserveErr(describe, nil, Broke("b", "at %d", i), fmt.Errorf("wrapped: %w", Broke("a", "too")))
				wantA++
				wantB++
			case 3:
				c.ObserveErr(describe, Promise("b", errors.New("plain")))
				wantB++
			}
		}
		if c.Checked() != n || c.Breaks("a") != wantA || c.Breaks("b") != wantB {
			t.Errorf("%d observations: counted %d, a %d, b %d; want %d, %d, %d", n, c.Checked(), c.Breaks("a"), c.Breaks("b"),
				n, wantA, wantB)
		}
		c.Report()
		wantErrs := 0
		for promise, want := range map[string]int{"a": wantA, "b": wantB} {
			if want == 0 {
				continue
			}
			wantErrs++
			line := fmt.Sprintf("%d of %d worlds broke %q; the first %d:", want, n, promise, min(want, Keep))
			if !containsLine(r.errs, line) {
				t.Errorf("%d observations: no failure says %q: %q", n, line, r.errs)
			}
		}
		if n > 2 && !containsLine(r.errs, "at 2\n    world 2") {
			t.Errorf("%d observations: no counterexample gives the detail of world 2 and describes it: %q", n, r.errs)
		}
		if len(r.errs) != wantErrs {
			t.Errorf("%d observations: %d failures, want one per promise broken (%d): %q", n, len(r.errs), wantErrs, r.errs)
		}
		if described > 2*Keep {
			t.Errorf("%d observations: described %d, want at most %d kept of each promise", n, described, Keep)
		}
		if !containsLine(r.logs, fmt.Sprintf("checked %d worlds;", n)) {
			t.Errorf("%d observations: the log does not count them: %q", n, r.logs)
		}
	}

	r := &recorder{}
	c := New(r, "worlds")
	c.Observe(func() string { return "" })
	c.ObserveErr(func() string { return "" }, nil)
	c.Report()
	if len(r.errs) != 0 {
		t.Errorf("no promise broken, yet the report fails: %q", r.errs)
	}
}

// TestAnEmptySpaceFails: a property test that checked nothing fails, and
// a rule broken on purpose that no observation saw fails.
func TestAnEmptySpaceFails(t *testing.T) {
	r := &recorder{}
	New(r, "worlds").Report()
	if len(r.errs) != 1 {
		t.Errorf("an empty space reports %q, want one failure", r.errs)
	}
	r = &recorder{}
	c := New(r, "worlds")
	c.Observe(func() string { return "" })
	c.ReportMustBreak()
	if len(r.errs) != 1 {
		t.Errorf("a rule broken on purpose that broke nothing reports %q, want one failure", r.errs)
	}
	r = &recorder{}
	c = New(r, "worlds")
	c.Observe(func() string { return "w" }, "a")
	c.ReportMustBreak()
	if len(r.errs) != 0 || !containsLine(r.logs, `1 of 1 worlds broke "a"`) {
		t.Errorf("a rule broken on purpose that broke a promise reports %q, logs %q", r.errs, r.logs)
	}
}

// TestParallelObservationsAreAllCounted: shards that observe side by side
// lose no count.
func TestParallelObservationsAreAllCounted(t *testing.T) {
	c := New(&recorder{}, "worlds")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 1000 {
				if i%10 == 0 {
					c.Observe(func() string { return "" }, "a")
				} else {
					c.Observe(func() string { return "" })
				}
			}
		})
	}
	wg.Wait()
	if c.Checked() != 4000 || c.Breaks("a") != 400 {
		t.Errorf("counted %d observations and %d breaks, want 4000 and 400", c.Checked(), c.Breaks("a"))
	}
}

func containsLine(lines []string, part string) bool {
	for _, l := range lines {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}
