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

	. "github.com/onsi/gomega"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestAConflictWithALiveOrphanPolicyMyAppNamesItLive (audit G6): records of
// a MyApp with deletionPolicy Orphan are written marked orphaned from the
// start, so the owner alone does not say whether that MyApp was deleted. A
// conflict with a live one names it as live, with its policy, and never
// calls it deleted: that would invite a person to delete a live app's
// record by hand.
func TestAConflictWithALiveOrphanPolicyMyAppNamesItLive(t *testing.T) {
	g := NewWithT(t)
	const host = "www.g6.example.com"
	holder := worldApp("g6-shop", "a", host, fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
	wanter := worldApp("g6-blog", "b", host)
	w := newFakeWorld(t, holder)
	w.settle(2, holder)
	w.add(wanter)
	w.settle(2, holder, wanter)

	cond := conditionOf(w.get(wanter), appsv1alpha1.DNSReadyCondition)
	g.Expect(cond).To(HaveValue(HaveField("Reason", appsv1alpha1.HostConflictReason)))
	g.Expect(cond.Message).To(ContainSubstring("MyApp g6-shop/a"))
	g.Expect(cond.Message).NotTo(ContainSubstring("deleted"), "the holder lives: %s", cond.Message)
	g.Expect(cond.Message).To(ContainSubstring("deletionPolicy Orphan"), "its policy is named: %s", cond.Message)
}

// TestDNSFailureWordsDoNotChurn: each kind of DNS error has its DNSReady
// reason, and advice in fixed words, so the condition does not change with
// the details of each failure (which go to the log).
func TestDNSFailureWordsDoNotChurn(t *testing.T) {
	cases := []struct {
		kind       error
		wantReason string
	}{
		{external.ErrThrottled, appsv1alpha1.DNSThrottledReason},
		{external.ErrUnauthorized, appsv1alpha1.DNSUnauthorizedReason},
		{external.ErrInvalid, appsv1alpha1.DNSRequestRejectedReason},
		{external.ErrTransient, appsv1alpha1.DNSServiceUnavailableReason},
		{fmt.Errorf("dial tcp: connection refused"), appsv1alpha1.DNSServiceUnavailableReason},
	}
	for _, tc := range cases {
		t.Run(tc.wantReason+"/"+tc.kind.Error(), func(t *testing.T) {
			g := NewWithT(t)
			err := fmt.Errorf("calling the DNS service: %w", tc.kind)
			reason := dnsReasons.For(err)
			advice := failureAdvice(observation{}, dnsplan.Failure{Reason: reason})
			g.Expect(reason).To(Equal(tc.wantReason))
			// The advice is fixed text, so the condition does not churn with
			// the details of each failure.
			g.Expect(advice).NotTo(ContainSubstring(tc.kind.Error()))
		})
	}
}

// TestDescribeOwner: an owner is named as what it says, without knowing
// whether its MyApp lives (a conflict's message names the live ones).
func TestDescribeOwner(t *testing.T) {
	g := NewWithT(t)
	g.Expect(describeOwner("here", "myapp-operator/here/shop/web/1234")).To(Equal("MyApp shop/web (uid 1234)"))
	g.Expect(describeOwner("here", "myapp-operator/there/shop/web/1234")).
		To(Equal("MyApp shop/web (uid 1234) of another installation (owner ID there)"))
	g.Expect(describeOwner("here", "myapp-operator/shop/web/1234")).
		To(Equal("MyApp shop/web (uid 1234), written before owner IDs (installation unknown)"))
	g.Expect(describeOwner("here", "myapp-operator-orphaned/there/shop/web/1234")).
		To(Equal("MyApp shop/web (uid 1234) of another installation (owner ID there), deleted with deletionPolicy Orphan"))
	g.Expect(describeOwner("here", "external-dns/cluster-a")).To(Equal(`owner "external-dns/cluster-a"`))
	g.Expect(describeOwner("here", "myapp-operator/too/many/parts/here/now")).
		To(Equal(`owner "myapp-operator/too/many/parts/here/now"`))
}

// TestALostRaceIsNamedOnALastWriterWinsProvider: on a provider that applies
// every write unconditionally, a MyApp's record can be overwritten by
// another writer between the read before its write and the write; the read
// after it finds the other owner. DNSReady (and the Warning event) then say
// the record was overwritten and that the provider is last-writer-wins, so
// the user knows the conflict was detected, not prevented. On an atomic
// provider the same conflict (a record replaced behind the operator's back)
// says nothing of the provider.
func TestALostRaceIsNamedOnALastWriterWinsProvider(t *testing.T) {
	for name, class := range map[string]dnsplan.Class{"Atomic": dnsplan.ClassAtomic, "LastWriterWins": dnsplan.ClassLastWriterWins} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			const host = "www.lww.example.com"
			app := worldApp("lww", "web", host)
			w := newFakeWorld(t, app)
			w.r.DNSClass = class
			w.settle(2, app)
			owner := w.owners()[host]
			g.Expect(ownsRecord(testOwnerID, owner, w.get(app))).To(BeTrue(), "the MyApp holds its host first")

			// Another writer's write lands over the MyApp's, as a provider
			// without conditions lets it; a requested pass reads it.
			g.Expect(w.dns.client.Delete(t.Context(), host, owner)).To(Succeed())
			const writer = "external-dns/team-b"
			_, err := w.dns.client.Upsert(t.Context(), dns.Record{Name: host, Type: dns.TypeA, Value: "192.0.2.66", TTL: 300, Owner: writer})
			g.Expect(err).NotTo(HaveOccurred())
			requestFakeReconcile(t, w, app, "1")
			_ = w.pass(app)

			cond := conditionOf(w.get(app), appsv1alpha1.DNSReadyCondition)
			g.Expect(cond).To(HaveValue(HaveField("Reason", appsv1alpha1.HostConflictReason)))
			g.Expect(cond.Message).To(ContainSubstring(writer))
			warning := lastEvent(w)
			if class == dnsplan.ClassAtomic {
				g.Expect(cond.Message).NotTo(Or(ContainSubstring("last-writer-wins"), ContainSubstring("overwritten")), cond.Message)
				return
			}
			g.Expect(cond.Message).To(And(ContainSubstring("this MyApp's record was overwritten by that writer"),
				ContainSubstring("last-writer-wins"), ContainSubstring("docs/webhook.md")), cond.Message)
			g.Expect(warning).To(And(ContainSubstring("Warning HostConflict"), ContainSubstring("overwritten")),
				"the event keeps the lost race once the status shows the conflict alone")

			// The next read finds the conflict standing: the MyApp no longer
			// held the host, so it lost no race then, and the message keeps
			// the provider's class.
			requestFakeReconcile(t, w, app, "2")
			_ = w.pass(app)
			cond = conditionOf(w.get(app), appsv1alpha1.DNSReadyCondition)
			g.Expect(cond.Message).To(ContainSubstring("last-writer-wins"), cond.Message)
			g.Expect(cond.Message).NotTo(ContainSubstring("overwritten"), cond.Message)
		})
	}
}

// requestFakeReconcile sets reconcile.myapp.dev/requested-at on app in the
// fake world, as a user asking for a read does.
func requestFakeReconcile(t *testing.T, w *fakeWorld, app *appsv1alpha1.MyApp, value string) {
	t.Helper()
	got := w.get(app)
	if got.Annotations == nil {
		got.Annotations = map[string]string{}
	}
	got.Annotations[appsv1alpha1.ReconcileRequestAnnotation] = value
	NewWithT(t).Expect(w.c.Update(t.Context(), got)).To(Succeed())
}

// lastEvent is the last event the fake world's reconciler sent, "" for
// none; the events before it are dropped.
func lastEvent(w *fakeWorld) string {
	last := ""
	for {
		select {
		case e := <-w.events.Events:
			last = e
		default:
			return last
		}
	}
}
