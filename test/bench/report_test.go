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
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

func TestSpreadAndWithin(t *testing.T) {
	if got, want := spread(raw([]float64{3, 1, 2})), "2.00 (1.00 to 3.00)"; got != want {
		t.Errorf("spread = %q, want %q", got, want)
	}
	if got, want := spread(raw([]float64{4, notReached, 2})), "3.00 (2.00 to 4.00), 1 not reached"; got != want {
		t.Errorf("spread = %q, want %q", got, want)
	}
	if got := spread(raw([]float64{notReached})); got != "not reached" {
		t.Errorf("spread of nothing reached = %q", got)
	}
	// A margin may be negative (served before lease + normal creation).
	if got, want := spread([]float64{-1, -0.5}), "-0.75 (-1.00 to -0.50)"; got != want {
		t.Errorf("spread of negative margins = %q, want %q", got, want)
	}
	if got := within([]float64{-1, 0.4}, 0.5); got != "yes" {
		t.Errorf("within = %q, want yes", got)
	}
	if got := within([]float64{0.2, 0.6, math.NaN()}, 0.5); got != "no (1 of 3)" {
		t.Errorf("within = %q, want no (1 of 3)", got)
	}
	if got := within(nil, 0.5); got != "no (0 of 0)" {
		t.Errorf("within of nothing = %q", got)
	}
	if !math.IsNaN(lag(notReached, 3)) || lag(5, 3) != 2 {
		t.Error("lag: want NaN when a time was not reached, else the difference")
	}
}

// TestTargetRows checks that the item 5 targets print met or not from the
// figures, on a made-up run that meets some and misses others.
func TestTargetRows(t *testing.T) {
	const n = 100
	res := Result{N: n, Floor: map[string]Phase{"converge": {Seconds: 10}}, Operators: []OperatorResult{{
		Name: operatorName,
		Phases: map[string]Phase{
			// 5 writes + 2 events + 1.5 status patches... per MyApp: 7.5 with events.
			"converge": {Seconds: 20, API: map[string]int{
				"patch myapps": 100, "create deployments": 100, "create services": 100, "create ingresses": 100,
				"patch myapps/status": 250, "create events": 100, "watch myapps": 3,
			}},
			"steady":  {Seconds: 60, API: map[string]int{}},
			"restart": {Seconds: 60, API: map[string]int{"patch myapps/status": 1}, Extra: map[string]float64{"drainSeconds": 1.5}},
		},
		Memory: map[string]Mem{
			"0 MyApps":   {LiveHeapBytes: 1 << 20, RSSBytes: 10 << 20},
			"100 MyApps": {LiveHeapBytes: 1<<20 + 100*10<<10, RSSBytes: 10<<20 + 100*30<<10},
		},
		Failover: []FailoverRun{{
			WarmStandby:   true,
			CreateSeconds: []float64{5, 6, 7},
			Kills: []Handover{
				{LeaseSeconds: 16, FirstReconcileSeconds: 16.2, FirstWriteSeconds: 16.3, CreatedReadySeconds: 22.5, EditSeconds: 16.5},
				{LeaseSeconds: 17, FirstReconcileSeconds: 18, FirstWriteSeconds: 18.1, CreatedReadySeconds: notReached, EditSeconds: 17.2},
			},
			Graceful: Handover{LeaseSeconds: 2.5, FirstReconcileSeconds: 2.6, FirstWriteSeconds: 2.7, EditSeconds: 2.8},
		}},
	}}}
	var out strings.Builder
	printReport(&out, res)
	report := out.String()
	for _, row := range []string{
		"| operator | 2.00x | 7.50 | 6.50 | 2.50 | 0.00 | 10.0 | 30.0 | 1.5 |",
		"| 0 writes (steady) | 0 API writes, 0 DNS writes in 60 s | yes |",
		"| 0 writes (restart) | 1 API writes, 0 DNS writes in 60 s | no |",
		"| API writes, events included, at most 1.4x the minimum of 5 per MyApp | 7.50 (1.50x) | no |",
		"| status patches at most 2 per MyApp | 2.50 | no |",
		"| live heap at most 16 KiB per MyApp | 10.0 KiB (1.0 -> 2.0 MiB) | yes |",
		"| on | created MyApp served within lease + normal creation (6.0 s) + 1 s | 0.50 (0.50 to 0.50), 1 not reached after lease + normal | no (1 of 2) |",
		"| on | edit within lease + 1 s | 0.35 (0.20 to 0.50) after the lease | yes |",
		"| on | first reconcile within 0.5 s of the lease (the target is at 10,000) | 0.60 (0.20 to 1.00) | no (1 of 2) |",
		"| on | graceful handover (SIGTERM to the new leader's first write) within 2 s | 2.70 (2.70 to 2.70) | no (0 of 1) |",
	} {
		if !strings.Contains(report, row+"\n") {
			t.Errorf("the report lacks the row\n%s\nin\n%s", row, report)
		}
	}
}

func TestLeaseWatcherWaitHolder(t *testing.T) {
	lw := &leaseWatcher{}
	t0 := time.Now()
	lw.observe("a", t0)
	lw.observe("a", t0.Add(time.Second)) // no change
	lw.observe("", t0.Add(2*time.Second))
	lw.observe("b", t0.Add(3*time.Second))
	if len(lw.changes) != 3 {
		t.Fatalf("changes = %v, want a, released, b", lw.changes)
	}
	// After a's release the first holder that is neither empty nor a.
	id, at, ok := lw.waitHolder(context.Background(), t0.Add(time.Second), "a", time.Second)
	if !ok || id != "b" || !at.Equal(t0.Add(3*time.Second)) {
		t.Errorf("waitHolder = %q, %v, %t; want b at t0+3s", id, at, ok)
	}
	// A holder seen before since does not count.
	if id, _, ok := lw.waitHolder(context.Background(), t0.Add(4*time.Second), "a", 50*time.Millisecond); ok {
		t.Errorf("waitHolder found %q, want none after t0+4s", id)
	}
}

func TestEditTargetsAreSpread(t *testing.T) {
	b := &bench{cfg: config{n: 1000}}
	seen := map[string]bool{}
	for range 100 {
		key := b.editTarget([]string{"a", "b", "c", "d"})
		if seen[key.String()] {
			t.Fatalf("edit target %s twice in 100 edits of 1,000 MyApps", key)
		}
		seen[key.String()] = true
	}
}
