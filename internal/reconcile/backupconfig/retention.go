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
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
)

// defaultKeepLast mirrors the API default, for objects stored before it.
const defaultKeepLast = 7

// reconcileRetention deletes this BackupConfig's backups that retention no
// longer keeps: successful backups beyond the newest spec.retention.keepLast,
// and failed ones by the rule of expiredFailures. Only backups listed under
// its own owner are candidates, and the service refuses to delete anyone
// else's anyway.
func (r *Reconciler) reconcileRetention(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.bc.Spec.Suspend {
		// A suspended BackupConfig writes nothing to the backup service,
		// deletions included; retention catches up on resume.
		return ctrl.Result{}, nil
	}
	if last := s.bc.Status.LastBackup; last != nil && last.Phase == backupv1alpha1.BackupRunning {
		// Pruning waits for the running backup, so it never counts one that
		// may yet fail among the kept.
		return ctrl.Result{}, nil
	}
	keep := int(s.bc.Spec.Retention.KeepLast)
	if keep < 1 {
		keep = defaultKeepLast
	}
	backups, err := s.listOwn(ctx, s.owner)
	if err != nil {
		return r.serviceError(ctx, s, "listing backups for retention", err)
	}
	restores, err := r.restoresInProgress(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	o := backupplan.RetentionObservation{Owner: s.owner, Keep: keep, Backups: make([]backupplan.Listed, 0, len(backups))}
	for _, b := range backups {
		o.Backups = append(o.Backups, backupplan.Listed{
			ID: b.ID, Owner: b.Owner, Started: b.StartedAt,
			Succeeded: b.Phase == backup.PhaseSucceeded, Failed: r.countsAsFailed(s, b),
			NeededAttempt: r.neededAttempt(s, b), Pinned: restores.pinned[b.ID] != "",
		})
	}
	p := backupplan.PlanRetention(o)
	for _, b := range p.Pinned {
		ctrl.LoggerFrom(ctx).Info("Keeping a backup beyond retention while a Restore needs it",
			"backupID", b.ID, "restore", restores.pinned[b.ID])
	}
	if len(p.Expired) == 0 {
		return ctrl.Result{}, nil
	}
	expired := make([]backup.Backup, 0, len(p.Expired))
	for _, b := range p.Expired {
		expired = append(expired, backup.Backup{ID: b.ID, Owner: b.Owner})
	}
	expiredFailed := p.Expired[len(p.Expired)-p.Failed:]

	log := ctrl.LoggerFrom(ctx)
	log.Info("Deleting backups beyond retention", "count", len(expired), "failed", len(expiredFailed), "keepLast", keep)
	deleted, err := r.deleteBackups(ctx, s, expired)
	backupsDeleted.WithLabelValues(deleteCauseRetention).Add(float64(deleted))
	if deleted > 0 {
		s.event(corev1.EventTypeNormal, eventBackupsPruned, actionDeleteBackups,
			"Deleted %d backups beyond retention: successful ones older than the newest %d (spec.retention.keepLast), "+
				"failed ones older than the newest successful one or beyond the newest %d failures", deleted, keep, keep)
	}
	if err != nil {
		return r.serviceError(ctx, s, "deleting backups beyond retention", err)
	}
	return ctrl.Result{}, nil
}

// countsAsFailed reports whether b failed, or ran out of time and is treated
// as failed.
func (r *Reconciler) countsAsFailed(s *scope, b backup.Backup) bool {
	return b.Phase == backup.PhaseFailed || b.Phase == backup.PhaseRunning && r.timedOut(s, b.StartedAt)
}

// neededAttempt reports whether b is a failed final backup attempt of the
// MyApp that still exists: the attempts are counted from the service's
// listing, so pruning one would start it again.
func (r *Reconciler) neededAttempt(s *scope, b backup.Backup) bool {
	return s.app != nil && strings.HasPrefix(b.IdempotencyKey, finalKeyPrefix(s.owner, s.app.UID))
}
