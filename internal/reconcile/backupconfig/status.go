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
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// eventReason is the reason of an event, as in every controller of the
// project (pass.EventReason). Warnings are for what a person may have to act
// on, and go out when the trouble starts, not on every retry
// (pass.TroubleStarts).
type eventReason = pass.EventReason

// Event reasons.
const (
	eventBackupStarted          eventReason = "BackupStarted"
	eventBackupSucceeded        eventReason = "BackupSucceeded"
	eventBackupFailed           eventReason = "BackupFailed"
	eventBackupsPruned          eventReason = "BackupsPruned"
	eventBackupsDeleted         eventReason = "BackupsDeleted"
	eventBackupsRetained        eventReason = "BackupsRetained"
	eventFinalBackupFailed      eventReason = "FinalBackupFailed"
	eventFinalBackupAbandoned   eventReason = "FinalBackupAbandoned"
	eventMyAppReleased          eventReason = "MyAppReleased"
	eventInvalidSchedule        eventReason = "InvalidSchedule"
	eventBackupServiceFailed    eventReason = "BackupServiceFailed"
	eventScheduledBackupSkipped eventReason = "ScheduledBackupSkipped"
	eventBackupContentTooLarge  eventReason = "BackupContentTooLarge"
	eventSuspended              eventReason = "Suspended"
	eventResumed                eventReason = "Resumed"
)

// suspendedReason reports whether a Ready reason says the BackupConfig is
// suspended: while spec.suspend is set and it is not being deleted, Ready
// says one of these three and nothing else (a BackupConfig in use gives a
// final backup up, FinalBackupAbandoned, only while suspended).
func suspendedReason(reason string) bool {
	return reason == backupv1alpha1.SuspendedReason || reason == backupv1alpha1.FinalBackupSuspendedReason ||
		reason == backupv1alpha1.FinalBackupAbandonedReason
}

// sendEvents sends the events the pass noted, in order, once it is over.
func (r *Reconciler) sendEvents(s *scope) {
	for _, n := range s.notes {
		pass.Eventf(r.Recorder, s.bc, n.related, n.eventType, n.reason, n.action, "%s", n.message)
	}
	s.notes = nil
}

// readiness is what a reconcile pass learned that decides the Ready
// condition. Phases fill it in; setReadyCondition turns it into a condition.
type readiness struct {
	appName string
	// deleting is set while the BackupConfig itself is being deleted.
	deleting bool
	// invalidSchedule holds the parser's complaint about spec.schedule.
	invalidSchedule string
	appMissing      bool
	suspended       bool
	// serviceErr is the last error the backup service returned in this pass.
	serviceErr error
	// waitingForRestore names the Restore in progress that writes the
	// MyApp, while the BackupConfig is quiet for it; waitingSince is that
	// Restore's status.startTime, or its creation before it has one.
	waitingForRestore string
	waitingSince      time.Time
	// serviceCause is what the provider's client says of serviceErr: its
	// cause and the way out (backup.Explainer), "" when it says nothing.
	serviceCause string
	// contentTooLarge is set when a backup was not started because its
	// content is larger than a backup may hold.
	contentTooLarge *contentTooLargeError
	// finalBackupPending is set while the MyApp is being deleted and held for
	// its final backup.
	finalBackupPending bool
	// finalBackupFailures counts the failed final backup attempts once they
	// have run out; zero while attempts remain.
	finalBackupFailures int
	// finalBackupFailure is the service's reason for the last failed attempt.
	finalBackupFailure string
	// finalBackupAbandoned says why a BackupConfig being deleted gave its
	// MyApp's final backup up.
	finalBackupAbandoned string
	// serviceRetryIn is how long until a failed call to the backup service
	// is tried again; set with serviceErr.
	serviceRetryIn time.Duration
	// backupOutcome is the phase of a backup this pass saw finish, or "".
	backupOutcome backupv1alpha1.BackupPhase
	// failedBackup is a backup this pass saw fail, as it was recorded: a
	// retry the same pass starts replaces status.lastBackup, and the
	// failure's next attempt is this one's (failedBackupRetry).
	failedBackup *backupv1alpha1.BackupStatus
	// refusedSlot is the message of a schedule slot skipped because the
	// backup service refused to start its backup; it stands until a backup
	// is started again.
	refusedSlot string
	// keptForRestores names, for a BackupConfig being deleted with
	// deletionPolicy Delete, the backups it keeps while Restores in
	// progress restore from them, and those Restores.
	keptForRestores []keptBackup
}

