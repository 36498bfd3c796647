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
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// D1 (issue 39), the reconciler's half. On a webhook provider that cannot
// replace a record set in one batch (external-dns's inmemory, as every
// provider the project tests), a transfer deletes the owner TXT in one
// batch and writes the new one in a second. Here every second batch for
// the host fails, as a provider that went away between them does: the
// name keeps its address and no owner, which no other writer may take (a
// MyApp that wants the host meanwhile reads a conflict). The MyApp recorded
// the transfer in status.dnsTransfer before the first batch, so once the
// provider takes batches again its next pass finishes the transfer toward
// the receiver it had chosen. Before the fix the name stayed ownerless for
// good: the giver read it as no one's it could take. A reader polls the
// name every 100 ms throughout: it never lacks its address.
func TestACutTransferIsFinishedByTheNextPass(t *testing.T) {
	b := dnsBackends()[2]
	b.require(t)
	t.Run("OrphanMark", func(t *testing.T) {
		g := NewWithT(t)
		app := newMyApp(newNamespace(t), "web", b.route)
		createReadyMyApp(t, g, app)
		host := app.Spec.Host
		reader := readEvery100ms(t, host)
		cutSecondBatches(t, host)

		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		app.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyOrphan
		g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
		self := selfOf(testOwnerID, app)
		waitForCut(t, g, b, app, self.Owner(), self.Orphaned())

		// Meanwhile another MyApp asks for the host: the name is no one's
		// it may take.
		thief := newMyApp(newNamespace(t), "thief", b.route, fixtures.WithHost(host))
		g.Expect(k8sClient.Create(t.Context(), thief)).To(Succeed())
		eventuallyDNSReason(t, g, thief, appsv1alpha1.HostConflictReason)

		webhookProxyRefuse.Store(nil)
		g.Eventually(func(g Gomega) {
			g.Expect(b.recordOf(t, host)).To(HaveField("Owner", self.Orphaned()))
			g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.DNSTransfer).To(BeNil())
		}, timeout, interval).Should(Succeed(), "the next pass finishes the mark")
		g.Expect(eventReasons(t, app.Namespace, app.Name)).To(ContainElement(eventDNSRecordHandedOver))
		eventuallyReady(t, g, app)
		g.Consistently(func() string {
			_ = k8sClient.Get(t.Context(), client.ObjectKeyFromObject(thief), thief)
			return conditionOf(thief, appsv1alpha1.DNSReadyCondition).Reason
		}, time.Second, interval).Should(Equal(appsv1alpha1.HostConflictReason))
		reader.expectNoMiss(t)
	})
	t.Run("HandOver", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		giver := newMyApp(ns, "giver", b.route)
		createReadyMyApp(t, g, giver)
		host := giver.Spec.Host
		receiver := newMyApp(ns, "receiver", b.route, fixtures.WithHost(host))
		g.Expect(k8sClient.Create(t.Context(), receiver)).To(Succeed())
		eventuallyDNSReason(t, g, receiver, appsv1alpha1.HostConflictReason)
		reader := readEvery100ms(t, host)
		cutSecondBatches(t, host)

		// The giver moves to another host and hands its old one to the
		// MyApp that waits for it.
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(giver), giver)).To(Succeed())
		giver.Spec.Host = "moved-" + host
		g.Expect(k8sClient.Update(t.Context(), giver)).To(Succeed())
		waitForCut(t, g, b, giver, selfOf(testOwnerID, giver).Owner(), selfOf(testOwnerID, receiver).Owner())

		webhookProxyRefuse.Store(nil)
		g.Eventually(func(g Gomega) {
			g.Expect(b.recordOf(t, host)).To(HaveField("Owner", selfOf(testOwnerID, receiver).Owner()))
		}, timeout, interval).Should(Succeed(), "the giver's next pass finishes the hand-over")
		eventuallyReady(t, g, receiver)
		eventuallyReady(t, g, giver)
		g.Expect(giver.Status.DNSTransfer).To(BeNil())
		reader.expectNoMiss(t)
	})
}

// cutSecondBatches makes the webhook proxy fail, until the test ends or
// webhookProxyRefuse is cleared, every batch that only creates TXT
// records at host: the second batch of a transfer.
func cutSecondBatches(t *testing.T, host string) {
	refuse := func(ch webhook.Changes) bool {
		if len(ch.Delete) > 0 || len(ch.UpdateOld) > 0 || len(ch.UpdateNew) > 0 || len(ch.Create) == 0 {
			return false
		}
		for _, e := range ch.Create {
			if e.RecordType != "TXT" || !strings.Contains(e.DNSName, host) {
				return false
			}
		}
		return true
	}
	webhookProxyRefuse.Store(&refuse)
	t.Cleanup(func() { webhookProxyRefuse.Store(nil) })
}

// waitForCut waits until app has recorded the transfer of its host from
// from to to, and the name reads as its first batch leaves it: the address
// and no owner.
func waitForCut(t *testing.T, g *WithT, b dnsBackend, app *appsv1alpha1.MyApp, from, to string) {
	t.Helper()
	host := app.Spec.Host
	if app.Status.DNS != nil && app.Status.DNS.Name != "" {
		host = app.Status.DNS.Name
	}
	defer func() {
		if t.Failed() {
			t.Logf("record %+v\nstatus %+v\nevents %v", b.recordOf(t, host), app.Status, eventReasons(t, app.Namespace, app.Name))
		}
	}()
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Status.DNSTransfer).To(Equal(&appsv1alpha1.DNSTransferStatus{Name: host, From: from, To: to}))
		g.Expect(b.recordOf(t, host)).To(And(HaveField("Owner", extdns.UnmanagedOwner), HaveField("Value", defaultTarget)))
	}, timeout, interval).Should(Succeed(), "the transfer is recorded and cut between its batches")
}

// nameReader polls a name's A record in the webhook server's zone.
type nameReader struct {
	reads, misses atomic.Int64
	stop          func()
}

// readEvery100ms reads host's A record every 100 ms until the test ends
// or expectNoMiss is called, counting the reads that found none.
func readEvery100ms(t *testing.T, host string) *nameReader {
	ctx, cancel := context.WithCancel(t.Context())
	r := &nameReader{}
	done := make(chan struct{})
	r.stop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			values, err := webhookZoneValues(ctx, host)
			if ctx.Err() != nil {
				return
			}
			r.reads.Add(1)
			if err != nil || !slices.Contains(values, defaultTarget) {
				r.misses.Add(1)
			}
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// expectNoMiss stops the reader and fails the test if a read found the
// name without its address.
func (r *nameReader) expectNoMiss(t *testing.T) {
	t.Helper()
	r.stop()
	t.Logf("the 100 ms reader read the name %d times, %d without its address", r.reads.Load(), r.misses.Load())
	if r.reads.Load() == 0 || r.misses.Load() > 0 {
		t.Errorf("the name lacked its address in %d of %d reads", r.misses.Load(), r.reads.Load())
	}
}
