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

	. "github.com/onsi/gomega"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// upsertCounter counts the writes a DNS client makes.
type upsertCounter struct {
	dns.Client
	upserts atomic.Int32
}

func (c *upsertCounter) Upsert(ctx context.Context, rec dns.Record) (dns.Record, error) {
	c.upserts.Add(1)
	return c.Client.Upsert(ctx, rec)
}

// TestAClearedLoadBalancerAddressKeepsTheRecord (issue 32, item 7): with
// --dns-default-target set, the default is what a record points at only
// before its Ingress's first load-balancer address. Ingress controllers
// clear that address when they stop (external-dns #414, #1289); a record
// that points at an address keeps it then, so a controller restart makes
// no DNS write, and none when the address comes back.
func TestAClearedLoadBalancerAddressKeepsTheRecord(t *testing.T) {
	g := NewWithT(t)
	const host, lb = "web.lb.example.com", "203.0.113.7"
	app := worldApp("lb", "web", host)
	w := newFakeWorld(t, app)
	counter := &upsertCounter{Client: w.dns.client}
	w.r.DNS = counter
	w.settle(2, app)
	g.Expect(w.dns.records(host)).To(ConsistOf(HaveField("Value", defaultTarget)), "before any address: the default")

	setAddress := func(ip string) {
		ing := &networkingv1.Ingress{}
		g.Expect(w.base.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
		ing.Status.LoadBalancer.Ingress = nil
		if ip != "" {
			ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: ip}}
		}
		g.Expect(w.base.Status().Update(t.Context(), ing)).To(Succeed())
	}
	setAddress(lb)
	w.settle(2, app)
	g.Expect(w.dns.records(host)).To(ConsistOf(HaveField("Value", lb)), "the record follows the first address")

	writes := counter.upserts.Load()
	setAddress("")
	w.settle(3, app)
	g.Expect(w.dns.records(host)).To(ConsistOf(HaveField("Value", lb)), "a cleared address keeps the record")
	setAddress(lb)
	w.settle(3, app)
	g.Expect(counter.upserts.Load()-writes).To(BeZero(), "the controller's restart cost no DNS write")
}

// TestAnIngressMissingFromTheCacheDoesNotRepointTheRecord: someone strips
// the managed-by label from a Ready MyApp's Ingress, so the label-scoped
// cache no longer shows it. The record keeps pointing at the load
// balancer, never at the default target, and the label comes back.
func TestAnIngressMissingFromTheCacheDoesNotRepointTheRecord(t *testing.T) {
	g := NewWithT(t)
	const host = "web.s1.example.com"
	app := worldApp("s1", "web", host)
	w := newFakeWorld(t, app)
	w.settle(2, app)
	ing := &networkingv1.Ingress{}
	g.Expect(w.base.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.5"}}
	g.Expect(w.base.Status().Update(t.Context(), ing)).To(Succeed())
	w.settle(2, app)
	g.Expect(w.dns.records(host)).To(ConsistOf(HaveField("Value", "203.0.113.5")))

	g.Expect(w.base.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
	delete(ing.Labels, ManagedByLabel)
	g.Expect(w.base.Update(t.Context(), ing)).To(Succeed())
	for range 3 {
		_ = w.pass(app)
		g.Expect(w.dns.records(host)).To(ConsistOf(HaveField("Value", "203.0.113.5")),
			"the record never points at the default target")
	}
	g.Expect(w.base.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
	g.Expect(ing.Labels).To(HaveKeyWithValue(ManagedByLabel, ManagedByValue), "the Ingress is repaired")
}