// keptBackup is a backup a deletion keeps and the Restore it waits for.
type keptBackup struct{ id, restore string }

// setReadyCondition sets the Ready condition from what the pass learned. The
// first matching case wins, so the most pressing problem is the one shown.
func setReadyCondition(bc *backupv1alpha1.BackupConfig, r readiness, acted int64, now time.Time) {
	status, reason, message := metav1.ConditionTrue, backupv1alpha1.ReadyReason, readyMessage(bc, r.appName)
	switch {
	case r.finalBackupAbandoned != "":
		status, reason = metav1.ConditionFalse, backupv1alpha1.FinalBackupAbandonedReason
		message = fmt.Sprintf("This BackupConfig gave the final backup of MyApp %q up: %s. "+
			"The MyApp is released without one.", r.appName, r.finalBackupAbandoned)
	case r.deleting:
		status, reason, message = deletingReady(r)
	// A suspended BackupConfig says so before anything else, since it
	// tries nothing: what it would otherwise report waits for the resume.
	case r.suspended && r.finalBackupPending:
		status, reason = metav1.ConditionFalse, backupv1alpha1.FinalBackupSuspendedReason
		message = fmt.Sprintf("MyApp %q is being deleted and spec.suspend is set: a backup already running is "+
			"followed to its end, no final backup is started, and the MyApp is then released without one "+
			"unless a final backup succeeded.", r.appName)
	case r.suspended:
		status, reason = metav1.ConditionFalse, backupv1alpha1.SuspendedReason
		message = "Backups are suspended: no new backup is started, no backup is deleted by retention, and " +
			"schedule slots that pass are skipped, not caught up. Set spec.suspend to false to resume."
	case r.invalidSchedule != "":
		status, reason = metav1.ConditionFalse, backupv1alpha1.InvalidScheduleReason
		message = fmt.Sprintf("spec.schedule %q is not usable: %s. Use a 5-field cron expression such as \"0 3 * * *\"; "+
			"no backups are taken until it is fixed.", bc.Spec.Schedule, r.invalidSchedule)
	case r.appMissing:
		status, reason = metav1.ConditionFalse, backupv1alpha1.AppNotFoundReason
		message = fmt.Sprintf("MyApp %q does not exist in namespace %q. Create it or correct spec.appRef.name; "+
			"backups start on their own once it exists.", r.appName, bc.Namespace)
	case r.finalBackupFailures > 0:
		status, reason = metav1.ConditionFalse, backupv1alpha1.FinalBackupFailedReason
		message = fmt.Sprintf("The final backup of MyApp %q failed %d times (last reason: %s). The MyApp is held until a final "+
			"backup succeeds; set spec.backupBeforeAppDeletion to false or delete this BackupConfig to release it without one.",
			r.appName, r.finalBackupFailures, normalizeReason(r.finalBackupFailure))
	case r.contentTooLarge != nil:
		status, reason = metav1.ConditionFalse, backupv1alpha1.BackupContentTooLargeReason
		message = contentTooLargeMessage(r.contentTooLarge)
	case r.serviceErr != nil:
		status, reason = metav1.ConditionFalse, pass.BackupServiceReasons.For(r.serviceErr)
		message = pass.Capitalize(serviceProblem(r.serviceErr, r.serviceCause)) +
			" No backups can be started or followed until it is resolved."
	case r.finalBackupPending:
		status, reason = metav1.ConditionFalse, backupv1alpha1.FinalBackupInProgressReason
		message = fmt.Sprintf("MyApp %q is being deleted; it is released once its final backup succeeded.", r.appName)
	case r.waitingForRestore != "":
		status, reason = metav1.ConditionFalse, backupv1alpha1.WaitingForRestoreReason
		message = fmt.Sprintf("Restore %s is writing MyApp %q: no backup of it starts, on any trigger, until that "+
			"Restore has succeeded or failed (within its spec.timeout); the first backup after it follows at once.",
			r.waitingForRestore, r.appName)
	case r.refusedSlot != "":
		status, reason, message = metav1.ConditionFalse, backupv1alpha1.ScheduledBackupRefusedReason, r.refusedSlot
	}
	pass.SetCondition(&bc.Status.Conditions, backupv1alpha1.ReadyCondition, status, reason, message, acted, now)
}

