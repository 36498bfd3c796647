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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileFinalBackup takes the last backup of a MyApp being deleted that
// this BackupConfig holds with its finalizer. reconcileAppHolds releases the
// MyApp once the service reports the backup SUCCEEDED. The decision is
// planFinalBackup's (final_plan.go); this is its observation and apply.
func (r *Reconciler) reconcileFinalBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	o := r.observeFinal(s)
	p := planFinalBackup(o)
	result, done, err := r.applyFinal(ctx, s, o, p)
	if err != nil || !done {
		return result, err
	}
	return r.releaseAfterFinalBackup(ctx, s)
}

// observeFinal is what the scope says about the final backup, without the
// service's listing, which planFinalBackup asks for when it needs it.
func (r *Reconciler) observeFinal(s *scope) finalObservation {
	bc, app := s.bc, s.app
	o := finalObservation{
		now:                  s.now,
		optIn:                bc.Spec.BackupBeforeAppDeletion,
		suspended:            bc.Spec.Suspend,
		retain:               bc.Spec.DeletionPolicy != backupv1alpha1.DeletionPolicyDelete,
		deleting:             !bc.DeletionTimestamp.IsZero(),
		namespaceTerminating: s.namespaceTerminating,
		maxAttempts:          r.FinalBackupAttempts,
		teardownLimit:        r.FinalBackupTeardownLimit,
		abandonReported:      readyReason(s.base) == backupv1alpha1.FinalBackupAbandonedReason,
	}
	if o.deleting {
		o.deletionStarted = bc.DeletionTimestamp.Time
	}
	if app != nil {
		o.appExists = true
		o.appHeld = controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer)
		o.appDeleting = !app.DeletionTimestamp.IsZero()
		o.recorded = finalBackupRecorded(bc.Status, app)
	}
	last := bc.Status.LastBackup
	o.otherRunning = last != nil && last.Phase == backupv1alpha1.BackupRunning &&
		last.Trigger != backupv1alpha1.TriggerAppDeletion
	return o
}

// applyFinal carries a final-backup plan out. A plan that needs the
// service's listing gets it, and the decision is made again over it. done
// says the final backup succeeded or was given up, and the hold may go.
func (r *Reconciler) applyFinal(ctx context.Context, s *scope, o finalObservation, p finalPlan) (ctrl.Result, bool, error) {
	var attempts finalAttempts
	if p.action == finalList {
		var err error
		attempts, err = r.listFinalAttempts(ctx, s, s.owner, s.app.UID)
		if err != nil {
			s.readiness.finalBackupPending = true
			result, err := r.serviceError(ctx, s, "listing final backups", err)
			return result, false, err
		}
		o.listed, o.attempts = true, attempts.tally()
		p = planFinalBackup(o)
	}
	s.keepOwnHold = p.keepHold
	switch p.action {
	case finalNone:
		return ctrl.Result{}, p.release, nil
	case finalDone:
		if b := attempts.succeeded; b != nil {
			if last := s.bc.Status.LastBackup; last == nil || last.ID != b.ID {
				r.recordBackup(ctx, s, *b, backupv1alpha1.TriggerAppDeletion)
			}
		}
		return ctrl.Result{}, true, nil
	case finalWaitOther, finalWaitApp:
		// One backup at a time: the one running was started just before the
		// deletion and covers nearly the same state; the final one follows.
		// Or the namespace is terminating and the MyApp's deletion, which
		// its watch reports, has not begun yet.
		s.readiness.finalBackupPending = true
		return pass.RequeueAfter(r.BackupPollInterval), false, nil
	case finalFollow:
		s.readiness.finalBackupPending = true
		if b := attempts.running; b != nil {
			if last := s.bc.Status.LastBackup; last == nil || last.ID != b.ID {
				// Started by a pass that died before recording it.
				r.recordBackup(ctx, s, *b, backupv1alpha1.TriggerAppDeletion)
			}
		}
		return pass.RequeueAfter(r.BackupPollInterval), false, nil
	case finalFailed:
		// Out of attempts: a person decides between fixing the service and
		// releasing the MyApp without a final backup. Nothing to requeue for;
		// the spec change or deletion that decides brings the object back.
		r.reportFinalBackupFailed(ctx, s, attempts)
		return ctrl.Result{}, false, nil
	case finalAbandon:
		r.reportFinalBackupAbandoned(ctx, s, p.why)
		if !p.release {
			// The status says so before the MyApp goes: the next pass, soon,
			// reads it and releases.
			return ctrl.Result{RequeueAfter: abandonReportDelay}, false, nil
		}
		return ctrl.Result{}, true, nil
	}
	s.readiness.finalBackupPending = true
	result, err := r.startBackup(ctx, s, backupv1alpha1.TriggerAppDeletion, finalKey(s.owner, s.app.UID, p.attempt))
	if err != nil {
		return result, false, err
	}
	// The service may answer with an earlier attempt that already finished,
	// which a listing did not show yet: nothing else would bring the
	// BackupConfig back to look again.
	return pass.Soonest(result, pass.RequeueAfter(r.BackupPollInterval)), false, nil
}

