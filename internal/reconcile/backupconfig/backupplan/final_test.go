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

// everyFinalObservation calls check with every final observation of the
// bounded space: 16 flags, 0 to 4 failed attempts, and six times relative
// to the BackupConfig's deletion (at it, seconds and a minute after it,
// just before the teardown limit, at it, an hour past it).
func everyFinalObservation(check func(FinalObservation)) {
	offsets := []time.Duration{0, 6 * time.Second, time.Minute, planTeardownLimit - time.Second,
		planTeardownLimit, planTeardownLimit + time.Hour}
	for bits := range 1 << 16 {
		flag := func(i int) bool { return bits&(1<<i) != 0 }
		for failed := range planMaxAttempts + 2 {
			for _, offset := range offsets {
				o := FinalObservation{
					Now: planNow, OptIn: flag(0), Suspended: flag(1), Retain: flag(2), Deleting: flag(3),
					AppExists: flag(4), AppHeld: flag(5), AppDeleting: flag(6), AppFromAPIServer: flag(7),
					NamespaceRead: flag(8), NamespaceTerminating: flag(9), OtherRunning: flag(10), Recorded: flag(11),
					Listed: flag(12), AbandonReported: flag(15),
					Attempts:    Tally{Succeeded: flag(13), Running: flag(14), Failed: failed},
					MaxAttempts: planMaxAttempts, TeardownLimit: planTeardownLimit,
				}
				switch {
				case !o.AppExists && (o.AppHeld || o.AppDeleting || o.Recorded):
					continue // no MyApp, nothing known of it
				case !o.NamespaceRead && o.NamespaceTerminating, !o.Listed && (o.Attempts != Tally{}):
					continue // nothing known of what was not read
				case o.Deleting:
					o.DeletionStarted = planNow.Add(-offset)
				case offset != 0:
					continue
				}
				check(o)
			}
		}
	}
}

// succeededShown reports whether the observation shows the final backup
// SUCCEEDED.
func succeededShown(o FinalObservation) bool {
	return o.Recorded || o.Listed && o.Attempts.Succeeded
}

// mayLetGo lists the reasons the docs give for letting a held MyApp go
// without waiting any more ("A final backup before the app goes",
// "Deletion"), as the observation shows them; none means the hold stays.
// The promise: a BackupConfig lets its MyApp go only once a final backup
// of it SUCCEEDED, or once it said with a Warning why there is none, or
// when it owes none (the option off, nothing held, deleted under Delete,
// or in use with a MyApp that does not go). How long ago a deletion began
// is never a reason (issue 40, B4).
func mayLetGo(o FinalObservation, p FinalPlan) []string {
	var why []string
	add := func(ok bool, reason string) {
		if ok {
			why = append(why, reason)
		}
	}
	add(!o.OptIn, "the option is off")
	add((!o.AppExists || !o.AppHeld) && (!o.Deleting || o.AppFromAPIServer), "nothing is held")
	add(o.Deleting && !o.Retain, "deleted under Delete")
	add(succeededShown(o), "the final backup succeeded")
	add(p.Action == FinalAbandon && o.AbandonReported, "the give-up was said")
	add(!o.Deleting && !o.AppDeleting, "in use, and the MyApp does not go")
	return why
}

// finalPromisesBroken lists the promises p breaks for o.
func finalPromisesBroken(o FinalObservation, p FinalPlan) []string {
	return slices.Concat(holdPromisesOfFinalBroken(o, p), readPromisesBroken(o, p), giveUpPromisesBroken(o, p),
		startPromisesBroken(o, p), finalIdempotencyBroken(o, p))
}

// goesToo reports whether the observation shows the MyApp going: its
// deletion began, or its namespace's.
func goesToo(o FinalObservation) bool {
	return o.AppDeleting || o.NamespaceRead && o.NamespaceTerminating
}

// holdPromisesOfFinalBroken: a MyApp is let go only for a reason the docs
// give, and a give-up only once said; a hold nobody wants is never kept.
func holdPromisesOfFinalBroken(o FinalObservation, p FinalPlan) []string {
	var broken []string
	decided := p.Need == NeedNothing
	letGo := decided && !p.KeepHold
	switch {
	case letGo && len(mayLetGo(o, p)) == 0:
		broken = append(broken, "let the MyApp go without a final backup, a said give-up or a way out")
	case letGo && p.Action == FinalAbandon && !o.AbandonReported:
		broken = append(broken, "gave up silently")
	}
	// A BackupConfig being deleted knows the MyApp is gone only from the
	// API server.
	nobody := !o.OptIn || o.Deleting && !o.Retain || !o.AppExists && (!o.Deleting || o.AppFromAPIServer)
	if nobody && (p.KeepHold || !decided) {
		broken = append(broken, "kept a hold nobody wants")
	}
	return append(broken, livePromisesBroken(o, p)...)
}

