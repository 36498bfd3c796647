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

package backupconfig

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// The planners are pure, so their promises are checked over every
// observation of a bounded space, and over seeded random sequences through
// a model of the backup service, without a cluster.

var planNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

const (
	planMaxAttempts   = 3
	planTeardownLimit = 10 * time.Minute
	planRetryDelay    = time.Minute
)

// everyFinalObservation calls check with every final observation of the
// bounded space: 14 flags, 0 to 4 failed attempts, and four times relative
// to the BackupConfig's deletion (at it, just before its limit, at the
// limit, an hour past it).
func everyFinalObservation(check func(finalObservation)) int {
	n := 0
	offsets := []time.Duration{0, planTeardownLimit - time.Second, planTeardownLimit, planTeardownLimit + time.Hour}
	for bits := range 1 << 14 {
		flag := func(i int) bool { return bits&(1<<i) != 0 }
		for failed := range planMaxAttempts + 2 {
			for _, offset := range offsets {
				o := finalObservation{
					now: planNow, optIn: flag(0), suspended: flag(1), retain: flag(2), deleting: flag(3),
					appExists: flag(4), appHeld: flag(5), appDeleting: flag(6), namespaceTerminating: flag(7),
					otherRunning: flag(8), recorded: flag(9), listed: flag(10),
					attempts:        finalTally{succeeded: flag(11), running: flag(12), failed: failed, lastFailure: "disk full"},
					abandonReported: flag(13), maxAttempts: planMaxAttempts, teardownLimit: planTeardownLimit,
				}
				if !o.appExists && (o.appHeld || o.appDeleting || o.recorded) {
					continue // no MyApp, nothing known of it
				}
				if o.deleting {
					o.deletionStarted = planNow.Add(-offset)
				} else if offset != 0 {
					continue
				}
				check(o)
				n++
			}
		}
	}
	return n
}

// finalWanted reports whether the observation asks for a final backup: the
// MyApp is held, and goes (alone, or with this BackupConfig in a teardown).
func finalWanted(o finalObservation) bool {
	if o.deleting {
		return o.teardown()
	}
	return o.optIn && o.appExists && o.appHeld && o.appDeleting
}

// finalSucceeded reports whether the observation shows the final backup
// SUCCEEDED.
func finalSucceeded(o finalObservation) bool {
	return o.recorded || o.listed && o.attempts.succeeded
}

// applyFinalModel is what applying p does to what the next pass observes,
// with the service answering as the model says: a start makes a final
// backup RUNNING, a listing fills the tally, a reported give-up is read
// back from the status.
func applyFinalModel(o finalObservation, p finalPlan) finalObservation {
	switch p.action {
	case finalList:
		o.listed = true
	case finalStart:
		o.listed, o.attempts.running = true, true
	case finalAbandon:
		o.abandonReported = true
	}
	return o
}

// finalRulesBroken lists the promises p breaks for o.
func finalRulesBroken(o finalObservation, p finalPlan) []string {
	return slices.Concat(releaseRulesBroken(o, p), giveUpRulesBroken(o, p), startRulesBroken(o, p),
		suspendRulesBroken(o, p))
}

// suspendRulesBroken: suspend never blocks a deletion. A suspended
// BackupConfig that a final backup is wanted of starts nothing, and holds
// the MyApp only while it reads the service, follows a backup already
// running, or says its give-up; it never waits for a person (finalFailed).
func suspendRulesBroken(o finalObservation, p finalPlan) []string {
	if !o.suspended || !finalWanted(o) {
		return nil
	}
	if p.action == finalStart {
		return []string{"started a backup while suspended"}
	}
	hold := p.keepHold && !p.release
	switch p.action {
	case finalList, finalFollow, finalWaitOther, finalAbandon:
		return nil
	}
	if hold {
		return []string{"suspend blocked the deletion"}
	}
	return nil
}

