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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// requestReconcile sets reconcile.myapp.dev/requested-at on app to value.
func requestReconcile(t *testing.T, g *WithT, app *appsv1alpha1.MyApp, value string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + appsv1alpha1.ReconcileRequestAnnotation + `":"` + value + `"}}}`)
	g.Expect(k8sClient.Patch(t.Context(), app, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

// TestReconcileRequestReadsTheRecordAtOnce: a record changed behind the
// operator's back is repaired at the next drift check (an hour away in this
// suite), or at once when reconcile.myapp.dev/requested-at gets a new
// value; status.lastHandledReconcileAt acknowledges the value.
func TestReconcileRequestReadsTheRecordAtOnce(t *testing.T) {
	g := NewWithT(t)
	app := newMyApp(newNamespace(t), "web")
	createReadyMyApp(t, g, app)
	owner := recordsNamed(app.Spec.Host)[0].Owner

	// Drift: someone points the record elsewhere. Nothing reads it soon.
	_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: app.Spec.Host, Type: dns.TypeA, Value: "192.0.2.66", TTL: 300, Owner: owner})
	g.Expect(err).NotTo(HaveOccurred())
	g.Consistently(func() string { return recordsNamed(app.Spec.Host)[0].Value }, 2*time.Second, interval).
		Should(Equal("192.0.2.66"), "the drift waits for the next drift check")

	requestReconcile(t, g, app, "1764000000")
	g.Eventually(func() string { return recordsNamed(app.Spec.Host)[0].Value }, timeout, interval).
		Should(Equal(defaultTarget), "the requested pass read the record and repaired it")
	g.Eventually(func(g Gomega) string {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		return app.Status.LastHandledReconcileAt
	}, timeout, interval).Should(Equal("1764000000"))

	// The same value asks for nothing more; a new one reads again.
	eventuallyReady(t, g, app) // the repaired record is ACTIVE: no poll is due
	reads := dnsReads.getsOf(app.Spec.Host)
	requestReconcile(t, g, app, "1764000000")
	g.Consistently(func() int { return dnsReads.getsOf(app.Spec.Host) }, time.Second, interval).Should(Equal(reads))
	requestReconcile(t, g, app, "1764000060")
	g.Eventually(func() int { return dnsReads.getsOf(app.Spec.Host) }, timeout, interval).Should(BeNumerically(">", reads))
	g.Eventually(func(g Gomega) string {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		return app.Status.LastHandledReconcileAt
	}, timeout, interval).Should(Equal("1764000060"))
}

// TestAReconcileRequestIsNotTakenByAPassWhoseReadFailed (audit G8): the
// value of reconcile.myapp.dev/requested-at is taken once a pass read the
// record, so CI that waits for status.lastHandledReconcileAt knows the
// record was looked at. A pass whose read failed leaves it for the next.
func TestAReconcileRequestIsNotTakenByAPassWhoseReadFailed(t *testing.T) {
	g := NewWithT(t)
	app := worldApp("g8", "web", "web.g8.example.com")
	w := newFakeWorld(t, app)
	w.settle(3, app)

	w.dns.sim.SetOutage(simulator.ServiceDNS, true)
	got := w.get(app)
	got.Annotations = map[string]string{appsv1alpha1.ReconcileRequestAnnotation: "1764000000"}
	g.Expect(w.c.Update(t.Context(), got)).To(Succeed())
	_ = w.pass(app)
	g.Expect(w.get(app).Status.LastHandledReconcileAt).To(BeEmpty(), "the read failed: the request is not taken")

	w.dns.sim.SetOutage(simulator.ServiceDNS, false)
	_ = w.pass(app)
	g.Expect(w.get(app).Status.LastHandledReconcileAt).To(Equal("1764000000"), "taken by the pass that read the record")
}
