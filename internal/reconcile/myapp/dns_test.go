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
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// ingressRuleHosts returns the hosts of the Ingress's rules, and of those the
// ones that route to the app (a rule with HTTP paths).
func ingressRuleHosts(t *testing.T, g Gomega, app *appsv1alpha1.MyApp) (all, routed []string) {
	ing := &networkingv1.Ingress{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
	for _, r := range ing.Spec.Rules {
		all = append(all, r.Host)
		if r.HTTP != nil && len(r.HTTP.Paths) > 0 {
			routed = append(routed, r.Host)
		}
	}
	return all, routed
}

func TestHostMoveToAHeldHostKeepsTheOldHostRouted(t *testing.T) {
	g := NewWithT(t)
	first, second := newNamespace(t), newNamespace(t)
	taken := "taken." + first + ".example.com"
	holder := newMyApp(first, "holder", fixtures.WithHost(taken))
	createReadyMyApp(t, g, holder)
	app := newMyApp(second, "web")
	createReadyMyApp(t, g, app)
	oldHost := app.Spec.Host

	// The app moves to a host someone else holds: it must keep serving its
	// old name, and must not route the contested one.
	app.Spec.Host = taken
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	eventuallyDNSReason(t, g, app, appsv1alpha1.HostConflictReason)
	g.Eventually(func(g Gomega) {
		all, routed := ingressRuleHosts(t, g, app)
		g.Expect(routed).To(ConsistOf(oldHost), "the old host stays routed")
		g.Expect(all).NotTo(ContainElement(taken), "no rule for the contested host")
	}, timeout, interval).Should(Succeed())
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
	g.Expect(app.Status.DNS).To(HaveField("Name", oldHost))
	g.Expect(recordsNamed(oldHost)).To(ConsistOf(HaveField("Owner", recordOwner(app))), "the old record stays")
	g.Expect(recordsNamed(taken)).To(ConsistOf(HaveField("Owner", recordOwner(holder))))

	// Once the holder goes, the move completes without waiting for a drift
	// check (an hour in this suite): the holder's deletion wakes the app.
	g.Expect(k8sClient.Delete(t.Context(), holder)).To(Succeed())
	eventuallyReady(t, g, app)
	g.Expect(app.Status.DNS).To(HaveField("Name", taken))
	g.Eventually(func(g Gomega) {
		_, routed := ingressRuleHosts(t, g, app)
		g.Expect(routed).To(ConsistOf(taken))
	}, timeout, interval).Should(Succeed())
	g.Eventually(func() []simulator.Record { return recordsNamed(oldHost) }, timeout, interval).Should(BeEmpty())
}

func TestSwappedHostsBothEndReady(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	a := newMyApp(ns, "a")
	b := newMyApp(ns, "b")
	createReadyMyApp(t, g, a)
	createReadyMyApp(t, g, b)
	h1, h2 := a.Spec.Host, b.Spec.Host

	// Both move at once, each to the other's host.
	a.Spec.Host = h2
	g.Expect(k8sClient.Update(t.Context(), a)).To(Succeed())
	b.Spec.Host = h1
	g.Expect(k8sClient.Update(t.Context(), b)).To(Succeed())

	eventuallyReady(t, g, a)
	eventuallyReady(t, g, b)
	g.Expect(a.Status.DNS).To(HaveField("Name", h2))
	g.Expect(b.Status.DNS).To(HaveField("Name", h1))
	g.Expect(recordsNamed(h2)).To(ConsistOf(HaveField("Owner", recordOwner(a))))
	g.Expect(recordsNamed(h1)).To(ConsistOf(HaveField("Owner", recordOwner(b))))
	g.Eventually(func(g Gomega) {
		_, routedA := ingressRuleHosts(t, g, a)
		_, routedB := ingressRuleHosts(t, g, b)
		g.Expect(routedA).To(ConsistOf(h2))
		g.Expect(routedB).To(ConsistOf(h1))
	}, timeout, interval).Should(Succeed())
}

func TestDNSIsReadOnlyWhenDue(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	// While it converged the MyApp was reconciled for each child created,
	// each Deployment status change and each of its own status writes; the
	// record needed a first read and the polls its 300ms propagation takes
	// at a 200ms poll interval.
	t.Logf("converging took %d reconciles and %d DNS reads", writes.reconciles(key), dnsReads.getsOf(app.Spec.Host))
	g.Expect(writes.reconciles(key)).To(BeNumerically(">", 4))
	g.Expect(dnsReads.getsOf(app.Spec.Host)).To(BeNumerically("<=", 4), "the first read and the pending polls only")

	// Deployment status changes bring the MyApp back; none is worth a read.
	settle(t, g, ns)
	readsBefore := dnsReads.getsOf(app.Spec.Host)
	passesBefore := writes.reconciles(key)
	for i := range 3 {
		dep := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
		orig := dep.DeepCopy()
		dep.Status.Conditions = append(dep.Status.Conditions, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentConditionType(fmt.Sprintf("Test%d", i)), Status: "True",
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "Test", Message: "poked by the test",
		})
		g.Expect(k8sClient.Status().Patch(t.Context(), dep, client.MergeFrom(orig))).To(Succeed())
		time.Sleep(200 * time.Millisecond)
	}
	g.Eventually(func() int { return writes.reconciles(key) - passesBefore }, timeout, interval).
		Should(BeNumerically(">=", 3), "each Deployment status change reconciled the MyApp")
	g.Expect(dnsReads.getsOf(app.Spec.Host)-readsBefore).To(BeZero(), "no DNS read that was not due")
	eventuallyReady(t, g, app)
}

