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
	"time"

	"k8s.io/apimachinery/pkg/types"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// This file decides which new backups are owed, from an observation alone:
// it calls nothing, reads no clock (the observation carries now) and knows no
// client or service package. backups.go observes and applies.

// newBackupObservation is what a pass knows before it decides which new
// backups are owed.
type newBackupObservation struct {
	// invalidSchedule: spec.schedule is unusable.
	invalidSchedule bool
	// suspended is spec.suspend; appExists and appDeleting describe the
	// MyApp.
	suspended, appExists, appDeleting bool
	// running: status.lastBackup is RUNNING.
	running bool
	// slotDue: status.nextScheduleTime has come.
	slotDue bool
}

// newBackupAction is what a pass does about new backups.
type newBackupAction int

const (
	// newIdle: nothing, and no wake-up (spec.schedule is unusable).
	newIdle newBackupAction = iota
	// newSkipSlot: no backup may be taken now (suspended, no MyApp, the
	// MyApp being deleted); the due slot is skipped, not saved up.
	newSkipSlot
	// newAsleep: no backup may be taken now; wake for the next slot.
	newAsleep
	// newWaitRunning: one backup at a time; the running one's poll comes
	// back.
	newWaitRunning
	// newDecide: planDue decides what is owed; the apply follows a backup
	// the service lists as running before it starts any.
	newDecide
)

// newBackupPlan is the decision.
type newBackupPlan struct {
	action newBackupAction
}

// planNewBackup decides whether new backups may be started at all.
func planNewBackup(o newBackupObservation) newBackupPlan {
	switch {
	case o.invalidSchedule:
		return newBackupPlan{action: newIdle}
	case o.suspended || !o.appExists || o.appDeleting:
		if o.slotDue {
			return newBackupPlan{action: newSkipSlot}
		}
		return newBackupPlan{action: newAsleep}
	case o.running:
		return newBackupPlan{action: newWaitRunning}
	}
	return newBackupPlan{action: newDecide}
}

// dueObservation is what a pass knows when it decides new backups.
type dueObservation struct {
	now time.Time
	// onChange is spec.backupOnChange (on by default).
	onChange bool
	// slotDue is set when status.nextScheduleTime has come.
	slotDue bool
	// appUID and appGeneration are the MyApp as it is; observedUID and
	// observedGeneration what status.observedApp* say was backed up.
	appUID             types.UID
	appGeneration      int64
	observedUID        types.UID
	observedGeneration int64
	// last is status.lastBackup, nil without one.
	last *backupv1alpha1.BackupStatus
	// retryDelay is --failed-backup-retry-delay.
	retryDelay time.Duration
}

// duePlan is what is owed.
type duePlan struct {
	// slot: the due slot's scheduled backup starts (it comes first).
	slot bool
	// change: the MyApp's generation has no backup started yet.
	change bool
	// retry: the on-change backup of this generation failed and its retry,
	// attempt, is due.
	retry   bool
	attempt int32
	// carry is the failed change attempts a scheduled backup started now
	// carries in status.lastBackup.attempt, so that its own failure leaves
	// the change to be retried rather than to the next slot (audit 2, F3).
	carry int32
	// later is how long a retry that is not due yet still waits.
	later time.Duration
}

// owes reports whether the plan starts a backup of the change now.
func (p duePlan) owes() bool { return p.change || p.retry }

// planDue decides the backups owed besides the running one.
func planDue(o dueObservation) duePlan {
	p := duePlan{slot: o.slotDue}
	if !o.onChange {
		return p
	}
	if o.observedUID != o.appUID || o.observedGeneration != o.appGeneration {
		p.change, p.attempt = true, 1
		return p
	}
	if !changeAttemptFailed(o.last) {
		return p
	}
	p.carry = max(o.last.Attempt, 1)
	if wait := retryWait(o); wait > 0 {
		p.later = wait
		return p
	}
	p.retry, p.attempt = true, p.carry+1
	return p
}

// changeAttemptFailed reports whether the last backup was an attempt at the
// change that failed: an on-change backup, or a scheduled one started while
// the change's retry was owed, which carries its attempts. Either way this
// generation has no successful backup since.
func changeAttemptFailed(last *backupv1alpha1.BackupStatus) bool {
	if last == nil || last.Phase != backupv1alpha1.BackupFailed {
		return false
	}
	return last.Trigger == backupv1alpha1.TriggerAppChange ||
		last.Trigger == backupv1alpha1.TriggerSchedule && last.Attempt > 0
}

// retryWait is how long a retry of the failed attempt in status.lastBackup
// still waits: the retry delay after the first failure, doubled for each
// further one, up to maxFailedBackupRetryDelay, counted from when the failed
// attempt finished.
func retryWait(o dueObservation) time.Duration {
	last := o.last
	delay := o.retryDelay
	for i := int32(1); i < last.Attempt && delay < maxFailedBackupRetryDelay; i++ {
		delay *= 2
	}
	delay = min(delay, maxFailedBackupRetryDelay)
	finished := timeOf(last.CompletionTime)
	if finished.IsZero() {
		finished = timeOf(last.StartTime)
	}
	return finished.Add(delay).Sub(o.now)
}
