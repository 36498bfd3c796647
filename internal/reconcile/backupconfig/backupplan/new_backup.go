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

import "time"

// NewBackupObservation is what a pass knows when it decides new backups:
// the spec, the schedule, the MyApp, the status, and the answers the
// service gave this pass so far.
type NewBackupObservation struct {
	// Now is the pass's time.
	Now time.Time
	// Suspended is spec.suspend; OnChange is spec.backupOnChange (on by
	// default); InvalidSchedule says spec.schedule is set but unusable.
	Suspended, OnChange, InvalidSchedule bool
	// Slot is status.nextScheduleTime, zero without a usable schedule;
	// SlotDue says it has come.
	Slot    time.Time
	SlotDue bool
	// AppExists and AppDeleting describe the referenced MyApp; AppUID and
	// AppGeneration are the MyApp as it is.
	AppExists, AppDeleting bool
	AppUID                 string
	AppGeneration          int64
	// ObservedUID and ObservedGeneration are status.observedAppUID and
	// observedAppGeneration: the MyApp a backup was last started of.
	ObservedUID        string
	ObservedGeneration int64
	// Last is status.lastBackup, nil without one.
	Last *Backup
	// ManualRequested says the backup-now annotation carries a value no
	// backup was started for yet.
	ManualRequested bool
	// RetryDelay is --failed-backup-retry-delay.
	RetryDelay time.Duration
	// Listed says this pass has read the service's backups of this
	// BackupConfig, and recorded one it lists RUNNING into Last.
	Listed bool
	// Restoring says a Restore in progress writes the referenced MyApp
	// (its status.targetName names it).
	Restoring bool
}

// NewBackupAction is the next thing a pass does about new backups.
type NewBackupAction int

const (
	// NewNothing: nothing more in this pass; the plan's Wake says when to
	// come back.
	NewNothing NewBackupAction = iota
	// NewSkipSlot: a slot came while no backup may be taken (suspended, no
	// MyApp, the MyApp being deleted); the schedule moves past it, and it
	// is not saved up: resuming never fires a backup by itself.
	NewSkipSlot
	// NewList: read the service's backups of this BackupConfig before any
	// start, and follow one still RUNNING instead of starting another
	// (status may be stale: one backup at a time), or take the answer to a
	// start whose reply was lost from the list.
	NewList
	// NewStartManual: start the backup-now annotation's backup.
	NewStartManual
	// NewStartSlot: start the due slot's backup; it covers a pending change
	// too once it succeeded.
	NewStartSlot
	// NewStartChange: start attempt Attempt at the backup of the MyApp's
	// generation.
	NewStartChange
)

// WakeKind says why a pass wants its BackupConfig back.
type WakeKind int

const (
	// WakeNone: no time to come back at; an event does.
	WakeNone WakeKind = iota
	// WakePoll: a backup runs; its poll comes back after the poll interval.
	WakePoll
	// WakeRetry: at At, the retry of a failed on-change backup is due.
	WakeRetry
	// WakeSlot: at At, the next schedule slot comes.
	WakeSlot
)

// Wake is when a pass wants its BackupConfig back.
type Wake struct {
	Kind WakeKind
	// At is the time, for WakeRetry and WakeSlot.
	At time.Time
}

// NewBackupPlan is the decision: one next action, and the one wake-up of
// the pass once the action is NewNothing.
type NewBackupPlan struct {
	Action NewBackupAction
	// Attempt is, for NewStartChange, the attempt at the generation's
	// backup (1 for the first); for NewStartSlot and NewStartManual, the
	// failed change attempts the backup carries (zero when none is owed),
	// so that its own failure leaves the change's retry owed.
	Attempt int32
	// Wake is when to come back for new backups.
	Wake Wake
}

// PlanNewBackup decides the next action for new backups. A pass makes the
// action, folds the service's answer into the observation and plans again,
// until the action is NewNothing; each action changes what the next
// observation shows (the slot moves on, the list was read, a start is
// recorded in status), so the loop ends within a few steps.
func PlanNewBackup(o NewBackupObservation) NewBackupPlan {
	if o.Restoring && !o.Suspended {
		// Quiet while a Restore writes the MyApp: a backup now would hold
		// a MyApp half restored, or none. Nothing starts and nothing is
		// skipped: a due slot, a change or a backup-now request waits, and
		// is taken once the Restore has finished (its status change brings
		// the pass back). A backup already running is still followed.
		if o.Last.Running() {
			return NewBackupPlan{Wake: Wake{Kind: WakePoll}}
		}
		return NewBackupPlan{Wake: o.slotWake()}
	}
	if o.Suspended || !o.AppExists || o.AppDeleting {
		if o.SlotDue {
			return NewBackupPlan{Action: NewSkipSlot}
		}
		return NewBackupPlan{Wake: o.slotWake()}
	}
	if o.Last.Running() {
		// One backup at a time; the running one's poll comes back, and a
		// due slot, change or request is still due then.
		return NewBackupPlan{Wake: Wake{Kind: WakePoll}}
	}
	var start NewBackupAction
	var attempt int32
	change := o.change()
	switch {
	case o.ManualRequested:
		start, attempt = NewStartManual, change.carry
	case o.InvalidSchedule:
		// Nothing new is started on schedule or on change while
		// spec.schedule is unusable, so a broken spec is noticed rather
		// than half followed. A backup-now request is a person's, and
		// is still honoured.
		return NewBackupPlan{}
	case o.SlotDue:
		start, attempt = NewStartSlot, change.carry
	case change.now:
		start, attempt = NewStartChange, change.attempt
	default:
		wake := o.slotWake()
		if !change.later.IsZero() && (wake.Kind == WakeNone || change.later.Before(wake.At)) {
			wake = Wake{Kind: WakeRetry, At: change.later}
		}
		return NewBackupPlan{Wake: wake}
	}
	if !o.Listed {
		return NewBackupPlan{Action: NewList}
	}
	return NewBackupPlan{Action: start, Attempt: attempt}
}

