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
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

const planApp = "app-uid"

// everyLast lists status.lastBackup in every phase and trigger, with
// attempts 0, 1, 2 and 7, finished 2 h, 90 s, 30 s ago or just now, and
// no last backup at all.
func everyLast() []*Backup {
	lasts := make([]*Backup, 0, 193)
	lasts = append(lasts, nil)
	for _, phase := range []Phase{PhaseRunning, PhaseSucceeded, PhaseFailed} {
		for _, trigger := range []Trigger{TriggerSchedule, TriggerChange, TriggerManual, TriggerFinal} {
			for _, attempt := range []int32{0, 1, 2, 7} {
				for _, ago := range []time.Duration{2 * time.Hour, 90 * time.Second, 30 * time.Second, 0} {
					b := &Backup{Trigger: trigger, Phase: phase, Attempt: attempt, Started: planNow.Add(-ago - time.Minute)}
					if phase != PhaseRunning {
						b.Finished = planNow.Add(-ago)
					}
					lasts = append(lasts, b)
				}
			}
		}
	}
	return lasts
}

// everyNewBackupObservation calls check with every new-backup observation
// of the bounded space: seven flags, four records of what was backed up
// (nothing, this generation, the one before, another MyApp of the same
// name), every last backup, and a schedule or none.
func everyNewBackupObservation(check func(NewBackupObservation)) {
	type seen struct {
		uid string
		gen int64
	}
	for bits := range 1 << 8 {
		flag := func(i int) bool { return bits&(1<<i) != 0 }
		for _, slot := range []time.Time{{}, planNow.Add(-time.Second), planNow.Add(time.Hour)} {
			for _, s := range []seen{{"", 0}, {planApp, 2}, {planApp, 1}, {"earlier-uid", 2}} {
				for _, last := range everyLast() {
					o := NewBackupObservation{Now: planNow, Suspended: flag(0), OnChange: flag(1),
						InvalidSchedule: flag(2), AppExists: flag(3), AppDeleting: flag(4), ManualRequested: flag(5),
						Listed: flag(6), Slot: slot, SlotDue: !slot.IsZero() && !slot.After(planNow),
						AppUID: planApp, AppGeneration: 2, ObservedUID: s.uid, ObservedGeneration: s.gen,
						Last: last, RetryDelay: planRetryDelay, Restoring: flag(7)}
					if !o.AppExists && o.AppDeleting || o.InvalidSchedule && !slot.IsZero() {
						continue // no MyApp, nothing known of it; an unusable schedule has no slot
					}
					check(o)
				}
			}
		}
	}
}

// failedChangeAttempt reports whether last is an attempt at the change
// that failed, as the docs define one: a failed on-change backup, or a
// failed scheduled or backup-now backup that was started while a failed
// change was owed its retry (it says so by carrying the change's
// attempts).
func failedChangeAttempt(last *Backup) bool {
	return last != nil && last.Phase == PhaseFailed && (last.Trigger == TriggerChange ||
		(last.Trigger == TriggerSchedule || last.Trigger == TriggerManual) && last.Attempt > 0)
}

// newBackupPromisesBroken lists the promises p breaks for o, from
// docs/spec/backupconfig.md ("Triggers", "Failures", "Suspend", "Backup
// now").
func newBackupPromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	broken := slices.Concat(startGatePromisesBroken(o, p), slotPromisesBroken(o, p), changePromisesBroken(o, p),
		wakePromisesBroken(o, p), quietPromisesBroken(o, p))
	covered := o.ObservedUID == o.AppUID && o.ObservedGeneration == o.AppGeneration
	if covered && failedChangeAttempt(o.Last) && o.OnChange {
		broken = append(broken, retryStartPromisesBroken(o, p)...)
		broken = append(broken, retryWakePromisesBroken(o, p)...)
	}
	return broken
}

// blockedOf reports whether no backup may be taken: suspended, no MyApp,
// or the MyApp being deleted.
func blockedOf(o NewBackupObservation) bool {
	return (o.Suspended || !o.AppExists || o.AppDeleting) && !quietOf(o)
}

// quietOf reports whether a Restore in progress writes the MyApp (and the
// BackupConfig is not suspended, which skips slots as ever): nothing
// starts, and nothing is skipped either.
func quietOf(o NewBackupObservation) bool { return o.Restoring && !o.Suspended }