// releaseRulesBroken: a MyApp held for a final backup is let go only after
// it SUCCEEDED, or after a give-up that the status reported already.
func releaseRulesBroken(o finalObservation, p finalPlan) []string {
	let := !p.keepHold || p.release
	reportedGiveUp := p.action == finalAbandon && o.abandonReported
	if finalWanted(o) && let && !finalSucceeded(o) && !reportedGiveUp {
		return []string{"released without a final backup or a reported give-up"}
	}
	return nil
}

// giveUpRulesBroken: a give-up is bounded and never silent. Only a
// BackupConfig being deleted (out of attempts, past its limit or suspended)
// or a suspended one in use gives up, and it keeps the hold until the
// status said so; past its limit it never waits on.
func giveUpRulesBroken(o finalObservation, p finalPlan) []string {
	var broken []string
	past := o.deleting && !o.now.Before(o.deletionStarted.Add(o.teardownLimit))
	if p.action == finalAbandon {
		outOfAttempts := o.listed && o.attempts.failed >= o.maxAttempts
		reason := past || o.suspended || outOfAttempts
		if !o.deleting && !o.suspended || !reason {
			broken = append(broken, "gave up without a reason")
		}
		if !o.abandonReported && (!p.keepHold || p.release) {
			broken = append(broken, "gave up silently")
		}
	}
	if finalWanted(o) && past && !finalSucceeded(o) && p.action != finalAbandon {
		broken = append(broken, "waited past the teardown limit")
	}
	return broken
}

// startRulesBroken: at most one backup of the owner RUNNING. A final backup
// starts only when none runs, as attempt failed+1 within the attempts; and,
// applied and observed again, nothing new is to be done (idempotency).
func startRulesBroken(o finalObservation, p finalPlan) []string {
	var broken []string
	if p.action == finalStart {
		if o.otherRunning || !o.listed || o.attempts.running || finalSucceeded(o) {
			broken = append(broken, "started a second backup")
		}
		if p.attempt != o.attempts.failed+1 || p.attempt > o.maxAttempts {
			broken = append(broken, "started a wrong attempt")
		}
	}
	next := planFinalBackup(applyFinalModel(o, p))
	if p.action == finalStart && next.action == finalStart {
		broken = append(broken, "started again after a start")
	}
	if p.action == finalList && next.action == finalList {
		broken = append(broken, "listed again after a listing")
	}
	return broken
}

func TestPlanFinalBackupKeepsItsPromises(t *testing.T) {
	violations := map[string]int{}
	var first []string
	fail := func(rule string, o finalObservation, p finalPlan) {
		violations[rule]++
		if len(first) < 5 {
			first = append(first, fmt.Sprintf("%s: %+v -> %+v", rule, o, p))
		}
	}
	n := everyFinalObservation(func(o finalObservation) {
		p := planFinalBackup(o)
		for _, rule := range finalRulesBroken(o, p) {
			fail(rule, o, p)
		}
	})
	t.Logf("checked %d final-backup observations; violations by rule: %v", n, violations)
	if len(violations) > 0 {
		t.Errorf("planFinalBackup broke its promises: %v\nfirst: %v", violations, first)
	}
}

