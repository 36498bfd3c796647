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
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore/restoreplan"
)

// apply makes the action a plan decided on and records its outcome in the
// scope; the deferred status write shows it. A write that fails changes the
// outcome: the Restore stays where it was, or fails when the API server
// refuses what no retry would change.
func (r *Reconciler) apply(ctx context.Context, s *scope, p restoreplan.Plan) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	switch p.Action {
	case restoreplan.ActNothing:
		return ctrl.Result{}, nil
	case restoreplan.ActPin:
		log.Info("Choosing backup", "backupID", s.chosen.ID, "phase", s.chosen.Phase)
		r.event(s, corev1.EventTypeNormal, eventBackupChosen, actionChoose, "%s", chosenMessage(s))
		// The status write of this pass is the choice; its event brings the
		// Restore back for the next step. The requeue is what remains if
		// that event is lost.
		return pass.RequeueAfter(r.pollInterval(p.Wake)), nil
	case restoreplan.ActWait:
		return pass.RequeueAfter(r.pollInterval(p.Wake)), nil
	case restoreplan.ActCreate:
		return r.createApp(ctx, s)
	case restoreplan.ActAdopt:
		s.restoredUID = s.app.UID
		log.Info("Taking the MyApp this Restore created before a restart for its own", "myapp", klog.KObj(s.app))
		r.event(s, corev1.EventTypeNormal, eventMyAppFound, actionCreate,
			"MyApp %s carries this Restore's mark (%s): it was created by this Restore before it could record it",
			s.app.Name, backupv1alpha1.RestoreUIDAnnotation)
		return pass.RequeueAfter(r.AppPollInterval), nil
	case restoreplan.ActReplace:
		return r.replaceSpec(ctx, s)
	case restoreplan.ActSucceed:
		log.Info("Restore succeeded", "myapp", klog.KObj(s.app), "backupID", s.backupID())
		r.event(s, corev1.EventTypeNormal, eventRestoreSucceeded, actionFollow, "%s", readyMessage(s, p.Show.Reason))
		return ctrl.Result{}, nil
	case restoreplan.ActFail:
		message := readyMessage(s, p.Show.Reason)
		log.Info("Restore failed", "reason", p.Show.Reason, "message", message)
		r.event(s, corev1.EventTypeWarning, pass.EventReason(p.Show.Reason), actionRefuse, "%s", message)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, fmt.Errorf("the plan named an unknown action %d", p.Action)
}

// pollInterval is how soon a waiting Restore looks again.
func (r *Reconciler) pollInterval(w restoreplan.Wake) time.Duration {
	if w == restoreplan.WakeBackupPoll {
		return r.BackupPollInterval
	}
	return r.AppPollInterval
}

// createApp creates the MyApp from the backup. A create the API server
// answers AlreadyExists met a MyApp that appeared since the read: the
// next pass reads it and decides by its mark.
func (r *Reconciler) createApp(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := restoredApp(s.restore, s.targetName(), s.backupID(), s.payload)
	ctrl.LoggerFrom(ctx).Info("Creating MyApp", "myapp", klog.KObj(app), "backupID", s.backupID(),
		"restoredFromUID", s.payload.Metadata.MyAppUID)
	err := r.Client.Create(ctx, app)
	if err != nil {
		return r.appWriteFailed(s, "creating", err)
	}
	s.app, s.restoredUID = app, app.UID
	r.event(s, corev1.EventTypeNormal, eventMyAppCreated, actionCreate,
		"Created MyApp %s from backup %s of MyApp %s/%s (UID %s)", app.Name, s.backupID(),
		s.payload.MyApp.Namespace, s.payload.MyApp.Name, s.payload.Metadata.MyAppUID)
	return pass.RequeueAfter(r.AppPollInterval), nil
}

// replaceSpec replaces the existing MyApp's spec with the backed-up one,
// with a patch guarded by the resourceVersion read: a change made since is
// a conflict, and the next pass reads again. A MyApp that is another
// incarnation than the one backed up (recreated, say by GitOps in a
// rebuilt cluster, before the Restore ran) is marked as a create marks it,
// with the backed-up MyApp's UID, so it takes that MyApp's record of
// spec.host over as a restored MyApp does; and asked to read its DNS record
// again with the mark (restoreplan.ReadRequest), so a conflict it judged
// without the mark is judged again at once.
func (r *Reconciler) replaceSpec(ctx context.Context, s *scope) (ctrl.Result, error) {
	current := s.app
	replaced := replacedApp(current, s.restore, s.payload)
	if equality.Semantic.DeepEqual(current.Spec, replaced.Spec) &&
		maps.Equal(current.Annotations, replaced.Annotations) {
		// Replaced by an earlier pass that could not record it, or equal
		// already: nothing to write.
		s.restoredUID = current.UID
		r.event(s, corev1.EventTypeNormal, eventMyAppSpecReplaced, actionReplace,
			"MyApp %s (UID %s) already has the spec of backup %s", current.Name, current.UID, s.backupID())
		return pass.RequeueAfter(r.AppPollInterval), nil
	}
	ctrl.LoggerFrom(ctx).Info("Replacing the spec of MyApp", "myapp", klog.KObj(current), "backupID", s.backupID(),
		"restoredFromUID", replaced.Annotations[backupv1alpha1.RestoredFromUIDAnnotation])
	patch := client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Patch(ctx, replaced, patch); err != nil {
		return r.appWriteFailed(s, "replacing the spec of", err)
	}
	// Recorded only once the write is made: a Restore whose status names
	// the MyApp follows it and never writes it again.
	s.app, s.restoredUID = replaced, replaced.UID
	r.event(s, corev1.EventTypeNormal, eventMyAppSpecReplaced, actionReplace,
		"Replaced the spec of MyApp %s (UID %s) with that of backup %s", current.Name, current.UID, s.backupID())
	return pass.RequeueAfter(r.AppPollInterval), nil
}

