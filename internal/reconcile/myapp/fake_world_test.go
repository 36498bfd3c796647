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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// fakeWorld is a cluster of MyApps in a fake client, with a DNS simulator
// of its own, driven pass by pass through Reconcile: no manager runs, so the
// order of the passes is the test's.
type fakeWorld struct {
	t   *testing.T
	c   client.Client
	dns phaseDNS
	r   *Reconciler
	// refuseHosts are hosts an admission policy refuses in an Ingress.
	refuseHosts sets.Set[string]
	// base is the API server itself, without the cache's view.
	base client.Client
	// events are the reconciler's events.
	events *events.FakeRecorder
	// terminating is set once the namespace is being deleted: every create
	// is refused, as the API server refuses it.
	terminating bool
}

func newFakeWorld(t *testing.T, apps ...*appsv1alpha1.MyApp) *fakeWorld {
	t.Helper()
	w := &fakeWorld{t: t, dns: ownDNS(t), refuseHosts: sets.New[string]()}
	objs := make([]client.Object, 0, len(apps))
	for _, app := range apps {
		objs = append(objs, app)
	}
	base := fake.NewClientBuilder().WithScheme(fixtures.Scheme()).
		WithStatusSubresource(&appsv1alpha1.MyApp{}).
		WithIndex(&appsv1alpha1.MyApp{}, hostIndex, func(o client.Object) []string {
			return []string{o.(*appsv1alpha1.MyApp).Spec.Host}
		}).
		WithIndex(&appsv1alpha1.MyApp{}, heldIndex, heldIndexValues).
		WithObjects(objs...).Build()
	refuse := func(obj client.Object) error {
		ing, ok := obj.(*networkingv1.Ingress)
		if !ok {
			return nil
		}
		for _, rule := range ing.Spec.Rules {
			if w.refuseHosts.Has(rule.Host) {
				return apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"},
					ing.Name, errForbiddenHost(rule.Host))
			}
		}
		return nil
	}
	w.c = interceptor.NewClient(base, interceptor.Funcs{
		// As the manager's cache (CacheByObject), the client sees only the
		// children the operator labelled; the APIReader sees everything.
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if ing, child := obj.(*networkingv1.Ingress); child && obj.GetLabels()[ManagedByLabel] != ManagedByValue {
				*ing = networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
				return apierrors.NewNotFound(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}, key.Name)
			}
			return nil
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if w.terminating {
				return &apierrors.StatusError{ErrStatus: metav1.Status{
					Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
					Message: "unable to create new content in namespace " + obj.GetNamespace() + " because it is being terminated",
					Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
						Type: corev1.NamespaceTerminatingCause, Message: "namespace is being terminated", Field: "metadata.namespace",
					}}},
				}}
			}
			if err := refuse(obj); err != nil {
				return err
			}
			if obj.GetUID() == "" {
				obj.SetUID(uuid.NewUUID()) // as the API server does
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := refuse(obj); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := refuse(obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	w.r, _ = newPhaseReconciler(w.c, w.dns.client, defaultTarget)
	w.r.APIReader = base
	w.base = base
	// Many passes send many events; a recorder that cannot take one more
	// would block the pass.
	w.events = events.NewFakeRecorder(100000)
	w.r.Recorder = w.events
	return w
}

type forbiddenHost string

func (h forbiddenHost) Error() string {
	return "host " + string(h) + " is not allowed in this namespace by policy"
}

func errForbiddenHost(host string) error { return forbiddenHost(host) }

// pass runs one Reconcile of app; its error is the pass's, which the tests
// read from the status instead.
func (w *fakeWorld) pass(app *appsv1alpha1.MyApp) error {
	_, err := w.r.Reconcile(w.t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(app)})
	return err
}

// get reads app as it is now; nil when it is gone.
func (w *fakeWorld) get(app *appsv1alpha1.MyApp) *appsv1alpha1.MyApp {
	got := &appsv1alpha1.MyApp{}
	if err := w.c.Get(w.t.Context(), client.ObjectKeyFromObject(app), got); err != nil {
		NewWithT(w.t).Expect(apierrors.IsNotFound(err)).To(BeTrue(), "reading %s: %v", app.Name, err)
		return nil
	}
	return got
}

// setHost changes app's spec.host, as a user's edit does.
func (w *fakeWorld) setHost(app *appsv1alpha1.MyApp, host string) {
	got := w.get(app)
	got.Spec.Host = host
	got.Generation++
	NewWithT(w.t).Expect(w.c.Update(w.t.Context(), got)).To(Succeed())
}