// everyDueObservation calls check with every new-backup observation of the
// bounded space.
func everyDueObservation(check func(dueObservation)) int {
	n := 0
	app := types.UID("app-uid")
	phases := []backupv1alpha1.BackupPhase{backupv1alpha1.BackupRunning, backupv1alpha1.BackupSucceeded, backupv1alpha1.BackupFailed}
	triggers := []backupv1alpha1.BackupTrigger{backupv1alpha1.TriggerAppChange, backupv1alpha1.TriggerSchedule,
		backupv1alpha1.TriggerAppDeletion}
	finished := []time.Duration{-2 * time.Hour, -90 * time.Second, -30 * time.Second, 0}
	lasts := make([]*backupv1alpha1.BackupStatus, 0, 1+len(phases)*len(triggers)*4*len(finished))
	lasts = append(lasts, nil)
	for _, phase := range phases {
		for _, trigger := range triggers {
			for _, attempt := range []int32{0, 1, 2, 7} {
				for _, at := range finished {
					done := metav1.NewTime(planNow.Add(at))
					lasts = append(lasts, &backupv1alpha1.BackupStatus{ID: "b", Phase: phase, Trigger: trigger,
						Attempt: attempt, StartTime: &done, CompletionTime: &done})
				}
			}
		}
	}
	for _, onChange := range []bool{false, true} {
		for _, slot := range []bool{false, true} {
			for _, seen := range []struct {
				uid types.UID
				gen int64
			}{{"", 0}, {app, 1}, {app, 2}, {"earlier-uid", 2}} {
				for _, last := range lasts {
					check(dueObservation{now: planNow, onChange: onChange, slotDue: slot, appUID: app, appGeneration: 2,
						observedUID: seen.uid, observedGeneration: seen.gen, last: last, retryDelay: planRetryDelay})
					n++
				}
			}
		}
	}
	return n
}

// changeOwed reports whether the MyApp's generation still owes a
// successful backup, as the observation shows it: none started, or the last
// attempt at it failed.
func changeOwed(o dueObservation) bool {
	if !o.onChange {
		return false
	}
	return o.observedUID != o.appUID || o.observedGeneration != o.appGeneration || changeAttemptFailed(o.last)
}

func TestPlanDueKeepsItsPromises(t *testing.T) {
	violations := map[string]int{}
	var first []string
	fail := func(rule string, o dueObservation, p duePlan) {
		violations[rule]++
		if len(first) < 5 {
			first = append(first, fmt.Sprintf("%s: %+v last=%+v -> %+v", rule, o, o.last, p))
		}
	}
	n := everyDueObservation(func(o dueObservation) {
		p := planDue(o)
		// 1. A generation not covered by a SUCCEEDED backup always has a
		// start or a retry planned, now or later.
		if changeOwed(o) && !p.owes() && p.later <= 0 {
			fail("owed change without a start or a retry", o, p)
		}
		// ... whatever the schedule did: the due slot's backup starts first
		// (carrying the change's attempts) and fails; the change is still
		// owed after it.
		if p.slot && changeOwed(o) && (p.retry || p.later > 0) {
			done := metav1.NewTime(o.now)
			after := o
			after.last = &backupv1alpha1.BackupStatus{ID: "s", Phase: backupv1alpha1.BackupFailed,
				Trigger: backupv1alpha1.TriggerSchedule, Attempt: p.carry, StartTime: &done, CompletionTime: &done}
			after.now = o.now.Add(maxFailedBackupRetryDelay)
			if q := planDue(after); !q.retry || q.attempt != p.carry+1 {
				fail("a failed scheduled backup ended the retries of a failed change", o, p)
			}
		}
		// 2. Nothing is owed once the generation's last attempt succeeded.
		if !changeOwed(o) && p.owes() {
			fail("started a backup of a covered generation", o, p)
		}
		// 3. Retries count up from the failed attempt and wait first.
		if p.retry && (p.attempt < 2 || p.later > 0) {
			fail("retried a wrong attempt", o, p)
		}
		// 4. Idempotency: once the owed backup started (its start records
		// the generation and the attempt) nothing more is owed.
		if p.owes() {
			started := metav1.NewTime(o.now)
			after := o
			after.observedUID, after.observedGeneration = o.appUID, o.appGeneration
			after.slotDue = false
			after.last = &backupv1alpha1.BackupStatus{ID: "c", Phase: backupv1alpha1.BackupRunning,
				Trigger: backupv1alpha1.TriggerAppChange, Attempt: p.attempt, StartTime: &started}
			if q := planDue(after); q.owes() || q.slot {
				fail("owed again after the start", o, p)
			}
		}
	})
	t.Logf("checked %d new-backup observations; violations by rule: %v", n, violations)
	if len(violations) > 0 {
		t.Errorf("planDue broke its promises: %v\nfirst: %v", violations, first)
	}
}

