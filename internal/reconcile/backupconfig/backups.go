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
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileRunningBackup polls the last backup while it runs. The backup
// service emits no events, so a jittered poll is how completion is learned.
// A backup that runs longer than the backup timeout, or that the service
// keeps answering 404 for, is given up and recorded FAILED, so a wedged job
// blocks nothing for ever.
func (r *Reconciler) reconcileRunningBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	last := s.bc.Status.LastBackup
	if last == nil || last.Phase != backupv1alpha1.BackupRunning {
		r.missing.forget(s.key)
		return ctrl.Result{}, nil
	}
	b, err := s.backups.Get(ctx, last.ID)
	switch {
	case errors.Is(err, external.ErrNotFound):
		return r.missingBackup(ctx, s), nil
	case err != nil:
		return r.serviceError(ctx, s, "polling backup "+last.ID, err)
	}
	r.missing.forget(s.key)
	if b.Phase == backup.PhaseRunning && r.timedOut(s, b.StartedAt) {
		ctrl.LoggerFrom(ctx).Info("Backup did not finish in time, treating it as failed", "backupID", b.ID,
			"timeout", r.BackupTimeout)
		b = r.timedOutBackup(s, b)
	}
	r.recordBackup(ctx, s, b, last.Trigger)
	if b.Phase == backup.PhaseRunning {
		return pass.RequeueAfter(r.BackupPollInterval), nil
	}
	return ctrl.Result{}, nil
}

// missingBackup handles a poll the service answered 404 for. The service is
// eventually consistent, and a proxy in front of it may answer 404 for a
// while, so the backup counts as gone only after missingBackupPolls polls in
// a row found it missing over at least backupVisibilityGrace, measured on
// the controller's own clock from the first of them. The service's start
// time plays no part, so a clock that differs from the service's cannot
// fail a live backup. Once gone it is recorded FAILED, and a failed
// on-change backup is retried like any other.
func (r *Reconciler) missingBackup(ctx context.Context, s *scope) ctrl.Result {
	last := s.bc.Status.LastBackup
	polls, missingFor := r.missing.observe(s.key, last.ID, s.now)
	if polls < missingBackupPolls || missingFor < backupVisibilityGrace {
		ctrl.LoggerFrom(ctx).V(1).Info("Backup not found in the backup service, polling again", "backupID", last.ID,
			"polls", polls, "missingFor", missingFor)
		return pass.RequeueAfter(r.BackupPollInterval)
	}
	r.missing.forget(s.key)
	ctrl.LoggerFrom(ctx).Info("Backup disappeared from the backup service before it finished", "backupID", last.ID,
		"polls", polls, "missingFor", missingFor)
	r.recordBackup(ctx, s, backup.Backup{
		ID: last.ID, Phase: backup.PhaseFailed, StartedAt: timeOf(last.StartTime), CompletedAt: &s.now,
		Reason: fmt.Sprintf("the backup disappeared from the backup service before it finished "+
			"(not found by %d polls over %s)", polls, missingFor.Round(time.Second)),
	}, last.Trigger)
	return ctrl.Result{}
}

