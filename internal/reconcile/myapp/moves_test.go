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
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestHostMoveWhoseIngressWriteIsRefusedKeepsTheOldHost: a Ready MyApp on h1
// moves to h2, which an admission policy refuses in its Ingress for good.
// The old record stays, and stays routed; reverting spec.host recovers.
func TestHostMoveWhoseIngressWriteIsRefusedKeepsTheOldHost(t *testing.T) {
	g := NewWithT(t)
	const ns = "moves"
	h1, h2 := "web.moves.example.com", "new.moves.example.com"
	app := worldApp(ns, "web", h1)
	w := newFakeWorld(t, app)
	w.settle(3, app)
	g.Expect(w.owners()).To(HaveKeyWithValue(h1, recordOwner(app)), "the MyApp holds h1")
	g.Expect(w.routed(app)).To(Equal(sets.New(h1)))

	w.refuseHosts.Insert(h2)
	w.setHost(app, h2)
	w.settle(4, app)

	g.Expect(w.owners()).To(HaveKeyWithValue(h1, recordOwner(app)),
		"the old record stays while the Ingress cannot route the new host")
	g.Expect(w.routed(app)).To(Equal(sets.New(h1)), "and the Ingress still routes it")
	got := w.get(app)
	g.Expect(conditionOf(got, appsv1alpha1.ReadyCondition)).To(HaveValue(And(
		HaveField("Status", BeEquivalentTo("False")), HaveField("Reason", appsv1alpha1.ChildWriteFailedReason))),
		"the refused route write is reported")

	// Reverting spec.host recovers: h1 held and routed, h2 not kept.
	w.setHost(app, h1)
	w.settle(4, app)
	g.Expect(w.owners()).To(HaveKeyWithValue(h1, recordOwner(app)))
	g.Expect(w.owners()).NotTo(HaveKey(h2), "the record the Ingress never routed is removed")
	g.Expect(w.routed(app)).To(Equal(sets.New(h1)))
	got = w.get(app)
	g.Expect(conditionOf(got, appsv1alpha1.DNSReadyCondition)).To(HaveValue(HaveField("Status", BeEquivalentTo("True"))))
	g.Expect(conditionOf(got, appsv1alpha1.ReadyCondition).Reason).NotTo(Equal(appsv1alpha1.ChildWriteFailedReason))
}

// TestHostRotationsConverge: MyApps rotate their hosts (x->h2, y->h3,
// z->h1 and longer or shorter cycles, in one namespace or across
// namespaces); each ends holding and routing its new host, and no host is
// ever routed by two Ingresses or by one whose MyApp does not hold it.
func TestHostRotationsConverge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		spreadN bool
	}{
		{"a swap of two", 2, false},
		{"a rotation of three", 3, false},
		{"a rotation of four across namespaces", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			apps := make([]*appsv1alpha1.MyApp, tc.n)
			hosts := make([]string, tc.n)
			for i := range tc.n {
				ns := "rot"
				if tc.spreadN {
					ns = "rot" + string(rune('a'+i))
				}
				hosts[i] = "h" + string(rune('1'+i)) + ".rot.example.com"
				apps[i] = worldApp(ns, "app"+string(rune('a'+i)), hosts[i])
			}
			w := newFakeWorld(t, apps...)
			w.settle(3, apps...)
			for i := range tc.n {
				g.Expect(ownsRecord(w.r.OwnerID, w.owners()[hosts[i]], apps[i])).To(BeTrue())
			}

			for i := range tc.n {
				w.setHost(apps[i], hosts[(i+1)%tc.n])
			}
			w.settle(6*tc.n, apps...)

			for i := range tc.n {
				want := hosts[(i+1)%tc.n]
				got := w.get(apps[i])
				g.Expect(ownsRecord(w.r.OwnerID, w.owners()[want], apps[i])).To(BeTrue(), "%s holds %s: %v", apps[i].Name, want, w.owners())
				g.Expect(w.routed(apps[i])).To(Equal(sets.New(want)), "%s routes %s", apps[i].Name, want)
				g.Expect(conditionOf(got, appsv1alpha1.DNSReadyCondition)).To(HaveValue(
					HaveField("Status", BeEquivalentTo("True"))), "%s: %v", apps[i].Name,
					conditionOf(got, appsv1alpha1.DNSReadyCondition))
			}
		})
	}
}