// slotWake wakes the pass for the next slot, if there is one to wait for.
func (o NewBackupObservation) slotWake() Wake {
	if o.Slot.IsZero() || o.SlotDue {
		return Wake{}
	}
	return Wake{Kind: WakeSlot, At: o.Slot}
}

// owedChange is what the MyApp's generation is owed.
type owedChange struct {
	// now: a backup of the generation starts now, as attempt.
	now     bool
	attempt int32
	// carry is the failed attempts at the change a scheduled or backup-now
	// backup started now carries.
	carry int32
	// later is when the retry of a failed attempt is due, when that is
	// not now.
	later time.Time
}

// change decides what the MyApp's generation is owed: a first backup when
// none was started of it (of this MyApp, by UID, and this generation), a
// retry once a failed attempt's retry delay has passed, nothing once an
// attempt succeeded or one runs.
func (o NewBackupObservation) change() owedChange {
	if !o.OnChange {
		return owedChange{}
	}
	if o.ObservedUID != o.AppUID || o.ObservedGeneration != o.AppGeneration {
		return owedChange{now: true, attempt: 1}
	}
	if !changeAttemptFailed(o.Last) {
		return owedChange{}
	}
	c := owedChange{carry: max(o.Last.Attempt, 1)}
	if at, _ := RetryOfFailed(o.Last, o.RetryDelay, time.Time{}); o.Now.Before(at) {
		c.later = at
		return c
	}
	c.now, c.attempt = true, c.carry+1
	return c
}

// Phase is a backup's phase in the backup service.
type Phase int

// The phases of a backup.
const (
	PhaseRunning Phase = iota + 1
	PhaseSucceeded
	PhaseFailed
)

// Trigger is what a backup was started for.
type Trigger int

// The triggers of a backup.
const (
	TriggerSchedule Trigger = iota + 1
	TriggerChange
	TriggerManual
	TriggerFinal
)

// Backup is status.lastBackup as the plans read it.
type Backup struct {
	Trigger Trigger
	Phase   Phase
	// Attempt numbers an on-change backup of one generation (1 for the
	// first); a scheduled or backup-now backup started while a failed
	// change was owed a retry carries the change's failed attempts, so that
	// its own failure leaves the retry owed (audit 2, F3). Zero otherwise.
	Attempt int32
	// Started and Finished are when it started and finished; Finished is
	// zero while it runs.
	Started, Finished time.Time
}

// Running reports whether the backup is RUNNING.
func (b *Backup) Running() bool { return b != nil && b.Phase == PhaseRunning }

// MaxFailedRetryDelay caps the wait between retries of a failed on-change
// backup: the retry delay doubles with each failed attempt up to it.
const MaxFailedRetryDelay = time.Hour

// changeAttemptFailed reports whether last was an attempt at the MyApp's
// change that failed: an on-change backup, or a scheduled or backup-now one
// that carried the change's attempts. Either way the generation has no
// successful backup since.
func changeAttemptFailed(last *Backup) bool {
	if last == nil || last.Phase != PhaseFailed {
		return false
	}
	switch last.Trigger {
	case TriggerChange:
		return true
	case TriggerSchedule, TriggerManual:
		return last.Attempt > 0
	}
	return false
}

// RetryOfFailed is when a failed backup is tried again, and whether any
// retry is planned: a failed attempt at a change after the retry delay,
// doubled for each further failed attempt up to MaxFailedRetryDelay,
// counted from when the attempt finished; a failed scheduled backup at the
// next slot (nextSlot, zero without a schedule); nothing for another
// backup-now backup (a new annotation value asks again) or a final one (it
// has its own attempts).
func RetryOfFailed(last *Backup, retryDelay time.Duration, nextSlot time.Time) (time.Time, bool) {
	switch {
	case last == nil || last.Phase != PhaseFailed:
		return time.Time{}, false
	case changeAttemptFailed(last):
		delay := retryDelay
		for i := int32(1); i < last.Attempt && delay < MaxFailedRetryDelay; i++ {
			delay *= 2
		}
		finished := last.Finished
		if finished.IsZero() {
			finished = last.Started
		}
		return finished.Add(min(delay, MaxFailedRetryDelay)), true
	case last.Trigger == TriggerSchedule && !nextSlot.IsZero():
		return nextSlot, true
	}
	return time.Time{}, false
}
