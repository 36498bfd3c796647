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
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// The MyApp lifecycle runs against every DNS backend (the HTTP service's
// simulator, RFC 2136 on BIND, external-dns's webhook server with its
// inmemory provider) from one table, so they stay equal. Each backend has its own manager; a label on the MyApp says
// which one reconciles it, and each manager's cache sees only its own.
const (
	dnsBackendLabel = "test.myapp.dev/dns-backend"
	rfc2136Backend  = "rfc2136"
)

// The RFC 2136 backend: a named, a client of it and the reconciler using it.
var (
	bind              *controlplane.BIND
	rfc2136Client     *rfc2136.Client
	rfc2136Reconciler *Reconciler
	// rfc2136Err says why there is no RFC 2136 backend (named is missing);
	// its tests fail with it, the others run.
	rfc2136Err error
)

// httpBackendCache keeps the suite's manager, the HTTP backend's, away from
// the MyApps of the RFC 2136 and webhook backends and of the drift-by-list
// manager (drift_list_test.go).
func httpBackendCache() cache.Options {
	notRFC2136, err := labels.Parse(dnsBackendLabel + " notin (" + rfc2136Backend + "," + webhookBackend + "," + listDriftBackend + ")")
	if err != nil {
		panic(err)
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{&appsv1alpha1.MyApp{}: {Label: notRFC2136}}}
}

// setupRFC2136Backend starts named and a second manager whose MyApp
// controller keeps records there.
func setupRFC2136Backend(cp *controlplane.ControlPlane) (func(), error) {
	var err error
	if bind, err = controlplane.StartBIND(context.Background(), controlplane.BINDOptions{Zone: "example.com"}); err != nil {
		rfc2136Err = err
		return func() {}, nil
	}
	key, err := rfc2136.ParseKey(bind.Key())
	if err != nil {
		return nil, err
	}
	if rfc2136Client, err = rfc2136.New(rfc2136.Config{
		Server: bind.Addr, Zone: bind.Zone, Key: rfc2136.StaticKey(key), Timeout: time.Second,
	}); err != nil {
		return nil, err
	}
	_, stop, err := startManager(cp, "rfc2136", cache.Options{ByObject: map[client.Object]cache.ByObject{
		&appsv1alpha1.MyApp{}: {Label: labels.SelectorFromSet(labels.Set{dnsBackendLabel: rfc2136Backend})},
	}}, func(ctrl.Manager) *Reconciler {
		rfc2136Reconciler = &Reconciler{
			OwnerID:             testOwnerID,
			DNS:                 rfc2136Client,
			DefaultTarget:       defaultTarget,
			PendingPollInterval: 200 * time.Millisecond,
			DriftCheckInterval:  driftCheckInterval,
		}
		return rfc2136Reconciler
	})
	if err != nil {
		return nil, err
	}
	return func() {
		stop()
		if err := bind.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping named: %v\n", err)
		}
	}, nil
}

// dnsBackend is one DNS backend as the lifecycle tests see it.
type dnsBackend struct {
	name string
	// route makes a MyApp one this backend's manager reconciles.
	route fixtures.MyAppOption
	// client reads the backend's records; reconciler is the one using it.
	client     func() extdns.Client
	reconciler func() *Reconciler
	// served is what a resolver gets for host: the values of an active
	// record.
	served func(t *testing.T, host string) []string
	// setOutage takes the backend down or brings it back.
	setOutage func(t *testing.T, down bool)
	// unavailable says why the backend cannot be tested.
	unavailable func() error
}

// require ends the test, a skip or a failure as the backend's Require
// function decides, when the backend is unavailable.
func (b dnsBackend) require(t *testing.T) {
	t.Helper()
	if b.name == webhookBackend {
		controlplane.RequireWebhookServer(t, b.unavailable())
		return
	}
	controlplane.RequireBIND(t, b.unavailable())
}

