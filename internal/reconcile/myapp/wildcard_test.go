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
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/miekg/dns"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
)

// TestMyAppsBecomeReadyInAZoneWithAWildcard (issue 32 item 3, G4): in a
// zone whose apex has a wildcard (a CNAME to an ingress; an A with an SPF
// TXT), new MyApps get their records and become Ready, where every name
// used to read as held by (unmanaged); a MyApp whose host has a record
// written by hand at that exact name is still in HostConflict. Each zone is
// a BIND of its own with a manager of its own, whose MyApps carry the label
// the suite's HTTP manager leaves to such managers (httpBackendCache).
func TestMyAppsBecomeReadyInAZoneWithAWildcard(t *testing.T) {
	controlplane.RequireBIND(t, rfc2136Err)
	for _, zone := range []struct{ name, seed string }{
		{"CNAME", "* IN CNAME lb.example.net.\n"},
		{"A and TXT", "* IN A 198.51.100.80\n* IN TXT \"v=spf1 -all\"\n"},
	} {
		t.Run(zone.name, func(t *testing.T) {
			g := NewWithT(t)
			b, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{
				Seed: func(w io.Writer) error { _, err := io.WriteString(w, zone.seed); return err },
			})
			g.Expect(err).NotTo(HaveOccurred())
			t.Cleanup(func() { _ = b.Close() })
			key, err := rfc2136.ParseKey(b.Key())
			g.Expect(err).NotTo(HaveOccurred())
			c, err := rfc2136.New(rfc2136.Config{Server: b.Addr, Zone: b.Zone, Key: rfc2136.StaticKey(key), Timeout: time.Second})
			g.Expect(err).NotTo(HaveOccurred())
			_, stop, err := startManager(cp, "wildcard", cache.Options{ByObject: map[client.Object]cache.ByObject{
				&appsv1alpha1.MyApp{}: {Label: labels.SelectorFromSet(labels.Set{dnsBackendLabel: listDriftBackend})},
			}}, func(ctrl.Manager) *Reconciler {
				return &Reconciler{OwnerID: testOwnerID, DNS: c, DefaultTarget: defaultTarget,
					PendingPollInterval: 200 * time.Millisecond, DriftCheckInterval: driftCheckInterval}
			})
			g.Expect(err).NotTo(HaveOccurred())
			t.Cleanup(stop)

			ns := newNamespace(t)
			for i := range 2 {
				app := newMyApp(ns, fmt.Sprintf("web-%d", i))
				app.Labels = map[string]string{dnsBackendLabel: listDriftBackend}
				createReadyMyApp(t, g, app)
				rec, err := c.Get(t.Context(), app.Spec.Host)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(rec.Value).To(Equal(defaultTarget), "%s holds its own record, not the wildcard's", app.Spec.Host)
				deleteAndWait(t, g, app)
				_, err = c.Get(t.Context(), app.Spec.Host)
				g.Expect(err).To(MatchError(external.ErrNotFound), "its record went with it")
			}

			taken := newMyApp(ns, "taken")
			taken.Labels = map[string]string{dnsBackendLabel: listDriftBackend}
			update := new(dns.Msg)
			update.SetUpdate(dns.Fqdn(b.Zone))
			rr, err := dns.NewRR(taken.Spec.Host + ". 300 IN A 203.0.113.5")
			g.Expect(err).NotTo(HaveOccurred())
			update.Insert([]dns.RR{rr})
			update.SetTsig(dns.Fqdn(b.KeyName), dns.HmacSHA256, 300, time.Now().Unix())
			r, _, err := (&dns.Client{Net: "tcp", TsigSecret: map[string]string{dns.Fqdn(b.KeyName): b.KeySecret}}).Exchange(update, b.Addr)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.Rcode).To(Equal(dns.RcodeSuccess), "a record written by hand")
			g.Expect(k8sClient.Create(t.Context(), taken)).To(Succeed())
			eventuallyDNSReason(t, g, taken, appsv1alpha1.HostConflictReason)
			deleteAndWait(t, g, taken)
			rec, err := c.Get(t.Context(), taken.Spec.Host)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rec.Owner).To(Equal(extdns.UnmanagedOwner), "the record written by hand stays")
		})
	}
}

// deleteAndWait deletes app and waits until it is gone, which its
// finalizer lets happen once its manager has removed its record, if any.
func deleteAndWait(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) {
	t.Helper()
	g.Expect(k8sClient.Delete(context.WithoutCancel(t.Context()), app)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, timeout, "%s is deleted", app.Name)
}