// deletingReady is Ready while the BackupConfig is being deleted, unless it
// gave a final backup up, which setReadyCondition shows first.
func deletingReady(r readiness) (status metav1.ConditionStatus, reason, message string) {
	switch {
	case r.finalBackupPending:
		status, reason = metav1.ConditionFalse, backupv1alpha1.FinalBackupInProgressReason
		message = fmt.Sprintf("This BackupConfig is being deleted; it takes a final backup of MyApp %q, whether "+
			"the MyApp is being deleted too or not, before it lets the MyApp go, or gives it up with a Warning once "+
			"its attempts or its time limit ran out.", r.appName)
		switch {
		case r.contentTooLarge != nil:
			message += " " + contentTooLargeMessage(r.contentTooLarge) + " To let the MyApp go without a final " +
				"backup, set spec.backupBeforeAppDeletion to false or delete this BackupConfig."
		case r.serviceErr != nil:
			message += " " + pass.Capitalize(serviceProblem(r.serviceErr, r.serviceCause))
		}
	case r.serviceErr != nil:
		status, reason = metav1.ConditionFalse, backupv1alpha1.CleanupBlockedReason
		message = "Deleting this BackupConfig's backups is blocked: " + serviceProblem(r.serviceErr, r.serviceCause) +
			" The BackupConfig stays until its backups are gone; set spec.deletionPolicy to Retain to keep them and let it go now."
	case len(r.keptForRestores) > 0:
		status, reason = metav1.ConditionFalse, backupv1alpha1.CleanupInProgressReason
		kept := make([]string, 0, len(r.keptForRestores))
		for _, k := range r.keptForRestores {
			kept = append(kept, fmt.Sprintf("backup %s while Restore %q restores from it", k.id, k.restore))
		}
		message = "This BackupConfig is being deleted; its other backups are removed, but it keeps " +
			strings.Join(kept, ", ") + ". It deletes what it kept and lets go once those Restores have " +
			"succeeded or failed; deleting a Restore releases its backup too."
	default:
		status, reason = metav1.ConditionFalse, backupv1alpha1.CleanupInProgressReason
		message = "This BackupConfig is being deleted; its backups are removed first when spec.deletionPolicy is Delete."
	}
	return status, reason, message
}

// setProgressConditions derives the kstatus conditions, Reconciling and
// Stalled, from Ready and the last backup, by the rules both kinds share
// (pass.SetProgressConditions), and reports whether the BackupConfig is
// stalled. Stalled: an unusable schedule, a final backup whose attempts ran
// out, or a MyApp too large to back up; none gets better without a change. Reconciling: a backup is
// running, or Ready is False for a reason a retry or time resolves (the
// MyApp is awaited, the service is retried, a final backup or a cleanup
// runs). A suspended pass reports only the changes it did not apply.
func setProgressConditions(bc *backupv1alpha1.BackupConfig, acted int64, suspended bool, now time.Time) bool {
	p := pass.Progress{Generation: bc.Generation, ActedOn: acted, Suspended: suspended}
	ready := meta.FindStatusCondition(bc.Status.Conditions, backupv1alpha1.ReadyCondition)
	last := bc.Status.LastBackup
	switch {
	case ready == nil:
	case ready.Status != metav1.ConditionTrue && (ready.Reason == backupv1alpha1.InvalidScheduleReason ||
		ready.Reason == backupv1alpha1.FinalBackupFailedReason || ready.Reason == backupv1alpha1.BackupContentTooLargeReason):
		p.Stalled = &pass.Cause{Reason: ready.Reason, Message: ready.Message}
	case ready.Status != metav1.ConditionTrue && ready.Reason != backupv1alpha1.SuspendedReason:
		p.InProgress = &pass.Cause{Reason: ready.Reason, Message: ready.Message}
	case ready.Status == metav1.ConditionTrue && last != nil && last.Phase == backupv1alpha1.BackupRunning:
		p.InProgress = &pass.Cause{Reason: backupv1alpha1.BackupRunningReason,
			Message: fmt.Sprintf("A backup (trigger %s) is running; status.lastBackup follows it.", last.Trigger)}
	}
	return pass.SetProgressConditions(&bc.Status.Conditions, p, now)
}

