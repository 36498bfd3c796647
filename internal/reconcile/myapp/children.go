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

package myapp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

const (
	// containerName is the name of the app's container in its Deployment.
	containerName = "app"
	// portName names the container port; the Service targets it by name so a
	// containerPort change needs no Service update.
	portName = "http"
	// kindIngress is the Ingress's kind, as conditions, events and the
	// rendered object name it.
	kindIngress = "Ingress"
)

// childWriteError is a child's create or update (or the read before it) that
// the API server refused or could not make.
type childWriteError struct {
	kind, name, verb string
	err              error
}

func (e *childWriteError) Error() string {
	return fmt.Sprintf("could not %s %s %s: %v", e.verb, e.kind, e.name, e.err)
}

func (e *childWriteError) Unwrap() error { return e.err }

// staleChildError is a write that failed only because the cache the pass
// read was behind the API server: a create of a child that exists (and is
// the MyApp's), or an update of a resourceVersion already replaced. The
// child's own watch event brings the MyApp back.
type staleChildError struct {
	kind, name string
	err        error
}

func (e *staleChildError) Error() string {
	return fmt.Sprintf("the cached %s %s was stale: %v", e.kind, e.name, e.err)
}

func (e *staleChildError) Unwrap() error { return e.err }

// staleChildRetryInterval is how soon a pass that met a stale cache looks
// again if no watch event comes first.
const staleChildRetryInterval = time.Second

// maxServerMessage bounds the server's message in a condition. An Invalid
// answer lists each refused field; the first few name the problem.
const maxServerMessage = 1024

// selectorLabels select the app's pods. They are immutable in a Deployment,
// so they hold only what never changes for a MyApp.
func selectorLabels(app *appsv1alpha1.MyApp) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "myapp",
		"app.kubernetes.io/instance": app.Name,
	}
}

// ManagedByLabel and ManagedByValue mark every child the operator creates;
// the manager caches only the Deployments, Services and Ingresses that
// carry them (see CacheByObject).
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "myapp-operator"
)

// childLabels go on every child, so `kubectl get all -l` finds them.
func childLabels(app *appsv1alpha1.MyApp) map[string]string {
	l := selectorLabels(app)
	l[ManagedByLabel] = ManagedByValue
	return l
}

// CacheByObject scopes the manager's cache of the kinds a MyApp owns to the
// objects the operator labelled: without it, every Deployment, Service and
// Ingress in the cluster would be held in memory, and the operator's memory
// would grow with the cluster rather than with its MyApps. A child missing
// from the cache is still found: see createOrUpdateChild.
func CacheByObject() map[client.Object]cache.ByObject {
	managed := labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedByValue})
	return map[client.Object]cache.ByObject{
		&appsv1.Deployment{}:    {Label: managed},
		&corev1.Service{}:       {Label: managed},
		&networkingv1.Ingress{}: {Label: managed},
	}
}

// reconcileChildren creates or updates the Deployment, Service and Ingress.
// Whatever goes wrong is in the status before the pass ends, so a MyApp
// never shows an empty or outdated Ready while its children cannot be
// written (handleChildError).
func (r *Reconciler) reconcileChildren(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	meta := metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}

	s.deployment = &appsv1.Deployment{ObjectMeta: meta}
	if err := r.reconcileChild(ctx, s, s.deployment, "Deployment", func() {
		mutateDeployment(app, s.deployment)
	}); err != nil {
		return r.handleChildError(ctx, s, err)
	}
	setReplicaStatus(app, s.deployment)

	svc := &corev1.Service{ObjectMeta: *meta.DeepCopy()}
	if err := r.reconcileChild(ctx, s, svc, "Service", func() { mutateService(app, svc) }); err != nil {
		return r.handleChildError(ctx, s, err)
	}

	s.ingress = &networkingv1.Ingress{ObjectMeta: *meta.DeepCopy()}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(s.ingress), s.ingress)
	if apierrors.IsNotFound(err) {
		// The cache holds only labelled children: an Ingress whose label
		// was stripped is missing from it, not from the cluster. Read
		// from the API server before taking it for new, or the DNS phase
		// would see no load-balancer address and repoint the live record
		// at the default target.
		err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.ingress), s.ingress)
	}
	if apierrors.IsNotFound(err) {
		// A new Ingress has no load-balancer address for the record to
		// point at, so the DNS phase does not need it: it is created after
		// that phase, routing what it found held, rather than created
		// unrouted and patched in the same pass (reconcileIngressRoutes).
		s.ingressDeferred = true
		return ctrl.Result{}, nil
	}
	if err := r.reconcileIngress(ctx, s); err != nil {
		return r.handleChildError(ctx, s, err)
	}
	return ctrl.Result{}, nil
}

