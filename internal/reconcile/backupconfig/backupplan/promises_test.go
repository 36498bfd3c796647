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

func describe(v any) func() string { return func() string { return fmt.Sprintf("%+v", v) } }
