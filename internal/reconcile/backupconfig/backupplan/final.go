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

// FinalObservation is what a pass knows when it decides a MyApp's final
// backup and the hold that waits for it, for a BackupConfig in use and for
// one being deleted.
type FinalObservation struct {
	// Now is the pass's time.
	Now time.Time
	// OptIn is spec.backupBeforeAppDeletion; Suspended is spec.suspend;
	// Retain is spec.deletionPolicy Retain.
	OptIn, Suspended, Retain bool
	// Deleting is set while the BackupConfig itself is being deleted,
	// since DeletionStarted.
	Deleting        bool
	DeletionStarted time.Time
	// AppExists, AppHeld and AppDeleting describe the referenced MyApp:
	// it exists, carries the final-backup finalizer, and is being deleted.
	AppExists, AppHeld, AppDeleting bool
	// AppFromAPIServer says the MyApp above was read from the API server in
	// this pass, not from the cache. A BackupConfig being deleted decides
	// from that read only: a cache that has not shown the MyApp's deletion
	// yet would let the MyApp go without its final backup (audit 3, T1).
	AppFromAPIServer bool
	// NamespaceRead says the namespace was read in this pass;
	// NamespaceTerminating that it is being deleted, so the MyApp goes too
	// even before its own deletion began.
	NamespaceRead, NamespaceTerminating bool
	// OtherRunning is set while status.lastBackup is a scheduled,
	// on-change or backup-now backup still RUNNING, as this pass polled it,
	// or the final backup of a MyApp held before the appRef moved: one
	// backup at a time.
	OtherRunning bool
	// Recorded is set when status records this MyApp's final backup
	// SUCCEEDED.
	Recorded bool
	// Listed says the service's final attempts below were read in this
	// pass.
	Listed   bool
	Attempts Tally
	// MaxAttempts is --final-backup-attempts; TeardownLimit bounds how
	// long a BackupConfig being deleted waits for a final backup, from its
	// deletion.
	MaxAttempts   int
	TeardownLimit time.Duration
	// AbandonReported is set when the status already says the final backup
	// was given up (the Ready condition's reason FinalBackupAbandoned).
	AbandonReported bool
}

// Tally is what the backup service lists of one BackupConfig's final
// backups of one MyApp.
type Tally struct {
	Succeeded, Running bool
	Failed             int
}

// FinalAction is what a pass does about a final backup.
type FinalAction int

const (
	// FinalNone: no final backup is wanted of this MyApp now.
	FinalNone FinalAction = iota
	// FinalWaitOther: another backup runs; the final one follows it.
	FinalWaitOther
	// FinalDone: the final backup SUCCEEDED; the hold may go.
	FinalDone
	// FinalFollow: a final backup runs; poll it.
	FinalFollow
	// FinalStart: start attempt plan.Attempt.
	FinalStart
	// FinalFailed: a BackupConfig in use ran out of attempts; the MyApp
	// stays held until a person decides.
	FinalFailed
	// FinalWaitApp: the MyApp goes (its namespace is terminating) but its
	// own deletion has not begun; its final backup is taken once it has.
	FinalWaitApp
	// FinalAbandon: a BackupConfig being deleted, or a suspended one, gives
	// the final backup up (plan.GiveUp); the status says so first, then the
	// hold goes.
	FinalAbandon
)

// FinalPlan is the decision.
type FinalPlan struct {
	// Need, when set, is what to read first; the rest is unset.
	Need   Need
	Action FinalAction
	// Attempt numbers the final backup to start.
	Attempt int
	// KeepHold says this BackupConfig still wants the final-backup
	// finalizer on its MyApp.
	KeepHold bool
	// Release says the hold may go in this pass: for FinalAbandon, only
	// once the status said so in an earlier pass.
	Release bool
	// GiveUp says why a final backup is given up.
	GiveUp GiveUp
}

// GiveUp is why a final backup is given up; the backupconfig package
// words it.
type GiveUp int

const (
	// GiveUpNone: not given up.
	GiveUpNone GiveUp = iota
	// GiveUpTimeLimit: no final backup succeeded within TeardownLimit of
	// the BackupConfig's deletion.
	GiveUpTimeLimit
	// GiveUpSuspended: spec.suspend is set, so no final backup is started.
	GiveUpSuspended
	// GiveUpAttempts: MaxAttempts final backups failed, for a BackupConfig
	// being deleted.
	GiveUpAttempts
)

