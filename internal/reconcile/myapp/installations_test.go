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
	"strings"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// twoInstallations are two clusters, each a fake world with a reconciler
// of its own, sharing one DNS simulator (audit F9).
func twoInstallations(t *testing.T, a, b []*appsv1alpha1.MyApp) (*fakeWorld, *fakeWorld) {
	t.Helper()
	wa := newFakeWorld(t, a...)
	wb := newFakeWorld(t, b...)
	wb.dns = wa.dns
	wb.r.DNS = wa.dns.client
	wa.r.ReplaceLeakedRecords, wb.r.ReplaceLeakedRecords = true, true
	wa.r.OwnerID, wb.r.OwnerID = "cluster-a", "cluster-b"
	return wa, wb
}

// TestTwoInstallationsNeverSweepEachOthersRecords: the same GitOps app
// (namespace and name) in two clusters on one DNS service, each with its own
// host. Each one's sweep finds the other's MyApp missing from its own API
// server; neither may delete the other's record.
func TestTwoInstallationsNeverSweepEachOthersRecords(t *testing.T) {
	g := NewWithT(t)
	inA := worldApp("shop", "web", "web-a.shop.example.com")
	inB := worldApp("shop", "web", "web-b.shop.example.com")
	onlyA := worldApp("shop", "api", "api-a.shop.example.com")
	wa, wb := twoInstallations(t, []*appsv1alpha1.MyApp{inA, onlyA}, []*appsv1alpha1.MyApp{inB})
	wa.settle(3, inA, onlyA)
	wb.settle(3, inB)
	owners := wa.owners()
	g.Expect(owners).To(HaveKey(inA.Spec.Host))
	g.Expect(owners).To(HaveKey(onlyA.Spec.Host))
	g.Expect(owners).To(HaveKey(inB.Spec.Host))

	for _, w := range []*fakeWorld{wa, wb} {
		sweeper := &OrphanSweeper{DNS: w.dns.client, Reader: w.c, Pace: 0, Log: logr.Discard(), OwnerID: w.r.OwnerID}
		removed, err := sweeper.sweepOnce(t.Context())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(removed).To(BeZero(), "installation %s deleted another installation's records", w.r.OwnerID)
	}
	g.Expect(wa.owners()).To(Equal(owners), "every record is where it was, with its owner")
}

// TestTwoInstallationsWantingOneHostConflict: the same app with the same
// host in two clusters. The second is in HostConflict naming the first
// installation; neither replaces the other's record as a leak, pass after
// pass.
func TestTwoInstallationsWantingOneHostConflict(t *testing.T) {
	g := NewWithT(t)
	const host = "web.shop.example.com"
	inA := worldApp("shop", "web", host)
	inB := worldApp("shop", "web", host)
	wa, wb := twoInstallations(t, []*appsv1alpha1.MyApp{inA}, []*appsv1alpha1.MyApp{inB})
	wa.settle(3, inA)
	first := wa.owners()[host]
	g.Expect(first).NotTo(BeEmpty())
	for range 3 {
		wb.settle(1, inB)
		wa.settle(1, inA)
		g.Expect(wa.owners()).To(HaveKeyWithValue(host, first), "the first installation keeps its record")
	}
	cond := conditionOf(wb.get(inB), appsv1alpha1.DNSReadyCondition)
	g.Expect(cond).NotTo(BeNil())
	g.Expect(cond.Reason).To(Equal(appsv1alpha1.HostConflictReason))
	g.Expect(cond.Message).To(ContainSubstring("of another installation (owner ID cluster-a)"), "it names the first installation")
}

// TestRecordsWrittenBeforeOwnerIDsAreTakenOverOnce: an upgrade from a
// version without owner IDs. The MyApp whose namespace, name and UID the
// old owner names takes its record over on its next pass, once, with an
// event; the same app in another cluster (same namespace and name, another
// UID) does not take it, and neither sweep deletes it.
func TestRecordsWrittenBeforeOwnerIDsAreTakenOverOnce(t *testing.T) {
	g := NewWithT(t)
	const host = "web.shop.example.com"
	inA := worldApp("shop", "web", host)
	inB := worldApp("shop", "web", host)
	legacy := "myapp-operator/shop/web/" + string(inA.UID)
	inA.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: host, Type: "A", Value: defaultTarget, Owner: legacy,
		State: appsv1alpha1.DNSRecordActive, LastObservedState: appsv1alpha1.DNSRecordActive}
	wa, wb := twoInstallations(t, []*appsv1alpha1.MyApp{inA}, []*appsv1alpha1.MyApp{inB})
	wa.dns.seedActive(t, g, host, defaultTarget, legacy)

	// The other cluster's MyApp of the same name comes first: the old
	// record is not its own (another UID), nor an earlier MyApp of its
	// installation, so it waits in HostConflict.
	wb.settle(2, inB)
	g.Expect(wa.owners()).To(HaveKeyWithValue(host, legacy))
	g.Expect(conditionOf(wb.get(inB), appsv1alpha1.DNSReadyCondition).Reason).To(Equal(appsv1alpha1.HostConflictReason))
	for _, w := range []*fakeWorld{wa, wb} {
		removed, err := (&OrphanSweeper{DNS: w.dns.client, Reader: w.c, Log: logr.Discard(), OwnerID: w.r.OwnerID}).
			sweepOnce(t.Context())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(removed).To(BeZero(), "no sweep deletes a record written before owner IDs")
	}

	wa.settle(3, inA)
	g.Expect(wa.owners()).To(HaveKeyWithValue(host, recordOwnerOf("cluster-a", inA)), "taken over with the owner ID")
	g.Expect(wa.get(inA).Status.DNS.Owner).To(Equal(recordOwnerOf("cluster-a", inA)))
	migrations := 0
	for _, e := range recordedEvents(wa.events) {
		if strings.Contains(e, "MigrateDNSRecord") || strings.Contains(e, "written before owner IDs") {
			migrations++
		}
	}
	g.Expect(migrations).To(Equal(1), "one event, for the one takeover")
	wb.settle(2, inB)
	g.Expect(wa.owners()).To(HaveKeyWithValue(host, recordOwnerOf("cluster-a", inA)))
	g.Expect(conditionOf(wb.get(inB), appsv1alpha1.DNSReadyCondition).Reason).To(Equal(appsv1alpha1.HostConflictReason))
}

// testOwnerID is the owner ID of the tests' installation.
const testOwnerID = "test-cluster"

// recordOwner and orphanedRecordOwner are app's owners in the tests'
// installation.
func recordOwner(app *appsv1alpha1.MyApp) string { return recordOwnerOf(testOwnerID, app) }

func orphanedRecordOwner(app *appsv1alpha1.MyApp) string {
	return orphanedRecordOwnerOf(testOwnerID, app)
}
