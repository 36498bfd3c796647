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

	. "github.com/onsi/gomega"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// notServedDNS is a DNS client whose provider does not serve the names
// under suffix, as the webhook client answers for a name outside the
// provider's domain filter.
type notServedDNS struct {
	dns.Client
	suffix string
}

func (d notServedDNS) refuse(op, name string) error {
	if !strings.HasSuffix(name, d.suffix) {
		return nil
	}
	return &external.Error{Kind: external.KindInvalid, Service: dns.ServiceName, Operation: op, Err: dns.ErrNotServed,
		Message: name + " is outside the webhook server's domain filter (include example.com; exclude corp.example.com)"}
}

func (d notServedDNS) Get(ctx context.Context, name string) (dns.Record, error) {
	if err := d.refuse("get", name); err != nil {
		return dns.Record{}, err
	}
	return d.Client.Get(ctx, name)
}

func (d notServedDNS) Upsert(ctx context.Context, rec dns.Record) (dns.Record, error) {
	if err := d.refuse("upsert", rec.Name); err != nil {
		return dns.Record{}, err
	}
	return d.Client.Upsert(ctx, rec)
}

func (d notServedDNS) Delete(ctx context.Context, name, owner string) error {
	if err := d.refuse("delete", name); err != nil {
		return err
	}
	return d.Client.Delete(ctx, name, owner)
}

func (d notServedDNS) Transfer(ctx context.Context, name, from, to string) (dns.Record, error) {
	if err := d.refuse("transfer", name); err != nil {
		return dns.Record{}, err
	}
	return d.Client.Transfer(ctx, name, from, to)
}

// TestAHostTheProviderDoesNotServeSaysWhy (issue 39, D3): a host outside
// what the DNS provider serves (its domain filter, its zone) is refused by
// the client; the MyApp's DNSReady names what leaves it out, where it
// blamed --dns-default-target and the load balancer's address, and nothing
// is written. Deleted, such a MyApp goes at once: it never held the host.
// A record a narrowed filter hides is not counted as deleted: the deletion
// waits and says why.
func TestAHostTheProviderDoesNotServeSaysWhy(t *testing.T) {
	g := NewWithT(t)
	const ns = "not-served"
	app := worldApp(ns, "web", "web.corp.example.com")
	w := newFakeWorld(t, app)
	w.r.DNS = notServedDNS{Client: w.dns.client, suffix: ".corp.example.com"}
	w.settle(3, app)
	cond := conditionOf(w.get(app), appsv1alpha1.DNSReadyCondition)
	g.Expect(cond).To(HaveValue(HaveField("Reason", appsv1alpha1.DNSRequestRejectedReason)))
	g.Expect(cond.Message).To(ContainSubstring("outside the webhook server's domain filter (include example.com; exclude corp.example.com)"))
	g.Expect(cond.Message).NotTo(ContainSubstring("--dns-default-target"), "the message blames the filter, not the target")
	g.Expect(w.owners()).NotTo(HaveKey("web.corp.example.com"), "nothing is written")

	g.Expect(w.c.Delete(t.Context(), w.get(app))).To(Succeed())
	w.settle(2, app)
	g.Expect(w.get(app)).To(BeNil(), "a MyApp that never held the host goes at once")

	// A record written while the filter served it, then hidden by a
	// narrowed filter.
	held := worldApp(ns, "held", "held.blog.example.com")
	w.add(held)
	w.settle(3, held)
	g.Expect(w.owners()).To(HaveKeyWithValue("held.blog.example.com", recordOwner(held)))
	w.r.DNS = notServedDNS{Client: w.dns.client, suffix: ".blog.example.com"}
	g.Expect(w.c.Delete(t.Context(), w.get(held))).To(Succeed())
	w.settle(3, held)
	got := w.get(held)
	g.Expect(got).NotTo(BeNil(), "the deletion waits: the record is not counted as deleted")
	cond = conditionOf(got, appsv1alpha1.DNSReadyCondition)
	g.Expect(cond.Message).To(ContainSubstring("outside the webhook server's domain filter"), "and says why")
	g.Expect(w.owners()).To(HaveKeyWithValue("held.blog.example.com", recordOwner(held)), "the record stays")
}