// TestOrphanMyAppDeletedDuringAnOutageKeepsItsRecordFromTheSweep: a MyApp
// with deletionPolicy Orphan from its creation is deleted while the DNS
// service fails; once it is gone and the service answers, the orphan sweep
// runs. The record the user asked to keep is still there.
func TestOrphanMyAppDeletedDuringAnOutageKeepsItsRecordFromTheSweep(t *testing.T) {
	g := NewWithT(t)
	const host = "kept.orphan.example.com"
	app := worldApp("orphan", "kept", host, fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
	w := newFakeWorld(t, app)
	w.settle(3, app)
	g.Expect(w.owners()).To(HaveKey(host))

	g.Expect(w.c.Delete(t.Context(), w.get(app))).To(Succeed())
	w.dns.sim.SetOutage(simulator.ServiceDNS, true)
	for range 5 {
		if w.get(app) == nil {
			break
		}
		_ = w.pass(app)
	}
	w.dns.sim.SetOutage(simulator.ServiceDNS, false)
	// Whether the deletion waited out the outage or was safe to finish, it
	// finishes once the service answers.
	for range 5 {
		if w.get(app) == nil {
			break
		}
		_ = w.pass(app)
	}
	g.Expect(w.get(app)).To(BeNil(), "the MyApp is gone")

	sweeper := &OrphanSweeper{DNS: w.dns.client, Reader: w.c, Pace: 0, Log: logr.Discard(), OwnerID: w.r.OwnerID}
	_, err := sweeper.sweepOnce(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	recs := w.dns.records(host)
	g.Expect(recs).To(HaveLen(1), "the sweep left the record the user asked to keep")
	g.Expect(strings.HasPrefix(recs[0].Owner, orphanedOwnerPrefix)).To(BeTrue(), "owner %q is marked orphaned", recs[0].Owner)
}

// TestAStaleStatusAndAFailingServiceNeverRouteAReleasedHost (audit S2): after
// a swap, the status a pass starts from still shows the host this MyApp
// handed over (a lost status write, or a cache behind), and the DNS service
// fails, so the DNS phase decides nothing. The Ingress must not route the
// host the other MyApp now holds: the children phase never adds a route.
func TestAStaleStatusAndAFailingServiceNeverRouteAReleasedHost(t *testing.T) {
	g := NewWithT(t)
	h1, h2 := "h1.s2.example.com", "h2.s2.example.com"
	a, b := worldApp("s2", "a", h1), worldApp("s2", "b", h2)
	w := newFakeWorld(t, a, b)
	w.settle(3, a, b)
	w.setHost(a, h2)
	w.setHost(b, h1)
	w.settle(12, a, b)
	g.Expect(w.owners()).To(HaveKeyWithValue(h2, recordOwner(a)))
	g.Expect(w.owners()).To(HaveKeyWithValue(h1, recordOwner(b)))

	// a's status goes back to showing h1 held, and the service fails.
	stale := w.get(a)
	orig := stale.DeepCopy()
	stale.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: h1, Type: "A", Value: defaultTarget, Owner: recordOwner(a),
		State: appsv1alpha1.DNSRecordActive, LastObservedState: appsv1alpha1.DNSRecordActive}
	g.Expect(w.c.Status().Patch(t.Context(), stale, client.MergeFrom(orig))).To(Succeed())
	w.r.dnsChecks.forget(client.ObjectKeyFromObject(a))
	w.dns.sim.SetOutage(simulator.ServiceDNS, true)
	_ = w.pass(a)
	w.dns.sim.SetOutage(simulator.ServiceDNS, false)

	g.Expect(w.routed(a).Has(h1)).To(BeFalse(), "a never routes the host b holds")
	w.checkRoutes(a, b)
}

// TestHostMoveUnderStaleReadsReleasesTheOldRecord: while the DNS service
// answers 404 to reads of records created moments ago (read-after-create-404,
// docs/external-api.md), a host move still ends with the old record deleted:
// the old host, read as absent, is unrouted and released by an owner-checked
// Delete, not forgotten (B8 in docs/reliability.md).
func TestHostMoveUnderStaleReadsReleasesTheOldRecord(t *testing.T) {
	g := NewWithT(t)
	const ns = "stale"
	h1, h2 := "web.stale.example.com", "moved.stale.example.com"
	app := worldApp(ns, "web", h1)
	w := newFakeWorld(t, app)
	// Every record this test creates reads as absent for its whole run.
	w.dns.sim.SetConsistencyDelay(simulator.ServiceDNS, time.Hour)
	w.settle(3, app)
	g.Expect(w.owners()).To(HaveKeyWithValue(h1, recordOwner(app)), "the MyApp holds h1")
	g.Expect(w.routed(app)).To(Equal(sets.New(h1)))

	w.setHost(app, h2)
	w.settle(5, app)

	g.Expect(w.owners()).To(HaveKeyWithValue(h2, recordOwner(app)), "the MyApp holds its new host")
	g.Expect(w.owners()).NotTo(HaveKey(h1), "the old record is deleted, though its reads answered 404")
	g.Expect(w.routed(app)).To(Equal(sets.New(h2)))
	got := w.get(app)
	g.Expect(got.Status.DNS).NotTo(BeNil())
	g.Expect(got.Status.DNS.Name).To(Equal(h2))
	g.Expect(got.Status.DNS.Previous).To(BeEmpty())
}

// TestDeletionUnderStaleReadsDeletesTheRecord: a MyApp deleted while its
// record still reads as absent deletes it with its owner before the
// finalizer goes.
func TestDeletionUnderStaleReadsDeletesTheRecord(t *testing.T) {
	g := NewWithT(t)
	const ns = "stale-delete"
	h1 := "web.stale-delete.example.com"
	app := worldApp(ns, "web", h1)
	w := newFakeWorld(t, app)
	w.dns.sim.SetConsistencyDelay(simulator.ServiceDNS, time.Hour)
	w.settle(3, app)
	g.Expect(w.owners()).To(HaveKeyWithValue(h1, recordOwner(app)), "the MyApp holds h1")

	g.Expect(w.c.Delete(context.Background(), w.get(app))).To(Succeed())
	w.settle(2, app)
	g.Expect(w.get(app)).To(BeNil(), "the MyApp is gone")
	g.Expect(w.owners()).NotTo(HaveKey(h1), "its record is deleted, though its reads answered 404")
	g.Expect(deletedEvents(w)).To(Equal(1), "one event for the one record deleted")
}

// deletedEvents counts the "Deleted DNS record" events w's recorder took.
func deletedEvents(w *fakeWorld) int {
	n := 0
	for len(w.events.Events) > 0 {
		if e := <-w.events.Events; strings.Contains(e, "Deleted DNS record") {
			n++
		}
	}
	return n
}

// TestDeletionUnderStaleReadsDeletesARecordWrittenMarked: a MyApp created
// with deletionPolicy Orphan writes its record marked orphaned; set to
// Delete and deleted while that record still reads as absent, it deletes the
// record under the marked owner too, instead of taking the refusal of a
// Delete under its unmarked owner for another owner's record and leaving
// it (a marked record the orphan sweep never deletes).
func TestDeletionUnderStaleReadsDeletesARecordWrittenMarked(t *testing.T) {
	g := NewWithT(t)
	const ns = "stale-delete-marked"
	h1 := "web.stale-delete-marked.example.com"
	app := worldApp(ns, "web", h1, fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
	w := newFakeWorld(t, app)
	w.dns.sim.SetConsistencyDelay(simulator.ServiceDNS, time.Hour)
	w.settle(3, app)
	g.Expect(w.owners()).To(HaveKeyWithValue(h1, orphanedRecordOwnerOf(testOwnerID, w.get(app))), "the record is written marked")

	got := w.get(app)
	got.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete
	got.Generation++
	g.Expect(w.c.Update(context.Background(), got)).To(Succeed())
	g.Expect(w.c.Delete(context.Background(), w.get(app))).To(Succeed())
	w.settle(2, app)
	g.Expect(w.get(app)).To(BeNil(), "the MyApp is gone")
	g.Expect(w.owners()).NotTo(HaveKey(h1), "its record is deleted, though it was written marked and its reads answered 404")
	g.Expect(deletedEvents(w)).To(Equal(1), "one event for the one record deleted")
}
