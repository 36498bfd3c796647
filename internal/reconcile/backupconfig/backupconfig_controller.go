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
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// The controller writes BackupConfigs' finalizer and status, always with a
// patch, so it holds no update on them. The finalizers subresource's update
// is what a blockOwnerDeletion owner reference needs.
// +kubebuilder:rbac:groups=backup.myapp.dev,resources=backupconfigs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=backup.myapp.dev,resources=backupconfigs/status,verbs=patch
// +kubebuilder:rbac:groups=backup.myapp.dev,resources=backupconfigs/finalizers,verbs=update

// MyApps belong to another controller; this one only reads them, except for
// adding and removing its own finalizer (backup.myapp.dev/final-backup).
// RBAC cannot narrow a permission to one finalizer, so patch is granted on
// the whole object; the code only ever sends a patch that changes
// metadata.finalizers, guarded by the resource version.
// +kubebuilder:rbac:groups=apps.myapp.dev,resources=myapps,verbs=get;list;watch;patch

// A BackupConfig being deleted reads its namespace: a terminating one means
// its MyApp goes too, and gets its final backup first.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// Events go through the events.k8s.io API.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// AppRefIndexKey indexes BackupConfigs by spec.appRef.name, so a MyApp event
// finds the BackupConfigs that reference it without listing them all.
const AppRefIndexKey = "spec.appRef.name"

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "backupconfig"

// releaseHoldsRequestName is the name of the request that asks for the
// MyApps of a namespace held for a final backup no BackupConfig wants to be
// released. No object can have this name, so it never meets a
// BackupConfig's own request.
const releaseHoldsRequestName = "#release-unwanted-final-backup-holds"

// Reconciler reconciles BackupConfigs. The manager sets the exported fields;
// zero values of the tunables mean their defaults. Its APIReader reads from
// the API server where a stale read could leave a MyApp held for ever: the
// holds a deleted BackupConfig releases, and the check that no other
// BackupConfig wants a hold before it is released. Its Clock decides when
// scheduled backups are due.
type Reconciler struct {
	pass.Base
	// WatchNamespaces, when set, is the manager's --watch-namespaces: the
	// safety net for holds nobody wants (releaseUnwantedHolds) acts only in
	// these namespaces.
	WatchNamespaces []string
	// Backups is the backup service. Required.
	Backups backup.Client
	// OwnerID is the installation's owner ID (--owner-id), which every
	// backup's content records: a restore in a rebuilt cluster takes the
	// MyApp's DNS record over with it. Required.
	OwnerID string
	// RenderChildren renders the children a backup keeps beside its MyApp
	// (myapp.RenderChildren). Required.
	RenderChildren ChildRenderer
	// IngressClassName is the MyApp controller's IngressClass
	// (--ingress-class-name), which the rendered Ingress names.
	IngressClassName string
	// BackupPollInterval is how often a running backup is polled. Defaults to
	// DefaultBackupPollInterval.
	BackupPollInterval time.Duration
	// FinalBackupAttempts is how many final backups are tried for a MyApp
	// being deleted. Defaults to DefaultFinalBackupAttempts.
	FinalBackupAttempts int
	// FinalBackupTeardownLimit bounds how long a BackupConfig being deleted
	// with its MyApp, or in a namespace being deleted, waits for the MyApp's
	// final backup, from its own deletion; then it gives the final backup up
	// (a Warning event, the Ready condition) and releases the MyApp.
	// Defaults to DefaultFinalBackupTeardownLimit.
	FinalBackupTeardownLimit time.Duration
	// CleanupGrace is how long after a BackupConfig's deletion began the
	// backup service must list none of its backups before the cleanup
	// finalizer goes, with deletionPolicy Delete. It should cover how late
	// the service lists a backup just started. Defaults to
	// DefaultCleanupGrace.
	CleanupGrace time.Duration
	// BackupTimeout is how long a backup may stay RUNNING before the
	// controller gives up on it and records it FAILED. Defaults to
	// DefaultBackupTimeout.
	BackupTimeout time.Duration
	// FailedBackupRetryDelay is how long after a failed on-change backup the
	// first retry of the same generation waits; each further failure doubles
	// it, up to maxFailedBackupRetryDelay. Defaults to
	// DefaultFailedBackupRetryDelay.
	FailedBackupRetryDelay time.Duration

	// memory is what passes leave for later passes of the same BackupConfig.
	memory memory
	// missing tracks running backups the backup service answered 404 for.
	missing missingBackups
	// holds is the resourceVersion each MyApp this controller put the
	// final-backup hold on was read at, until the cache shows a newer one,
	// as Base keeps for its BackupConfigs' own writes: a pass on a cache
	// without the hold does not put it on again (reconcileApp).
	holds pass.OwnWrites
}