// setBackupFailures keeps status.backupFailures: one more failure, with its
// time and the time of the next attempt, for a pass that saw a backup fail
// or a call to the backup service fail; cleared by a pass that saw a backup
// succeed. Any other pass leaves it as it was. Every failure counts: a
// BackupConfig's own status writes start no pass, so a failed pass is one
// the backoff or an event brought, each of which the rate limiter counts
// too.
func setBackupFailures(bc *backupv1alpha1.BackupConfig, rd readiness, retryDelay time.Duration, now time.Time) {
	var next time.Time
	switch {
	case rd.backupOutcome == backupv1alpha1.BackupSucceeded:
		bc.Status.BackupFailures = nil
		return
	case rd.serviceErr != nil:
		next = now.Add(rd.serviceRetryIn)
	case rd.backupOutcome == backupv1alpha1.BackupFailed:
		next = failedBackupRetry(bc, rd.failedBackup, retryDelay)
	default:
		return
	}
	bc.Status.BackupFailures = (*backupv1alpha1.FailureStatus)(pass.CountFailure((*pass.Failures)(bc.Status.BackupFailures), now, next))
}

// failedBackupRetry is when a failed backup is tried again
// (backupplan.RetryOfFailed), zero when no retry is planned.
func failedBackupRetry(bc *backupv1alpha1.BackupConfig, failed *backupv1alpha1.BackupStatus, retryDelay time.Duration) time.Time {
	var nextSlot time.Time
	if next := bc.Status.NextScheduleTime; next != nil {
		nextSlot = next.Time
	}
	at, _ := backupplan.RetryOfFailed(planBackupOf(failed), retryDelay, nextSlot)
	return at
}

// readyMessage describes what a healthy BackupConfig does, so the Ready
// condition answers "when will my app be backed up?".
func readyMessage(bc *backupv1alpha1.BackupConfig, appName string) string {
	var triggers []string
	if bc.Spec.BackupOnChange == nil || *bc.Spec.BackupOnChange {
		triggers = append(triggers, "when its spec changes")
	}
	if bc.Spec.Schedule != "" {
		triggers = append(triggers, fmt.Sprintf("on schedule %q (UTC)", bc.Spec.Schedule))
	}
	if len(triggers) == 0 {
		return fmt.Sprintf("MyApp %q exists, but neither spec.schedule nor spec.backupOnChange is set, so no backups "+
			"are taken.", appName)
	}
	return fmt.Sprintf("MyApp %q is backed up %s.", appName, strings.Join(triggers, " and "))
}