func TestRestartReadsOnlyTheRecordsDue(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	apps := make([]*appsv1alpha1.MyApp, 0, 4)
	for i := range 4 {
		app := newMyApp(ns, fmt.Sprintf("web%d", i))
		g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
		apps = append(apps, app)
	}
	for _, app := range apps {
		eventuallyReady(t, g, app)
	}
	settle(t, g, ns)

	// A restarted manager: a reconciler that remembers nothing, with its own
	// DNS counter and a clock the test moves.
	const interval = time.Minute
	clock := clocktesting.NewFakePassiveClock(time.Now())
	counted := newCountingDNS(dnsClient)
	restarted := &Reconciler{
		Base: pass.Base{
			Client:           reconciler.Client,
			Recorder:         reconciler.Recorder,
			ReconcileTimeout: pass.DefaultReconcileTimeout,
			Clock:            clock,
		},
		OwnerID:             testOwnerID,
		DNS:                 counted,
		DefaultTarget:       defaultTarget,
		PendingPollInterval: reconciler.PendingPollInterval,
		DriftCheckInterval:  interval,
		RecordTTL:           DefaultRecordTTL,
	}
	passAll := func() {
		for _, app := range apps {
			_, err := restarted.Reconcile(t.Context(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
			g.Expect(err).NotTo(HaveOccurred())
		}
	}
	reads := func() (n int) {
		for _, app := range apps {
			n += counted.getsOf(app.Spec.Host)
		}
		return n
	}

	// The first pass after the restart, the one every MyApp gets from the
	// initial list, reads nothing: no record is due.
	writesBefore := writes.count(ns)
	passAll()
	g.Expect(reads()).To(BeZero(), "a restart reads no record that is not due")

	// Over one drift interval each record is read exactly once, at its own
	// time, however often the MyApps are reconciled meanwhile.
	for range 12 {
		clock.SetTime(clock.Now().Add(interval / 12))
		passAll()
	}
	for _, app := range apps {
		g.Expect(counted.getsOf(app.Spec.Host)).To(Equal(1), "%s is checked once per interval", app.Name)
	}
	g.Expect(writes.count(ns)-writesBefore).To(BeZero(), "neither the restart nor the checks wrote anything")
}

func TestRejectedDeleteBacksOffWithACondition(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "shop")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	// A proxy in front of the DNS service refuses DELETE.
	sim.SetFault(simulator.ServiceDNS, simulator.OpDelete, simulator.Fault{Status: 405})
	t.Cleanup(func() { sim.ClearFault(simulator.ServiceDNS, simulator.OpDelete) })
	deletesBefore := sim.RequestCount(simulator.ServiceDNS, simulator.OpDelete)
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())

	eventuallyDNSReason(t, g, app, appsv1alpha1.DNSRequestRejectedReason)
	g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition).Message).To(ContainSubstring("deletionPolicy: Orphan"))
	g.Eventually(func() []eventReason { return eventReasons(t, ns, "shop") }, timeout, interval).
		Should(ContainElement(eventReason(appsv1alpha1.DNSRequestRejectedReason)))
	// Not terminal: the deletion is retried with backoff, without any
	// other event to bring the MyApp back.
	g.Eventually(func() int {
		return sim.RequestCount(simulator.ServiceDNS, simulator.OpDelete) - deletesBefore
	}, timeout, interval).Should(BeNumerically(">=", 4))
	g.Expect(k8sClient.Get(t.Context(), key, app)).To(Succeed())
	g.Expect(app.Finalizers).To(ContainElement(appsv1alpha1.DNSCleanupFinalizer))

	sim.ClearFault(simulator.ServiceDNS, simulator.OpDelete)
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, 60*time.Second, "the MyApp goes once DELETE is accepted")
	g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty())
}

