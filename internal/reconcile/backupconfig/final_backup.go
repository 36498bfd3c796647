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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileFinalBackup takes the last backup of a MyApp being deleted that
// this BackupConfig holds with its finalizer. reconcileAppHolds releases the
// MyApp once the service reports the backup SUCCEEDED.
func (r *Reconciler) reconcileFinalBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	if app == nil || app.DeletionTimestamp.IsZero() || !s.bc.Spec.BackupBeforeAppDeletion ||
		!controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer) {
		return ctrl.Result{}, nil
	}
	if last := s.bc.Status.LastBackup; last != nil && last.Phase == backupv1alpha1.BackupRunning &&
		last.Trigger != backupv1alpha1.TriggerAppDeletion {
		// One backup at a time: the one running was started just before the
		// deletion and covers nearly the same state; the final one follows.
		s.readiness.finalBackupPending = true
		return ctrl.Result{}, nil
	}
	if finalBackupRecorded(s.bc.Status, app) {
		// The service reported the final backup SUCCEEDED already; a listing
		// that does not show it yet must not start another.
		return r.releaseAfterFinalBackup(ctx, s)
	}
	attempts, err := r.listFinalAttempts(ctx, s, s.owner, app.UID)
	if err != nil {
		s.readiness.finalBackupPending = true
		return r.serviceError(ctx, s, "listing final backups", err)
	}
	switch {
	case attempts.succeeded != nil:
		if last := s.bc.Status.LastBackup; last == nil || last.ID != attempts.succeeded.ID {
			r.recordBackup(ctx, s, *attempts.succeeded, backupv1alpha1.TriggerAppDeletion)
		}
		return r.releaseAfterFinalBackup(ctx, s)
	case attempts.running != nil:
		s.readiness.finalBackupPending = true
		if last := s.bc.Status.LastBackup; last == nil || last.ID != attempts.running.ID {
			// Started by a pass that died before recording it.
			r.recordBackup(ctx, s, *attempts.running, backupv1alpha1.TriggerAppDeletion)
		}
		return pass.RequeueAfter(r.BackupPollInterval), nil
	case attempts.failed >= r.FinalBackupAttempts:
		// Out of attempts: a person decides between fixing the service and
		// releasing the MyApp without a final backup. Nothing to requeue for;
		// the spec change or deletion that decides brings the object back.
		r.reportFinalBackupFailed(ctx, s, attempts)
		return ctrl.Result{}, nil
	case s.bc.Spec.Suspend:
		s.readiness.finalBackupPending = true
		return ctrl.Result{}, nil
	}
	s.readiness.finalBackupPending = true
	result, err := r.startBackup(ctx, s, backupv1alpha1.TriggerAppDeletion, finalKey(s.owner, app.UID, attempts.failed+1))
	if err != nil {
		return result, err
	}
	// The service may answer with an earlier attempt that already finished,
	// which a listing did not show yet: nothing else would bring the
	// BackupConfig back to look again.
	return pass.Soonest(result, pass.RequeueAfter(r.BackupPollInterval)), nil
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
