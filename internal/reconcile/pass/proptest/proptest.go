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

// Package proptest is the one property collector the planners' tests
// share (myapp/dnsplan, backupconfig/backupplan, restore/restoreplan). A
// property test walks every observation of a bounded space, or every
// seeded world, checks each against the planner's promises, and hands the
// promises it broke to a Collector. The Collector counts the observations
// and, for each promise, the observations that broke it, keeps the first
// few of those with a printable description, and reports them all in one
// format: "N of M <what> broke <promise>", failing the test.
//
// It is test support: only tests import it, so the planners' rule
// (pass/planrule), which holds their non-test files, is not concerned.
package proptest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Keep is how many counterexamples a Collector keeps of each promise.
const Keep = 5

// Broken is an error that names the promise it broke, so a Collector
// counts it by promise rather than by its words, which name the values
// of one observation.
type Broken struct {
	// Promise is the promise, as the docs state it.
	Promise string
	// Detail says how this observation broke it; it may be empty.
	Detail string
}

func (b *Broken) Error() string {
	if b.Detail == "" {
		return b.Promise
	}
	return b.Promise + ": " + b.Detail
}

// Broke is the error of an observation that broke promise, with a detail
// formatted as fmt.Sprintf does.
func Broke(promise, format string, args ...any) error {
	return &Broken{Promise: promise, Detail: fmt.Sprintf(format, args...)}
}

// Promise names the promise err broke: nil stays nil, and an error that
// already names one (a check further down knew it more precisely) keeps
// its name.
func Promise(promise string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*Broken](err); ok {
		return err
	}
	return &Broken{Promise: promise, Detail: err.Error()}
}

// promiseOf is the promise err names and what else it says; an error that
// names none is counted under its own words, marked so the report shows a
// check to name.
func promiseOf(err error) (promise, detail string) {
	if b, ok := err.(*Broken); ok {
		return b.Promise, b.Detail
	}
	if b, ok := errors.AsType[*Broken](err); ok {
		return b.Promise, err.Error()
	}
	return "unnamed: " + err.Error(), ""
}

// Collector gathers what one property test found over its observations.
// It is safe for use by parallel subtests; report once they are done.
type Collector struct {
	tb   testing.TB
	what string

	mu      sync.Mutex
	checked int
	anyBad  int
	breaks  map[string]int
	first   map[string][]string
}

// New returns a collector that reports to tb; what names the observations
// in the plural ("hold observations", "seeded worlds").
func New(tb testing.TB, what string) *Collector {
	return &Collector{tb: tb, what: what, breaks: map[string]int{}, first: map[string][]string{}}
}

// Observe counts one observation and the promises it broke, by name.
// describe prints the observation; it is called only for an observation
// the collector keeps as a counterexample.
func (c *Collector) Observe(describe func() string, broken ...string) {
	errs := make([]error, 0, len(broken))
	for _, p := range broken {
		errs = append(errs, &Broken{Promise: p})
	}
	c.ObserveErr(describe, errs...)
}

// ObserveErr counts one observation and the errors its checks returned;
// nil errors are promises kept. An observation counts once for each
// promise it broke, however many of its errors name it; the first error
// of each is the one kept.
func (c *Collector) ObserveErr(describe func() string, errs ...error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked++
	seen := map[string]bool{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		promise, detail := promiseOf(err)
		if seen[promise] {
			continue // an observation breaks a promise once, however often
		}
		seen[promise] = true
		c.breaks[promise]++
		if len(c.first[promise]) < Keep {
			example := describe()
			if detail != "" {
				example = detail + "\n    " + example
			}
			c.first[promise] = append(c.first[promise], example)
		}
	}
	if len(seen) > 0 {
		c.anyBad++
	}
}

// Checked is the number of observations counted so far.
func (c *Collector) Checked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checked
}

// Breaks is the number of observations that broke promise so far.
func (c *Collector) Breaks(promise string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.breaks[promise]
}

// Report logs how many observations were checked and fails the test once
// for each promise broken, with its count and first counterexamples. A
// test that checked nothing fails too: its space is empty, so it cannot
// fail otherwise.
func (c *Collector) Report() {
	c.tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tb.Logf("checked %d %s; %d broke a promise", c.checked, c.what, c.anyBad)
	if c.checked == 0 {
		c.tb.Errorf("checked no %s: the space is empty, so nothing was tested", c.what)
	}
	for _, promise := range slices.Sorted(maps.Keys(c.breaks)) {
		c.tb.Errorf("%s", c.line(promise))
	}
}

// ReportMustBreak is Report for a rule broken on purpose: it logs each
// promise broken the same way, and fails the test when none was, since
// then the property tests cannot see that break.
func (c *Collector) ReportMustBreak() {
	c.tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tb.Logf("checked %d %s; %d broke a promise", c.checked, c.what, c.anyBad)
	if c.anyBad == 0 {
		c.tb.Errorf("none of %d %s broke a promise: the property tests do not see this break", c.checked, c.what)
	}
	for _, promise := range slices.Sorted(maps.Keys(c.breaks)) {
		c.tb.Logf("%s", c.line(promise))
	}
}

// line is the report of one promise: its count and first counterexamples.
func (c *Collector) line(promise string) string {
	return fmt.Sprintf("%d of %d %s broke %q; the first %d:\n  %s", c.breaks[promise], c.checked, c.what, promise,
		len(c.first[promise]), strings.Join(c.first[promise], "\n  "))
}