// setBackupSucceededCondition reflects the outcome of the last finished
// backup. A running backup leaves the outcome of the previous one in place.
func setBackupSucceededCondition(bc *backupv1alpha1.BackupConfig, acted int64, now time.Time) {
	last := bc.Status.LastBackup
	existing := meta.FindStatusCondition(bc.Status.Conditions, backupv1alpha1.BackupSucceededCondition)
	set := func(status metav1.ConditionStatus, reason, message string) {
		pass.SetCondition(&bc.Status.Conditions, backupv1alpha1.BackupSucceededCondition, status, reason, message, acted, now)
	}
	switch {
	case last == nil && existing == nil:
		set(metav1.ConditionUnknown, backupv1alpha1.NoBackupYetReason, "No backup has been taken yet.")
	case last == nil:
		// A status without a last backup but with an outcome has been edited
		// by hand; the outcome is still the best knowledge there is.
	case last.Phase == backupv1alpha1.BackupSucceeded:
		set(metav1.ConditionTrue, backupv1alpha1.BackupSucceededReason,
			"The last backup succeeded; status.lastBackup says where it is stored.")
	case last.Phase == backupv1alpha1.BackupFailed:
		set(metav1.ConditionFalse, backupv1alpha1.BackupFailedReason,
			fmt.Sprintf("The last backup failed: %s. %s; check the backup service if backups keep failing.",
				normalizeReason(last.Reason), tryAgain(last.Trigger)))
	case existing == nil || existing.Reason == backupv1alpha1.NoBackupYetReason:
		set(metav1.ConditionUnknown, backupv1alpha1.BackupRunningReason, "The first backup is running.")
	}
}

// serviceProblem explains a backup service failure in words that stay the
// same from one retry to the next: the raw error, with its attempt counts and
// wait times, goes to the log and the events instead, so the condition does
// not churn. It says how the operator retries, which serviceError decides
// from the same error. cause, when the provider's client gave one
// (backup.Explainer), names what is wrong and the way out in the words of
// the provider's settings, and is said instead of the words for the kind.
func serviceProblem(err error, cause string) string {
	_, waitAsked := external.RetryAfter(err)
	if cause != "" {
		if waitAsked {
			return strings.TrimRight(cause, ".") + "; the operator calls it again once the wait it asked for is over, not sooner."
		}
		return strings.TrimRight(cause, ".") + "; the operator retries with backoff."
	}
	switch pass.BackupServiceReasons.For(err) {
	case backupv1alpha1.BackupServiceUnauthorizedReason:
		return "the backup service rejected the operator's credentials; check the token the manager is given " +
			"(--backup-token-file or --backup-token-secret). The operator retries with backoff."
	case backupv1alpha1.BackupServiceUnavailableReason:
		if waitAsked {
			return "the backup service is unavailable or throttling requests and asked the operator to wait; " +
				"the operator calls it again once the wait is over, not sooner."
		}
		return "the backup service is unavailable or throttling requests; the operator retries with backoff."
	default:
		return "the backup service refused a request from the operator; its events and logs have the details, " +
			"and the operator retries with backoff."
	}
}

// contentTooLargeMessage is the Ready message of a backup whose content is
// too large: what, by how much, and what to do.
func contentTooLargeMessage(err *contentTooLargeError) string {
	return pass.Capitalize(err.Error()) + ". " + contentTooLargeAdvice + "."
}

// planBackupOf is status.lastBackup as the plans read it.
func planBackupOf(last *backupv1alpha1.BackupStatus) *backupplan.Backup {
	if last == nil {
		return nil
	}
	b := &backupplan.Backup{Attempt: last.Attempt, Started: timeOf(last.StartTime), Finished: timeOf(last.CompletionTime)}
	switch last.Phase {
	case backupv1alpha1.BackupSucceeded:
		b.Phase = backupplan.PhaseSucceeded
	case backupv1alpha1.BackupFailed:
		b.Phase = backupplan.PhaseFailed
	default:
		b.Phase = backupplan.PhaseRunning
	}
	switch last.Trigger {
	case backupv1alpha1.TriggerAppChange:
		b.Trigger = backupplan.TriggerChange
	case backupv1alpha1.TriggerManual:
		b.Trigger = backupplan.TriggerManual
	case backupv1alpha1.TriggerAppDeletion:
		b.Trigger = backupplan.TriggerFinal
	default:
		b.Trigger = backupplan.TriggerSchedule
	}
	return b
}

// timeOf is a status time, zero for none.
func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