func TestDNSStateIsUnknownDuringAnOutage(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	// The service goes down, and the load balancer's address changes, so
	// the record must be read and written again.
	sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { sim.SetOutage(simulator.ServiceDNS, false) })
	ing := &networkingv1.Ingress{}
	g.Expect(k8sClient.Get(t.Context(), key, ing)).To(Succeed())
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.77"}}
	g.Expect(k8sClient.Status().Update(t.Context(), ing)).To(Succeed())

	eventuallyDNSReason(t, g, app, appsv1alpha1.DNSServiceUnavailableReason)
	g.Expect(app.Status.DNS).NotTo(BeNil())
	g.Expect(app.Status.DNS.State).To(Equal(appsv1alpha1.DNSRecordUnknown), "the DNS column shows what is known")
	g.Expect(app.Status.DNS.LastObservedState).To(Equal(appsv1alpha1.DNSRecordActive), "the last seen state is kept")

	sim.SetOutage(simulator.ServiceDNS, false)
	eventuallyReady(t, g, app)
	g.Expect(app.Status.DNS).To(And(
		HaveField("State", appsv1alpha1.DNSRecordActive),
		HaveField("LastObservedState", appsv1alpha1.DNSRecordActive),
		HaveField("Value", "203.0.113.77")))
}

func TestDeletionCostsOneReadAndOneDeletePerRecordAndNoList(t *testing.T) {
	t.Run("the record in status", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		app := newMyApp(ns, "web")
		createReadyMyApp(t, g, app)
		settle(t, g, ns)
		owner := recordOwner(app)
		deletes, lists := dnsReads.deletesBy(owner), dnsReads.listsBy(owner)

		g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
		eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, timeout)
		g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty())
		g.Expect(dnsReads.deletesBy(owner)-deletes).To(Equal(1), "one delete for the one record")
		g.Expect(dnsReads.listsBy(owner)-lists).To(BeZero(), "no list: for RFC 2136 a list is a whole-zone transfer")
		g.Expect(writes.notFoundCount(ns)).To(BeZero(), "no write after the finalizer let the MyApp go")
	})

	t.Run("a record no name leads to is the sweep's", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		app := newMyApp(ns, "web")
		createReadyMyApp(t, g, app)
		settle(t, g, ns)
		owner := recordOwner(app)
		// A record of this owner under a name neither its spec nor its
		// status ever showed (another operator version, a hand edit).
		lost := "lost." + ns + ".example.com"
		_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: lost, Type: "A", Value: defaultTarget, TTL: 300, Owner: owner})
		g.Expect(err).NotTo(HaveOccurred())
		deletes, lists := dnsReads.deletesBy(owner), dnsReads.listsBy(owner)

		g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
		eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, timeout)
		g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty())
		g.Expect(dnsReads.deletesBy(owner) - deletes).To(Equal(1))
		g.Expect(dnsReads.listsBy(owner)-lists).To(BeZero(), "no list")
		g.Expect(recordsNamed(lost)).To(HaveLen(1), "left to the sweep")
		_, err = newTestSweeper(time.Hour).sweepOnce(t.Context())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(recordsNamed(lost)).To(BeEmpty(), "the sweep deletes the record of a MyApp that is gone")
	})
}