func dnsBackends() []dnsBackend {
	return []dnsBackend{
		{
			name:       "http",
			route:      func(*appsv1alpha1.MyApp) {},
			client:     func() extdns.Client { return dnsClient },
			reconciler: func() *Reconciler { return reconciler },
			served: func(_ *testing.T, host string) []string {
				var out []string
				for _, r := range recordsNamed(host) {
					if r.State == simulator.StateActive {
						out = append(out, r.Value)
					}
				}
				return out
			},
			setOutage:   func(_ *testing.T, down bool) { sim.SetOutage(simulator.ServiceDNS, down) },
			unavailable: func() error { return nil },
		},
		{
			name: rfc2136Backend,
			route: func(a *appsv1alpha1.MyApp) {
				a.Labels = map[string]string{dnsBackendLabel: rfc2136Backend}
			},
			client:     func() extdns.Client { return rfc2136Client },
			reconciler: func() *Reconciler { return rfc2136Reconciler },
			served:     func(t *testing.T, host string) []string { return query(t, bind.Addr, host) },
			setOutage: func(t *testing.T, down bool) {
				var err error
				if down {
					err = bind.Stop()
				} else {
					// Not t.Context(): a cleanup ends the outage too,
					// when it is already cancelled.
					err = bind.Start(context.Background())
				}
				if err != nil {
					t.Fatal(err)
				}
			},
			unavailable: func() error { return rfc2136Err },
		},
		{
			name: webhookBackend,
			route: func(a *appsv1alpha1.MyApp) {
				a.Labels = map[string]string{dnsBackendLabel: webhookBackend}
			},
			client:      func() extdns.Client { return webhookClient },
			reconciler:  func() *Reconciler { return webhookReconciler },
			served:      webhookServed,
			setOutage:   func(_ *testing.T, down bool) { webhookProxyDown.Store(down) },
			unavailable: func() error { return webhookErr },
		},
	}
}

// query asks named for the A record at host, as any resolver would:
// unsigned, over the network.
func query(t *testing.T, addr, host string) []string {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(host), dns.TypeA)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("querying %s for %s: %v", addr, host, err)
	}
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok && strings.EqualFold(a.Hdr.Name, dns.Fqdn(host)) {
			out = append(out, a.A.String())
		}
	}
	return out
}

// recordOf reads host from the backend; a missing record is the zero Record.
func (b dnsBackend) recordOf(t *testing.T, host string) extdns.Record {
	rec, err := b.client().Get(t.Context(), host)
	if errors.Is(err, external.ErrNotFound) {
		return extdns.Record{}
	}
	if err != nil {
		t.Fatalf("reading %s from the %s backend: %v", host, b.name, err)
	}
	return rec
}

func TestMyAppLifecycleOnEveryDNSBackend(t *testing.T) {
	for _, b := range dnsBackends() {
		t.Run(b.name, func(t *testing.T) {
			b.require(t)
			t.Run("CreateToReadyWithAnActiveRecord", func(t *testing.T) { lifecycleCreate(t, b) })
			t.Run("HostMove", func(t *testing.T) { lifecycleHostMove(t, b) })
			t.Run("DeleteCleansUp", func(t *testing.T) { lifecycleDelete(t, b) })
			t.Run("OutageDuringDelete", func(t *testing.T) { lifecycleOutageDuringDelete(t, b) })
			t.Run("HostConflictAcrossNamespaces", func(t *testing.T) { lifecycleHostConflict(t, b) })
			t.Run("SameNameRecreate", func(t *testing.T) { lifecycleRecreate(t, b) })
			t.Run("ConcurrentCreators", func(t *testing.T) { lifecycleConcurrentCreators(t, b) })
		})
	}
}

