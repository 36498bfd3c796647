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
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// eventuallyReadyReason waits until app's Ready condition, at the app's
// current generation, has reason, and returns that condition.
func eventuallyReadyReason(t *testing.T, g *WithT, app *appsv1alpha1.MyApp, reason string) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		cond = conditionOf(app, appsv1alpha1.ReadyCondition)
		g.Expect(cond).NotTo(BeNil(), "the MyApp has a Ready condition")
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.ObservedGeneration).To(Equal(app.Generation))
	}, timeout, interval).Should(Succeed())
	return cond
}

func TestDeploymentTheAPIRefusesTurnsReadyFalse(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)

	// No CRD rule checks the downward API's field paths; the Deployment API
	// refuses this one with 422.
	app.Spec.Env = []corev1.EnvVar{{Name: "BOGUS", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.bogus"},
	}}}
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())

	cond := eventuallyReadyReason(t, g, app, appsv1alpha1.ChildWriteFailedReason)
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Message).To(ContainSubstring("Could not update Deployment web"))
	g.Expect(cond.Message).To(ContainSubstring(`Invalid value: "metadata.bogus"`), "the server's message, naming the field")
	g.Expect(cond.Message).To(ContainSubstring("fix the MyApp's spec"))
	// The refused spec has been looked at: it is Stalled at this generation
	// (kstatus reads that as Failed only for an observed generation).
	g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation), "the refused generation is observed, and Stalled")
	g.Expect(conditionOf(app, appsv1alpha1.StalledCondition)).To(HaveField("Reason", appsv1alpha1.ChildWriteFailedReason))

	// The refusal is not retried: no spec change, no write.
	before := writes.count(ns)
	g.Consistently(func() int { return writes.count(ns) }, 3*time.Second, interval).Should(Equal(before),
		"a spec the API server refuses is not retried until the spec changes")
	g.Expect(warnings.count(app, appsv1alpha1.ChildWriteFailedReason)).To(Equal(1), "one warning when the trouble starts")

	// Fixing the spec brings the MyApp back.
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
	app.Spec.Env = nil
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	eventuallyReady(t, g, app)
}

func TestServiceThatCannotBeCreatedShowsReadyFalse(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	// A quota of no Services: every create is forbidden until it goes.
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-services", Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServices: resource.MustParse("0")}},
	}
	g.Expect(k8sClient.Create(t.Context(), quota)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(quota), quota)).To(Succeed())
		g.Expect(quota.Status.Hard).NotTo(BeEmpty(), "the quota controller has counted the namespace")
	}, timeout, interval).Should(Succeed())

	app := newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	cond := eventuallyReadyReason(t, g, app, appsv1alpha1.ChildWriteFailedReason)
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Message).To(ContainSubstring("Could not create Service web"))
	g.Expect(cond.Message).To(ContainSubstring("exceeded quota: no-services"), "the server's message")
	g.Expect(cond.Message).To(ContainSubstring("retries with backoff"))

	// It is retried with backoff, and warned about once.
	before := writes.count(ns)
	g.Eventually(func() int { return writes.count(ns) }, timeout, interval).Should(BeNumerically(">", before), "the create is retried")
	g.Expect(warnings.count(app, appsv1alpha1.ChildWriteFailedReason)).To(Equal(1), "one warning when the trouble starts, not one per retry")

	g.Expect(k8sClient.Delete(t.Context(), quota)).To(Succeed())
	eventuallyReady(t, g, app)
}

// staleServiceCache answers the first Get of a Service with NotFound, as an
// informer that has not yet seen the Service's create would.
func staleServiceCache(c client.WithWatch) client.WithWatch {
	var missed atomic.Bool
	return interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Service); ok && missed.CompareAndSwap(false, true) {
				return apierrors.NewNotFound(corev1.Resource("services"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
}

func TestStaleChildCacheIsAQuietRequeue(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)

	c, err := client.NewWithWatch(cp.Config, client.Options{Scheme: fixtures.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	recorder := events.NewFakeRecorder(10)
	r := &Reconciler{
		Base: pass.Base{
			Client:           staleServiceCache(c),
			APIReader:        k8sClient,
			Recorder:         recorder,
			ReconcileTimeout: pass.DefaultReconcileTimeout,
			Clock:            suiteClock,
		},
		OwnerID:             testOwnerID,
		DNS:                 dnsClient,
		DefaultTarget:       defaultTarget,
		PendingPollInterval: 200 * time.Millisecond,
		DriftCheckInterval:  driftCheckInterval,
		RecordTTL:           DefaultRecordTTL,
	}
	result, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
	g.Expect(err).NotTo(HaveOccurred(), "no error, so nothing is logged as one")
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0), "the pass comes back soon")
	g.Expect(recorder.Events).To(BeEmpty(), "no event for a stale cache")

	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
	g.Expect(conditionOf(app, appsv1alpha1.ReadyCondition)).To(HaveField("Status", metav1.ConditionTrue), "the status is untouched")
}

// TestATerminatingNamespaceSendsNoChildWriteWarnings: a MyApp whose
// namespace is being deleted meets creates the API server refuses for that
// reason; that is no trouble to report, so no ChildWriteFailed warning and
// no ChildWriteFailed condition.
func TestATerminatingNamespaceSendsNoChildWriteWarnings(t *testing.T) {
	g := NewWithT(t)
	app := worldApp("teardown", "web", "web.teardown.example.com")
	w := newFakeWorld(t, app)
	w.terminating = true
	for range 3 {
		_ = w.pass(app)
	}
	g.Expect(recordedEvents(w.events)).NotTo(ContainElement(HavePrefix("Warning ChildWriteFailed")))
	if ready := conditionOf(w.get(app), appsv1alpha1.ReadyCondition); ready != nil {
		g.Expect(ready.Reason).NotTo(Equal(appsv1alpha1.ChildWriteFailedReason))
	}
}
