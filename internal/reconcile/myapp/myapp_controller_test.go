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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

func TestCreateMyApp(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)

	g.Expect(app.Finalizers).To(ContainElement(appsv1alpha1.DNSCleanupFinalizer))
	g.Expect(app.Status.ReadyReplicas).To(Equal(int32(2)))
	g.Expect(app.Status.DNS).To(Equal(&appsv1alpha1.DNSRecordStatus{
		Name: app.Spec.Host, Type: "A", Value: defaultTarget, Owner: recordOwner(app), State: appsv1alpha1.DNSRecordActive,
		LastObservedState: appsv1alpha1.DNSRecordActive,
	}))
	g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition)).To(HaveField("Reason", appsv1alpha1.RecordActiveReason))

	// Each child exists, is controlled by the MyApp and carries its labels.
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &networkingv1.Ingress{}} {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), obj)).To(Succeed())
		g.Expect(metav1.IsControlledBy(obj, app)).To(BeTrue(), "%T is controlled by the MyApp", obj)
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue("app.kubernetes.io/instance", "web"))
	}
	ing := &networkingv1.Ingress{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
	g.Expect(ing.Spec.Rules).To(ConsistOf(HaveField("Host", app.Spec.Host)))

	// The record is in the DNS service, owned by this MyApp's UID.
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(And(
		HaveField("Owner", recordOwner(app)),
		HaveField("Value", defaultTarget),
		HaveField("State", simulator.StateActive),
	)))
	g.Eventually(func() []eventReason { return eventReasons(t, ns, "web") }, timeout, interval).
		Should(ContainElements(eventChildCreated, eventDNSRecordCreated))
}

// TestNewMyAppMakesOnlyTheWritesItNeeds holds the cost of a new MyApp
// (issue 13): its Ingress is created routing the host the DNS phase of the
// same pass found held, not unrouted and then patched; the creation of its
// three children is one event, not three; and with no earlier host to
// clean up (generation 1), the DNS service is not listed for one.
func TestNewMyAppMakesOnlyTheWritesItNeeds(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	settle(t, g, ns)

	ing := &networkingv1.Ingress{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
	g.Expect(ing.Spec.Rules).To(ConsistOf(HaveField("Host", app.Spec.Host)))
	g.Expect(ing.Generation).To(Equal(int64(1)), "the Ingress was created with its rules and never changed")
	g.Expect(dnsReads.listsBy(recordOwner(app))).To(BeZero(), "no list for earlier hosts a first generation cannot have")

	g.Eventually(func() []eventReason { return eventReasons(t, ns, "web") }, timeout, interval).
		Should(ContainElements(eventChildCreated, eventDNSRecordCreated))
	created := 0
	for _, reason := range eventReasons(t, ns, "web") {
		if reason == eventChildCreated {
			created++
		}
	}
	g.Expect(created).To(Equal(1), "one event for the three children created")
}

// TestEarlierHostRecordIsFoundOnceOneCanExist: once the spec has changed
// (generation 2), a MyApp whose status shows no record and whom the manager
// has no memory of, as after a crash before a status write, lists the DNS
// service for records under earlier hosts and deletes them.
func TestEarlierHostRecordIsFoundOnceOneCanExist(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	app.Spec.Host = "moved." + ns + ".example.com"
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	g.Expect(app.Generation).To(Equal(int64(2)))
	eventuallyReady(t, g, app)
	g.Eventually(func() *appsv1alpha1.DNSRecordStatus {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		return app.Status.DNS
	}, timeout, interval).Should(HaveField("Name", app.Spec.Host))
	settle(t, g, ns)

	// A record of a host this MyApp held is left behind, and its status
	// loses the record, as if the pass that registered it crashed.
	lost := "lost." + ns + ".example.com"
	_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: lost, Type: "A", Value: defaultTarget, TTL: 300, Owner: recordOwner(app)})
	g.Expect(err).NotTo(HaveOccurred())
	// A lost status write makes the manager forget what it read too.
	reconciler.dnsChecks.forget(client.ObjectKeyFromObject(app))
	orig := app.DeepCopy()
	app.Status.DNS = nil
	g.Expect(k8sClient.Status().Patch(t.Context(), app, client.MergeFrom(orig))).To(Succeed())

	g.Eventually(func() []simulator.Record { return recordsNamed(lost) }, timeout, interval).
		Should(BeEmpty(), "the list found the earlier host's record and it was deleted")
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(HaveField("Owner", recordOwner(app))))
}

