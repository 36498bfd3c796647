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
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// newTestSweeper returns a sweeper that judges records by live reads through
// the tests' uncached client, quick enough for a test.
func newTestSweeper(interval time.Duration) *OrphanSweeper {
	return &OrphanSweeper{OwnerID: testOwnerID, DNS: dnsClient, Reader: k8sClient, Interval: interval, Pace: 10 * time.Millisecond, Log: logr.Discard()}
}

// startSweeper runs s as the manager would until the test ends.
func startSweeper(t *testing.T, s *OrphanSweeper) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Start(ctx); err != nil {
			t.Errorf("sweeper: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestSweepRemovesTheRecordOfAMyAppWhoseFinalizerWasRemovedByHand is the
// leak a new user runs into: during a DNS outage a deleted MyApp's finalizer
// is removed by hand, and the name is used again with another host. Nothing
// reconciles the old record any more; only the sweep can find it.
func TestSweepRemovesTheRecordOfAMyAppWhoseFinalizerWasRemovedByHand(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	oldHost, newHost := "old."+ns+".example.com", "new."+ns+".example.com"
	old := newMyApp(ns, "web", fixtures.WithHost(oldHost))
	createReadyMyApp(t, g, old)
	key := client.ObjectKeyFromObject(old)

	sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { sim.SetOutage(simulator.ServiceDNS, false) })
	g.Expect(k8sClient.Delete(t.Context(), old)).To(Succeed())
	eventuallyDNSReason(t, g, old, appsv1alpha1.DNSServiceUnavailableReason)
	g.Expect(k8sClient.Patch(t.Context(), old, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, timeout)

	recreated := newMyApp(ns, "web", fixtures.WithHost(newHost))
	g.Expect(k8sClient.Create(t.Context(), recreated)).To(Succeed())
	// The outage lasts until the controller works on the new MyApp, so no
	// retry of the old one (from a cache that still shows it) can clean up
	// after the service is back: the old record is now nobody's.
	eventuallyDNSReason(t, g, recreated, appsv1alpha1.DNSServiceUnavailableReason)
	g.Expect(recordsNamed(oldHost)).To(ConsistOf(HaveField("Owner", recordOwner(old))))
	removedBefore := testutil.ToFloat64(orphanedRecordsDeleted)
	startSweeper(t, newTestSweeper(time.Second))

	sim.SetOutage(simulator.ServiceDNS, false)
	eventuallyReady(t, g, recreated)
	g.Eventually(func() []simulator.Record { return recordsNamed(oldHost) }, timeout, interval).Should(BeEmpty(),
		"the sweep removes the record of the MyApp that is gone")
	g.Consistently(func() []simulator.Record { return recordsNamed(newHost) }, 2*time.Second, 200*time.Millisecond).
		Should(ConsistOf(And(HaveField("Owner", recordOwner(recreated)), HaveField("State", simulator.StateActive))),
			"the live MyApp's record is left alone, pass after pass")
	g.Expect(testutil.ToFloat64(orphanedRecordsDeleted) - removedBefore).To(BeNumerically(">=", 1))
}

// TestOrphanedRecordSurvivesTheSweep: a record left on purpose is handed to
// the orphaned owner when the MyApp goes, and the sweep never touches it.
func TestOrphanedRecordSurvivesTheSweep(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web", fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
	createReadyMyApp(t, g, app)
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, timeout)

	marked := "myapp-operator-orphaned/" + testOwnerID + "/" + ns + "/web/" + string(app.UID)
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(HaveField("Owner", marked)),
		"the record is marked as orphaned on purpose")
	_, err := newTestSweeper(time.Hour).sweepOnce(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(And(HaveField("Owner", marked), HaveField("State", simulator.StateActive))))
}