// TestPlanSequencesAgainstAServiceModel drives both planners through seeded
// random sequences: edits, schedule slots, service answers (success,
// failure), time, the MyApp's deletion and a namespace teardown, applying
// each plan to a model of the backup service and of the status, and checks
// the invariants after every step: at most one backup RUNNING; a MyApp is
// let go only after its final backup SUCCEEDED or a reported give-up; and
// whenever no backup runs and none is owed, the MyApp's generation has a
// SUCCEEDED backup (with backupOnChange).
func TestPlanSequencesAgainstAServiceModel(t *testing.T) {
	const seeds, steps = 300, 200
	checked := 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 26))
		m := newPlanModel()
		for step := range steps {
			m.act(rng)
			if err := m.pass(); err != nil {
				t.Fatalf("seed %d step %d: %v\nhistory: %v", seed, step, err, m.history)
			}
			checked++
			if m.gone {
				break
			}
		}
	}
	t.Logf("checked invariants after %d passes in %d seeded sequences", checked, seeds)
}

// planModel is a BackupConfig with one MyApp and the backup service, as the
// planners see them.
type planModel struct {
	now        time.Time
	gen        int64
	observed   int64
	last       *backupv1alpha1.BackupStatus
	slotDue    bool
	failNext   bool
	succeeded  map[int64]bool // generations with a SUCCEEDED backup
	running    int            // backups RUNNING in the service
	runningGen int64
	// the MyApp's deletion and the namespace teardown
	appDeleting, deleting, held, gone bool
	deletionStarted                   time.Time
	finalFailed                       int
	finalRunning, finalSucceeded      bool
	abandonReported                   bool
	history                           []string
}

func newPlanModel() *planModel {
	return &planModel{now: planNow, gen: 1, succeeded: map[int64]bool{}, held: true}
}

// act changes the world at random.
func (m *planModel) act(rng *rand.Rand) {
	switch k := rng.IntN(20); {
	case k < 4 && !m.appDeleting:
		m.gen++
		m.history = append(m.history, "edit")
	case k < 7:
		m.slotDue = true
		m.history = append(m.history, "slot")
	case k < 10:
		m.failNext = !m.failNext
		m.history = append(m.history, fmt.Sprintf("fail=%v", m.failNext))
	case k < 16:
		m.now = m.now.Add(time.Duration(rng.IntN(180)) * time.Second)
		m.finish()
		m.history = append(m.history, "time")
	case k < 17 && !m.appDeleting:
		m.appDeleting = true
		m.history = append(m.history, "delete-app")
	case k < 18 && !m.deleting:
		m.deleting, m.appDeleting, m.deletionStarted = true, true, m.now
		m.history = append(m.history, "teardown")
	}
}

// finish ends the running backup as the service decides.
func (m *planModel) finish() {
	if m.running == 0 {
		return
	}
	m.running = 0
	done := metav1.NewTime(m.now)
	phase := backupv1alpha1.BackupSucceeded
	if m.failNext {
		phase = backupv1alpha1.BackupFailed
	}
	if m.finalRunning {
		m.finalRunning = false
		if phase == backupv1alpha1.BackupSucceeded {
			m.finalSucceeded = true
		} else {
			m.finalFailed++
		}
		return
	}
	m.last.Phase, m.last.CompletionTime = phase, &done
	if phase == backupv1alpha1.BackupSucceeded {
		m.succeeded[m.runningGen] = true
		if m.last.Trigger == backupv1alpha1.TriggerSchedule {
			m.observed = max(m.observed, m.runningGen)
		}
	}
}