func TestChildDriftIsRevertedByTheWatch(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	// Someone scales the Deployment by hand; the spec says 2. The drift
	// interval is an hour, so only the watch can bring it back this fast.
	dep := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
	dep.Spec.Replicas = ptr.To[int32](3)
	g.Expect(k8sClient.Update(t.Context(), dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
		g.Expect(dep.Spec.Replicas).To(HaveValue(Equal(int32(2))))
	}, 10*time.Second, interval).Should(Succeed())

	// Someone deletes the Service; it comes back as a new object.
	svc := &corev1.Service{}
	g.Expect(k8sClient.Get(t.Context(), key, svc)).To(Succeed())
	oldUID := svc.UID
	g.Expect(k8sClient.Delete(t.Context(), svc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, svc)).To(Succeed())
		g.Expect(svc.UID).NotTo(Equal(oldUID))
		g.Expect(metav1.IsControlledBy(svc, app)).To(BeTrue())
	}, 10*time.Second, interval).Should(Succeed())
}

// TestChildWithoutItsLabelIsRepaired: the manager caches only the children
// that carry the operator's label, so a child whose label someone removed
// leaves the cache (a delete event to the watch) while it still exists. It
// must be repaired, label and all, not fail to be created again forever.
func TestChildWithoutItsLabelIsRepaired(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	svc := &corev1.Service{}
	g.Expect(k8sClient.Get(t.Context(), key, svc)).To(Succeed())
	uid := svc.UID
	delete(svc.Labels, ManagedByLabel)
	svc.Spec.Ports[0].Port = 9999
	g.Expect(k8sClient.Update(t.Context(), svc)).To(Succeed())

	dep := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
	dep.Labels = nil
	dep.Spec.Replicas = ptr.To[int32](3)
	g.Expect(k8sClient.Update(t.Context(), dep)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, svc)).To(Succeed())
		g.Expect(svc.UID).To(Equal(uid), "the Service is repaired in place")
		g.Expect(svc.Labels).To(HaveKeyWithValue(ManagedByLabel, ManagedByValue))
		g.Expect(svc.Spec.Ports).To(ConsistOf(HaveField("Port", int32(80))))
		g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
		g.Expect(dep.Labels).To(HaveKeyWithValue(ManagedByLabel, ManagedByValue))
		g.Expect(dep.Spec.Replicas).To(HaveValue(Equal(int32(2))))
	}, 10*time.Second, interval).Should(Succeed())
	eventuallyReady(t, g, app)
}

// TestCacheHoldsOnlyLabelledChildren: the manager's memory grows with its
// MyApps, not with the cluster: unrelated Deployments are not cached, and
// cached children carry no managedFields.
func TestCacheHoldsOnlyLabelledChildren(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	unrelated := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "unrelated"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "unrelated"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			},
		},
	}
	g.Expect(k8sClient.Create(t.Context(), unrelated)).To(Succeed())
	// The MyApp is Ready only once the cache has seen its Deployment, which
	// was created after the unrelated one on the same watch.
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)

	cached := &appsv1.Deployment{}
	g.Expect(mgrCache.Get(t.Context(), client.ObjectKeyFromObject(app), cached)).To(Succeed())
	g.Expect(cached.ManagedFields).To(BeEmpty(), "managedFields are stripped")
	err := mgrCache.Get(t.Context(), client.ObjectKeyFromObject(unrelated), &appsv1.Deployment{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "an unlabelled Deployment is not cached, got %v", err)
}

func TestSpecChangesPropagate(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	oldHost := app.Spec.Host
	newHost := "www." + ns + ".example.com"

	app.Spec.Image = "nginx:1.28"
	app.Spec.Replicas = ptr.To[int32](3)
	app.Spec.Host = newHost
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())

	g.Eventually(func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), dep)).To(Succeed())
		g.Expect(dep.Spec.Replicas).To(HaveValue(Equal(int32(3))))
		g.Expect(dep.Spec.Template.Spec.Containers).To(ContainElement(HaveField("Image", "nginx:1.28")))
		ing := &networkingv1.Ingress{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
		g.Expect(ing.Spec.Rules).To(ConsistOf(HaveField("Host", newHost)))
	}, timeout, interval).Should(Succeed())

	// The record moved: the new host is registered, the old one is gone.
	eventuallyReady(t, g, app)
	g.Expect(app.Status.DNS).To(HaveField("Name", newHost))
	g.Expect(app.Status.ReadyReplicas).To(Equal(int32(3)))
	g.Expect(recordsNamed(newHost)).To(ConsistOf(HaveField("Owner", recordOwner(app))))
	g.Eventually(func() []simulator.Record { return recordsNamed(oldHost) }, timeout, interval).Should(BeEmpty())
}