// replacedApp is current with the backed-up spec and, when it is another
// incarnation than the backed-up MyApp, the restored-from-uid mark naming
// that one and a request to read its DNS record again. A MyApp that is the
// backed-up one already holds its own record and gets the spec alone.
func replacedApp(current *appsv1alpha1.MyApp, restore *backupv1alpha1.Restore, p *backupcontent.Payload) *appsv1alpha1.MyApp {
	replaced := current.DeepCopy()
	replaced.Spec = *p.MyApp.Spec.DeepCopy()
	if string(current.UID) == p.Metadata.MyAppUID || p.Metadata.MyAppUID == "" {
		return replaced
	}
	if replaced.Annotations == nil {
		replaced.Annotations = map[string]string{}
	}
	replaced.Annotations[backupv1alpha1.RestoredFromUIDAnnotation] = p.Metadata.MyAppUID
	replaced.Annotations[appsv1alpha1.ReconcileRequestAnnotation] = restoreplan.ReadRequest(string(restore.UID))
	return replaced
}

// appWriteFailed records a failed write of the MyApp. The API server
// refusing the backed-up MyApp as invalid is final: the backup will not
// change. A conflict or an AlreadyExists means the MyApp changed since the
// read, and comes back at once to read it again. Anything else is retried
// with backoff, the Restore still Pending.
func (r *Reconciler) appWriteFailed(s *scope, what string, err error) (ctrl.Result, error) {
	s.appWriteErr = err
	switch {
	case apierrors.IsInvalid(err):
		s.outcome = restoreplan.Refuse(backupv1alpha1.InvalidAppSpecReason)
		message := readyMessage(s, s.outcome.Show.Reason)
		r.event(s, corev1.EventTypeWarning, pass.EventReason(s.outcome.Show.Reason), actionRefuse, "%s", message)
		return ctrl.Result{}, nil
	case apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err):
		s.outcome = restoreplan.Plan{Show: restoreplan.Show{Phase: backupv1alpha1.RestorePending,
			Reason: backupv1alpha1.RestorePendingReason}}
		return ctrl.Result{}, pass.Wait(pass.ConflictRetryDelay, fmt.Errorf("%s MyApp %s: %w", what, s.targetName(), err))
	}
	s.outcome = restoreplan.Plan{Show: restoreplan.Show{Phase: backupv1alpha1.RestorePending,
		Reason: backupv1alpha1.AppWriteFailedReason}}
	if pass.TroubleStarts(s.base.Status.Conditions, readyCondition, backupv1alpha1.AppWriteFailedReason) {
		r.event(s, corev1.EventTypeWarning, eventAppWriteFailed, actionCreate, "%s MyApp %s: %v", what, s.targetName(), err)
	}
	return ctrl.Result{}, fmt.Errorf("%s MyApp %s: %w", what, s.targetName(), err)
}

// restoredApp is the MyApp a Restore creates from a backup: the backed-up
// spec, labels and annotations, in the Restore's namespace under name, with
// the restore's mark added. It has no owner reference: deleting the Restore
// must never delete it.
func restoredApp(restore *backupv1alpha1.Restore, name, backupID string, p *backupcontent.Payload) *appsv1alpha1.MyApp {
	labels := maps.Clone(p.MyApp.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[backupv1alpha1.RestoreNameLabel] = restore.Name
	labels[backupv1alpha1.BackupIDLabel] = backupv1alpha1.BackupIDLabelValue(backupID)
	annotations := maps.Clone(p.MyApp.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[backupv1alpha1.RestoreUIDAnnotation] = string(restore.UID)
	annotations[backupv1alpha1.BackupIDAnnotation] = backupID
	annotations[backupv1alpha1.RestoredFromUIDAnnotation] = p.Metadata.MyAppUID
	return &appsv1alpha1.MyApp{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   restore.Namespace,
			Name:        name,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: *p.MyApp.Spec.DeepCopy(),
	}
}