// reconcileNewBackup starts a scheduled or on-change backup when one is due,
// and computes when the next slot wakes the controller.
func (r *Reconciler) reconcileNewBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	o := r.observeNewBackup(s)
	switch plan := planNewBackup(o); plan.action {
	case newIdle:
		// Nothing new is started while spec.schedule is unusable.
		return ctrl.Result{}, nil
	case newSkipSlot:
		// A slot that passes while no backup may be taken is skipped, not
		// saved up: resuming should not fire a backup by itself.
		ctrl.LoggerFrom(ctx).Info("Skipping scheduled backup", "slot", s.bc.Status.NextScheduleTime,
			"suspended", s.bc.Spec.Suspend, "appExists", app != nil)
		if s.bc.Spec.Suspend && s.bc.Status.NextScheduleTime != nil {
			r.event(s, corev1.EventTypeNormal, eventScheduledBackupSkipped, "Skip",
				"The backup scheduled for %s is skipped because spec.suspend is set; it is not caught up on resume",
				s.bc.Status.NextScheduleTime.UTC().Format(time.RFC3339))
		}
		r.advanceSchedule(s)
		return r.scheduleWakeup(s), nil
	case newAsleep:
		return r.scheduleWakeup(s), nil
	case newWaitRunning:
		// One backup at a time; the poll of the running one comes back here,
		// and a due slot or a new generation is still due then.
		return ctrl.Result{}, nil
	}
	// A refused slot is reported until a backup is started again, or until
	// there is no schedule any more.
	if c := meta.FindStatusCondition(s.base.Status.Conditions, backupv1alpha1.ReadyCondition); c != nil &&
		c.Reason == backupv1alpha1.ScheduledBackupRefusedReason && s.schedule != nil {
		s.readiness.refusedSlot = c.Message
	}

	due := planDue(r.observeDue(s))
	if !s.slotDue && !due.owes() {
		return pass.Soonest(laterResult(due), r.scheduleWakeup(s)), nil
	}
	if result, stop, err := r.followRunningBackup(ctx, s); stop {
		return result, err
	}
	if s.slotDue {
		result, done, err := r.startScheduledBackup(ctx, s, &due)
		if done || err != nil {
			return result, err
		}
	}
	b, err := r.requestBackup(ctx, s, backupv1alpha1.TriggerAppChange, changeRetryKey(s.owner, app, due.attempt))
	if err != nil {
		return r.serviceError(ctx, s, "starting a backup", err)
	}
	return pass.Soonest(r.startedBackup(ctx, s, b, backupv1alpha1.TriggerAppChange, due.attempt), r.scheduleWakeup(s)), nil
}

// observeNewBackup is what the scope says about new backups
// (planNewBackup).
func (r *Reconciler) observeNewBackup(s *scope) newBackupObservation {
	last := s.bc.Status.LastBackup
	o := newBackupObservation{
		invalidSchedule: s.readiness.invalidSchedule != "",
		suspended:       s.bc.Spec.Suspend,
		appExists:       s.app != nil,
		running:         last != nil && last.Phase == backupv1alpha1.BackupRunning,
		slotDue:         s.slotDue,
	}
	if s.app != nil {
		o.appDeleting = !s.app.DeletionTimestamp.IsZero()
	}
	return o
}

// backupNowRequested returns the backup-now annotation's value when no
// backup was started for it yet.
func backupNowRequested(bc *backupv1alpha1.BackupConfig) (string, bool) {
	v, ok := bc.Annotations[backupv1alpha1.BackupNowAnnotation]
	return v, ok && v != bc.Status.LastHandledBackupNow
}

// reconcileBackupNow starts the on-demand backup the backup-now annotation
// asks for, keyed by the annotation's value, and acknowledges the value in
// status.lastHandledBackupNow. It starts one only when no backup is running
// (one at a time, as for every trigger), never while suspended, and only
// for a MyApp that exists and is not being deleted (its final backup is
// another phase's). A due slot or change then waits for the manual backup
// to finish, as for any running backup; the manual backup counts for
// retention like the others.
func (r *Reconciler) reconcileBackupNow(ctx context.Context, s *scope) (ctrl.Result, error) {
	value, requested := backupNowRequested(s.bc)
	app := s.app
	if !requested || s.bc.Spec.Suspend || app == nil || !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if last := s.bc.Status.LastBackup; last != nil && last.Phase == backupv1alpha1.BackupRunning {
		return ctrl.Result{}, nil // the poll of the running one comes back here
	}
	if result, stop, err := r.followRunningBackup(ctx, s); stop {
		return result, err
	}
	b, err := r.requestBackup(ctx, s, backupv1alpha1.TriggerManual, manualKey(s.owner, s.app.UID, value))
	if err != nil {
		return r.serviceError(ctx, s, "starting an on-demand backup", err)
	}
	s.bc.Status.LastHandledBackupNow = value
	return pass.Soonest(r.startedBackup(ctx, s, b, backupv1alpha1.TriggerManual, 0), r.scheduleWakeup(s)), nil
}

// observeDue is what the scope says about the backups owed (planDue).
func (r *Reconciler) observeDue(s *scope) dueObservation {
	return dueObservation{
		now:                s.now,
		onChange:           s.bc.Spec.BackupOnChange == nil || *s.bc.Spec.BackupOnChange,
		slotDue:            s.slotDue,
		appUID:             s.app.UID,
		appGeneration:      s.app.Generation,
		observedUID:        s.bc.Status.ObservedAppUID,
		observedGeneration: s.bc.Status.ObservedAppGeneration,
		last:               s.bc.Status.LastBackup,
		retryDelay:         r.FailedBackupRetryDelay,
	}
}

