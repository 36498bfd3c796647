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
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// TestTheOrphanWayOutSaysWhenItLetsGo: a MyApp stuck in its deletion on a
// DNS outage is switched to deletionPolicy Orphan, the documented way out.
// It still tries to mark its record for up to dnsplan.OrphanMarkWait, and
// its condition says so: that it is letting go under Orphan, and at what
// time it gives up the marking, so nobody removes the finalizer by hand.
func TestTheOrphanWayOutSaysWhenItLetsGo(t *testing.T) {
	g := NewWithT(t)
	app := worldApp("wayout", "web", "web.wayout.example.com")
	w := newFakeWorld(t, app)
	w.settle(3, app)

	w.dns.sim.SetOutage(simulator.ServiceDNS, true)
	g.Expect(w.c.Delete(t.Context(), w.get(app))).To(Succeed())
	_ = w.pass(app)
	got := w.get(app)
	g.Expect(got).NotTo(BeNil(), "the outage holds the deletion")
	got.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyOrphan
	got.Generation++
	g.Expect(w.c.Update(t.Context(), got)).To(Succeed())
	_ = w.pass(app)

	got = w.get(app)
	g.Expect(got).NotTo(BeNil(), "the record cannot be marked yet")
	cond := conditionOf(got, appsv1alpha1.DNSReadyCondition)
	g.Expect(cond).NotTo(BeNil())
	giveUp := got.DeletionTimestamp.Add(dnsplan.OrphanMarkWait).UTC().Format(time.RFC3339)
	g.Expect(cond.Message).To(ContainSubstring("deletionPolicy is Orphan"), "%s", cond.Message)
	g.Expect(cond.Message).To(ContainSubstring(giveUp), "the message says when the marking is given up: %s", cond.Message)
}

// TestDeletionResumesSoonAfterManyFailedPasses: a MyApp whose passes failed many times in a row (the DNS service down
// while events kept coming, as when a namespace is deleted and every child
// the MyApp recreates is refused) is retried within pass.DefaultMaxRetryDelay of
// the service's return, not after the workqueue's default cap of 1000
// seconds (reliability family 5, B6a in docs/reliability.md).
func TestDeletionResumesSoonAfterManyFailedPasses(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { sim.SetOutage(simulator.ServiceDNS, false) })
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())

	// Every event starts a pass at once, whatever the backoff; each pass
	// fails and doubles the backoff. 20 failures put the next retry past
	// the cap: 5ms doubled 19 times is 43 minutes. Each failed pass makes
	// one read call, which fails (a warning goes out only when the
	// trouble starts, so the calls count the passes). A deletion reads the
	// names it knows before it deletes, so the failed reads count them.
	const failures = 20
	host := app.Spec.Host
	start := dnsReads.getsOf(host)
	for i := 0; dnsReads.getsOf(host)-start < failures; i++ {
		before := dnsReads.getsOf(host)
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"test.myapp.dev/poke":"%d"}}}`, i)
		g.Expect(k8sClient.Patch(t.Context(), &appsv1alpha1.MyApp{ObjectMeta: app.ObjectMeta},
			client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
		g.Eventually(func() int { return dnsReads.getsOf(host) }, timeout, interval).
			Should(BeNumerically(">", before), "a pass fails")
	}
	// A pass that reads the MyApp before the cache shows the previous
	// pass's status may warn a second time, never once per pass.
	g.Expect(warnings.count(app, appsv1alpha1.DNSServiceUnavailableReason)).To(BeNumerically("<=", 2),
		"a warning when the trouble starts, not one per failed pass")

	sim.SetOutage(simulator.ServiceDNS, false)
	// Nothing but the retry brings the MyApp back: no event comes.
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, pass.DefaultMaxRetryDelay+15*time.Second,
		"the MyApp goes within the retry cap once the service is back")
}
