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
	"slices"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// everyRetentionObservation calls check with every retention observation
// of a bounded space: up to four listed backups, each of this owner or
// another, SUCCEEDED, FAILED or RUNNING, a needed final attempt or not,
// chosen by a Restore in progress or not (this owner's),
// started in list order or all at once; keepLast 1 to 3; a backup running
// or not.
func everyRetentionObservation(check func(RetentionObservation)) {
	type kind struct {
		other, succeeded, failed, needed, pinned bool
	}
	kinds := make([]kind, 0, 18)
	for _, other := range []bool{false, true} {
		for _, phase := range []int{0, 1, 2} {
			for _, needed := range []bool{false, true} {
				for _, pinned := range []bool{false, true} {
					if other && pinned {
						continue // another owner's backups are never this plan's anyway
					}
					kinds = append(kinds, kind{other: other, succeeded: phase == 1, failed: phase == 2, needed: needed,
						pinned: pinned})
				}
			}
		}
	}
	var build func(prefix []kind)
	build = func(prefix []kind) {
		for _, sameStart := range []bool{false, true} {
			for keep := 1; keep <= 3; keep++ {
				for _, running := range []bool{false, true} {
					o := RetentionObservation{Owner: "own", Keep: keep, Running: running}
					for i, k := range prefix {
						b := Listed{ID: fmt.Sprint(i), Owner: "own", Started: planNow.Add(time.Duration(i) * time.Minute),
							Succeeded: k.succeeded, Failed: k.failed, NeededAttempt: k.needed, Pinned: k.pinned}
						if sameStart {
							b.Started = planNow
						}
						if k.other {
							b.Owner = "other"
						}
						o.Backups = append(o.Backups, b)
					}
					check(o)
				}
			}
		}
		if len(prefix) == 4 {
			return
		}
		for _, k := range kinds {
			build(append(slices.Clone(prefix), k))
		}
	}
	build(nil)
}

func TestPlanRetentionKeepsItsPromises(t *testing.T) {
	c := proptest.New(t, "retention observations")
	everyRetentionObservation(func(o RetentionObservation) {
		plan := PlanRetention(o)
		c.Observe(func() string { return fmt.Sprintf("%+v -> %+v", o, plan) }, retentionPromisesBroken(o, plan)...)
	})
	c.Report()
}

// retentionPromisesBroken lists the promises p breaks for o: retention
// never deletes another owner's backup, a running one, a counted final
// attempt or the newest success; keeps keepLast successes; waits while a
// backup runs; and, applied and observed again, prunes nothing more.
func retentionPromisesBroken(o RetentionObservation, p RetentionPlan) []string {
	var broken []string
	var newest *Listed
	succeeded := 0
	for i := range o.Backups {
		b := &o.Backups[i]
		if b.Owner == o.Owner && b.Succeeded {
			succeeded++
			if newest == nil || !b.Started.Before(newest.Started) {
				newest = b
			}
		}
	}
	deleted := map[string]bool{}
	deletedSucceeded := 0
	for _, b := range p.Expired {
		deleted[b.ID] = true
		switch {
		case b.Owner != o.Owner:
			broken = append(broken, "deleted another owner's backup")
		case !b.Succeeded && !b.Failed:
			broken = append(broken, "deleted a running backup")
		case b.NeededAttempt && !b.Succeeded:
			broken = append(broken, "deleted a counted final attempt")
		case b.Pinned:
			broken = append(broken, "deleted a backup a Restore in progress has chosen")
		case b.Succeeded:
			deletedSucceeded++
		}
	}
	if newest != nil && deleted[newest.ID] {
		broken = append(broken, "deleted the newest success")
	}
	if succeeded-deletedSucceeded < min(succeeded, o.Keep) {
		broken = append(broken, "kept fewer successes than keepLast")
	}
	if o.Running && len(p.Expired) > 0 {
		broken = append(broken, "pruned while a backup runs")
	}
	after := o
	after.Backups = slices.DeleteFunc(slices.Clone(o.Backups), func(b Listed) bool { return deleted[b.ID] })
	if q := PlanRetention(after); len(q.Expired) > 0 {
		broken = append(broken, "pruned again after pruning")
	}
	return append(broken, pinnedPromisesBroken(o, p)...)
}

