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
	"time"
)

// This file decides a MyApp's final backup and the hold that waits for it,
// for a BackupConfig in use and for one being deleted, from an observation
// alone: it calls nothing, reads no clock (the observation carries now) and
// knows no client or service package. final_backup.go observes and applies.

// finalObservation is what a pass knows when it decides a final backup.
type finalObservation struct {
	// now is the pass's time.
	now time.Time
	// optIn is spec.backupBeforeAppDeletion; suspended is spec.suspend;
	// retain is spec.deletionPolicy Retain.
	optIn, suspended, retain bool
	// deleting is set while the BackupConfig itself is being deleted, since
	// deletionStarted.
	deleting        bool
	deletionStarted time.Time
	// appExists, appHeld and appDeleting describe the referenced MyApp: it
	// exists, carries the final-backup finalizer, and is being deleted.
	appExists, appHeld, appDeleting bool
	// namespaceTerminating is set while the namespace is being deleted: the
	// MyApp's deletion is then decided even before it began.
	namespaceTerminating bool
	// otherRunning is set while status.lastBackup is a scheduled or
	// on-change backup still RUNNING: one backup at a time.
	otherRunning bool
	// recorded is set when status records this MyApp's final backup
	// SUCCEEDED.
	recorded bool
	// listed is set once the service's final attempts below were read.
	listed   bool
	attempts finalTally
	// maxAttempts is --final-backup-attempts; teardownLimit bounds how long
	// a BackupConfig being deleted waits for a final backup.
	maxAttempts   int
	teardownLimit time.Duration
	// abandonReported is set when the status already says the final backup
	// was given up (the Ready condition's reason FinalBackupAbandoned).
	abandonReported bool
}

// finalTally is what the backup service lists of one BackupConfig's final
// backups of one MyApp.
type finalTally struct {
	succeeded, running bool
	failed             int
	lastFailure        string
}

// finalAction is what a pass does about a final backup.
type finalAction int

const (
	// finalNone: no final backup is wanted of this MyApp now.
	finalNone finalAction = iota
	// finalWaitOther: another backup runs; the final one follows it.
	finalWaitOther
	// finalList: the service's final attempts must be read to decide.
	finalList
	// finalDone: the final backup SUCCEEDED; the hold may go.
	finalDone
	// finalFollow: a final backup runs; poll it.
	finalFollow
	// finalStart: start attempt plan.attempt.
	finalStart
	// finalFailed: a BackupConfig in use ran out of attempts; the MyApp
	// stays held until a person decides.
	finalFailed
	// finalWaitApp: the namespace is terminating, the MyApp's deletion has
	// not begun yet; its final backup is taken once it has.
	finalWaitApp
	// finalAbandon: a BackupConfig being deleted, or a suspended one, gives
	// the final backup up (plan.why); the status says so first, then the
	// hold goes.
	finalAbandon
)

// finalPlan is the decision.
type finalPlan struct {
	action finalAction
	// attempt numbers the final backup to start.
	attempt int
	// keepHold says this BackupConfig still wants the final-backup finalizer
	// on its MyApp.
	keepHold bool
	// why says why a final backup is given up.
	why string
	// release says the hold may go in this pass: for finalAbandon, only once
	// the status said so in an earlier pass.
	release bool
}

// teardown reports whether the BackupConfig being deleted owes its MyApp a
// final backup before it lets go: the MyApp goes too (its deletion began, or
// its namespace is terminating), the option is on, the MyApp is held, and
// the backups are kept (with deletionPolicy Delete the BackupConfig deletes
// its backups as it goes, a final one included).
func (o finalObservation) teardown() bool {
	return o.deleting && o.optIn && o.retain && o.appExists && o.appHeld && (o.appDeleting || o.namespaceTerminating)
}

// planFinalBackup decides the final backup of the referenced MyApp.
func planFinalBackup(o finalObservation) finalPlan {
	if o.deleting {
		return planTeardownFinalBackup(o)
	}
	if !o.optIn || !o.appExists || !o.appHeld || !o.appDeleting {
		// In use, the BackupConfig keeps the hold while the option is on;
		// holds.go releases it when that changes.
		return finalPlan{action: finalNone, keepHold: o.optIn && o.appExists}
	}
	return planAttempts(o, false)
}

// planTeardownFinalBackup decides for a BackupConfig being deleted. Its
// wait is bounded: past teardownLimit from its deletion, or once
// maxAttempts final backups failed, the final backup is given up, said so,
// and the MyApp released, so a namespace never stays Terminating for ever
// on an unreachable backup service.
func planTeardownFinalBackup(o finalObservation) finalPlan {
	if !o.teardown() {
		return finalPlan{action: finalNone, release: true}
	}
	if o.recorded {
		return finalPlan{action: finalDone, release: true}
	}
	if !o.now.Before(o.deletionStarted.Add(o.teardownLimit)) {
		return abandon(o, fmt.Sprintf("no final backup succeeded within %s of this BackupConfig's deletion",
			o.teardownLimit))
	}
	if o.suspended {
		return abandon(o, suspendedWhy)
	}
	if !o.appDeleting {
		return finalPlan{action: finalWaitApp, keepHold: true}
	}
	return planAttempts(o, true)
}

// planAttempts decides from the final attempts so far.
func planAttempts(o finalObservation, teardown bool) finalPlan {
	switch {
	case o.otherRunning:
		return finalPlan{action: finalWaitOther, keepHold: true}
	case o.recorded:
		return finalPlan{action: finalDone, release: true}
	case !o.listed:
		return finalPlan{action: finalList, keepHold: true}
	case o.attempts.succeeded:
		return finalPlan{action: finalDone, release: true}
	case o.attempts.running:
		return finalPlan{action: finalFollow, keepHold: true}
	case o.suspended:
		// Suspend means no write to the backup service, and it never blocks
		// a deletion: the final backup is given up as a teardown gives it
		// up, said first, then the MyApp is released.
		return abandon(o, suspendedWhy)
	case o.attempts.failed >= o.maxAttempts && teardown:
		return abandon(o, fmt.Sprintf("the final backup failed %d times (last reason: %s)",
			o.attempts.failed, normalizeReason(o.attempts.lastFailure)))
	case o.attempts.failed >= o.maxAttempts:
		return finalPlan{action: finalFailed, keepHold: true}
	}
	return finalPlan{action: finalStart, attempt: o.attempts.failed + 1, keepHold: true}
}

// suspendedWhy is why a suspended BackupConfig gives a final backup up.
const suspendedWhy = "spec.suspend is set, so no final backup is started"

// abandon gives a final backup up (a teardown's, or a suspended
// BackupConfig's): first the status and a Warning event say so, and only
// the next pass, which reads that status, releases the MyApp. A give-up is
// never silent.
func abandon(o finalObservation, why string) finalPlan {
	return finalPlan{action: finalAbandon, why: why, keepHold: !o.abandonReported, release: o.abandonReported}
}
