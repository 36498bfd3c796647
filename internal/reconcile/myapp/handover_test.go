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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// The promises of a hand-over (docs/spec/myapp.md, "Swaps and rotations"):
// a MyApp that gives its host in a swap or a rotation gives it to the
// member of the cycle that wants it, never to a MyApp waiting outside the
// cycle, never to a suspended one, and ends holding the host it gave it
// for, or keeps its own.

// TestASwapHandsTheHostToItsPartnerNotToAWaiter (audit G1, first form): a
// and b swap hosts while d, in a third namespace that sorts between them,
// waits for a's host. a gives first (the smallest key of the cycle) and
// gives its host to b, the member that closes the cycle: each ends on the
// other's host, and d keeps waiting.
func TestASwapHandsTheHostToItsPartnerNotToAWaiter(t *testing.T) {
	g := NewWithT(t)
	h1, h2 := "h1.g1a.example.com", "h2.g1a.example.com"
	a, b := worldApp("ns-a", "a", h1), worldApp("ns-z", "b", h2)
	d := worldApp("ns-b", "d", h1)
	w := newFakeWorld(t, a, b)
	w.settle(3, a, b)
	w.add(d)
	w.settle(2, a, b, d)
	g.Expect(conditionOf(w.get(d), appsv1alpha1.DNSReadyCondition)).To(HaveValue(
		HaveField("Reason", appsv1alpha1.HostConflictReason)), "d waits for h1")

	w.setHost(a, h2)
	w.setHost(b, h1)
	w.settle(12, a, b, d)

	g.Expect(w.held(a)).To(Equal(sets.New(h2)), "a holds the host it gave h1 for: %v", w.owners())
	g.Expect(w.held(b)).To(Equal(sets.New(h1)), "b holds the host a gave it: %v", w.owners())
	g.Expect(w.held(d)).To(BeEmpty(), "the waiter outside the swap gets neither host")
	g.Expect(w.routed(a)).To(Equal(sets.New(h2)))
	g.Expect(w.routed(b)).To(Equal(sets.New(h1)))
}

// TestASwapWithASuspendedPartnerWaitsForItsResume (audit G1, second form):
// a swap whose partner is suspended does not start, since a suspended MyApp
// passes nothing on: a keeps and routes its host, and the suspended MyApp's
// record is not touched. Once it resumes, the swap completes.
func TestASwapWithASuspendedPartnerWaitsForItsResume(t *testing.T) {
	g := NewWithT(t)
	h1, h2 := "h1.g1b.example.com", "h2.g1b.example.com"
	a, b := worldApp("g1b", "a", h1), worldApp("g1b", "b", h2)
	w := newFakeWorld(t, a, b)
	w.settle(3, a, b)
	w.setSuspend(b, true)
	w.settle(1, b)

	w.setHost(a, h2)
	w.setHost(b, h1)
	w.settle(8, a, b)
	g.Expect(w.held(a)).To(Equal(sets.New(h1)), "a keeps its own host while its partner is suspended: %v", w.owners())
	g.Expect(w.routed(a)).To(Equal(sets.New(h1)), "and routes it")
	g.Expect(w.held(b)).To(Equal(sets.New(h2)), "the suspended MyApp's record is not touched")

	w.setSuspend(b, false)
	w.settle(12, a, b)
	g.Expect(w.held(a)).To(Equal(sets.New(h2)), "after the resume, the swap completes: %v", w.owners())
	g.Expect(w.held(b)).To(Equal(sets.New(h1)))
	g.Expect(w.routed(a)).To(Equal(sets.New(h2)))
	g.Expect(w.routed(b)).To(Equal(sets.New(h1)))
}