// routed is what app's Ingress routes now.
func (w *fakeWorld) routed(app *appsv1alpha1.MyApp) sets.Set[string] {
	ing := &networkingv1.Ingress{}
	if err := w.c.Get(w.t.Context(), client.ObjectKeyFromObject(app), ing); err != nil {
		return sets.New[string]()
	}
	hosts := sets.New[string]()
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP != nil {
			hosts.Insert(rule.Host)
		}
	}
	return hosts
}

// owners maps each host the simulator holds to its owner.
func (w *fakeWorld) owners() map[string]string {
	out := map[string]string{}
	for _, rec := range w.dns.sim.Records() {
		out[rec.Name] = rec.Owner
	}
	return out
}

// worldApp is a MyApp of a fake world, created with its finalizer.
func worldApp(namespace, name, host string, opts ...fixtures.MyAppOption) *appsv1alpha1.MyApp {
	app := newMyApp(namespace, name, append([]fixtures.MyAppOption{fixtures.WithHost(host)}, opts...)...)
	app.UID = uuid.NewUUID()
	app.Generation = 1
	app.Finalizers = []string{appsv1alpha1.DNSCleanupFinalizer}
	return app
}

// settle runs passes of every app in turn, rounds times.
func (w *fakeWorld) settle(rounds int, apps ...*appsv1alpha1.MyApp) {
	for range rounds {
		for _, app := range apps {
			if w.get(app) != nil {
				_ = w.pass(app)
			}
		}
		w.checkRoutes(apps...)
	}
}

// checkRoutes asserts what must hold after every pass: no host is routed by
// two Ingresses, and an Ingress routes only hosts its MyApp holds.
func (w *fakeWorld) checkRoutes(apps ...*appsv1alpha1.MyApp) {
	w.t.Helper()
	owners := w.owners()
	routedBy := map[string]string{}
	for _, app := range apps {
		live := w.get(app)
		if live == nil {
			continue
		}
		for host := range w.routed(app) {
			if other, ok := routedBy[host]; ok {
				w.t.Errorf("host %s is routed by the Ingresses of %s and %s", host, other, app.Name)
			}
			routedBy[host] = app.Name
			if !ownsRecord(w.r.OwnerID, owners[host], live) {
				w.t.Errorf("the Ingress of %s routes %s, which %q holds", app.Name, host, owners[host])
			}
		}
	}
}

// ownsRecord reports whether owner is one of app's owner identities in
// installation id.
func ownsRecord(id, owner string, app *appsv1alpha1.MyApp) bool {
	return owner == recordOwnerOf(id, app) || owner == orphanedRecordOwnerOf(id, app)
}

// add creates app in w, as a user's create does.
func (w *fakeWorld) add(app *appsv1alpha1.MyApp) {
	w.t.Helper()
	NewWithT(w.t).Expect(w.c.Create(w.t.Context(), app)).To(Succeed())
}

// setSuspend sets app's spec.suspend, as a user's edit does.
func (w *fakeWorld) setSuspend(app *appsv1alpha1.MyApp, suspend bool) {
	w.t.Helper()
	got := w.get(app)
	got.Spec.Suspend = suspend
	got.Generation++
	NewWithT(w.t).Expect(w.c.Update(w.t.Context(), got)).To(Succeed())
}

// held are the hosts whose record the DNS service holds under one of app's
// identities.
func (w *fakeWorld) held(app *appsv1alpha1.MyApp) sets.Set[string] {
	out := sets.New[string]()
	for host, owner := range w.owners() {
		if ownsRecord(w.r.OwnerID, owner, app) {
			out.Insert(host)
		}
	}
	return out
}

// wake runs the handler that wakes the MyApps waiting for a host on the
// update of app from before to its state now, as the manager does on its
// watch event; the passes it would queue are the test's to run.
func (w *fakeWorld) wake(before *appsv1alpha1.MyApp) {
	w.t.Helper()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[ctrl.Request]())
	defer q.ShutDown()
	w.r.hostWaiters().Update(w.t.Context(), event.UpdateEvent{ObjectOld: before, ObjectNew: w.get(before)}, q)
}

// restart replaces w's reconciler with a new one, as a restarted manager
// has: the same cluster and DNS service, and nothing remembered.
func (w *fakeWorld) restart() {
	r, _ := newPhaseReconciler(w.c, w.dns.client, defaultTarget)
	r.APIReader, r.Recorder, r.Clock = w.base, w.events, w.r.Clock
	w.r = r
}
