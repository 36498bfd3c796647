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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
)

// reconcileFinalBackup takes the last backup of a MyApp being deleted that
// this BackupConfig holds with its finalizer, and releases the MyApp once
// the service reports it SUCCEEDED (or, suspended, once it said it gave the
// backup up) and no other BackupConfig needs it.
func (r *Reconciler) reconcileFinalBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	result, done, err := r.runFinalBackup(ctx, s)
	if err != nil || !done || s.app == nil {
		return result, err
	}
	return r.releaseOwnHold(ctx, s)
}

// maxFinalReads bounds one pass's reads for a final-backup plan: the MyApp
// from the API server, the namespace and the service's final attempts,
// each at most once.
const maxFinalReads = 3

// runFinalBackup decides a MyApp's final backup with
// backupplan.PlanFinalBackup, for a BackupConfig in use and for one being
// deleted: it observes, reads what the plan needs and plans again, then
// asks the service for the start the plan decided (service.go) and records
// the outcome (record.go). done says no final backup holds the MyApp any
// more (none is owed, it succeeded, or it was given up and the status said
// so), and the hold may go.
func (r *Reconciler) runFinalBackup(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	run := finalRun{o: r.observeFinal(s)}
	run.p = backupplan.PlanFinalBackup(run.o)
	for range maxFinalReads {
		if run.p.Need == backupplan.NeedNothing {
			break
		}
		if result, err := r.readForFinal(ctx, s, &run); err != nil {
			return result, false, err
		}
		run.p = backupplan.PlanFinalBackup(run.o)
	}
	a := r.askForFinal(ctx, s, run.p)
	return r.recordFinalAnswer(ctx, s, run, a)
}

// observeFinal is what the scope says about the final backup, without the
// reads the plan asks for when it needs them.
func (r *Reconciler) observeFinal(s *scope) backupplan.FinalObservation {
	bc := s.bc
	o := backupplan.FinalObservation{
		Now:             s.now,
		OptIn:           bc.Spec.BackupBeforeAppDeletion,
		Suspended:       bc.Spec.Suspend,
		Retain:          bc.Spec.DeletionPolicy != backupv1alpha1.DeletionPolicyDelete,
		Deleting:        !bc.DeletionTimestamp.IsZero(),
		MaxAttempts:     r.FinalBackupAttempts,
		TeardownLimit:   r.FinalBackupTeardownLimit,
		AbandonReported: s.readyWas == backupv1alpha1.FinalBackupAbandonedReason,
	}
	if o.Deleting {
		o.DeletionStarted = bc.DeletionTimestamp.Time
	}
	observeFinalApp(&o, s.bc, s.app)
	return o
}

// observeFinalApp fills in what the observation knows of the MyApp.
func observeFinalApp(o *backupplan.FinalObservation, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp) {
	o.AppExists, o.AppHeld, o.AppDeleting, o.Recorded = false, false, false, false
	last := bc.Status.LastBackup
	o.OtherRunning = last != nil && last.Phase == backupv1alpha1.BackupRunning && !lastIsFinalBackupOf(bc.Status, app)
	if app == nil {
		return
	}
	o.AppExists = true
	o.AppHeld = controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer)
	o.AppDeleting = !app.DeletionTimestamp.IsZero()
	o.Recorded = finalBackupRecorded(bc.Status, app)
}

// readForFinal reads what the plan needs and folds it into the
// observation: the MyApp from the API server (a BackupConfig being deleted
// decides from it, never from a cache that may not show the MyApp's
// deletion yet), the namespace, or the service's final attempts.
func (r *Reconciler) readForFinal(ctx context.Context, s *scope, run *finalRun) (ctrl.Result, error) {
	bc := s.bc
	switch run.p.Need {
	case backupplan.NeedAppFromAPIServer:
		app := &appsv1alpha1.MyApp{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: bc.Namespace, Name: bc.Spec.AppRef.Name}, app)
		switch {
		case apierrors.IsNotFound(err):
			app = nil
		case err != nil:
			return ctrl.Result{}, fmt.Errorf("reading MyApp %s: %w", bc.Spec.AppRef.Name, err)
		}
		s.app = app
		run.o.AppFromAPIServer = true
		observeFinalApp(&run.o, bc, app)
	case backupplan.NeedNamespace:
		ns := &corev1.Namespace{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Name: bc.Namespace}, ns); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("reading namespace %s: %w", bc.Namespace, err)
		}
		run.o.NamespaceRead, run.o.NamespaceTerminating = true, !ns.DeletionTimestamp.IsZero()
	case backupplan.NeedAttempts:
		attempts, err := r.listFinalAttempts(ctx, s, s.owner, s.app.UID)
		run.attempts, run.o.Listed = attempts, true
		run.o.Attempts = backupplan.Tally{Succeeded: attempts.succeeded != nil, Running: attempts.running != nil,
			Failed: attempts.failed}
		if err != nil {
			s.readiness.finalBackupPending = true
			return r.serviceError(ctx, s, "listing final backups", err)
		}
	}
	return ctrl.Result{}, nil
}