// quietPromisesBroken: while a Restore writes the MyApp, no backup starts,
// no slot is skipped (it is taken afterwards), a running backup is still
// polled, and the pass still comes back for a slot to come.
func quietPromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	if !o.Restoring {
		return nil
	}
	var broken []string
	if p.Action == NewStartManual || p.Action == NewStartSlot || p.Action == NewStartChange {
		broken = append(broken, "started a backup while a Restore of its MyApp is in progress")
	}
	if quietOf(o) && p.Action == NewSkipSlot {
		broken = append(broken, "skipped a slot that came while a Restore was in progress instead of holding it")
	}
	if quietOf(o) && o.Last.Running() && p.Wake.Kind != WakePoll {
		broken = append(broken, "does not poll the backup that runs while a Restore is in progress")
	}
	return broken
}

// startGatePromisesBroken: no start while blocked, while a backup runs,
// or before the service was asked for one still running; a backup-now
// request is served first, and only when asked.
func startGatePromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	var broken []string
	starts := p.Action == NewStartManual || p.Action == NewStartSlot || p.Action == NewStartChange
	running := o.Last.Running()
	if starts && blockedOf(o) {
		broken = append(broken, "started a backup while suspended, without a MyApp or while it is being deleted")
	}
	if starts && running {
		broken = append(broken, "started a second backup while one runs")
	}
	if starts && !o.Listed {
		broken = append(broken, "started a backup before asking the service for one still running")
	}
	if !blockedOf(o) && !quietOf(o) && !running && o.ManualRequested && o.Listed && p.Action != NewStartManual {
		broken = append(broken, "a backup-now request waited although a backup may be taken")
	}
	if p.Action == NewStartManual && !o.ManualRequested {
		broken = append(broken, "started a backup-now backup nobody asked for")
	}
	return broken
}

// slotPromisesBroken: a slot that comes while no backup may be taken is
// skipped, not saved up; only a due slot starts a scheduled backup, and
// none does while spec.schedule is unusable.
func slotPromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	var broken []string
	if blockedOf(o) && o.SlotDue && p.Action != NewSkipSlot {
		broken = append(broken, "a slot that came while no backup may be taken was not skipped")
	}
	if p.Action == NewSkipSlot && (!blockedOf(o) || !o.SlotDue) {
		broken = append(broken, "skipped a slot a backup could be taken for")
	}
	if p.Action == NewStartSlot && !o.SlotDue {
		broken = append(broken, "started a scheduled backup with no slot due")
	}
	if o.InvalidSchedule && (p.Action == NewStartSlot || p.Action == NewStartChange) {
		broken = append(broken, "started a scheduled or on-change backup while spec.schedule is unusable")
	}
	return broken
}

// changePromisesBroken: a generation no backup was taken of is backed up;
// one that was is not backed up again on change, unless its attempt failed.
func changePromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	var broken []string
	covered := o.ObservedUID == o.AppUID && o.ObservedGeneration == o.AppGeneration
	free := !blockedOf(o) && !quietOf(o) && !o.Last.Running()
	if free && !o.InvalidSchedule && o.OnChange && !covered && p.Action == NewNothing {
		broken = append(broken, "a generation no backup was taken of is not backed up")
	}
	if p.Action == NewStartChange && (!o.OnChange || covered && !failedChangeAttempt(o.Last)) {
		broken = append(broken, "backed up a generation already backed up, on change")
	}
	if p.Action == NewStartChange && p.Attempt < 1 {
		broken = append(broken, "started an on-change backup with no attempt number")
	}
	return broken
}

// wakePromisesBroken: a plan that ends the pass comes back for the next
// slot (blocked or not) and polls a running backup; it never wakes for a
// time that has come already.
func wakePromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	slotWaits := !o.Slot.IsZero() && !o.SlotDue && (p.Wake.Kind == WakeNone || p.Wake.At.After(o.Slot))
	switch {
	case p.Action != NewNothing && p.Wake.Kind != WakeNone:
		return []string{"a plan with a step to take also named a wake-up"}
	case p.Action != NewNothing:
	case !blockedOf(o) && !o.Last.Running() && !o.InvalidSchedule && slotWaits:
		return []string{"the pass does not come back for the next slot"}
	case blockedOf(o) && slotWaits:
		return []string{"a suspended or waiting BackupConfig does not come back for the next slot"}
	case (p.Wake.Kind == WakeRetry || p.Wake.Kind == WakeSlot) && !p.Wake.At.After(o.Now):
		return []string{"woke for a time that has come already instead of acting"}
	case !blockedOf(o) && o.Last.Running() && p.Wake.Kind != WakePoll:
		return []string{"does not poll the backup that runs"}
	}
	return nil
}