// TestSweepJudgesEachRecordByALiveRead seeds the service with records under
// every kind of owner and checks that one pass deletes exactly those of
// MyApps that are gone: one that never existed, and an earlier incarnation
// of a live MyApp's name.
func TestSweepJudgesEachRecordByALiveRead(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	live := newMyApp(ns, "live")
	createReadyMyApp(t, g, live)

	seed := func(name, owner string) string {
		host := name + "." + ns + ".example.com"
		_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: host, Type: dns.TypeA, Value: defaultTarget, TTL: 300, Owner: owner})
		g.Expect(err).NotTo(HaveOccurred())
		return host
	}
	mine := "myapp-operator/" + testOwnerID + "/" + ns
	gone := seed("gone", mine+"/ghost/0b7a4f60-0000-4000-8000-000000000001")
	earlier := seed("earlier", mine+"/live/0b7a4f60-0000-4000-8000-000000000002")
	malformed := seed("malformed", mine+"/not-an-owner")
	orphaned := seed("orphaned", "myapp-operator-orphaned/"+testOwnerID+"/"+ns+"/ghost/0b7a4f60-0000-4000-8000-000000000003")
	foreign := seed("foreign", "team-a")
	// Another installation's MyApp that this cluster does not have, and a
	// record written before owner IDs: neither is this sweep's to judge.
	otherInstallation := seed("other-installation", "myapp-operator/other-cluster/"+ns+"/ghost/0b7a4f60-0000-4000-8000-000000000004")
	legacy := seed("legacy", "myapp-operator/"+ns+"/ghost/0b7a4f60-0000-4000-8000-000000000005")
	removedBefore := testutil.ToFloat64(orphanedRecordsDeleted)

	removed, err := newTestSweeper(time.Hour).sweepOnce(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(BeNumerically(">=", 2), "other tests' leftovers may be swept too")
	g.Expect(testutil.ToFloat64(orphanedRecordsDeleted) - removedBefore).To(BeNumerically("==", removed))
	g.Expect(recordsNamed(gone)).To(BeEmpty())
	g.Expect(recordsNamed(earlier)).To(BeEmpty())
	g.Expect(recordsNamed(live.Spec.Host)).To(ConsistOf(HaveField("Owner", recordOwner(live))))
	for _, host := range []string{malformed, orphaned, foreign, otherInstallation, legacy} {
		g.Expect(recordsNamed(host)).To(HaveLen(1), "%s is not the sweep's to delete", host)
	}
}

// TestSweepStartsSpreadOut: after a start the first pass waits a random part
// of the interval, so managers restarted together do not sweep together.
func TestSweepStartsSpreadOut(t *testing.T) {
	g := NewWithT(t)
	seen := map[time.Duration]bool{}
	for range 50 {
		d := firstSweepDelay(time.Hour)
		g.Expect(d).To(And(BeNumerically(">=", 30*time.Minute), BeNumerically("<", time.Hour)))
		seen[d] = true
	}
	g.Expect(len(seen)).To(BeNumerically(">", 1), "the delay is drawn, not fixed")
	g.Expect((&OrphanSweeper{}).NeedLeaderElection()).To(BeTrue(), "only the leader sweeps")
}

func TestParseRecordOwner(t *testing.T) {
	tests := []struct {
		owner        string
		ok           bool
		installation string
		key          string
		orphaned     bool
	}{
		{owner: "myapp-operator/c1/shop/web/1234", ok: true, installation: "c1", key: "shop/web"},
		{owner: "myapp-operator-orphaned/c1/shop/web/1234", ok: true, installation: "c1", key: "shop/web", orphaned: true},
		{owner: "myapp-operator/shop/web/1234", ok: true, key: "shop/web"},
		{owner: "myapp-operator-orphaned/shop/web/1234", ok: true, key: "shop/web", orphaned: true},
		{owner: "myapp-operator/shop/web"},
		{owner: "myapp-operator/too/many/parts/here/now"},
		{owner: "myapp-operator//web/1234"},
		{owner: "myapp-operator//shop/web/1234"},
		{owner: "myapp-operatorx/shop/web/1234"},
		{owner: "external-dns/cluster-a"},
	}
	for _, tt := range tests {
		t.Run(tt.owner, func(t *testing.T) {
			g := NewWithT(t)
			ref, ok := parseRecordOwner(tt.owner)
			g.Expect(ok).To(Equal(tt.ok))
			if ok {
				g.Expect(ref.key.String()).To(Equal(tt.key))
				g.Expect(ref.uid).To(Equal(types.UID("1234")))
				g.Expect(ref.orphaned).To(Equal(tt.orphaned))
				g.Expect(ref.installation).To(Equal(tt.installation))
			}
		})
	}
	g := NewWithT(t)
	g.Expect(describeOwner("c1", "myapp-operator-orphaned/c1/shop/web/1234")).
		To(Equal("MyApp shop/web (uid 1234), deleted with deletionPolicy Orphan"))
}

// TestSweepReadsTheAPIServerByDefault: a sweeper set up without a Reader
// judges records by the manager's APIReader, never its cache, whose view
// of a just-created MyApp may lag the record that MyApp wrote.
func TestSweepReadsTheAPIServerByDefault(t *testing.T) {
	g := NewWithT(t)
	mgr, err := ctrl.NewManager(cp.Config, fixtures.ManagerOptions(ctrl.Options{Scheme: fixtures.Scheme()}))
	g.Expect(err).NotTo(HaveOccurred())
	s := &OrphanSweeper{OwnerID: testOwnerID, DNS: dnsClient, Interval: time.Hour}
	g.Expect(s.SetupWithManager(mgr)).To(Succeed())
	g.Expect(s.Reader).To(BeIdenticalTo(mgr.GetAPIReader()), "the live reader")
	g.Expect(s.Reader).NotTo(BeIdenticalTo(mgr.GetClient()), "not the cache-backed client")
}
