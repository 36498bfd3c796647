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
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileApp fetches the referenced MyApp and, with backupBeforeAppDeletion,
// puts the final-backup finalizer on it.
func (r *Reconciler) reconcileApp(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	app := &appsv1alpha1.MyApp{}
	key := types.NamespacedName{Namespace: s.bc.Namespace, Name: s.bc.Spec.AppRef.Name}
	if err := r.Client.Get(ctx, key, app); err != nil {
		if apierrors.IsNotFound(err) {
			// Not an error: the MyApp watch brings this BackupConfig back
			// when the MyApp is created, so there is nothing to retry.
			r.holds.Forget(key)
			log.Info("MyApp not found, waiting for it to be created", "myapp", klog.KRef(key.Namespace, key.Name))
			s.readiness.appMissing = true
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading MyApp %s: %w", key.Name, err)
	}
	s.app = app

	// A MyApp as a pass that put the hold on read it is one the cache shows
	// without that hold: the hold is there, and the patch's own event
	// brings this BackupConfig back once the cache holds it. Any other
	// version forgets the write.
	behind := r.holds.Behind(app)
	if !backupplan.PlanAddHold(s.bc.Spec.BackupBeforeAppDeletion, !app.DeletionTimestamp.IsZero(),
		controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer), behind) {
		return ctrl.Result{}, nil
	}
	log.Info("Adding finalizer to MyApp", "myapp", klog.KObj(app), "finalizer", backupv1alpha1.FinalBackupFinalizer)
	// The patch changes nothing but metadata.finalizers and carries the
	// resource version, so it never overwrites a finalizer the MyApp's own
	// controller wrote meanwhile (a conflict retries instead).
	return ctrl.Result{}, client.IgnoreNotFound(r.holds.Write(app, func() error {
		return pass.AddFinalizer(ctx, r.Client, app, backupv1alpha1.FinalBackupFinalizer)
	}))
}