func lifecycleCreate(t *testing.T, b dnsBackend) {
	g := NewWithT(t)
	app := newMyApp(newNamespace(t), "web", b.route)
	createReadyMyApp(t, g, app)
	g.Expect(app.Status.DNS).To(HaveField("State", appsv1alpha1.DNSRecordActive))
	g.Expect(b.recordOf(t, app.Spec.Host)).To(And(
		HaveField("Owner", recordOwner(app)), HaveField("Value", defaultTarget), HaveField("State", extdns.StateActive)))
	g.Expect(b.served(t, app.Spec.Host)).To(Equal([]string{defaultTarget}))

	// Only this backend's manager reconciled the MyApp.
	for _, other := range dnsBackends() {
		if other.name != b.name && other.unavailable() == nil {
			g.Expect(other.recordOf(t, app.Spec.Host)).To(BeZero(), "the %s backend has no record", other.name)
		}
	}
}

func lifecycleHostMove(t *testing.T, b dnsBackend) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web", b.route)
	createReadyMyApp(t, g, app)
	oldHost, newHost := app.Spec.Host, "www."+ns+".example.com"

	app.Spec.Host = newHost
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Status.DNS).To(HaveField("Name", newHost))
	}, timeout, interval).Should(Succeed())
	eventuallyReady(t, g, app)
	g.Expect(b.recordOf(t, newHost)).To(HaveField("Owner", recordOwner(app)))
	g.Expect(b.served(t, newHost)).To(Equal([]string{defaultTarget}))
	g.Eventually(func() extdns.Record { return b.recordOf(t, oldHost) }, timeout, interval).Should(BeZero())
	g.Expect(b.served(t, oldHost)).To(BeEmpty())
}

func lifecycleDelete(t *testing.T, b dnsBackend) {
	g := NewWithT(t)
	app := newMyApp(newNamespace(t), "web", b.route)
	createReadyMyApp(t, g, app)

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, timeout, "the MyApp is gone")
	g.Expect(b.recordOf(t, app.Spec.Host)).To(BeZero(), "the record went before the MyApp did")
	g.Expect(b.served(t, app.Spec.Host)).To(BeEmpty())
	owned, err := b.client().List(t.Context(), recordOwner(app))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(owned).To(BeEmpty(), "nothing is left under the MyApp's owner")
}

func lifecycleOutageDuringDelete(t *testing.T, b dnsBackend) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web", b.route)
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	b.setOutage(t, true)
	t.Cleanup(func() { b.setOutage(t, false) })
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	eventuallyDNSReason(t, g, app, appsv1alpha1.DNSServiceUnavailableReason)
	g.Expect(conditionOf(app, appsv1alpha1.ReadyCondition)).To(HaveField("Reason", appsv1alpha1.DeletingReason))
	g.Consistently(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, app)).To(Succeed())
		g.Expect(app.Finalizers).To(ContainElement(appsv1alpha1.DNSCleanupFinalizer))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed(), "the finalizer holds while the backend is down")

	b.setOutage(t, false)
	g.Expect(b.recordOf(t, app.Spec.Host)).To(HaveField("Owner", recordOwner(app)), "the record outlived the outage")
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, 60*time.Second, "the MyApp goes once the backend is back")
	g.Expect(b.recordOf(t, app.Spec.Host)).To(BeZero())
}

func lifecycleHostConflict(t *testing.T, b dnsBackend) {
	g := NewWithT(t)
	first, second := newNamespace(t), newNamespace(t)
	host := "shared." + first + ".example.com"
	holder := newMyApp(first, "holder", fixtures.WithHost(host), b.route)
	createReadyMyApp(t, g, holder)

	intruder := newMyApp(second, "intruder", fixtures.WithHost(host), b.route)
	g.Expect(k8sClient.Create(t.Context(), intruder)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(intruder), intruder)).To(Succeed())
		cond := conditionOf(intruder, appsv1alpha1.DNSReadyCondition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(appsv1alpha1.HostConflictReason))
		g.Expect(cond.Message).To(ContainSubstring("MyApp " + first + "/holder"))
	}, timeout, interval).Should(Succeed())

	g.Expect(b.recordOf(t, host)).To(HaveField("Owner", recordOwner(holder)))
	g.Expect(k8sClient.Delete(t.Context(), intruder)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(intruder), intruder, timeout)
	g.Expect(b.recordOf(t, host)).To(And(HaveField("Owner", recordOwner(holder)), HaveField("State", extdns.StateActive)))
	g.Expect(b.served(t, host)).To(Equal([]string{defaultTarget}))
}