func TestHostConflictAcrossNamespaces(t *testing.T) {
	g := NewWithT(t)
	first, second := newNamespace(t), newNamespace(t)
	host := "shared." + first + ".example.com"
	holder := newMyApp(first, "holder", fixtures.WithHost(host))
	createReadyMyApp(t, g, holder)

	intruder := newMyApp(second, "intruder", fixtures.WithHost(host))
	g.Expect(k8sClient.Create(t.Context(), intruder)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(intruder), intruder)).To(Succeed())
		cond := conditionOf(intruder, appsv1alpha1.DNSReadyCondition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(cond.Reason).To(Equal(appsv1alpha1.HostConflictReason))
		g.Expect(cond.Message).To(ContainSubstring("MyApp " + first + "/holder"))
		g.Expect(conditionOf(intruder, appsv1alpha1.ReadyCondition)).To(HaveField("Status", metav1.ConditionFalse))
	}, timeout, interval).Should(Succeed())

	// The intruder's Ingress exists (an ingress controller gives it an
	// address) but has no rule for the host it does not hold; the holder's
	// routes it.
	g.Consistently(func(g Gomega) {
		all, _ := ingressRuleHosts(t, g, intruder)
		g.Expect(all).NotTo(ContainElement(host))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		_, routed := ingressRuleHosts(t, g, holder)
		g.Expect(routed).To(ConsistOf(host))
	}, timeout, interval).Should(Succeed())

	// The holder's record is untouched, and deleting the intruder does not
	// remove it.
	g.Expect(recordsNamed(host)).To(ConsistOf(HaveField("Owner", recordOwner(holder))))
	g.Expect(k8sClient.Delete(t.Context(), intruder)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(intruder), intruder, timeout)
	g.Expect(recordsNamed(host)).To(ConsistOf(And(
		HaveField("Owner", recordOwner(holder)), HaveField("State", simulator.StateActive))))
}

func TestDeleteRemovesRecordThenMyAppAndChildren(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, timeout, "the MyApp is gone")
	g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty(), "the record went before the MyApp did")

	// The children go through garbage collection, not the finalizer.
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &networkingv1.Ingress{}} {
		eventuallyGone(t, g, key, obj, timeout, "%T is garbage-collected", obj)
	}
}

func TestDNSOutageDuringDeleteHoldsTheFinalizer(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { sim.SetOutage(simulator.ServiceDNS, false) })
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, app)).To(Succeed())
		cond := conditionOf(app, appsv1alpha1.DNSReadyCondition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(appsv1alpha1.DNSServiceUnavailableReason))
		g.Expect(cond.Message).To(ContainSubstring("retries with backoff"))
		g.Expect(conditionOf(app, appsv1alpha1.ReadyCondition)).To(HaveField("Reason", appsv1alpha1.DeletingReason))
	}, timeout, interval).Should(Succeed())
	g.Eventually(func() []eventReason { return eventReasons(t, ns, "web") }, timeout, interval).
		Should(ContainElement(eventReason(appsv1alpha1.DNSServiceUnavailableReason)))

	// While the service is down the finalizer holds and the record stays.
	g.Consistently(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, app)).To(Succeed())
		g.Expect(app.Finalizers).To(ContainElement(appsv1alpha1.DNSCleanupFinalizer))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(recordsNamed(app.Spec.Host)).To(HaveLen(1))

	sim.SetOutage(simulator.ServiceDNS, false)
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, 60*time.Second, "the MyApp goes once the service is back")
	g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty())
}