// settle waits until the reconciler has made no write in ns for a second.
func settle(t *testing.T, g *WithT, ns string) {
	t.Helper()
	g.Eventually(func() int {
		before := writes.count(ns)
		time.Sleep(time.Second)
		return writes.count(ns) - before
	}, timeout, 0).Should(BeZero())
}

// TestHostRotationsConvergeOnTheCluster: 2, 3 and 4 Ready MyApps rotate
// their hosts in one go (each in one namespace, and across namespaces), with the
// manager's watches deciding the order of the passes. All end Ready on
// their new hosts; while they move, no host is ever routed by two
// Ingresses (sampled every 20ms, seen in two samples in a row). That an Ingress routes only held hosts at
// every step is checked without sampling, over the fake world's rounds, in
// TestHostRotationsConverge.
func TestHostRotationsConvergeOnTheCluster(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		spread bool
	}{
		{"a swap of two", 2, false},
		{"a rotation of three", 3, false},
		{"a rotation of four", 4, false},
		{"a swap across namespaces", 2, true},
		{"a rotation of three across namespaces", 3, true},
		{"a rotation of four across namespaces", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := newNamespace(t)
			apps := make([]*appsv1alpha1.MyApp, tc.n)
			hosts := make([]string, tc.n)
			for i := range tc.n {
				appNS := ns
				if tc.spread && i > 0 {
					appNS = newNamespace(t)
				}
				apps[i] = newMyApp(appNS, fmt.Sprintf("app%d", i))
				hosts[i] = apps[i].Spec.Host
				createReadyMyApp(t, g, apps[i])
			}

			// Watch the Ingresses and the records while they move.
			stop := make(chan struct{})
			violations := make(chan string, 100)
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				// The Ingresses are read one after the other, not at one
				// instant: a double route counts when two samples in a row
				// show it, so a hand-over between two reads is not one.
				seenBefore := map[string]bool{}
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					routedBy := map[string]string{}
					seen := map[string]bool{}
					for _, app := range apps {
						ing := &networkingv1.Ingress{}
						if err := k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), ing); err != nil {
							continue
						}
						for _, rule := range ing.Spec.Rules {
							if rule.HTTP == nil {
								continue
							}
							if other, ok := routedBy[rule.Host]; ok {
								v := fmt.Sprintf("%s routed by %s and %s", rule.Host, other, app.Name)
								if seenBefore[v] {
									select {
									case violations <- v:
									default:
									}
								}
								seen[v] = true
							}
							routedBy[rule.Host] = app.Name
						}
					}
					seenBefore = seen
				}
			}()

			for i := range tc.n {
				app := &appsv1alpha1.MyApp{}
				g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(apps[i]), app)).To(Succeed())
				app.Spec.Host = hosts[(i+1)%tc.n]
				g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
			}
			for i := range tc.n {
				// Alone a rotation of four takes about 3 s; under make
				// test's parallel packages on a loaded 2-core machine one
				// took over 30, so this wait is twice the suite's.
				fixtures.EventuallyReady(t.Context(), g, k8sClient, 2*timeout, apps[i])
				g.Expect(apps[i].Status.DNS).To(HaveField("Name", hosts[(i+1)%tc.n]))
			}
			for i := range tc.n {
				want := hosts[(i+1)%tc.n]
				g.Eventually(func(g Gomega) {
					g.Expect(recordsNamed(want)).To(ConsistOf(HaveField("Owner", recordOwner(apps[i]))))
					_, routed := ingressRuleHosts(t, g, apps[i])
					g.Expect(routed).To(ConsistOf(want))
				}, timeout, interval).Should(Succeed())
			}
			close(stop)
			<-watched
			close(violations)
			for v := range violations {
				t.Errorf("while moving: %s", v)
			}
		})
	}
}