func lifecycleRecreate(t *testing.T, b dnsBackend) {
	g := NewWithT(t)
	ns := newNamespace(t)
	old := newMyApp(ns, "web", b.route)
	createReadyMyApp(t, g, old)
	g.Expect(k8sClient.Delete(t.Context(), old)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(old), &appsv1alpha1.MyApp{}, timeout)

	recreated := newMyApp(ns, "web", b.route)
	createReadyMyApp(t, g, recreated)
	g.Expect(recreated.UID).NotTo(Equal(old.UID))
	g.Expect(b.recordOf(t, recreated.Spec.Host)).To(HaveField("Owner", recordOwner(recreated)))

	// A late cleanup of the old incarnation leaves the new record alone.
	stale := old.DeepCopy()
	stale.DeletionTimestamp = ptr.To(metav1.Now())
	run := b.reconciler().runDNS(t.Context(), &scope{app: stale})
	g.Expect(run.err).NotTo(HaveOccurred())
	g.Expect(run.p.Outcome.Kind).To(Equal(dnsplan.KindReleased), "the stale deletion is done")
	g.Expect(b.recordOf(t, recreated.Spec.Host)).To(And(
		HaveField("Owner", recordOwner(recreated)), HaveField("State", extdns.StateActive)))
	g.Expect(b.served(t, recreated.Spec.Host)).To(Equal([]string{defaultTarget}))
}

// lifecycleConcurrentCreators creates several MyApps wanting one host, in
// namespaces of their own, at once: exactly one ends RecordActive holding
// the record, every other one in HostConflict naming it, and the record
// stays the winner's.
func lifecycleConcurrentCreators(t *testing.T, b dnsBackend) {
	g := NewWithT(t)
	const creators = 6
	host := "race." + newNamespace(t) + ".example.com"
	apps := make([]*appsv1alpha1.MyApp, creators)
	for i := range apps {
		apps[i] = newMyApp(newNamespace(t), "web", fixtures.WithHost(host), b.route)
	}
	var wg sync.WaitGroup
	errs := make([]error, creators)
	for i, app := range apps {
		wg.Go(func() { errs[i] = k8sClient.Create(t.Context(), app) })
	}
	wg.Wait()
	g.Expect(errors.Join(errs...)).NotTo(HaveOccurred())

	var winner *appsv1alpha1.MyApp
	g.Eventually(func(g Gomega) {
		winner = nil
		for _, app := range apps {
			g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			cond := conditionOf(app, appsv1alpha1.DNSReadyCondition)
			g.Expect(cond).NotTo(BeNil(), "MyApp %s/%s has DNSReady", app.Namespace, app.Name)
			g.Expect(cond.Reason).To(BeElementOf(appsv1alpha1.RecordActiveReason, appsv1alpha1.HostConflictReason))
			if cond.Reason == appsv1alpha1.RecordActiveReason {
				g.Expect(winner).To(BeNil(), "a second MyApp holds %s", host)
				winner = app
			}
		}
		g.Expect(winner).NotTo(BeNil(), "one MyApp holds %s", host)
		for _, app := range apps {
			if app != winner {
				g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition).Message).To(
					ContainSubstring("MyApp "+winner.Namespace+"/"+winner.Name), "the loser names the winner")
			}
		}
	}, timeout, interval).Should(Succeed())
	g.Consistently(func() extdns.Record { return b.recordOf(t, host) }, 2*time.Second, interval).Should(And(
		HaveField("Owner", recordOwner(winner)), HaveField("Value", defaultTarget)), "the record stays the winner's")
	g.Expect(b.served(t, host)).To(Equal([]string{defaultTarget}))
}