// pass runs the planners once and applies their plans to the model.
func (m *planModel) pass() error {
	if m.gone {
		return nil
	}
	if m.running > 1 {
		return fmt.Errorf("%d backups RUNNING", m.running)
	}
	if m.appDeleting && m.held {
		return m.passFinal()
	}
	if m.appDeleting {
		return nil
	}
	// New backups.
	if m.running > 0 {
		return nil
	}
	o := dueObservation{now: m.now, onChange: true, slotDue: m.slotDue, appUID: "app", appGeneration: m.gen,
		observedUID: "app", observedGeneration: m.observed, last: m.last, retryDelay: planRetryDelay}
	p := planDue(o)
	start := func(trigger backupv1alpha1.BackupTrigger, attempt int32) {
		started := metav1.NewTime(m.now)
		m.last = &backupv1alpha1.BackupStatus{ID: fmt.Sprint(m.now), Phase: backupv1alpha1.BackupRunning,
			Trigger: trigger, Attempt: attempt, StartTime: &started}
		m.running, m.runningGen = 1, m.gen
	}
	switch {
	case p.slot:
		m.slotDue = false
		start(backupv1alpha1.TriggerSchedule, p.carry)
	case p.owes():
		start(backupv1alpha1.TriggerAppChange, p.attempt)
		m.observed = m.gen
	case p.later <= 0 && !m.succeeded[m.gen]:
		return fmt.Errorf("generation %d has no SUCCEEDED backup and none is owed", m.gen)
	}
	return nil
}

// passFinal runs the final-backup planner for the MyApp held and going.
func (m *planModel) passFinal() error {
	o := finalObservation{now: m.now, optIn: true, retain: true, deleting: m.deleting,
		deletionStarted: m.deletionStarted, appExists: true, appHeld: true, appDeleting: true,
		otherRunning: m.running > 0 && !m.finalRunning, recorded: m.finalSucceeded, listed: true,
		attempts:    finalTally{succeeded: m.finalSucceeded, running: m.finalRunning, failed: m.finalFailed},
		maxAttempts: planMaxAttempts, teardownLimit: planTeardownLimit, abandonReported: m.abandonReported}
	p := planFinalBackup(o)
	switch p.action {
	case finalStart:
		if m.running > 0 {
			return fmt.Errorf("final backup started while another runs")
		}
		m.running, m.finalRunning = 1, true
	case finalAbandon:
		m.abandonReported = true
	}
	if p.release || (!p.keepHold && p.action != finalNone) {
		reportedGiveUp := p.action == finalAbandon && o.abandonReported
		if !m.finalSucceeded && !reportedGiveUp {
			return fmt.Errorf("MyApp let go without a final backup (%+v)", p)
		}
		m.held = false
		m.gone = m.deleting
	}
	return nil
}

