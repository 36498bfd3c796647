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

// Package baseline is a MyApp reconciler written the way the common
// tutorial writes one. It is NOT shipped and not a model: test/bench runs it
// beside the operator, on the same cluster and simulator, so the operator's
// figures have something ordinary to be compared with.
//
// What makes it the tutorial's: every pass reads each child from the cache
// and updates it whether or not it changed, upserts the DNS record, updates
// the status, and requeues after a fixed minute without jitter; it uses a
// finalizer to delete the record.
package baseline

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// finalizer guards the DNS record.
const finalizer = "bench.myapp.dev/baseline-dns"

// portName names the container port the Service targets.
const portName = "http"

// requeueAfter is the tutorial's fixed resync.
const requeueAfter = time.Minute

// Reconciler reconciles MyApps the tutorial way.
type Reconciler struct {
	client.Client
	DNS dns.Client
	// Target is what every record points at.
	Target string
}

// SetupWithManager watches MyApps and the children they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1alpha1.MyApp{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&networkingv1.Ingress{}).
		Named("baseline").
		Complete(r)
}

// Reconcile does everything on every pass.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &appsv1alpha1.MyApp{}
	if err := r.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	owner := "baseline/" + app.Namespace + "/" + app.Name

	if !app.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(app, finalizer) {
			if err := r.DNS.Delete(ctx, app.Spec.Host, owner); err != nil && !errors.Is(err, external.ErrNotFound) {
				return ctrl.Result{}, err
			}
			controllerutil.RemoveFinalizer(app, finalizer)
			if err := r.Update(ctx, app); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(app, finalizer) {
		controllerutil.AddFinalizer(app, finalizer)
		if err := r.Update(ctx, app); err != nil {
			return ctrl.Result{}, err
		}
	}

	labels := map[string]string{"app.kubernetes.io/instance": app.Name, "app.kubernetes.io/name": "myapp"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.apply(ctx, app, dep, func() {
		dep.Labels = labels
		dep.Spec.Replicas = ptr.To(ptr.Deref(app.Spec.Replicas, 1))
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		dep.Spec.Template.Labels = labels
		dep.Spec.Template.Spec.Containers = []corev1.Container{{
			Name:  "app",
			Image: app.Spec.Image,
			Ports: []corev1.ContainerPort{{Name: portName, ContainerPort: app.Spec.ContainerPort}},
		}}
	}); err != nil {
		return ctrl.Result{}, err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.apply(ctx, app, svc, func() {
		svc.Labels = labels
		svc.Spec.Selector = labels
		svc.Spec.Ports = []corev1.ServicePort{{Name: portName, Port: app.Spec.ServicePort, TargetPort: intstr.FromString(portName)}}
	}); err != nil {
		return ctrl.Result{}, err
	}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	pathType := networkingv1.PathTypePrefix
	if err := r.apply(ctx, app, ing, func() {
		ing.Labels = labels
		ing.Spec.Rules = []networkingv1.IngressRule{{
			Host: app.Spec.Host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &pathType, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: app.Name, Port: networkingv1.ServiceBackendPort{Name: portName}},
				}}},
			}},
		}}
	}); err != nil {
		return ctrl.Result{}, err
	}

	rec, err := r.DNS.Upsert(ctx, dns.Record{Name: app.Spec.Host, Type: dns.TypeA, Value: r.Target, TTL: 300, Owner: owner})
	if err != nil {
		return ctrl.Result{}, err
	}

	state := appsv1alpha1.DNSRecordPending
	if rec.State == dns.StateActive {
		state = appsv1alpha1.DNSRecordActive
	}
	app.Status.ReadyReplicas = dep.Status.ReadyReplicas
	app.Status.ReadyReplicasSummary = fmt.Sprintf("%d/%d", dep.Status.ReadyReplicas, ptr.Deref(app.Spec.Replicas, 1))
	app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: rec.Name, Type: rec.Type, Value: rec.Value, Owner: rec.Owner, State: state}
	ready := metav1.ConditionFalse
	if dep.Status.AvailableReplicas >= ptr.Deref(app.Spec.Replicas, 1) && state == appsv1alpha1.DNSRecordActive {
		ready = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&app.Status.Conditions, metav1.Condition{
		Type: appsv1alpha1.ReadyCondition, Status: ready, Reason: "Reconciled", ObservedGeneration: app.Generation,
	})
	if err := r.Status().Update(ctx, app); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeueAfter}, nil
}

// apply gets obj, creates it if it is missing, and otherwise updates it,
// changed or not.
func (r *Reconciler) apply(ctx context.Context, app *appsv1alpha1.MyApp, obj client.Object, mutate func()) error {
	err := r.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	mutate()
	if err := ctrl.SetControllerReference(app, obj, r.Scheme()); err != nil {
		return err
	}
	if apierrors.IsNotFound(err) {
		return r.Create(ctx, obj)
	}
	return r.Update(ctx, obj)
}