// reconcileIngressRoutes runs after the DNS phase: it creates the Ingress a
// new MyApp did not have yet, routing what that phase found held, or brings
// an existing Ingress's rules to it. Once it ran, every child is written and
// Ready follows the Deployment and DNSReady.
//
// A route write the API server refuses goes through handleChildError like
// any other child write (Ready=False ChildWriteFailed in this pass, a
// warning when the trouble starts, terminal when invalid); the hosts the
// Ingress routes then stay as they were, and the DNS phase keeps the old
// host held until the Ingress routes spec.host (dnsplan).
func (r *Reconciler) reconcileIngressRoutes(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.ingressDeferred {
		if err := r.reconcileIngress(ctx, s); err != nil {
			return r.handleChildError(ctx, s, err)
		}
	} else if err := r.syncIngressRoutes(ctx, s); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return r.handleChildError(ctx, s, &staleChildError{kind: kindIngress, name: s.ingress.Name, err: err})
		}
		return r.handleChildError(ctx, s, &childWriteError{kind: kindIngress, name: s.ingress.Name, verb: "route the held hosts in", err: err})
	}
	r.childTroubles.forget(client.ObjectKeyFromObject(s.app))
	s.readiness.childrenWritten = true
	return ctrl.Result{}, nil
}

// reconcileIngress creates or updates the Ingress. Once the DNS phase has
// run (s.routes set), the rules route what it found held.
func (r *Reconciler) reconcileIngress(ctx context.Context, s *scope) error {
	return r.reconcileChild(ctx, s, s.ingress, kindIngress, func() {
		mutateIngress(s.app, s.ingress, r.IngressClassName)
		if s.routes != nil {
			s.ingress.Spec.Rules = ingressRules(s.app, s.routes)
		}
	})
}

// reportCreated emits one event for the children this pass created, not
// one per child: a new MyApp's three creates are one thing to a user.
func (r *Reconciler) reportCreated(s *scope) {
	if len(s.created) == 0 {
		return
	}
	r.event(s.app, nil, corev1.EventTypeNormal, eventChildCreated, "CreateChildren",
		"Created %s", strings.Join(s.created, ", "))
	s.created = nil
}

// reconcileChild creates obj, or updates it when the fields the MyApp
// manages differ from the spec. createOrUpdateChild compares the object
// before and after mutate and writes only on a difference; mutate sets
// only the fields the operator owns, so defaults the API server filled in
// never look like drift. It reports nothing itself: handleChildError turns
// the error into a condition, an event and a retry.
func (r *Reconciler) reconcileChild(ctx context.Context, s *scope, obj client.Object, kind string, mutate func()) error {
	app := s.app
	verb := "read"
	op, err := r.createOrUpdateChild(ctx, obj, func() error {
		// The read before mutate succeeded, or found nothing to read.
		verb = "create"
		if obj.GetUID() != "" {
			verb = "update"
			if !metav1.IsControlledBy(obj, app) {
				return &childConflictError{kind: kind, name: obj.GetName()}
			}
		}
		mutate()
		return controllerutil.SetControllerReference(app, obj, r.Client.Scheme())
	})
	var conflict *childConflictError
	switch {
	case err == nil:
	case errors.As(err, &conflict):
		return err
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// A child the cache showed (or a create found taken) that is gone
		// by the time it is written or read, or a write on an object the
		// cache holds an older version of: the cache is behind, and the
		// next pass works from the API server's answer.
		return &staleChildError{kind: kind, name: obj.GetName(), err: err}
	default:
		return &childWriteError{kind: kind, name: obj.GetName(), verb: verb, err: err}
	}
	switch op {
	case controllerutil.OperationResultCreated:
		log.FromContext(ctx).Info("Created child", "kind", kind, "name", obj.GetName())
		s.created = append(s.created, kind+" "+obj.GetName())
	case controllerutil.OperationResultUpdated:
		log.FromContext(ctx).Info("Updated child to match the spec", "kind", kind, "name", obj.GetName())
		r.event(app, obj, corev1.EventTypeNormal, eventChildUpdated, "Update"+kind,
			"Updated %s %s to match the MyApp's spec", kind, obj.GetName())
	}
	return nil
}