// reconcileAppHolds releases every MyApp in the namespace that carries the
// final-backup finalizer but that no BackupConfig needs any more: the option
// was turned off, spec.appRef moved, the holder is being deleted, or the
// final backups of all holders succeeded. The finalizer is shared by all
// BackupConfigs of a MyApp, so none releases it while another still needs
// it.
//
// The MyApp this BackupConfig references comes first, and each MyApp is
// decided on its own, so one that cannot be decided does not keep the others
// held; every failure is returned, joined, once all were looked at. A backup
// service failure counts only where this BackupConfig itself still wants the
// MyApp: otherwise the question was another holder's, and that holder, which
// references the MyApp, asks it again in its own passes. Once the service has
// failed, the pass asks it nothing more (appHoldWanted): with a hanging
// service every question costs a call's whole timeout, so a namespace of
// MyApps being deleted would hold the worker for one timeout per MyApp.
//
// A BackupConfig being deleted lists the MyApps from the API server rather
// than the cache: its pass is the last one, and a hold the cache does not
// show yet (put on by the pass just before) would otherwise stay for ever.
func (r *Reconciler) reconcileAppHolds(ctx context.Context, s *scope) (ctrl.Result, error) {
	var apps appsv1alpha1.MyAppList
	reader := client.Reader(r.Client)
	if !s.bc.DeletionTimestamp.IsZero() {
		reader = r.APIReader
	}
	if err := reader.List(ctx, &apps, client.InNamespace(s.bc.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing MyApps: %w", err)
	}
	if !s.bc.DeletionTimestamp.IsZero() && s.app != nil {
		// The final-backup plan decided on the MyApp as this pass read it
		// from the API server: its release is guarded by that version, so
		// a MyApp whose deletion began since refuses it (a conflict, and the
		// next pass takes its final backup) rather than go without one.
		for i := range apps.Items {
			if apps.Items[i].UID == s.app.UID {
				apps.Items[i] = *s.app
			}
		}
	}
	ownName := s.bc.Spec.AppRef.Name
	sort.SliceStable(apps.Items, func(i, j int) bool {
		return apps.Items[i].Name == ownName && apps.Items[j].Name != ownName
	})
	wantsOwn := s.bc.DeletionTimestamp.IsZero() && s.bc.Spec.BackupBeforeAppDeletion
	var errs []error
	for i := range apps.Items {
		app := &apps.Items[i]
		if !controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer) {
			continue
		}
		if r.holds.Behind(app) {
			// The MyApp as a pass that released the hold read it: the
			// release's own event brings this BackupConfig back once the
			// cache shows it.
			continue
		}
		err := r.releaseAppIfUnwanted(ctx, s, app)
		switch {
		case external.KindOf(err) != "" && wantsOwn && app.Name == ownName:
			// A wait the service asked for ends the pass (pass.Wait).
			_, err = r.serviceError(ctx, s, "checking the final backups of MyApp "+app.Name, err)
		case external.KindOf(err) != "":
			ctrl.LoggerFrom(ctx).V(1).Info("Leaving the hold on a MyApp to the BackupConfigs that want it",
				"myapp", klog.KObj(app), "reason", err.Error())
			err = nil
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// releaseOwnHold ends this BackupConfig's part in its MyApp's deletion:
// the MyApp goes once no other BackupConfig needs it. While one still
// does, the BackupConfig looks again after the poll interval, because the
// other's progress sends it no event.
func (r *Reconciler) releaseOwnHold(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	if !controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer) || r.holds.Behind(app) {
		return ctrl.Result{}, nil
	}
	if err := r.releaseAppIfUnwanted(ctx, s, app); external.KindOf(err) != "" {
		// A wait the service asked for ends the pass (pass.Wait).
		return r.serviceError(ctx, s, "checking the final backups of MyApp "+app.Name, err)
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if controllerutil.ContainsFinalizer(s.app, backupv1alpha1.FinalBackupFinalizer) {
		return pass.RequeueAfter(r.BackupPollInterval), nil
	}
	return ctrl.Result{}, nil
}

// releaseAppIfUnwanted removes the final-backup finalizer from app when no
// BackupConfig needs it any more.
func (r *Reconciler) releaseAppIfUnwanted(ctx context.Context, s *scope, app *appsv1alpha1.MyApp) error {
	wanted, err := r.appHoldWanted(ctx, s, app)
	if err != nil || wanted {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Removing finalizer from MyApp", "myapp", klog.KObj(app),
		"finalizer", backupv1alpha1.FinalBackupFinalizer)
	if err := r.holds.Write(app, func() error {
		return pass.RemoveFinalizer(ctx, r.Client, app, backupv1alpha1.FinalBackupFinalizer)
	}); client.IgnoreNotFound(err) != nil {
		return err
	}
	s.eventFor(app, corev1.EventTypeNormal, eventMyAppReleased, actionReleaseMyApp,
		"Removed finalizer %s from MyApp %s: no BackupConfig needs a final backup of it any more",
		backupv1alpha1.FinalBackupFinalizer, app.Name)
	if s.app != nil && s.app.UID == app.UID {
		s.app = app
	}
	return nil
}

// appHoldWanted reports whether some BackupConfig still needs the final-backup
// finalizer on app, as backupplan.PlanHold decides: it plans from the
// cache, and reads what the plan needs before it decides again. Only one
// question goes to the backup service, whether this BackupConfig's own
// final backup SUCCEEDED, and only when its status does not answer it
// already, so a hold no BackupConfig wants is released without the
// service.
//
// A release cannot be taken back once the MyApp's deletion began, and the
// BackupConfig cache may lag behind the MyApp cache (another BackupConfig
// just turned the option on and put the hold there, or this one's appRef
// moved to the MyApp), so a "not wanted" is confirmed with the API server,
// this BackupConfig included, before it counts.
func (r *Reconciler) appHoldWanted(ctx context.Context, s *scope, app *appsv1alpha1.MyApp) (bool, error) {
	var list backupv1alpha1.BackupConfigList
	err := r.Client.List(ctx, &list, client.InNamespace(app.Namespace), client.MatchingFields{AppRefIndexKey: app.Name})
	if err != nil {
		return true, fmt.Errorf("listing the BackupConfigs of MyApp %s: %w", app.Name, err)
	}
	// The cache may not show this BackupConfig's latest spec yet, so the one
	// in hand stands in for it, whether the cache lists it or not.
	o := backupplan.HoldObservation{App: app.Name, AppDeleting: !app.DeletionTimestamp.IsZero(),
		Holders: []backupplan.HolderView{viewOf(s, s.bc, app)}}
	for i := range list.Items {
		if list.Items[i].UID != s.bc.UID {
			o.Holders = append(o.Holders, viewOf(s, &list.Items[i], app))
		}
	}
	p := backupplan.PlanHold(o)
	// Two reads at most: this BackupConfig's own answer, and the
	// confirmation.
	for range 2 {
		if p.Need == backupplan.NeedNothing {
			break
		}
		if err := r.readForHold(ctx, s, app, &o, p.Need); err != nil {
			return true, err
		}
		p = backupplan.PlanHold(o)
	}
	return !p.Release, nil
}

// readForHold reads what a hold plan needs: the service's answer on this
// BackupConfig's own final backup, or the namespace's BackupConfigs from
// the API server.
func (r *Reconciler) readForHold(ctx context.Context, s *scope, app *appsv1alpha1.MyApp, o *backupplan.HoldObservation,
	need backupplan.Need) error {
	if need == backupplan.NeedOwnFinalBackup {
		if s.holdCheckErr != nil {
			// The service failed for this pass already: the hold stays, the
			// safe side, and the failure stands for this MyApp too.
			return s.holdCheckErr
		}
		attempts, err := r.listFinalAttempts(ctx, s, s.owner, app.UID)
		if external.IsRetryable(err) || external.KindOf(err) == external.KindUnauthorized {
			s.holdCheckErr = err
		}
		if err != nil {
			return err
		}
		o.OwnAsked, o.OwnSucceeded = true, attempts.succeeded != nil
		return nil
	}
	var live backupv1alpha1.BackupConfigList
	if err := r.APIReader.List(ctx, &live, client.InNamespace(app.Namespace)); err != nil {
		return fmt.Errorf("listing the BackupConfigs of MyApp %s: %w", app.Name, err)
	}
	// This BackupConfig is confirmed too: the copy in hand comes from the
	// cache, and one from before an appRef change would release the MyApp
	// it references now.
	o.Confirmed = true
	for i := range live.Items {
		o.Live = append(o.Live, viewOf(s, &live.Items[i], app))
	}
	return nil
}

func readyReason(bc *backupv1alpha1.BackupConfig) string {
	if c := meta.FindStatusCondition(bc.Status.Conditions, backupv1alpha1.ReadyCondition); c != nil {
		return c.Reason
	}
	return ""
}

// finalBackupRecorded reports whether status records a SUCCEEDED final backup
// of app. The backup service reported it so, and an eventually consistent
// listing that does not show it yet must not hold the MyApp again.
func finalBackupRecorded(status backupv1alpha1.BackupConfigStatus, app *appsv1alpha1.MyApp) bool {
	return lastIsFinalBackupOf(status, app) && status.LastBackup.Phase == backupv1alpha1.BackupSucceeded
}

// lastIsFinalBackupOf reports whether status.lastBackup is app's final
// backup: a final backup, started (or listed) while the status observed
// app, whose UID status.observedAppUID keeps until a backup of another
// MyApp is started. A final backup of a MyApp this BackupConfig held before
// its appRef moved is not, and app's final backup waits for it (one backup
// at a time).
func lastIsFinalBackupOf(status backupv1alpha1.BackupConfigStatus, app *appsv1alpha1.MyApp) bool {
	last := status.LastBackup
	return last != nil && last.Trigger == backupv1alpha1.TriggerAppDeletion && app != nil &&
		status.ObservedAppUID == app.UID
}

// viewOf is what the hold plans know of holder, a BackupConfig the cache
// or the API server listed; s is this pass, nil for the safety net, which
// has no BackupConfig of its own. This pass's own status is taken as
// fetched (s.base), before the pass changed it.
func viewOf(s *scope, holder *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp) backupplan.HolderView {
	self := s != nil && holder.UID == s.bc.UID
	status := holder
	if self {
		status = s.base
	}
	return backupplan.HolderView{
		UID:              string(holder.UID),
		Self:             self,
		OptIn:            holder.Spec.BackupBeforeAppDeletion,
		AppRef:           holder.Spec.AppRef.Name,
		Deleting:         !holder.DeletionTimestamp.IsZero(),
		DeletePolicy:     holder.Spec.DeletionPolicy == backupv1alpha1.DeletionPolicyDelete,
		CleanupFinalizer: controllerutil.ContainsFinalizer(holder, backupv1alpha1.BackupCleanupFinalizer),
		Suspended:        holder.Spec.Suspend,
		GaveUp:           readyReason(status) == backupv1alpha1.FinalBackupAbandonedReason,
		FinalRecorded:    finalBackupRecorded(holder.Status, app),
	}
}

// releaseUnwantedHolds is the safety net for holds no BackupConfig can
// release any more: it removes the final-backup finalizer from every MyApp
// of the namespace that carries it while no BackupConfig there wants it.
// Such a hold is left by a BackupConfig that went without its cleanup (its
// finalizer removed by hand) or whose last pass did not see the hold. It
// runs when a BackupConfig is gone and when such a MyApp changes, and reads
// both lists from the API server: a stale cache could release a hold that a
// new BackupConfig just put on, or keep one for ever. The release is
// guarded by the MyApp's resource version, so a hold put on after the read
// stays.
func (r *Reconciler) releaseUnwantedHolds(ctx context.Context, namespace string) error {
	if !r.watches(namespace) {
		// Another install's namespace (--watch-namespaces): its holds are
		// its own BackupConfigs' business.
		return nil
	}
	var apps appsv1alpha1.MyAppList
	if err := r.APIReader.List(ctx, &apps, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing MyApps: %w", err)
	}
	var bcs *backupv1alpha1.BackupConfigList
	var errs []error
	for i := range apps.Items {
		app := &apps.Items[i]
		if !controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer) {
			continue
		}
		if bcs == nil {
			bcs = &backupv1alpha1.BackupConfigList{}
			if err := r.APIReader.List(ctx, bcs, client.InNamespace(namespace)); err != nil {
				return fmt.Errorf("listing BackupConfigs: %w", err)
			}
		}
		views := make([]backupplan.HolderView, 0, len(bcs.Items))
		for j := range bcs.Items {
			views = append(views, viewOf(nil, &bcs.Items[j], app))
		}
		if !backupplan.PlanUnwantedRelease(app.Name, views) {
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Removing finalizer from MyApp that no BackupConfig wants", "myapp", klog.KObj(app),
			"finalizer", backupv1alpha1.FinalBackupFinalizer)
		if err := pass.RemoveFinalizer(ctx, r.Client, app, backupv1alpha1.FinalBackupFinalizer); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
			continue
		}
		pass.Eventf(r.Recorder, app, nil, corev1.EventTypeNormal, eventMyAppReleased, actionReleaseMyApp,
			"Removed finalizer %s: no BackupConfig in the namespace needs a final backup of this MyApp",
			backupv1alpha1.FinalBackupFinalizer)
	}
	return errors.Join(errs...)
}

// watches reports whether namespace is one this controller watches: all
// of them without WatchNamespaces.
func (r *Reconciler) watches(namespace string) bool {
	return len(r.WatchNamespaces) == 0 || slices.Contains(r.WatchNamespaces, namespace)
}