// retryStartPromisesBroken: the generation's last attempt failed (n
// attempts, at least one). Its retry is attempt n+1, no sooner than the
// retry delay after the failed attempt finished; a scheduled or backup-now
// backup started before it carries the n attempts, so that its own failure
// leaves the retry owed (audit 2, F3).
func retryStartPromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	n := max(o.Last.Attempt, 1)
	switch {
	case p.Action == NewStartChange && p.Attempt != n+1:
		return []string{fmt.Sprintf("retried as attempt %d after %d failed", p.Attempt, n)}
	case p.Action == NewStartChange && o.Now.Before(o.Last.Finished.Add(o.RetryDelay)):
		return []string{"retried before the retry delay"}
	case p.Action == NewStartSlot && p.Attempt != n:
		return []string{"a scheduled backup started while a retry is owed does not carry the attempts (F3)"}
	case p.Action == NewStartManual && p.Attempt != n:
		return []string{"a backup-now backup started while a retry is owed does not carry the attempts"}
	}
	return nil
}

// retryWakePromisesBroken: until its retry, the pass comes back for it,
// no later than an hour after the failed attempt finished and not before
// the retry delay.
func retryWakePromisesBroken(o NewBackupObservation, p NewBackupPlan) []string {
	finished := o.Last.Finished
	switch {
	case p.Action != NewNothing || blockedOf(o) || quietOf(o) || o.InvalidSchedule || o.ManualRequested || o.SlotDue:
	case !o.Now.Before(finished.Add(MaxFailedRetryDelay)):
		return []string{"a retry waited more than an hour"}
	case p.Wake.Kind == WakeNone || p.Wake.At.After(finished.Add(MaxFailedRetryDelay)):
		return []string{"the pass does not come back for the retry"}
	case p.Wake.Kind == WakeRetry && p.Wake.At.Before(finished.Add(o.RetryDelay)):
		return []string{"the retry is planned before the retry delay"}
	}
	return nil
}

func TestPlanNewBackupKeepsItsPromises(t *testing.T) {
	c := proptest.New(t, "new-backup observations")
	everyNewBackupObservation(func(o NewBackupObservation) {
		plan := PlanNewBackup(o)
		c.Observe(func() string {
			return fmt.Sprintf("%+v last=%+v -> %+v", o, o.Last, plan)
		}, newBackupPromisesBroken(o, plan)...)
	})
	c.Report()
}

// TestTheRetryDelayDoublesUpToAnHour states the retry rule of the docs
// ("retried with backoff: the retry delay after the first failure, doubled
// for each further one, up to an hour") over attempts 1 to 20 and three
// retry delays.
func TestTheRetryDelayDoublesUpToAnHour(t *testing.T) {
	for _, retryDelay := range []time.Duration{time.Second, time.Minute, 40 * time.Minute} {
		prev := time.Duration(0)
		for attempt := int32(1); attempt <= 20; attempt++ {
			last := &Backup{Trigger: TriggerChange, Phase: PhaseFailed, Attempt: attempt, Started: planNow.Add(-time.Minute),
				Finished: planNow}
			at, ok := RetryOfFailed(last, retryDelay, time.Time{})
			wait := at.Sub(planNow)
			want := min(2*prev, MaxFailedRetryDelay)
			if attempt == 1 {
				want = retryDelay
			}
			if !ok || wait != want {
				t.Errorf("retry delay %s, attempt %d failed: retried after %s (planned %v), want %s", retryDelay, attempt,
					wait, ok, want)
			}
			prev = wait
		}
	}
	for _, trigger := range []Trigger{TriggerManual, TriggerFinal} {
		if _, ok := RetryOfFailed(&Backup{Trigger: trigger, Phase: PhaseFailed}, time.Minute, planNow); ok {
			t.Errorf("a failed %v backup has a retry planned; it waits for a new request or has its own attempts", trigger)
		}
	}
	if at, ok := RetryOfFailed(&Backup{Trigger: TriggerSchedule, Phase: PhaseFailed}, time.Minute, planNow.Add(time.Hour)); !ok ||
		!at.Equal(planNow.Add(time.Hour)) {
		t.Errorf("a failed scheduled backup is retried at %v (%v), want the next slot", at, ok)
	}
}

// serviceAnswer is how the model service answers a start: a new RUNNING
// backup, or one an earlier pass started under the same key and never
// recorded, which finished already.
type serviceAnswer int

const (
	answerRunning serviceAnswer = iota
	answerFinished
)