// handleChildError turns a failed child write into the pass's result.
//   - An object in the way, not the MyApp's: ChildConflict, checked again
//     soon (deleting it sends no event this controller watches).
//   - A stale cache: a quiet retry, with no event, no error and the
//     conditions left as they were, since nothing is wrong.
//   - Anything else: Ready=False with reason ChildWriteFailed, naming the
//     child and the server's answer; a warning event when that trouble
//     starts, not on every retry. A spec the API server refuses as invalid
//     is not retried until the MyApp changes (a terminal error); other
//     failures (a quota, an admission webhook, a full Service IP range, an
//     unreachable API server) are retried with the controller's backoff.
func (r *Reconciler) handleChildError(ctx context.Context, s *scope, err error) (ctrl.Result, error) {
	app := s.app
	var conflict *childConflictError
	if errors.As(err, &conflict) {
		if pass.TroubleStarts(app.Status.Conditions, appsv1alpha1.ReadyCondition, appsv1alpha1.ChildConflictReason) {
			r.event(app, nil, corev1.EventTypeWarning, eventChildConflict, "Reconcile"+conflict.kind, "%s", err)
		}
		s.readiness.child = &conditionState{reason: appsv1alpha1.ChildConflictReason, message: childConflictMessage(conflict)}
		return ctrl.Result{}, pass.Wait(wait.Jitter(r.PendingPollInterval, pass.JitterFactor), err)
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// The namespace is being deleted, and the MyApp with it: a refused
		// create is no trouble to report, and no warning is sent.
		log.FromContext(ctx).V(1).Info("Namespace is being deleted; not writing children", "namespace", app.Namespace)
		return ctrl.Result{}, pass.Wait(wait.Jitter(r.PendingPollInterval, pass.JitterFactor), err)
	}
	var stale *staleChildError
	if errors.As(err, &stale) {
		log.FromContext(ctx).V(1).Info("Child cache is behind the API server; trying again", "kind", stale.kind, "name", stale.name)
		return ctrl.Result{}, pass.Wait(wait.Jitter(staleChildRetryInterval, pass.JitterFactor), err)
	}

	kind, name, verb := "child", app.Name, "write"
	var write *childWriteError
	if errors.As(err, &write) {
		kind, name, verb = write.kind, write.name, write.verb
	}
	invalid := apierrors.IsInvalid(err)
	advice := "the operator retries with backoff"
	switch {
	case invalid:
		advice = "fix the MyApp's spec; the operator tries again when it changes"
	case apierrors.IsForbidden(err):
		advice = "a quota or an admission policy refused it; the operator retries with backoff"
	}
	msg := fmt.Sprintf("Could not %s %s %s: %s; %s", verb, kind, name, serverMessage(err), advice)
	if r.childTroubles.remember(client.ObjectKeyFromObject(app), msg) && !hasReadyCondition(app, appsv1alpha1.ChildWriteFailedReason, msg) {
		r.event(app, nil, corev1.EventTypeWarning, eventChildWriteFailed, strings.ToUpper(verb[:1])+verb[1:]+kind, "%s", msg)
	}
	s.readiness.child = &conditionState{reason: appsv1alpha1.ChildWriteFailedReason, message: msg, stalled: invalid}
	if invalid {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return ctrl.Result{}, err
}

// childTroubles remembers the child-write failure last warned about, by
// MyApp. The Ready condition says the same once its status write is in the
// cache; until then a second pass (a backoff retry, a child's event) would
// find no condition and warn again.
type childTroubles struct {
	mu   sync.Mutex
	last map[types.NamespacedName]string
}

// remember records message for key and reports whether it is new.
func (c *childTroubles) remember(key types.NamespacedName, message string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[types.NamespacedName]string{}
	}
	if c.last[key] == message {
		return false
	}
	c.last[key] = message
	return true
}

// forget drops key: its children were written, or it is gone.
func (c *childTroubles) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.last, key)
}

// serverMessage is the API server's answer without the client's request
// details, on one line and bounded, so a condition carrying it changes only
// when the answer does.
func serverMessage(err error) string {
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		msg = status.Status().Message
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxServerMessage {
		msg = strings.ToValidUTF8(msg[:maxServerMessage], "") + "..."
	}
	return msg
}