// TestAPartnerThatChangesItsHostAfterAHandOverStillPaysTheGiver (audit G1,
// third form): a gives its host h1 to b in a swap, then b's spec.host
// changes to h3, which c holds for good. b now holds h1 and h2 and wants
// neither; it keeps one name, and passes h2 on to a, which gave h1 for it.
// Whether b had read h1 before the hand-over or not, nothing is stranded.
func TestAPartnerThatChangesItsHostAfterAHandOverStillPaysTheGiver(t *testing.T) {
	for _, tc := range []struct {
		name string
		// bReadsFirst runs a pass of b after the swap's edit, before a
		// hands h1 over.
		bReadsFirst bool
	}{
		{"the partner read the host before the hand-over", true},
		{"the partner never read the host", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			h1, h2, h3 := "h1.g1c.example.com", "h2.g1c.example.com", "h3.g1c.example.com"
			a, b, c := worldApp("g1c-a", "a", h1), worldApp("g1c-b", "b", h2), worldApp("g1c-c", "c", h3)
			w := newFakeWorld(t, a, b, c)
			w.settle(3, a, b, c)

			w.setHost(a, h2)
			w.setHost(b, h1)
			if tc.bReadsFirst {
				_ = w.pass(b)
			}
			for range 4 {
				if w.held(b).Has(h1) {
					break
				}
				_ = w.pass(a)
			}
			g.Expect(w.held(b)).To(HaveKey(h1), "a handed h1 to b: %v", w.owners())
			w.setHost(b, h3)
			w.settle(12, a, b, c)

			g.Expect(w.held(a)).To(Equal(sets.New(h2)), "a ends on the host it gave h1 for: %v", w.owners())
			g.Expect(w.held(b)).To(Equal(sets.New(h1)), "b keeps one name while h3 is held")
			g.Expect(w.held(c)).To(Equal(sets.New(h3)))
			got := w.get(b)
			g.Expect(heldHosts(got)).To(ConsistOf(h1), "b's status knows the host it holds")
			g.Expect(w.routed(a)).To(Equal(sets.New(h2)))
			g.Expect(w.routed(b)).To(Equal(sets.New(h1)))
		})
	}
}

// conflictBehindAWaiter is a MyApp a that holds h1 and wants h2, which c
// holds and wants for good, while d waits for h1: a's conflict cannot end,
// and its old host is wanted.
func conflictBehindAWaiter(t *testing.T, zone string) (w *fakeWorld, a, c *appsv1alpha1.MyApp) {
	h1, h2 := "h1."+zone+".example.com", "h2."+zone+".example.com"
	a, c = worldApp(zone, "a", h1), worldApp(zone, "c", h2)
	d := worldApp(zone, "d", h1)
	w = newFakeWorld(t, a, c)
	w.settle(3, a, c)
	w.add(d)
	w.setHost(a, h2)
	w.settle(3, a, c, d)
	return w, a, c
}

// TestAConflictWhoseOldHostIsWantedBacksOffToTheDriftInterval (audit T3): a
// conflicted MyApp whose old host another MyApp wants comes back soon, to
// follow a cycle that may close, but less often each time nothing changed,
// up to the drift interval; a change of a MyApp holding a host it cares
// about (the event that wakes waiters) makes it read again at once.
func TestAConflictWhoseOldHostIsWantedBacksOffToTheDriftInterval(t *testing.T) {
	g := NewWithT(t)
	w, a, c := conflictBehindAWaiter(t, "t3")
	clk := clocktesting.NewFakePassiveClock(time.Now())
	w.r.Clock = clk
	g.Expect(conditionOf(w.get(a), appsv1alpha1.DNSReadyCondition)).To(HaveValue(
		HaveField("Reason", appsv1alpha1.HostConflictReason)))

	waits := make([]time.Duration, 0, 14)
	for range 14 {
		res, _ := w.r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(a)})
		waits = append(waits, res.RequeueAfter)
		clk.SetTime(clk.Now().Add(res.RequeueAfter))
	}
	t.Logf("waits: %v", waits)
	g.Expect(waits[len(waits)-1]).To(BeNumerically(">=", phaseDriftCheck/2),
		"after many re-checks that found nothing new, it waits about a drift interval: %v", waits)
	for _, d := range waits {
		g.Expect(d).To(BeNumerically("<=", time.Duration(float64(phaseDriftCheck)*(1+pass.JitterFactor))),
			"never longer than the drift interval, within its jitter")
	}

	// c moves away: the event that wakes the MyApps waiting for its host
	// brings a back, which reads at once and takes h2.
	before := w.get(c)
	w.setHost(c, "h9.t3.example.com")
	w.wake(before)
	w.settle(4, a, c)
	g.Expect(w.held(a)).To(HaveKey("h2.t3.example.com"), "a takes h2 once c moved: %v", w.owners())
}

