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

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
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

// reconcileBackupBeforeDeletion polls, for a BackupConfig being deleted,
// a scheduled, on-change or backup-now backup that still runs, or the final
// backup of a MyApp it held before its appRef moved: a final backup waits
// for it (one backup at a time). The final backup of the MyApp it holds now
// is followed through the service's list of final attempts instead
// (runFinalBackup).
func (r *Reconciler) reconcileBackupBeforeDeletion(ctx context.Context, s *scope) (ctrl.Result, error) {
	if lastIsFinalBackupOf(s.bc.Status, s.app) {
		return ctrl.Result{}, nil
	}
	return r.reconcileRunningBackup(ctx, s)
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

// maxNewBackupSteps bounds one pass's loop over new backups: a list, a
// backup-now start, a slot's start (or its skip) and a change's start are
// the most one pass takes, and each changes what the next plan sees.
const maxNewBackupSteps = 6

// reconcileNewBackup takes the new backups: a backup-now request's, a
// schedule slot's and a change's, one step at a time as
// backupplan.PlanNewBackup names them. Each step's answer is recorded in
// status (record.go) and observed again before the next decision, and the
// plan's one wake-up says when the BackupConfig comes back.
func (r *Reconciler) reconcileNewBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	restores, err := r.restoresInProgress(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !s.bc.Spec.Suspend {
		// Quiet for the Restore: Ready says so, naming it.
		s.readiness.waitingForRestore = restores.targets[s.bc.Spec.AppRef.Name]
		s.readiness.waitingSince = restores.since[s.bc.Spec.AppRef.Name]
	}
	r.carryRefusedSlot(s)
	p := backupplan.PlanNewBackup(r.observeNewBackup(s))
	for range maxNewBackupSteps {
		if p.Action == backupplan.NewNothing {
			break
		}
		a := r.askBackupService(ctx, s, p)
		if result, err := r.recordNewBackupAnswer(ctx, s, p, a); err != nil {
			return result, err
		}
		p = backupplan.PlanNewBackup(r.observeNewBackup(s))
	}
	return r.wakeFor(s, p.Wake), nil
}

// observeNewBackup is what the scope says about new backups: the spec,
// the schedule, the MyApp, the status and this pass's list.
func (r *Reconciler) observeNewBackup(s *scope) backupplan.NewBackupObservation {
	bc := s.bc
	_, manual := backupNowRequested(bc)
	o := backupplan.NewBackupObservation{
		Now:                s.now,
		Suspended:          bc.Spec.Suspend,
		OnChange:           bc.Spec.BackupOnChange == nil || *bc.Spec.BackupOnChange,
		InvalidSchedule:    s.readiness.invalidSchedule != "",
		SlotDue:            s.slotDue,
		ObservedUID:        string(bc.Status.ObservedAppUID),
		ObservedGeneration: bc.Status.ObservedAppGeneration,
		Last:               planBackupOf(bc.Status.LastBackup),
		ManualRequested:    manual,
		RetryDelay:         r.FailedBackupRetryDelay,
		Listed:             s.listed != nil,
		Restoring:          s.restores != nil && s.restores.targets[bc.Spec.AppRef.Name] != "",
	}
	if next := bc.Status.NextScheduleTime; next != nil {
		o.Slot = next.Time
	}
	if app := s.app; app != nil {
		o.AppExists, o.AppDeleting = true, !app.DeletionTimestamp.IsZero()
		o.AppUID, o.AppGeneration = string(app.UID), app.Generation
	}
	return o
}

// wakeFor is the result that brings the BackupConfig back when the plan
// asked: the poll interval (jittered) for a running backup, just after a
// slot (jittered, never early), exactly at a retry.
func (r *Reconciler) wakeFor(s *scope, w backupplan.Wake) ctrl.Result {
	switch w.Kind {
	case backupplan.WakePoll:
		return pass.RequeueAfter(r.BackupPollInterval)
	case backupplan.WakeSlot:
		return ctrl.Result{RequeueAfter: w.At.Sub(s.now) + wait.Jitter(scheduleWakeSlack, 1)}
	case backupplan.WakeRetry:
		return ctrl.Result{RequeueAfter: w.At.Sub(s.now)}
	}
	return ctrl.Result{}
}

// carryRefusedSlot keeps a refused slot reported until a backup is started
// again, or until there is no schedule any more.
func (r *Reconciler) carryRefusedSlot(s *scope) {
	c := meta.FindStatusCondition(s.base.Status.Conditions, backupv1alpha1.ReadyCondition)
	if c != nil && c.Reason == backupv1alpha1.ScheduledBackupRefusedReason && s.schedule != nil {
		s.readiness.refusedSlot = c.Message
	}
}

// backupNowRequested returns the backup-now annotation's value when no
// backup was started for it yet.
func backupNowRequested(bc *backupv1alpha1.BackupConfig) (string, bool) {
	v, ok := bc.Annotations[backupv1alpha1.BackupNowAnnotation]
	return v, ok && v != bc.Status.LastHandledBackupNow
}