// everyRetentionObservation calls check with every retention observation of
// a bounded space: up to four listed backups, each of this owner or another,
// SUCCEEDED, FAILED or RUNNING, a needed final attempt or not, started in
// list order or all at once; keepLast 1 to 3; a backup running or not.
func everyRetentionObservation(check func(retentionObservation)) int {
	type kind struct {
		other, succeeded, failed, needed bool
	}
	kinds := make([]kind, 0, 12)
	for _, other := range []bool{false, true} {
		for _, phase := range []int{0, 1, 2} {
			for _, needed := range []bool{false, true} {
				kinds = append(kinds, kind{other: other, succeeded: phase == 1, failed: phase == 2, needed: needed})
			}
		}
	}
	n := 0
	var build func(prefix []kind)
	build = func(prefix []kind) {
		for _, sameStart := range []bool{false, true} {
			for keep := 1; keep <= 3; keep++ {
				for _, running := range []bool{false, true} {
					o := retentionObservation{owner: "own", keep: keep, running: running}
					for i, k := range prefix {
						b := listedBackup{id: fmt.Sprint(i), owner: "own", started: planNow.Add(time.Duration(i) * time.Minute),
							succeeded: k.succeeded, failed: k.failed, neededAttempt: k.needed}
						if sameStart {
							b.started = planNow
						}
						if k.other {
							b.owner = "other"
						}
						o.backups = append(o.backups, b)
					}
					check(o)
					n++
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
	return n
}

func TestPlanRetentionKeepsItsPromises(t *testing.T) {
	violations := map[string]int{}
	var first []string
	fail := func(rule string, o retentionObservation, p retentionPlan) {
		violations[rule]++
		if len(first) < 5 {
			first = append(first, fmt.Sprintf("%s: %+v -> %+v", rule, o, p))
		}
	}
	n := everyRetentionObservation(func(o retentionObservation) {
		p := planRetention(o)
		for _, rule := range retentionRulesBroken(o, p) {
			fail(rule, o, p)
		}
	})
	t.Logf("checked %d retention observations; violations by rule: %v", n, violations)
	if len(violations) > 0 {
		t.Errorf("planRetention broke its promises: %v\nfirst: %v", violations, first)
	}
}

// retentionRulesBroken lists the promises p breaks for o: retention never
// deletes another owner's backup, a running one, a counted final attempt or
// the newest success; keeps keepLast successes; waits while a backup runs;
// and, applied and observed again, prunes nothing more.
func retentionRulesBroken(o retentionObservation, p retentionPlan) []string {
	var broken []string
	var newest *listedBackup
	succeeded := 0
	for i := range o.backups {
		b := &o.backups[i]
		if b.owner == o.owner && b.succeeded {
			succeeded++
			if newest == nil || !b.started.Before(newest.started) {
				newest = b
			}
		}
	}
	deleted := map[string]bool{}
	deletedSucceeded := 0
	for _, b := range p.expired {
		deleted[b.id] = true
		switch {
		case b.owner != o.owner:
			broken = append(broken, "deleted another owner's backup")
		case !b.succeeded && !b.failed:
			broken = append(broken, "deleted a running backup")
		case b.neededAttempt && !b.succeeded:
			broken = append(broken, "deleted a counted final attempt")
		case b.succeeded:
			deletedSucceeded++
		}
	}
	if newest != nil && deleted[newest.id] {
		broken = append(broken, "deleted the newest success")
	}
	if succeeded-deletedSucceeded < min(succeeded, o.keep) {
		broken = append(broken, "kept fewer successes than keepLast")
	}
	if o.running && len(p.expired) > 0 {
		broken = append(broken, "pruned while a backup runs")
	}
	after := o
	after.backups = slices.DeleteFunc(slices.Clone(o.backups), func(b listedBackup) bool { return deleted[b.id] })
	if q := planRetention(after); len(q.expired) > 0 {
		broken = append(broken, "pruned again after pruning")
	}
	return broken
}

// TestPlanNewBackupKeepsItsPromises: over every observation, no backup is
// started while the schedule is unusable, the BackupConfig suspended, the
// MyApp missing or being deleted, or a backup running; a slot that comes
// while no backup may be taken is skipped, not saved up.
func TestPlanNewBackupKeepsItsPromises(t *testing.T) {
	n := 0
	for bits := range 1 << 6 {
		flag := func(i int) bool { return bits&(1<<i) != 0 }
		o := newBackupObservation{invalidSchedule: flag(0), suspended: flag(1), appExists: flag(2),
			appDeleting: flag(3), running: flag(4), slotDue: flag(5)}
		if !o.appExists && o.appDeleting {
			continue
		}
		n++
		p := planNewBackup(o)
		blocked := o.suspended || !o.appExists || o.appDeleting
		switch {
		case p.action == newDecide && (o.invalidSchedule || blocked || o.running):
			t.Errorf("may start a backup: %+v -> %+v", o, p)
		case p.action == newSkipSlot && !o.slotDue:
			t.Errorf("skipped a slot that is not due: %+v -> %+v", o, p)
		case blocked && !o.invalidSchedule && o.slotDue && p.action != newSkipSlot:
			t.Errorf("saved up a slot that came while no backup may be taken: %+v -> %+v", o, p)
		case !blocked && !o.invalidSchedule && !o.running && p.action != newDecide:
			t.Errorf("decided nothing when backups may be owed: %+v -> %+v", o, p)
		}
	}
	t.Logf("checked %d new-backup gate observations", n)
}