// SetupWithManager registers the spec.appRef.name index and the controller.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	switch {
	case r.Backups == nil:
		return errors.New("the BackupConfig controller needs a backup service client")
	case r.OwnerID == "":
		return errors.New("the BackupConfig controller needs the owner ID, which every backup records")
	case r.RenderChildren == nil:
		return errors.New("the BackupConfig controller needs RenderChildren, to keep a MyApp's children in its backups")
	}
	r.FromManager(mgr, ControllerName)
	r.setDefaults()

	err := mgr.GetFieldIndexer().IndexField(ctx, &backupv1alpha1.BackupConfig{}, AppRefIndexKey,
		func(obj client.Object) []string {
			bc, ok := obj.(*backupv1alpha1.BackupConfig)
			if !ok || bc.Spec.AppRef.Name == "" {
				return nil
			}
			return []string{bc.Spec.AppRef.Name}
		})
	if err != nil {
		return fmt.Errorf("indexing BackupConfigs by %s: %w", AppRefIndexKey, err)
	}

	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&backupv1alpha1.BackupConfig{}, builder.WithPredicates(backupConfigChanged())).
		Watches(&appsv1alpha1.MyApp{}, handler.EnqueueRequestsFromMapFunc(r.backupConfigsForApp),
			builder.WithPredicates(appChanged())).
		Watches(&backupv1alpha1.Restore{}, handler.EnqueueRequestsFromMapFunc(r.backupConfigsForRestore),
			builder.WithPredicates(restoreChanged())).
		WithOptions(r.ControllerOptions()).
		Complete(r)
}

// backupConfigChanged lets through the BackupConfig changes that need work:
// spec (generation), deletion, annotations (a way to ask for a reconcile),
// and the cleanup finalizer. The controller's own status writes do not
// trigger it; it schedules its next pass itself.
func backupConfigChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				deletionStarted(e.ObjectOld, e.ObjectNew) ||
				finalizerChanged(e.ObjectOld, e.ObjectNew, backupv1alpha1.BackupCleanupFinalizer) ||
				!equality.Semantic.DeepEqual(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
		},
	}
}

// appChanged lets through the MyApp changes a BackupConfig acts on: a new
// generation, the start of a deletion, the final-backup finalizer coming or
// going, and the MyApp appearing or disappearing. Status updates, which the
// MyApp's own controller writes often, are filtered out.
func appChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				deletionStarted(e.ObjectOld, e.ObjectNew) ||
				finalizerChanged(e.ObjectOld, e.ObjectNew, backupv1alpha1.FinalBackupFinalizer)
		},
	}
}

func deletionStarted(old, updated client.Object) bool {
	return old.GetDeletionTimestamp().IsZero() != updated.GetDeletionTimestamp().IsZero()
}

func finalizerChanged(old, updated client.Object, finalizer string) bool {
	return controllerutil.ContainsFinalizer(old, finalizer) != controllerutil.ContainsFinalizer(updated, finalizer)
}