// applyNewStep folds a step's answer into the observation, as the
// backupconfig package's apply and record do, with the model service
// answering a start as answer says.
func applyNewStep(o NewBackupObservation, p NewBackupPlan, answer serviceAnswer) NewBackupObservation {
	start := func(trigger Trigger, attempt int32) {
		o.Last = &Backup{Trigger: trigger, Phase: PhaseRunning, Attempt: attempt, Started: o.Now}
		if answer == answerFinished {
			o.Last.Phase, o.Last.Finished = PhaseSucceeded, o.Now
		}
	}
	switch p.Action {
	case NewSkipSlot:
		o.SlotDue, o.Slot = false, o.Now.Add(time.Hour)
	case NewList:
		o.Listed = true
	case NewStartManual:
		o.ManualRequested = false
		start(TriggerManual, 0)
	case NewStartSlot:
		o.SlotDue, o.Slot = false, o.Now.Add(time.Hour)
		start(TriggerSchedule, p.Attempt)
	case NewStartChange:
		o.ObservedUID, o.ObservedGeneration = o.AppUID, o.AppGeneration
		start(TriggerChange, p.Attempt)
	}
	return o
}

// TestThePassLoopEnds: from every observation, applying each step and
// planning again ends within maxNewSteps steps, starts at most one backup
// whose answer is RUNNING, and each backup at most once; a pass whose
// first start is answered with a RUNNING backup ends there.
func TestThePassLoopEnds(t *testing.T) {
	const maxNewSteps = 5
	c := proptest.New(t, "pass loops")
	everyNewBackupObservation(func(o NewBackupObservation) {
		for _, answer := range []serviceAnswer{answerRunning, answerFinished} {
			var broken []string
			cur := o
			started := map[NewBackupAction]bool{}
			steps := 0
			for plan := PlanNewBackup(cur); plan.Action != NewNothing; plan = PlanNewBackup(cur) {
				if steps++; steps > maxNewSteps {
					broken = append(broken, "the pass did not end")
					break
				}
				if started[plan.Action] {
					broken = append(broken, "the same step twice in one pass")
					break
				}
				started[plan.Action] = true
				if answer == answerRunning && cur.Last.Running() && cur.Listed && plan.Action != NewNothing &&
					(started[NewStartManual] || started[NewStartSlot] || started[NewStartChange]) {
					broken = append(broken, "went on after a start answered with a RUNNING backup")
					break
				}
				cur = applyNewStep(cur, plan, answer)
			}
			c.Observe(describe(o), broken...)
		}
	})
	c.Report()
}

// TestPlanSequencesAgainstAServiceModel drives the pass loop through
// seeded random sequences: edits, schedule slots, suspend and resume,
// backup-now requests, backups that fail, time, and the MyApp going and
// coming back, with a model of the backup service finishing backups. After
// every pass: at most one backup RUNNING; a slot that came while suspended
// is never started later (skipped, not saved up); and a generation is
// backed up, being backed up, or waiting for a retry the pass comes back
// for, whenever backups may be taken.
func TestPlanSequencesAgainstAServiceModel(t *testing.T) {
	const seeds, steps = 300, 200
	checked := 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 31))
		m := &newBackupModel{now: planNow, gen: 1, slot: planNow.Add(10 * time.Minute), succeeded: map[int64]bool{},
			skipped: map[time.Time]bool{}}
		for step := range steps {
			m.act(rng)
			if err := m.pass(); err != nil {
				t.Fatalf("seed %d step %d: %v\nhistory: %v", seed, step, err, m.history)
			}
			checked++
		}
	}
	t.Logf("checked the invariants after %d passes in %d seeded sequences", checked, seeds)
}

// newBackupModel is a BackupConfig backing one MyApp up on change and
// every ten minutes, with the backup service.
type newBackupModel struct {
	now                   time.Time
	gen                   int64
	observed              int64
	last                  *Backup
	slot                  time.Time
	suspended, appMissing bool
	manual                bool
	failNext              bool
	// running is the service's RUNNING backup (one at most, or the check
	// fails), of generation runningGen, finishing at runningUntil.
	running      int
	runningGen   int64
	runningUntil time.Time
	// succeeded is the generations with a SUCCEEDED backup; skipped the
	// slots that came while no backup could be taken.
	succeeded map[int64]bool
	skipped   map[time.Time]bool
	history   []string
}