func TestOrphanPolicyLeavesTheRecord(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web", fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
	createReadyMyApp(t, g, app)
	owner := recordOwner(app)

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, timeout)
	// The record stays, handed to the orphaned form of its owner so the
	// orphan sweep leaves it alone (see TestOrphanedRecordSurvivesTheSweep).
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(HaveField("Owner", orphanedRecordOwner(app))))
	g.Expect(orphanedRecordOwner(app)).To(Equal("myapp-operator-orphaned/" + owner[len("myapp-operator/"):]))
}

func TestSameNameRecreateKeepsTheNewRecord(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	old := newMyApp(ns, "web")
	createReadyMyApp(t, g, old)
	g.Expect(k8sClient.Delete(t.Context(), old)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(old), &appsv1alpha1.MyApp{}, timeout)

	recreated := newMyApp(ns, "web")
	createReadyMyApp(t, g, recreated)
	g.Expect(recreated.UID).NotTo(Equal(old.UID))
	g.Expect(recordsNamed(recreated.Spec.Host)).To(ConsistOf(HaveField("Owner", recordOwner(recreated))))

	// A cleanup of the old incarnation that arrives late (a stale work item,
	// a second operator replica) acts on the old UID and must leave the new
	// record alone.
	stale := old.DeepCopy()
	stale.DeletionTimestamp = ptr.To(metav1.Now())
	run := reconciler.runDNS(t.Context(), &scope{app: stale})
	g.Expect(run.err).NotTo(HaveOccurred())
	g.Expect(run.p.Outcome.Kind).To(Equal(dnsplan.KindReleased), "the stale deletion is done")
	g.Expect(recordsNamed(recreated.Spec.Host)).To(ConsistOf(And(
		HaveField("Owner", recordOwner(recreated)), HaveField("State", simulator.StateActive))))
}

// TestCrashBeforeStatusWriteLeaksNoRecord: a pass registered a second host
// and crashed before its status write recorded it; then the user moved the
// host a third time. The restarted manager has no memory of the MyApp, so
// its first pass lists the owner's records and finds the lost one, which
// the move then releases. The passes are driven one by one (a fake world),
// so the crash's lost memory is exact, not raced by a running manager.
func TestCrashBeforeStatusWriteLeaksNoRecord(t *testing.T) {
	g := NewWithT(t)
	first := "web.crash.example.com"
	app := worldApp("crash", "web", first)
	w := newFakeWorld(t, app)
	w.settle(3, app)

	lost := "lost.crash.example.com"
	_, err := w.dns.client.Upsert(t.Context(), dns.Record{Name: lost, Type: "A", Value: defaultTarget, TTL: 300, Owner: recordOwner(app)})
	g.Expect(err).NotTo(HaveOccurred())
	third := "third.crash.example.com"
	w.r.dnsChecks.forget(client.ObjectKeyFromObject(app)) // the crash
	w.setHost(app, third)
	w.settle(5, app)

	g.Expect(w.get(app).Status.DNS).To(HaveField("Name", third))
	var names []string
	for name, owner := range w.owners() {
		if owner == recordOwner(app) {
			names = append(names, name)
		}
	}
	g.Expect(names).To(ConsistOf(third), "only the current host's record is left; %s and %s are gone", first, lost)
}

func TestDNSDriftIsRepairedOnTheDriftCheck(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)}

	// At steady state a reconcile asks to come back at this MyApp's drift
	// check: its own point in every interval, at most one interval away.
	result, err := reconciler.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0))
	g.Expect(result.RequeueAfter).To(BeNumerically("<=", driftCheckInterval))
	at := suiteClock.Now().Add(result.RequeueAfter)
	offPhase := (time.Duration(at.UnixNano()) - driftPhase(app.UID, driftCheckInterval)) % driftCheckInterval
	g.Expect(min(offPhase, driftCheckInterval-offPhase)).To(BeNumerically("<", time.Second), "the check is at the MyApp's phase")

	// The record is changed outside the operator, then deleted; each drift
	// check (a reconcile the timer starts once the clock reaches it) puts it
	// back. A reconcile before that time leaves the service alone.
	_, err = dnsClient.Upsert(t.Context(), dns.Record{Name: app.Spec.Host, Type: "A", Value: "198.51.100.7", TTL: 60, Owner: recordOwner(app)})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = reconciler.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(HaveField("Value", "198.51.100.7")), "not due yet")
	// The drift check's pass may meet a cache behind this controller's
	// own last status write, and then comes back a quarter of a second
	// later (pass.CacheLagRetryDelay), as its requeue would bring it.
	driftCheck := func(want gomegatypes.GomegaMatcher) {
		g.Eventually(func(g Gomega) {
			_, err := reconciler.Reconcile(t.Context(), req)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(recordsNamed(app.Spec.Host)).To(want)
		}).Should(Succeed())
	}
	suiteClock.step(result.RequeueAfter)
	driftCheck(ConsistOf(And(HaveField("Value", defaultTarget), HaveField("TTL", int32(300)))))

	g.Expect(dnsClient.Delete(t.Context(), app.Spec.Host, recordOwner(app))).To(Succeed())
	suiteClock.step(driftCheckInterval)
	driftCheck(ConsistOf(HaveField("Owner", recordOwner(app))))
	eventuallyReady(t, g, app)
}