// createOrUpdateChild is controllerutil.CreateOrUpdate for a cache that
// holds only labelled children (CacheByObject). A child missing from the
// cache may still exist: someone removed its label, or the cache has not yet
// seen this operator's own create. So a cache miss tries the create, which
// costs nothing more in the common case, and a create that finds the name
// taken reads the object from the API server and carries on with it: a child
// of this MyApp is repaired, label and all (which brings it back into the
// cache), and anyone else's object is reported by mutate as a conflict.
func (r *Reconciler) createOrUpdateChild(
	ctx context.Context, obj client.Object, mutate func() error,
) (controllerutil.OperationResult, error) {
	key := client.ObjectKeyFromObject(obj)
	blank := obj.DeepCopyObject()
	err := r.Client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		if err := mutate(); err != nil {
			return controllerutil.OperationResultNone, err
		}
		err = r.Client.Create(ctx, obj)
		if err == nil {
			return controllerutil.OperationResultCreated, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return controllerutil.OperationResultNone, err
		}
		// Decoding into obj would keep what mutate set where the server's
		// object has nothing, so start again from the bare name.
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(blank).Elem())
		err = r.APIReader.Get(ctx, key, obj)
	}
	if err != nil {
		return controllerutil.OperationResultNone, err
	}
	existing := obj.DeepCopyObject()
	if err := mutate(); err != nil {
		return controllerutil.OperationResultNone, err
	}
	if equality.Semantic.DeepEqual(existing, obj) {
		return controllerutil.OperationResultNone, nil
	}
	if err := r.Client.Update(ctx, obj); err != nil {
		return controllerutil.OperationResultNone, err
	}
	return controllerutil.OperationResultUpdated, nil
}

func mutateDeployment(app *appsv1alpha1.MyApp, dep *appsv1.Deployment) {
	dep.Labels = withLabels(dep.Labels, childLabels(app))
	if dep.CreationTimestamp.IsZero() {
		// The selector is immutable; set it only on create.
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: selectorLabels(app)}
	}
	dep.Spec.Replicas = ptr.To(ptr.Deref(app.Spec.Replicas, 1))
	dep.Spec.Template.Labels = withLabels(dep.Spec.Template.Labels, childLabels(app))

	// Only the app's own container is managed; a container someone else
	// added (a mesh sidecar injected into the template, say) is left alone.
	containers := dep.Spec.Template.Spec.Containers
	i := containerIndex(containers, containerName)
	if i < 0 {
		containers = append(containers, corev1.Container{Name: containerName})
		i = len(containers) - 1
	}
	c := &containers[i]
	c.Image = app.Spec.Image
	c.Ports = []corev1.ContainerPort{{Name: portName, ContainerPort: app.Spec.ContainerPort, Protocol: corev1.ProtocolTCP}}
	c.Resources = *app.Spec.Resources.DeepCopy()
	c.Env = defaultedEnv(app.Spec.Env)
	dep.Spec.Template.Spec.Containers = containers
}

func mutateService(app *appsv1alpha1.MyApp, svc *corev1.Service) {
	svc.Labels = withLabels(svc.Labels, childLabels(app))
	svc.Spec.Selector = selectorLabels(app)
	svc.Spec.Ports = []corev1.ServicePort{{
		Name:       portName,
		Port:       app.Spec.ServicePort,
		TargetPort: intstr.FromString(portName),
		Protocol:   corev1.ProtocolTCP,
	}}
}

func mutateIngress(app *appsv1alpha1.MyApp, ing *networkingv1.Ingress, className string) {
	ing.Labels = withLabels(ing.Labels, childLabels(app))
	if className != "" {
		ing.Spec.IngressClassName = ptr.To(className)
	}
	// Only hosts this MyApp holds in DNS are routed (routing.go).
	ing.Spec.Rules = ingressRules(app, routedHostsBeforeDNS(app, ing))
}

// withLabels returns existing with want added, keeping labels others set.
func withLabels(existing, want map[string]string) map[string]string {
	out := make(map[string]string, len(existing)+len(want))
	maps.Copy(out, existing)
	maps.Copy(out, want)
	return out
}

func containerIndex(containers []corev1.Container, name string) int {
	for i := range containers {
		if containers[i].Name == name {
			return i
		}
	}
	return -1
}

// defaultedEnv copies env with the one default the API server applies to an
// env var inside a pod template (a field reference's apiVersion), so a
// Deployment read back compares equal to what was written.
func defaultedEnv(env []corev1.EnvVar) []corev1.EnvVar {
	if len(env) == 0 {
		return nil
	}
	out := make([]corev1.EnvVar, len(env))
	for i := range env {
		env[i].DeepCopyInto(&out[i])
		if ref := out[i].ValueFrom; ref != nil && ref.FieldRef != nil && ref.FieldRef.APIVersion == "" {
			ref.FieldRef.APIVersion = "v1"
		}
	}
	return out
}