// backupConfigsForApp maps a MyApp onto the BackupConfigs in its namespace
// that reference it, through the index. A MyApp held for a final backup that
// no BackupConfig references is mapped onto the request that releases such
// holds: the BackupConfig that held it went without releasing it (its
// cleanup finalizer removed by hand, or a cache that did not show the hold
// yet), and nothing else would ever look at it again.
func (r *Reconciler) backupConfigsForApp(ctx context.Context, app client.Object) []ctrl.Request {
	var list backupv1alpha1.BackupConfigList
	err := r.Client.List(ctx, &list, client.InNamespace(app.GetNamespace()),
		client.MatchingFields{AppRefIndexKey: app.GetName()})
	if err != nil {
		// A cache list fails only while the manager shuts down; the next event
		// or the periodic resync maps the MyApp again.
		ctrl.LoggerFrom(ctx).Error(err, "Listing the BackupConfigs of a MyApp", "myapp", klog.KObj(app))
		return nil
	}
	if len(list.Items) == 0 && controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer) {
		return []ctrl.Request{{NamespacedName: types.NamespacedName{
			Namespace: app.GetNamespace(), Name: releaseHoldsRequestName}}}
	}
	requests := make([]ctrl.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}

// Reconcile brings one BackupConfig's backups in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	if req.Name == releaseHoldsRequestName {
		return pass.Conclude(ctrl.Result{}, r.releaseUnwantedHolds(ctx, req.Namespace)).Return()
	}

	bc := &backupv1alpha1.BackupConfig{}
	// The cleanup finalizer goes on before the first backup is started. A
	// pass from a copy behind this controller's last write would find the
	// backup it started again (through the service) and write the same
	// status, or add the finalizer again and be refused as a conflict.
	if ok, res, err := r.Begin(ctx, req, bc, backupv1alpha1.BackupCleanupFinalizer, func() error {
		// Gone, with or without this controller's finalizer: nothing of it
		// is kept any more. If it went without its cleanup (the finalizer
		// removed by hand), a MyApp it held may still carry the final-backup
		// finalizer, which no other pass would release.
		r.memory.forget(req.NamespacedName)
		r.missing.forget(req.NamespacedName)
		backupsHeldForCleanup.DeleteLabelValues(req.Namespace, req.Name)
		forgetFreshness(req.NamespacedName)
		return r.releaseUnwantedHolds(ctx, req.Namespace)
	}); !ok {
		return res, err
	}
	if !bc.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(bc, backupv1alpha1.BackupCleanupFinalizer) {
		// Cleanup is done; the object waits for other finalizers only.
		return ctrl.Result{}, nil
	}

	s := &scope{
		bc:         bc,
		base:       bc.DeepCopy(),
		key:        req.NamespacedName,
		backups:    r.Backups,
		owner:      ownerFor(bc),
		startToken: newStartToken(),
		now:        r.currentTime(),
		readiness:  readiness{appName: bc.Spec.AppRef.Name},
		readyWas:   readyReason(bc),
	}
	var out pass.Outcome
	defer func() {
		// The events the pass noted go first, as the warnings of a trouble
		// before the status that keeps its summary.
		r.sendEvents(s)
		// A pass that waits out a throttling service returns no error but
		// did not get its work done either: only a complete one counts.
		if err := r.patchStatus(ctx, s, out.Complete); err != nil {
			retErr = errors.Join(retErr, err)
		}
		recordFreshness(s)
		if retErr != nil {
			// controller-runtime ignores a result returned with an error.
			result = ctrl.Result{}
		}
	}()

	// The status is written with the caller's context, after the phases
	// ran out of time too.
	phaseCtx, cancel := context.WithTimeout(ctx, r.ReconcileTimeout)
	defer cancel()
	if !bc.DeletionTimestamp.IsZero() {
		// The backup running when the deletion came is followed to its end
		// first (one backup at a time), without holding the cleanup up
		// while the service cannot say.
		out = pass.Run(phaseCtx, s, pass.NotBlocking(r.reconcileBackupBeforeDeletion), r.reconcileDelete)
	} else {
		out = r.reconcileNormal(phaseCtx, s)
	}
	return out.Return()
}

