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

package restore

import (
	"context"
	"errors"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// The controller writes only the status of Restores, always with a patch.
// It adds no finalizer: deleting a Restore never deletes what it restored,
// so there is nothing to clean up.
// +kubebuilder:rbac:groups=backup.myapp.dev,resources=restores,verbs=get;list;watch
// +kubebuilder:rbac:groups=backup.myapp.dev,resources=restores/status,verbs=patch

// It reads the BackupConfig a Restore names, once, to find its backups.
// +kubebuilder:rbac:groups=backup.myapp.dev,resources=backupconfigs,verbs=get;list;watch

// It creates the MyApp it restores, and patches the spec of one it
// replaces (existingApp: Replace); it never deletes one.
// +kubebuilder:rbac:groups=apps.myapp.dev,resources=myapps,verbs=get;list;watch;create;patch

// Events go through the events.k8s.io API.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "restore"

// Defaults of the Reconciler's tunables.
const (
	// DefaultBackupPollInterval is how often a Restore waiting for a running
	// backup asks the backup service again; the service emits no events.
	DefaultBackupPollInterval = 10 * time.Second
	// DefaultAppPollInterval is how often a Restore waiting for its MyApp
	// reads it again. The MyApp's own events bring it back sooner; the poll
	// is what remains if one is missed.
	DefaultAppPollInterval = 10 * time.Second
	// DefaultMaxConcurrentReconciles is one: Restores are rare, and each
	// pass mostly waits on the backup service.
	DefaultMaxConcurrentReconciles = 1
)

const (
	// maxReadsPerPass bounds the plan's reads in one pass. A plan asks each
	// read at most once (plan_test.go), so this is only a guard against a
	// planner bug turning into a loop that holds a worker.
	maxReadsPerPass = 8
)

// Reconciler reconciles Restores. The manager sets the exported fields;
// zero values of the tunables mean their defaults. Its Client reads
// Restores and writes their status and the MyApps they restore; its
// APIReader reads what a decision must not take from a stale cache: the
// target MyApp (whether it exists, whose mark it carries, whether it is
// Ready at its generation) and the BackupConfig a source names. Its Clock
// stamps the status' times.
type Reconciler struct {
	pass.Base
	// Backups is the backup service. Required.
	Backups backup.Client
	// OwnerID is this installation's owner ID (--owner-id): only backups
	// taken under it are restored. Required.
	OwnerID string
	// BackupPollInterval is how often a Restore waiting for a running backup
	// polls it. Defaults to DefaultBackupPollInterval.
	BackupPollInterval time.Duration
	// AppPollInterval is how often a Restore waiting for its MyApp reads it.
	// Defaults to DefaultAppPollInterval.
	AppPollInterval time.Duration
}

// SetupWithManager registers the field indexes and the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	switch {
	case r.Backups == nil:
		return errors.New("the Restore controller needs a backup service client")
	case r.OwnerID == "":
		return errors.New("the Restore controller needs the installation's owner ID")
	}
	r.FromManager(mgr, ControllerName)
	r.setDefaults()
	if err := IndexInProgress(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&backupv1alpha1.Restore{}, builder.WithPredicates(restoreChanged())).
		// The MyApp a Restore waits for: its status says when it is Ready.
		Watches(&appsv1alpha1.MyApp{}, handler.EnqueueRequestsFromMapFunc(r.restoresForApp)).
		WithOptions(r.ControllerOptions()).
		Complete(r)
}

// restoreChanged lets through every change of a Restore in progress, its
// own status writes included: each step of a restore is one status write,
// and its event, which arrives once the cache holds the write, starts the
// next step. A finished Restore does nothing more, so its changes are
// dropped.
func restoreChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			restore, ok := e.ObjectNew.(*backupv1alpha1.Restore)
			return !ok || !restore.Status.Phase.Finished()
		},
		// A Restore has no finalizer of this controller's; its deletion
		// needs nothing.
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	}
}

// restoresForApp maps a MyApp onto the Restores in progress that write it,
// through the index.
func (r *Reconciler) restoresForApp(ctx context.Context, app client.Object) []ctrl.Request {
	var list backupv1alpha1.RestoreList
	err := r.Client.List(ctx, &list, client.InNamespace(app.GetNamespace()),
		client.MatchingFields{InProgressTargetIndexKey: app.GetName()})
	if err != nil {
		// A cache list fails only while the manager shuts down; the
		// Restore's own poll brings it back.
		ctrl.LoggerFrom(ctx).Error(err, "Listing the Restores of a MyApp", "myapp", klog.KObj(app))
		return nil
	}
	requests := make([]ctrl.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}

// Reconcile takes one Restore one step further.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	restore := &backupv1alpha1.Restore{}
	// A Restore has no finalizer, and one gone leaves what it restored. A
	// pass from a copy behind this controller's last status write would
	// choose a backup again, or write a MyApp its status already names.
	if ok, res, err := r.Begin(ctx, req, restore, "", nil); !ok {
		return res, err
	}
	if restore.Status.Phase.Finished() || !restore.DeletionTimestamp.IsZero() {
		// A finished Restore is a record; one being deleted waits only for
		// other finalizers, and must not start a restore now.
		return ctrl.Result{}, nil
	}

	s := newScope(restore, r.OwnerID, r.Clock.Now())
	if ids, ok := r.Backups.(backup.IDNamespacer); ok && restore.Spec.Source.BackupID != "" {
		s.obs.IDNamespace, _ = ids.NamespaceOfID(restore.Spec.Source.BackupID)
	}
	var out pass.Outcome
	defer func() {
		if err := r.patchStatus(ctx, s, out.Complete); err != nil {
			retErr = errors.Join(retErr, err)
		}
		if retErr != nil {
			// controller-runtime ignores a result returned with an error.
			result = ctrl.Result{}
		}
	}()

	// The status is written with the caller's context, after the pass ran
	// out of time too.
	phaseCtx, cancel := context.WithTimeout(ctx, r.ReconcileTimeout)
	defer cancel()
	out = pass.Run(phaseCtx, s, r.reconcileRestore)
	return out.Return()
}

// patchStatus writes the status the pass computed, in one patch guarded by
// the resourceVersion the pass read: a pass that started from a stale copy
// of the Restore could otherwise choose a second backup over the first, or
// put a finished Restore back in progress. A refused write is a conflict,
// which the caller turns into a quick retry on fresh data.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope, complete bool) error {
	setStatus(s)
	if complete || s.restore.Status.Phase == backupv1alpha1.RestoreFailed {
		// A pass that failed the Restore has looked at the generation and
		// concluded too: kstatus reads Stalled as Failed only for an
		// observed generation.
		s.restore.Status.ObservedGeneration = s.restore.Generation
	}
	written, err := pass.PatchStatus(ctx, &r.Base, s.base, s.restore, restoreStatus, client.MergeFromWithOptimisticLock{})
	if written {
		recordFinished(s.base, s.restore)
	}
	return err
}

// restoreStatus is a Restore's status, for pass.PatchStatus.
func restoreStatus(restore *backupv1alpha1.Restore) any { return restore.Status }