func (m *newBackupModel) act(rng *rand.Rand) {
	switch k := rng.IntN(20); {
	case k < 4:
		m.gen++
		m.history = append(m.history, "edit")
	case k < 6:
		m.failNext = !m.failNext
		m.history = append(m.history, fmt.Sprintf("fail=%v", m.failNext))
	case k < 7:
		m.suspended = !m.suspended
		m.history = append(m.history, fmt.Sprintf("suspend=%v", m.suspended))
	case k < 8:
		m.manual = true
		m.history = append(m.history, "backup-now")
	case k < 9:
		m.appMissing = !m.appMissing
		m.history = append(m.history, fmt.Sprintf("missing=%v", m.appMissing))
	default:
		m.now = m.now.Add(time.Duration(rng.IntN(240)) * time.Second)
		m.finish()
		m.history = append(m.history, "time")
	}
}

// finish ends the running backup once its time has come.
func (m *newBackupModel) finish() {
	if m.running == 0 || m.now.Before(m.runningUntil) {
		return
	}
	m.running = 0
	m.last.Phase, m.last.Finished = PhaseSucceeded, m.runningUntil
	if m.failNext {
		m.last.Phase = PhaseFailed
		return
	}
	m.succeeded[m.runningGen] = true
	if m.last.Trigger == TriggerSchedule {
		// A scheduled backup covers the generation it was started of once
		// it succeeded (its labels say which).
		m.observed = max(m.observed, m.runningGen)
	}
}

// pass runs the pass loop once, applying each step to the model.
func (m *newBackupModel) pass() error {
	o := NewBackupObservation{Now: m.now, Suspended: m.suspended, OnChange: true, Slot: m.slot,
		SlotDue: !m.now.Before(m.slot), AppExists: !m.appMissing, AppUID: planApp, AppGeneration: m.gen,
		ObservedUID: planApp, ObservedGeneration: m.observed, Last: m.last, ManualRequested: m.manual,
		RetryDelay: planRetryDelay}
	if m.observed == 0 {
		o.ObservedUID = ""
	}
	if o.SlotDue && (m.suspended || m.appMissing) {
		// The judge's record: this slot came while no backup could be
		// taken, and must never be backed up later.
		m.skipped[m.slot] = true
	}
	var plan NewBackupPlan
	for range 6 {
		plan = PlanNewBackup(o)
		if plan.Action == NewNothing {
			break
		}
		if err := m.apply(&o, plan); err != nil {
			return err
		}
	}
	if plan.Action != NewNothing {
		return fmt.Errorf("the pass did not end: %+v", plan)
	}
	return m.judge(plan)
}

// apply takes one step in the model and folds its answer into o.
func (m *newBackupModel) apply(o *NewBackupObservation, plan NewBackupPlan) error {
	start := func(trigger Trigger, attempt int32) {
		if m.running > 0 {
			m.running++
			return
		}
		m.last = &Backup{Trigger: trigger, Phase: PhaseRunning, Attempt: attempt, Started: m.now}
		m.running, m.runningGen, m.runningUntil = 1, m.gen, m.now.Add(90*time.Second)
		o.Last = m.last
	}
	nextSlot := func() {
		for !m.slot.After(m.now) {
			m.slot = m.slot.Add(10 * time.Minute)
		}
		o.Slot, o.SlotDue = m.slot, false
	}
	switch plan.Action {
	case NewSkipSlot:
		nextSlot()
	case NewList:
		o.Listed = true
	case NewStartManual:
		m.manual, o.ManualRequested = false, false
		start(TriggerManual, plan.Attempt)
	case NewStartSlot:
		if m.skipped[m.slot] {
			return fmt.Errorf("started the slot of %s, which came while no backup could be taken", m.slot)
		}
		start(TriggerSchedule, plan.Attempt)
		nextSlot()
	case NewStartChange:
		start(TriggerChange, plan.Attempt)
		m.observed = m.gen
		o.ObservedUID, o.ObservedGeneration = planApp, m.gen
	}
	if m.running > 1 {
		return fmt.Errorf("%d backups RUNNING", m.running)
	}
	return nil
}

// judge checks, once a pass ended with backups allowed and none running,
// that the generation is backed up or waits for a retry the pass comes
// back for (or a slot that comes first and carries its attempts).
func (m *newBackupModel) judge(plan NewBackupPlan) error {
	if m.suspended || m.appMissing || m.running > 0 || failedChangeAttempt(m.last) && plan.Wake.Kind != WakeNone {
		return nil
	}
	if !m.succeeded[m.gen] && (m.observed != m.gen || m.last == nil || m.last.Phase != PhaseSucceeded) {
		return fmt.Errorf("generation %d has no SUCCEEDED backup, none runs and no retry is planned "+
			"(%+v; observed %d, last %+v, now %s)", m.gen, plan, m.observed, m.last, m.now)
	}
	return nil
}