// abandonReportDelay is how soon the pass after a give-up's report comes.
const abandonReportDelay = time.Second

// reportFinalBackupAbandoned says that a BackupConfig being deleted, or a
// suspended one, gave its MyApp's final backup up: a Warning event (once), a log line, a metric and
// the Ready condition, which the pass writes before the MyApp is released.
func (r *Reconciler) reportFinalBackupAbandoned(ctx context.Context, s *scope, why string) {
	s.readiness.finalBackupAbandoned = why
	if readyReason(s.base) == backupv1alpha1.FinalBackupAbandonedReason {
		return
	}
	finalBackupsAbandoned.Inc()
	ctrl.LoggerFrom(ctx).Info("Giving up the final backup, releasing the MyApp", "myapp", klog.KObj(s.app), "why", why)
	r.event(s, corev1.EventTypeWarning, eventFinalBackupAbandoned, actionStartBackup,
		"MyApp %s is released without a final backup: %s", s.app.Name, why)
}

// reportFinalBackupFailed says that the final backup failed for good and
// the MyApp stays held.
func (r *Reconciler) reportFinalBackupFailed(ctx context.Context, s *scope, attempts finalAttempts) {
	s.readiness.finalBackupFailures = attempts.failed
	s.readiness.finalBackupFailure = attempts.lastFailure
	if !pass.TroubleStarts(s.base.Status.Conditions, backupv1alpha1.ReadyCondition, backupv1alpha1.FinalBackupFailedReason) {
		return
	}
	ctrl.LoggerFrom(ctx).Info("Final backup failed for good, holding the MyApp", "myapp", klog.KObj(s.app),
		"attempts", attempts.failed)
	r.event(s, corev1.EventTypeWarning, eventFinalBackupFailed, actionStartBackup,
		"The final backup of MyApp %s failed %d times (last reason: %s); the MyApp is held until "+
			"spec.backupBeforeAppDeletion is set to false or this BackupConfig is deleted",
		s.app.Name, attempts.failed, normalizeReason(attempts.lastFailure))
}

// releaseAfterFinalBackup ends this BackupConfig's part in a MyApp's
// deletion: the MyApp goes once no other BackupConfig needs it. While one
// still does, the BackupConfig looks again after the poll interval, because
// the other's progress sends it no event.
func (r *Reconciler) releaseAfterFinalBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	if _, err := r.reconcileAppHolds(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if s.app != nil && controllerutil.ContainsFinalizer(s.app, backupv1alpha1.FinalBackupFinalizer) {
		return pass.RequeueAfter(r.BackupPollInterval), nil
	}
	return ctrl.Result{}, nil
}