func TestSteadyStateMakesNoWrites(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	// Resources and a field-reference env var exercise the defaults the API
	// server adds to a pod template, which must not look like drift.
	app := newMyApp(ns, "web", fixtures.WithEnv(
		corev1.EnvVar{Name: "GREETING", Value: "hello"},
		corev1.EnvVar{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	))
	app.Spec.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
	}
	createReadyMyApp(t, g, app)

	// Let the last status and child updates settle.
	g.Eventually(func() int {
		before := writes.count(ns)
		time.Sleep(time.Second)
		return writes.count(ns) - before
	}, timeout, 0).Should(BeZero())

	writesBefore := writes.count(ns)
	upsertsBefore := sim.RequestCount(simulator.ServiceDNS, simulator.OpUpsert)
	readsBefore := dnsReads.getsOf(app.Spec.Host)
	passesBefore := writes.reconciles(client.ObjectKeyFromObject(app))

	// Each annotation change makes the controller reconcile the MyApp.
	for i := range 5 {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		if app.Annotations == nil {
			app.Annotations = map[string]string{}
		}
		app.Annotations["test/poke"] = time.Now().Format(time.RFC3339Nano) + string(rune('a'+i))
		g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
		time.Sleep(200 * time.Millisecond)
	}
	g.Eventually(func() int {
		return writes.reconciles(client.ObjectKeyFromObject(app)) - passesBefore
	}, timeout, interval).Should(BeNumerically(">=", 5), "the controller reconciled this MyApp after each change")

	g.Expect(writes.count(ns)-writesBefore).To(BeZero(), "no write to the API server at steady state")
	g.Expect(dnsReads.getsOf(app.Spec.Host)-readsBefore).To(BeZero(), "no read of the DNS service before its drift check")
	g.Expect(sim.RequestCount(simulator.ServiceDNS, simulator.OpUpsert)-upsertsBefore).To(BeZero(), "no write to the DNS service")
}

