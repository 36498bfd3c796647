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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/health"
	"github.com/myapp-operator/myapp-operator/internal/health/healthtest"
)

// setSuspend sets spec.suspend on app with a merge patch.
func setSuspend(t *testing.T, g *WithT, app *appsv1alpha1.MyApp, suspend bool) {
	t.Helper()
	patch := []byte(`{"spec":{"suspend":false}}`)
	if suspend {
		patch = []byte(`{"spec":{"suspend":true}}`)
	}
	g.Expect(k8sClient.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

// eventuallySuspended waits until the status shows app suspended: Ready
// False with reason Suspended, and kstatus's Reconciling True with reason
// Suspended, since the spec holds changes no pass has applied.
func eventuallySuspended(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) {
	t.Helper()
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(conditionOf(app, appsv1alpha1.ReadyCondition)).To(HaveValue(HaveField("Reason", appsv1alpha1.SuspendedReason)))
		g.Expect(conditionOf(app, appsv1alpha1.ReconcilingCondition)).To(HaveValue(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", appsv1alpha1.SuspendedReason))))
	}, timeout, interval).Should(Succeed())
}

// TestSuspendFreezesAMyApp: while spec.suspend is set, the operator writes
// nothing to the children or the DNS service, whatever changes; Ready says
// Suspended; Normal events mark suspend and resume; on resume everything is
// brought to the spec at once. A suspended pass acts on no generation, so
// status.observedGeneration and every condition's stay at the last
// generation acted on (audit G7): kstatus, and Helm's --wait with it, reads
// a suspended MyApp whose spec changed as InProgress, never Current.
func TestSuspendFreezesAMyApp(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	oldHost := app.Spec.Host
	actedOn := app.Generation

	setSuspend(t, g, app, true)
	eventuallySuspended(t, g, app)
	cond := conditionOf(app, appsv1alpha1.ReadyCondition)
	g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(cond.Message).To(ContainSubstring("spec.suspend to false"))
	g.Expect(app.Generation).To(BeNumerically(">", actedOn), "the edit that suspended counts as a change")
	g.Expect(app.Status.ObservedGeneration).To(Equal(actedOn), "observedGeneration stays at the last generation acted on")
	for _, c := range app.Status.Conditions {
		g.Expect(c.ObservedGeneration).To(BeNumerically("<=", actedOn), "condition %s is of no generation a pass did not act on", c.Type)
	}
	g.Expect(conditionOf(app, appsv1alpha1.ReconcilingCondition).Message).To(ContainSubstring(
		fmt.Sprintf("since generation %d", actedOn)))
	g.Expect(conditionOf(app, appsv1alpha1.StalledCondition)).To(BeNil())
	g.Expect(healthtest.Kstatus(t, app, myAppKind).Status).To(Equal(status.InProgressStatus))
	g.Expect(healthtest.ArgoCD(t, app, myAppKind).Status).To(Equal(health.Suspended))
	g.Eventually(func() []eventReason { return eventReasons(t, ns, "web") }, timeout, interval).
		Should(ContainElement(eventSuspended))

	// A new image and a new host, and a child deleted by hand: none of it is
	// acted on while suspended.
	app.Spec.Image = "nginx:1.28"
	app.Spec.Host = "moved." + ns + ".example.com"
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	g.Expect(k8sClient.Delete(t.Context(), svc)).To(Succeed())
	childWrites := writes.count(ns) - writes.statusCount(ns)
	g.Consistently(func(g Gomega) {
		g.Expect(writes.count(ns)-writes.statusCount(ns)).To(Equal(childWrites), "no write but the status")
		dep := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers[0].Image).NotTo(Equal("nginx:1.28"))
		g.Expect(apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(svc), &corev1.Service{}))).
			To(BeTrue(), "the deleted Service is not put back")
		g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty(), "no record is written for the new host")
		g.Expect(recordsNamed(oldHost)).To(HaveLen(1), "the old record is not released")
		got := &appsv1alpha1.MyApp{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(actedOn), "the new image and host are not observed")
		g.Expect(healthtest.Kstatus(t, got, myAppKind).Status).To(Equal(status.InProgressStatus),
			"kstatus never reads the unapplied edit as Current")
	}, 3*time.Second, interval).Should(Succeed())

	// Resumed: all of it at once.
	setSuspend(t, g, app, false)
	eventuallyReady(t, g, app)
	g.Expect(recordsNamed(app.Spec.Host)).To(HaveLen(1))
	g.Expect(recordsNamed(oldHost)).To(BeEmpty(), "the old host is released after the move")
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(svc), &corev1.Service{})).To(Succeed())
	g.Expect(eventReasons(t, ns, "web")).To(ContainElement(eventResumed))
	eventuallyKstatus(t, g, app, status.CurrentStatus)
}

// TestSuspendNeverBlocksDeletion: a suspended MyApp that is deleted still
// has its DNS record cleaned up by its finalizer, and goes.
func TestSuspendNeverBlocksDeletion(t *testing.T) {
	g := NewWithT(t)
	app := newMyApp(newNamespace(t), "web")
	createReadyMyApp(t, g, app)
	setSuspend(t, g, app, true)
	eventuallySuspended(t, g, app)
	g.Expect(recordsNamed(app.Spec.Host)).To(HaveLen(1))

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, timeout, "a suspended MyApp is deleted")
	g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty(), "its record was cleaned up")
}