// livePromisesBroken: a BackupConfig being deleted while its MyApp lives
// (and its namespace stays) owes the MyApp a last backup now, since no
// BackupConfig is left to take one when the MyApp goes: it never waits
// for a deletion of the MyApp that may never come.
func livePromisesBroken(o FinalObservation, p FinalPlan) []string {
	live := o.Deleting && o.OptIn && o.Retain && o.AppFromAPIServer && o.AppExists && o.AppHeld &&
		o.NamespaceRead && !goesToo(o)
	if live && p.Need == NeedNothing && p.Action == FinalWaitApp {
		return []string{"waited for a deletion of the MyApp that may never come"}
	}
	return nil
}

// readPromisesBroken: a BackupConfig being deleted decides from the API
// server's MyApp (T1), and nothing read in the pass is asked for again.
func readPromisesBroken(o FinalObservation, p FinalPlan) []string {
	var broken []string
	if o.Deleting && o.OptIn && o.Retain && !o.AppFromAPIServer && p.Need != NeedAppFromAPIServer {
		broken = append(broken, "a BackupConfig being deleted decided on the cache's MyApp (T1)")
	}
	if p.Need == NeedAttempts && o.Listed || p.Need == NeedNamespace && o.NamespaceRead ||
		p.Need == NeedAppFromAPIServer && o.AppFromAPIServer {
		broken = append(broken, "asked again for what the pass read")
	}
	return broken
}

// giveUpPromisesBroken: past the teardown limit a teardown gives up rather
// than wait on; a give-up says its true reason; a teardown or a suspended
// BackupConfig is never left to a person.
func giveUpPromisesBroken(o FinalObservation, p FinalPlan) []string {
	var broken []string
	past := o.Deleting && !o.Now.Before(o.DeletionStarted.Add(o.TeardownLimit))
	owed := o.OptIn && o.Retain && o.AppFromAPIServer && o.AppExists && o.AppHeld
	if past && owed && !succeededShown(o) && p.Need == NeedNothing && p.Action != FinalAbandon {
		broken = append(broken, "waited past the teardown limit")
	}
	if p.Action == FinalAbandon && !giveUpTrue(o, p.GiveUp, past) {
		broken = append(broken, "gave up without the reason it gives")
	}
	if p.Action == FinalFailed && (o.Deleting || o.Suspended) {
		broken = append(broken, "left a teardown or a suspended BackupConfig to a person")
	}
	return broken
}

// giveUpTrue reports whether the observation shows the reason a give-up
// gives: the teardown limit passed, spec.suspend, or the attempts of a
// teardown run out.
func giveUpTrue(o FinalObservation, why GiveUp, past bool) bool {
	switch why {
	case GiveUpTimeLimit:
		return past
	case GiveUpSuspended:
		return o.Suspended
	case GiveUpAttempts:
		return o.Deleting && o.Listed && o.Attempts.Failed >= o.MaxAttempts
	}
	return false
}

// startPromisesBroken: a final backup starts only when none runs and none
// succeeded, never while suspended, as the next attempt within the
// attempts, of a MyApp that goes or whose BackupConfig goes.
func startPromisesBroken(o FinalObservation, p FinalPlan) []string {
	if p.Action != FinalStart {
		return nil
	}
	switch {
	case o.Suspended:
		return []string{"started a final backup while suspended"}
	case o.OtherRunning || !o.Listed || o.Attempts.Running || succeededShown(o):
		return []string{"started a second backup"}
	case p.Attempt != o.Attempts.Failed+1 || p.Attempt > o.MaxAttempts:
		return []string{fmt.Sprintf("started attempt %d after %d failed", p.Attempt, o.Attempts.Failed)}
	case !goesToo(o) && !o.Deleting:
		return []string{"started a final backup of a MyApp that does not go, for a BackupConfig that stays"}
	}
	return nil
}

// finalIdempotencyBroken: applied, with the service answering as a model
// does, and observed again, the plan does not ask for the same thing
// again.
func finalIdempotencyBroken(o FinalObservation, p FinalPlan) []string {
	next := o
	switch p.Need {
	case NeedAppFromAPIServer:
		next.AppFromAPIServer = true
	case NeedNamespace:
		next.NamespaceRead = true
	case NeedAttempts:
		next.Listed = true
	}
	switch p.Action {
	case FinalStart:
		next.Attempts.Running = true
	case FinalAbandon:
		next.AbandonReported = true
	}
	q := PlanFinalBackup(next)
	switch {
	case p.Need != NeedNothing && q.Need == p.Need:
		return []string{"needed the same read again after it"}
	case p.Action == FinalStart && q.Action == FinalStart:
		return []string{"started again after a start"}
	case p.Action == FinalAbandon && !o.AbandonReported && (q.Action != FinalAbandon || q.KeepHold):
		return []string{"a said give-up does not let the MyApp go"}
	}
	return nil
}

func TestPlanFinalBackupKeepsItsPromises(t *testing.T) {
	c := proptest.New(t, "final-backup observations")
	everyFinalObservation(func(o FinalObservation) {
		plan := PlanFinalBackup(o)
		c.Observe(func() string { return fmt.Sprintf("%+v -> %+v", o, plan) }, finalPromisesBroken(o, plan)...)
	})
	c.Report()
}