// PlanFinalBackup decides the final backup of the referenced MyApp.
func PlanFinalBackup(o FinalObservation) FinalPlan {
	if o.Deleting {
		return planTeardown(o)
	}
	if !o.OptIn || !o.AppExists || !o.AppHeld || !o.AppDeleting {
		// In use, the BackupConfig keeps the hold while the option is on;
		// the holds release it when that changes.
		return FinalPlan{Action: FinalNone, KeepHold: o.OptIn && o.AppExists}
	}
	return planAttempts(o, false)
}

// planTeardown decides for a BackupConfig being deleted. It owes its MyApp
// a final backup when the option is on, the backups are kept (under
// Delete the BackupConfig deletes its backups as it goes, a final one
// included) and the MyApp exists with its hold: whether the MyApp's
// deletion began, or follows later, or never, a BackupConfig that goes
// first takes a last backup of the MyApp as it is now, since no
// BackupConfig will be there to take one when the MyApp goes. That is
// decided from facts read in this pass, never from how long ago the
// deletion began (issue 40, B4). In a terminating namespace the backup
// waits for the MyApp's own deletion, which is on its way. The wait is
// bounded: past TeardownLimit from its deletion, or once MaxAttempts
// final backups failed, the final backup is given up, said so with a
// Warning and the Ready condition, and the MyApp released, so a namespace
// never stays Terminating for ever on an unreachable backup service.
func planTeardown(o FinalObservation) FinalPlan {
	if !o.OptIn || !o.Retain {
		return FinalPlan{Action: FinalNone, Release: true}
	}
	if !o.AppFromAPIServer {
		return FinalPlan{Need: NeedAppFromAPIServer}
	}
	if !o.AppExists || !o.AppHeld {
		return FinalPlan{Action: FinalNone, Release: true}
	}
	if !o.AppDeleting && !o.NamespaceRead {
		return FinalPlan{Need: NeedNamespace}
	}
	if o.Recorded {
		return FinalPlan{Action: FinalDone, Release: true}
	}
	if !o.Now.Before(o.DeletionStarted.Add(o.TeardownLimit)) {
		return abandon(o, GiveUpTimeLimit)
	}
	if o.Suspended {
		return abandon(o, GiveUpSuspended)
	}
	if !o.AppDeleting && o.NamespaceTerminating {
		return FinalPlan{Action: FinalWaitApp, KeepHold: true}
	}
	return planAttempts(o, true)
}

// planAttempts decides from the final attempts so far.
func planAttempts(o FinalObservation, teardown bool) FinalPlan {
	switch {
	case o.OtherRunning:
		return FinalPlan{Action: FinalWaitOther, KeepHold: true}
	case o.Recorded:
		return FinalPlan{Action: FinalDone, Release: true}
	case !o.Listed:
		return FinalPlan{Need: NeedAttempts}
	case o.Attempts.Succeeded:
		return FinalPlan{Action: FinalDone, Release: true}
	case o.Attempts.Running:
		return FinalPlan{Action: FinalFollow, KeepHold: true}
	case o.Suspended:
		// Suspend means no write to the backup service, and it never
		// blocks a deletion: the final backup is given up as a teardown
		// gives it up, said first, then the MyApp is released.
		return abandon(o, GiveUpSuspended)
	case o.Attempts.Failed >= o.MaxAttempts && teardown:
		return abandon(o, GiveUpAttempts)
	case o.Attempts.Failed >= o.MaxAttempts:
		return FinalPlan{Action: FinalFailed, KeepHold: true}
	}
	return FinalPlan{Action: FinalStart, Attempt: o.Attempts.Failed + 1, KeepHold: true}
}

// abandon gives a final backup up (a teardown's, or a suspended
// BackupConfig's): first the status and a Warning event say so, and only
// the next pass, which reads that status, releases the MyApp. A give-up is
// never silent.
func abandon(o FinalObservation, why GiveUp) FinalPlan {
	return FinalPlan{Action: FinalAbandon, GiveUp: why, KeepHold: !o.AbandonReported, Release: o.AbandonReported}
}