// pinnedPromisesBroken: once every Restore has finished, what was kept for
// them is pruned as the rest would have been, so the plan keeps nothing
// but the pinned backups beyond what it would keep with no pins.
func pinnedPromisesBroken(o RetentionObservation, p RetentionPlan) []string {
	unpinned := o
	unpinned.Backups = slices.Clone(o.Backups)
	for i := range unpinned.Backups {
		unpinned.Backups[i].Pinned = false
	}
	if free := PlanRetention(unpinned); len(free.Expired) != len(p.Expired)+len(p.Pinned) {
		return []string{"kept more than the pinned backups beyond retention"}
	}
	return nil
}

// TestPlanCleanupSparesPinnedBackups: a deletion with deletionPolicy Delete
// deletes every backup of its owner except those a Restore in progress has
// chosen, and nothing of another owner, over every list of up to four
// backups of either owner, pinned or not, in any phase.
func TestPlanCleanupSparesPinnedBackups(t *testing.T) {
	type kind struct{ other, pinned, succeeded bool }
	kinds := make([]kind, 0, 8)
	for _, other := range []bool{false, true} {
		for _, pinned := range []bool{false, true} {
			for _, succeeded := range []bool{false, true} {
				kinds = append(kinds, kind{other, pinned, succeeded})
			}
		}
	}
	c := proptest.New(t, "lists")
	var build func(prefix []kind)
	build = func(prefix []kind) {
		backups := make([]Listed, 0, len(prefix))
		for i, k := range prefix {
			b := Listed{ID: fmt.Sprint(i), Owner: "own", Succeeded: k.succeeded, Pinned: k.pinned}
			if k.other {
				b.Owner = "other"
			}
			backups = append(backups, b)
		}
		deletes, pinned := PlanCleanup("own", backups)
		var broken []error
		for _, b := range deletes {
			if b.Owner != "own" || b.Pinned {
				broken = append(broken, proptest.Broke("deletes only its owner's backups no Restore chose", "deletes %+v", b))
			}
		}
		for _, b := range backups {
			if b.Owner == "own" && !b.Pinned && !slices.Contains(deletes, b) {
				broken = append(broken, proptest.Broke("deletes every backup of its owner no Restore chose", "keeps %+v", b))
			}
			if b.Owner == "own" && b.Pinned && !slices.Contains(pinned, b) {
				broken = append(broken, proptest.Broke("reports each backup a Restore chose as waited for", "misses %+v", b))
			}
		}
		c.ObserveErr(describe(backups), broken...)
		if len(prefix) == 4 {
			return
		}
		for _, k := range kinds {
			build(append(slices.Clone(prefix), k))
		}
	}
	build(nil)
	c.Report()
}

func TestExpiredFailures(t *testing.T) {
	at := func(minute int) time.Time { return time.Date(2026, 3, 1, 3, minute, 0, 0, time.UTC) }
	backups := func(prefix string, minutes ...int) []Listed {
		out := make([]Listed, 0, len(minutes))
		for _, m := range minutes {
			out = append(out, Listed{ID: fmt.Sprintf("%s-%d", prefix, m), Started: at(m)})
		}
		return out
	}
	tests := []struct {
		name      string
		succeeded []Listed
		failed    []Listed
		keep      int
		want      []string
	}{
		{name: "no failures", succeeded: backups("ok", 1), keep: 2},
		{name: "failures before the newest success go", succeeded: backups("ok", 1, 5), failed: backups("bad", 2, 4, 6),
			keep: 2, want: []string{"bad-2", "bad-4"}},
		{name: "at most keep failures after it", succeeded: backups("ok", 1), failed: backups("bad", 2, 3, 4),
			keep: 2, want: []string{"bad-2"}},
		{name: "without a success, at most keep", failed: backups("bad", 2, 3, 4), keep: 1, want: []string{"bad-2", "bad-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, b := range ExpiredFailures(tt.succeeded, tt.failed, tt.keep) {
				got = append(got, b.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("expired %v, want %v", got, tt.want)
			}
		})
	}
}
