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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileDelete lets a BackupConfig go: it takes the final backup of a
// MyApp deleted with it (a namespace teardown), releases the MyApps it held,
// deletes its backups with deletionPolicy Delete (and confirms they are
// gone), and removes its finalizer.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if s.bc.Spec.DeletionPolicy == backupv1alpha1.DeletionPolicyDelete {
		r.estimateHeldForCleanup(s)
	}
	// A MyApp that goes with its BackupConfig gets its final backup first,
	// within a bound (backupplan.PlanFinalBackup), decided from the MyApp as
	// the API server shows it, with a grace for a MyApp whose deletion
	// comes right after this one's (kubectl delete -f, a GitOps prune).
	// Otherwise deleting the BackupConfig releases the MyApp: the documented
	// way to release a MyApp held for a final backup that cannot succeed.
	// That comes before the backups, which may wait for the backup service.
	if result, done, err := r.runFinalBackup(ctx, s); err != nil || !done {
		return result, err
	}
	if _, err := r.reconcileAppHolds(ctx, s); err != nil {
		return ctrl.Result{}, err
	}

	if s.bc.Spec.DeletionPolicy == backupv1alpha1.DeletionPolicyDelete {
		if result, err := r.deleteAllBackups(ctx, s); err != nil || !result.IsZero() {
			return result, err
		}
	} else {
		s.event(corev1.EventTypeNormal, eventBackupsRetained, actionDeleteBackups,
			"Kept this BackupConfig's backups in the backup service (owner %s) because spec.deletionPolicy is Retain; "+
				"delete them there when they are no longer needed", s.owner)
	}

	log.Info("Removing finalizer", "finalizer", backupv1alpha1.BackupCleanupFinalizer)
	if err := pass.RemoveFinalizer(ctx, r.Client, s.bc, backupv1alpha1.BackupCleanupFinalizer); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	backupsHeldForCleanup.DeleteLabelValues(s.key.Namespace, s.key.Name)
	r.memory.forget(s.key)
	return ctrl.Result{}, nil
}

// deleteAllBackups deletes every backup this BackupConfig started and
// returns a zero result only once the service lists none of them any more.
func (r *Reconciler) deleteAllBackups(ctx context.Context, s *scope) (ctrl.Result, error) {
	backups, err := s.listOwn(ctx, s.owner)
	if err != nil {
		return r.serviceError(ctx, s, "listing backups to delete", err)
	}
	restores, err := r.restoresInProgress(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	listed := make([]backupplan.Listed, 0, len(backups)+1)
	for _, b := range backups {
		listed = append(listed, backupplan.Listed{ID: b.ID, Owner: b.Owner, Pinned: restores.pinned[b.ID] != ""})
	}
	if last := s.bc.Status.LastBackup; last != nil && !containsBackup(backups, last.ID) {
		// An eventually consistent list may not show the newest backup yet;
		// its ID is known, and deleting a missing backup is a success.
		listed = append(listed, backupplan.Listed{ID: last.ID, Owner: s.owner, Pinned: restores.pinned[last.ID] != ""})
	}
	deletes, pinned := backupplan.PlanCleanup(s.owner, listed)
	own := make([]backup.Backup, 0, len(deletes))
	for _, b := range deletes {
		own = append(own, backup.Backup{ID: b.ID})
	}
	r.countHeldForCleanup(s, len(own)+len(pinned))
	if len(own) > 0 {
		ctrl.LoggerFrom(ctx).Info("Deleting backups", "count", len(own), "owner", s.owner)
	}
	for _, b := range pinned {
		// The finalizer waits below until the service lists none of this
		// BackupConfig's backups: this one goes once the Restore has
		// finished, whose status change brings the next pass.
		ctrl.LoggerFrom(ctx).Info("Keeping a backup while a Restore needs it; the deletion waits",
			"backupID", b.ID, "restore", restores.pinned[b.ID])
		s.readiness.keptForRestores = append(s.readiness.keptForRestores,
			keptBackup{id: b.ID, restore: restores.pinned[b.ID]})
	}
	deleted, err := r.deleteBackups(ctx, s, own)
	backupsDeleted.WithLabelValues(deleteCauseCleanup).Add(float64(deleted))
	if err != nil {
		return r.serviceError(ctx, s, "deleting backups", err)
	}

	// The finalizer goes only once the service confirms the backups are
	// gone, not on the strength of the delete calls alone.
	remaining, err := s.listOwn(ctx, s.owner)
	if err != nil {
		return r.serviceError(ctx, s, "confirming backups are deleted", err)
	}
	if left := countOwned(remaining, s.owner); left > 0 {
		r.countHeldForCleanup(s, left)
		ctrl.LoggerFrom(ctx).Info("Waiting for the backup service to finish deleting backups", "remaining", left)
		return pass.RequeueAfter(r.BackupPollInterval), nil
	}
	if remaining := s.bc.DeletionTimestamp.Add(r.CleanupGrace).Sub(s.now); remaining > 0 {
		// The service lists a backup only some time after it started, and
		// one started just before the deletion may not be in status either:
		// an empty listing counts only once that time has passed.
		r.countHeldForCleanup(s, 0)
		ctrl.LoggerFrom(ctx).Info("Waiting for the backup service to list backups started just before the deletion",
			"wait", remaining)
		// Woken just after the grace, as for a schedule slot.
		return ctrl.Result{RequeueAfter: remaining + scheduleWakeSlack}, nil
	}
	r.countHeldForCleanup(s, 0)
	if deleted > 0 {
		s.event(corev1.EventTypeNormal, eventBackupsDeleted, actionDeleteBackups,
			"Deleted %d backups from the backup service because spec.deletionPolicy is Delete", deleted)
	}
	return ctrl.Result{}, nil
}

// estimateHeldForCleanup gives the held-for-cleanup gauge a value before the
// backup service has been asked, so that the gauge does not stay empty while
// the service is down, which is when it matters most. The backup named in
// status.lastBackup is one this BackupConfig surely started; there may be
// more, so the estimate is a lower bound. Once a listing of the service has
// counted the backups, its count stands, through later outages too, until
// the next listing.
func (r *Reconciler) estimateHeldForCleanup(s *scope) {
	if r.memory.isCleanupCounted(s.key) {
		return
	}
	held := 0
	if s.bc.Status.LastBackup != nil {
		held = 1
	}
	backupsHeldForCleanup.WithLabelValues(s.key.Namespace, s.key.Name).Set(float64(held))
}

// countHeldForCleanup sets the held-for-cleanup gauge from a listing of the
// backup service.
func (r *Reconciler) countHeldForCleanup(s *scope, held int) {
	backupsHeldForCleanup.WithLabelValues(s.key.Namespace, s.key.Name).Set(float64(held))
	r.memory.markCleanupCounted(s.key)
}