// reconcileNormal runs the phases of a BackupConfig that is not being
// deleted. An unusable spec.schedule does not end the pass (see
// reconcileSchedule). The first phase that fails ends the pass, and so does
// one the backup service asked to wait, so that no later phase calls the
// service again or wakes the controller before the wait is over (pass.Run).
// The next pass starts again from the top, which every phase tolerates.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) pass.Outcome {
	r.announceSuspend(s)
	return pass.Run(ctx, s,
		pass.NotBlocking(r.reconcileSchedule),
		r.reconcileApp,
		r.reconcileAppHolds,
		r.reconcileRunningBackup,
		r.reconcileFinalBackup,
		r.reconcileNewBackup,
		r.reconcileRetention,
	)
}

// announceSuspend sends a Normal event when spec.suspend turned on or off
// since the status was last written: Ready's reason says whether the
// BackupConfig was suspended then.
func (r *Reconciler) announceSuspend(s *scope) {
	was := suspendedReason(s.readyWas)
	switch {
	case s.bc.Spec.Suspend && !was:
		s.event(corev1.EventTypeNormal, eventSuspended, "Suspend",
			"Backups are suspended: no new backup is started and schedule slots are skipped until spec.suspend is false")
	case !s.bc.Spec.Suspend && was:
		s.event(corev1.EventTypeNormal, eventResumed, "Resume",
			"Backups are resumed; schedule slots missed while suspended are not caught up")
	}
}

// patchStatus writes the status the pass computed, in one patch. It sets
// observedGeneration only after a successful pass or one that found the
// spec stalled, so a spec the controller failed to act on never looks
// handled; and never after a suspended pass, which applies no spec: then
// observedGeneration and every condition stay at the last generation a
// pass acted on (pass.ActedGeneration).
func (r *Reconciler) patchStatus(ctx context.Context, s *scope, complete bool) error {
	s.readiness.deleting = !s.bc.DeletionTimestamp.IsZero()
	s.readiness.suspended = s.bc.Spec.Suspend
	if v, ok := s.bc.Annotations[backupv1alpha1.ReconcileRequestAnnotation]; ok {
		// Every pass reconciles the BackupConfig as a whole; the one that
		// ran for the new value handled it.
		s.bc.Status.LastHandledReconcileAt = v
	}
	suspendedPass := s.readiness.suspended && !s.readiness.deleting
	acted := pass.ActedGeneration(s.bc.Generation, s.base.Status.ObservedGeneration, suspendedPass)
	setReadyCondition(s.bc, s.readiness, acted, s.now)
	setBackupSucceededCondition(s.bc, acted, s.now)
	setBackupFailures(s.bc, s.readiness, r.FailedBackupRetryDelay, s.now)
	stalled := setProgressConditions(s.bc, acted, suspendedPass, s.now)
	if (complete || stalled) && !suspendedPass {
		// A pass that found the spec stalled has looked at the generation
		// and concluded too: kstatus reads Stalled as Failed only for an
		// observed generation.
		s.bc.Status.ObservedGeneration = s.bc.Generation
	}
	// A plain merge patch, as cluster-api's patch helper sends: it carries
	// only the fields this pass changed, every one of them derived from the
	// backup service or the spec, so a pass that read a stale object writes
	// the same values again rather than older ones. Except
	// status.nextScheduleTime, which is derived from the clock and from
	// itself: a pass that read the object before a slot was stored, and runs
	// after that slot came, would store the slot after it and skip the due
	// one without a backup. A pass that moves it sends the resourceVersion it
	// read, so a stale one is refused (a conflict, retried) instead.
	var lock []client.MergeFromOption
	if !equality.Semantic.DeepEqual(s.base.Status.NextScheduleTime, s.bc.Status.NextScheduleTime) {
		lock = append(lock, client.MergeFromWithOptimisticLock{})
	}
	_, err := pass.PatchStatus(ctx, &r.Base, s.base, s.bc, backupConfigStatus, lock...)
	return err
}

// backupConfigStatus is a BackupConfig's status, for pass.PatchStatus.
func backupConfigStatus(bc *backupv1alpha1.BackupConfig) any { return bc.Status }