func TestOrphanReleasesAMyAppStuckOnAnOutage(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	// The DNS service is gone for good; the deletion is stuck on it.
	sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { sim.SetOutage(simulator.ServiceDNS, false) })
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	eventuallyDNSReason(t, g, app, appsv1alpha1.DNSServiceUnavailableReason)

	// The documented way out: set deletionPolicy Orphan on the stuck MyApp.
	// Its record was written under Delete, so it is not marked; the
	// deletion waits for the service to mark it, at most OrphanMarkWait
	// from its start, then goes.
	g.Expect(k8sClient.Patch(t.Context(), app, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"deletionPolicy":"Orphan"}}`)))).To(Succeed())
	suiteClock.step(dnsplan.OrphanMarkWait)
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, pass.DefaultMaxRetryDelay+15*time.Second,
		"the MyApp goes without the DNS service once the wait is over")
	g.Expect(recordsNamed(app.Spec.Host)).To(HaveLen(1), "the record was left alone")
	g.Eventually(func() []eventReason { return eventReasons(t, ns, "web") }, timeout, interval).
		Should(ContainElement(eventDNSRecordOrphaned))
}

func TestThrottledDNSIsNotCalledBeforeRetryAfter(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	// Every write is refused with 429 and a Retry-After far above the
	// client's retry cap, so the client hands the wait to the reconciler.
	sim.SetFault(simulator.ServiceDNS, simulator.OpUpsert, simulator.Fault{Status: 429, RetryAfter: 8 * time.Second})
	t.Cleanup(func() { sim.ClearFault(simulator.ServiceDNS, simulator.OpUpsert) })

	app := newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	eventuallyDNSReason(t, g, app, appsv1alpha1.DNSThrottledReason)
	g.Expect(sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpUpsert, 429)).To(BeNumerically(">=", 1))
	upserts := sim.RequestCount(simulator.ServiceDNS, simulator.OpUpsert)

	// The Deployment becoming available meanwhile brings the MyApp back
	// through the watch, but nothing calls the service before it allowed.
	// The window stays well inside the 8s wait even if the condition was
	// seen late on a loaded machine.
	g.Consistently(func() int {
		return sim.RequestCount(simulator.ServiceDNS, simulator.OpUpsert)
	}, 2500*time.Millisecond, 100*time.Millisecond).Should(Equal(upserts))
	g.Expect(app.Status.ObservedGeneration).To(BeZero(), "a throttled pass has not observed the generation")

	sim.ClearFault(simulator.ServiceDNS, simulator.OpUpsert)
	eventuallyReady(t, g, app)
}

func TestChildInTheWayIsNeverAdopted(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	// Someone else's Service already has the MyApp's name.
	theirs := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"team": "other"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 9999}}},
	}
	g.Expect(k8sClient.Create(t.Context(), theirs)).To(Succeed())

	app := newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		cond := conditionOf(app, appsv1alpha1.ReadyCondition)
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(appsv1alpha1.ChildConflictReason))
		g.Expect(cond.Message).To(ContainSubstring("Service web already exists and is not controlled by this MyApp"))
	}, timeout, interval).Should(Succeed())
	g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty(), "no record for an app that is not served")
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
	g.Expect(theirs.OwnerReferences).To(BeEmpty(), "their Service was not adopted")
	g.Expect(theirs.Spec.Ports).To(ConsistOf(HaveField("Port", int32(9999))), "nor changed")

	// Once they remove it, the MyApp carries on by itself.
	g.Expect(k8sClient.Delete(t.Context(), theirs)).To(Succeed())
	eventuallyReady(t, g, app)
}

func TestRecordFollowsTheLoadBalancerAddress(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	createReadyMyApp(t, g, app)

	// An ingress controller publishes an address: the record follows it,
	// A for an IPv4 address, CNAME for a host name.
	for _, lb := range []struct {
		status            networkingv1.IngressLoadBalancerIngress
		wantType, wantVal string
	}{
		{networkingv1.IngressLoadBalancerIngress{IP: "203.0.113.5"}, "A", "203.0.113.5"},
		{networkingv1.IngressLoadBalancerIngress{Hostname: "lb-1.example.net"}, "CNAME", "lb-1.example.net"},
	} {
		ing := &networkingv1.Ingress{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), ing)).To(Succeed())
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{lb.status}
		g.Expect(k8sClient.Status().Update(t.Context(), ing)).To(Succeed())
		g.Eventually(func() []simulator.Record { return recordsNamed(app.Spec.Host) }, timeout, interval).
			Should(ConsistOf(And(HaveField("Type", lb.wantType), HaveField("Value", lb.wantVal))))
		// The service holds the new value before the pass that wrote it
		// patches the status, and the MyApp may still read Ready from before
		// the change, so wait for the status to show the new record.
		g.Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.DNS).To(And(HaveField("Type", lb.wantType), HaveField("Value", lb.wantVal)))
		}, timeout, interval).Should(Succeed())
		eventuallyReady(t, g, app)
		g.Expect(app.Status.DNS).To(And(HaveField("Type", lb.wantType), HaveField("Value", lb.wantVal)))
	}
}

func TestStatusIsKeptWhileAnotherFinalizerHoldsTheMyApp(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	app.Finalizers = []string{"test.myapp.dev/hold"}
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, app)).To(Succeed())
		g.Expect(app.Finalizers).To(ConsistOf("test.myapp.dev/hold"), "the DNS cleanup finalizer is gone")
		g.Expect(app.Status.DNS).To(BeNil(), "the status no longer shows the deleted record")
		g.Expect(conditionOf(app, appsv1alpha1.ReadyCondition)).To(HaveField("Reason", appsv1alpha1.DeletingReason))
	}, timeout, interval).Should(Succeed())
	g.Expect(recordsNamed(app.Spec.Host)).To(BeEmpty())

	app.Finalizers = nil
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	eventuallyGone(t, g, key, &appsv1alpha1.MyApp{}, timeout)
}