// laterResult wakes the controller for a retry that is not due yet.
func laterResult(due duePlan) ctrl.Result {
	return ctrl.Result{RequeueAfter: due.later}
}

// followRunningBackup keeps one backup at a time even when status is stale
// (a pass that read the BackupConfig before its own last status write): the
// service is asked for a backup of this BackupConfig still running, and that
// one is followed instead of starting another. stop says the pass ends here:
// a running backup was adopted, or the service could not be asked.
func (r *Reconciler) followRunningBackup(ctx context.Context, s *scope) (result ctrl.Result, stop bool, err error) {
	backups, err := s.backups.List(ctx, s.owner)
	if err != nil {
		result, err = r.serviceError(ctx, s, "listing backups before starting one", err)
		return result, true, err
	}
	s.listed = backups
	running := r.runningBackup(s, backups)
	if running == nil {
		return ctrl.Result{}, false, nil
	}
	ctrl.LoggerFrom(ctx).Info("Following a backup that is still running instead of starting another",
		"backupID", running.ID)
	s.readiness.refusedSlot = ""
	r.recordCoverage(s, *running, triggerOf(*running), false)
	r.recordBackup(ctx, s, *running, triggerOf(*running))
	return pass.RequeueAfter(r.BackupPollInterval), true, nil
}

// startScheduledBackup starts the backup of the due slot. done says the
// pass is over; otherwise the on-change backup in due, which it may have
// updated, is started next.
func (r *Reconciler) startScheduledBackup(ctx context.Context, s *scope, due *duePlan) (ctrl.Result, bool, error) {
	slot := s.bc.Status.NextScheduleTime.Time
	b, err := r.requestBackup(ctx, s, backupv1alpha1.TriggerSchedule, scheduleKey(s.owner, s.app.UID, slot))
	switch {
	case isRefusal(err):
		r.skipRefusedSlot(ctx, s, slot, err)
		r.advanceSchedule(s)
	case err != nil:
		result, err := r.serviceError(ctx, s, "starting a backup", err)
		return result, true, err
	default:
		// A scheduled backup also records the MyApp's generation once it
		// succeeded, so it covers a pending change as well, unless it was
		// adopted from an earlier pass that started it before the change.
		// While a failed change is owed a retry, it carries the change's
		// attempts, so that its own failure leaves the retry owed.
		r.advanceSchedule(s)
		result := r.startedBackup(ctx, s, b, backupv1alpha1.TriggerSchedule, due.carry)
		if b.Phase == backup.PhaseRunning || !planDue(r.observeDue(s)).change {
			return pass.Soonest(result, r.scheduleWakeup(s)), true, nil
		}
		// The adopted backup finished already, and no event would bring
		// the change back before the next slot: its backup starts now.
		*due = duePlan{change: true, attempt: 1}
	}
	if !due.owes() {
		return pass.Soonest(laterResult(*due), r.scheduleWakeup(s)), true, nil
	}
	return ctrl.Result{}, false, nil
}

// appBackedUp reports whether a backup was started of the MyApp as it is:
// of its generation, and of this MyApp rather than an earlier one of the
// same name, whose generation may well be the same. A status written before
// observedAppUID existed has no UID and counts as not backed up, since it
// cannot tell the two apart. That costs at most one backup per
// BackupConfig, and none when the last backup was the on-change backup of
// this generation: its change key is the same, so the service answers with
// that backup instead of starting another.
func appBackedUp(status backupv1alpha1.BackupConfigStatus, app *appsv1alpha1.MyApp) bool {
	return status.ObservedAppUID == app.UID && status.ObservedAppGeneration == app.Generation
}

// runningBackup returns a backup of this BackupConfig that the service lists
// as RUNNING and that has not run out of time, or nil.
func (r *Reconciler) runningBackup(s *scope, backups []backup.Backup) *backup.Backup {
	for i := range backups {
		b := &backups[i]
		if b.Owner == s.owner && b.Phase == backup.PhaseRunning && !r.timedOut(s, b.StartedAt) {
			return b
		}
	}
	return nil
}