// TestAConflictWhileAHostIsWantedIsReconcilingNotStalled (audit T4): a
// conflict that may still end by itself (its old host is wanted, so a cycle
// of moves may close) reads Reconciling, not Stalled: kstatus Failed and
// Argo CD Degraded would call a rotation under way a failure.
func TestAConflictWhileAHostIsWantedIsReconcilingNotStalled(t *testing.T) {
	g := NewWithT(t)
	w, a, _ := conflictBehindAWaiter(t, "t4")
	got := w.get(a)
	g.Expect(conditionOf(got, appsv1alpha1.DNSReadyCondition)).To(HaveValue(
		HaveField("Reason", appsv1alpha1.HostConflictReason)))
	g.Expect(conditionOf(got, appsv1alpha1.StalledCondition)).To(BeNil(), "not stalled")
	// In this world no Deployment rolls out, so Ready's reason, which
	// Reconciling takes first, is the Deployment's.
	g.Expect(conditionOf(got, appsv1alpha1.ReconcilingCondition)).To(HaveValue(HaveField("Status", metav1.ConditionTrue)))
}

// TestAHandedOverHostIsFoundAfterARestartWhoseListFailed (audit T5): b is
// handed h1 in a swap, then its spec.host changes to a host held for good,
// and the manager restarts before b read h1 again, so only a list of b's
// records can find h1; that list fails once. It is tried again until it
// succeeds, so h1 is not stranded under b's owner unknown to any status,
// which under deletionPolicy Orphan would outlive b for good.
func TestAHandedOverHostIsFoundAfterARestartWhoseListFailed(t *testing.T) {
	g := NewWithT(t)
	h1, h2, h3 := "h1.t5.example.com", "h2.t5.example.com", "h3.t5.example.com"
	orphan := func(app *appsv1alpha1.MyApp) { app.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyOrphan }
	a, b, c := worldApp("t5", "a", h1), worldApp("t5", "b", h2, orphan), worldApp("t5", "c", h3)
	w := newFakeWorld(t, a, b, c)
	w.settle(3, a, b, c)
	w.setHost(a, h2)
	w.setHost(b, h1)
	_ = w.pass(b)
	for range 4 {
		if w.held(b).Has(h1) {
			break
		}
		_ = w.pass(a)
	}
	g.Expect(w.held(b)).To(HaveKey(h1), "a handed h1 to b: %v", w.owners())
	w.setHost(b, h3)

	// The manager restarts: nothing is remembered, and b's first list fails.
	w.restart()
	w.dns.sim.SetFault(simulator.ServiceDNS, simulator.OpList, simulator.Fault{Status: 500, Count: 1})
	w.settle(12, a, b, c)

	for host := range w.held(b) {
		g.Expect(heldHosts(w.get(b))).To(ContainElement(host), "b holds %s, and its status knows it", host)
	}
	g.Expect(w.held(a)).NotTo(BeEmpty(), "a gave h1 and is not left without a name: %v", w.owners())

	g.Expect(w.c.Delete(t.Context(), w.get(b))).To(Succeed())
	w.settle(2, b)
	g.Expect(w.get(b)).To(BeNil())
	g.Expect(w.held(b).Len()).To(BeNumerically("<=", 1), "b leaves at most the record of the one host it held: %v", w.owners())
}

// TestAResumeWakesTheMyAppThatGivesFirst: while its partner is suspended,
// a MyApp of a swap backs off its re-checks; the partner's resume may close
// the cycle, so it wakes the MyApp, whose next pass reads at once. (Family
// 10 found a swap stuck for the drift interval after a resume.)
func TestAResumeWakesTheMyAppThatGivesFirst(t *testing.T) {
	g := NewWithT(t)
	h1, h2 := "h1.wake.example.com", "h2.wake.example.com"
	a, b := worldApp("wake", "a", h1), worldApp("wake", "b", h2)
	w := newFakeWorld(t, a, b)
	w.settle(3, a, b)
	w.setSuspend(b, true)
	w.settle(1, b)
	w.setHost(a, h2)
	w.setHost(b, h1)
	w.settle(3, a, b)
	_, ask, _ := w.r.dnsChecks.recall(client.ObjectKeyFromObject(a), w.get(a).UID)
	g.Expect(ask & dnsplan.AskWoken).To(BeZero())

	before := w.get(b)
	w.setSuspend(b, false)
	w.wake(before)
	_, ask, _ = w.r.dnsChecks.recall(client.ObjectKeyFromObject(a), w.get(a).UID)
	g.Expect(ask&dnsplan.AskWoken).NotTo(BeZero(), "b's resume wakes a, which gives first")
}
