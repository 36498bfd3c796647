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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

func withAdoptAnnotation() fixtures.MyAppOption {
	return func(a *appsv1alpha1.MyApp) {
		a.Annotations = map[string]string{appsv1alpha1.AdoptDNSRecordAnnotation: "true"}
	}
}

// TestAdoptionAfterOrphanNeedsTheAnnotation: a MyApp deleted with
// deletionPolicy Orphan and created again finds its host held by its former
// self. It is never taken over silently; the condition says how, and the
// annotation does it.
func TestAdoptionAfterOrphanNeedsTheAnnotation(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	first := newMyApp(ns, "web", fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
	createReadyMyApp(t, g, first)
	g.Expect(k8sClient.Delete(t.Context(), first)).To(Succeed())
	eventuallyGone(t, g, client.ObjectKeyFromObject(first), &appsv1alpha1.MyApp{}, timeout)
	leftOwner := recordsNamed(first.Spec.Host)[0].Owner

	again := newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), again)).To(Succeed())
	eventuallyDNSReason(t, g, again, appsv1alpha1.HostConflictReason)
	msg := conditionOf(again, appsv1alpha1.DNSReadyCondition).Message
	g.Expect(msg).To(ContainSubstring(appsv1alpha1.AdoptDNSRecordAnnotation+"=true"), "the condition names the way out")
	g.Expect(msg).To(ContainSubstring(string(first.UID)))
	g.Expect(recordsNamed(first.Spec.Host)).To(ConsistOf(HaveField("Owner", leftOwner)), "nothing is adopted silently")

	g.Expect(k8sClient.Patch(t.Context(), again, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+appsv1alpha1.AdoptDNSRecordAnnotation+`":"true"}}}`)))).To(Succeed())
	eventuallyReady(t, g, again)
	g.Expect(recordsNamed(again.Spec.Host)).To(ConsistOf(HaveField("Owner", recordOwner(again))))
	g.Expect(eventReasons(t, ns, "web")).To(ContainElement(eventDNSRecordAdopted))
}

// TestAdoptionOfARestoredMyAppsRecord: a MyApp restored from a backup has a
// new UID; the record still names the original's, unmarked. Created with
// the annotation, the restored MyApp takes it over.
func TestAdoptionOfARestoredMyAppsRecord(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "restored", withAdoptAnnotation())
	original := "myapp-operator/" + testOwnerID + "/" + ns + "/restored/0b7a4f60-0000-4000-8000-0000000000aa"
	_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: app.Spec.Host, Type: dns.TypeA, Value: "192.0.2.99", TTL: 300, Owner: original})
	g.Expect(err).NotTo(HaveOccurred())

	createReadyMyApp(t, g, app)
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(And(
		HaveField("Owner", recordOwner(app)), HaveField("Value", defaultTarget))),
		"adopted, then brought to the MyApp's target")
	g.Expect(eventReasons(t, ns, "restored")).To(ContainElement(eventDNSRecordAdopted))
}

// TestAdoptionNeverTakesALiveMyAppsRecord: the annotation adopts only a
// record of the same namespace and name whose UID no live MyApp has.
func TestAdoptionNeverTakesALiveMyAppsRecord(t *testing.T) {
	g := NewWithT(t)
	first, second := newNamespace(t), newNamespace(t)
	host := "held." + first + ".example.com"
	holder := newMyApp(first, "web", fixtures.WithHost(host), withAdoptAnnotation())
	createReadyMyApp(t, g, holder)

	// Another namespace, same name: another MyApp, alive.
	intruder := newMyApp(second, "web", fixtures.WithHost(host), withAdoptAnnotation())
	g.Expect(k8sClient.Create(t.Context(), intruder)).To(Succeed())
	eventuallyDNSReason(t, g, intruder, appsv1alpha1.HostConflictReason)
	g.Expect(recordsNamed(host)).To(ConsistOf(HaveField("Owner", recordOwner(holder))))

	// The same namespace and name seen through a stale cache: the MyApp
	// this pass works on was deleted and the live one holds the record.
	stale := holder.DeepCopy()
	stale.UID = types.UID("0b7a4f60-0000-4000-8000-0000000000bb")
	s := &scope{app: stale}
	_, err := reconciler.reconcileDNSRecord(t.Context(), s)
	g.Expect(err).NotTo(HaveOccurred())
	setConditions(s, time.Now())
	g.Expect(conditionOf(stale, appsv1alpha1.DNSReadyCondition)).To(And(
		HaveField("Reason", appsv1alpha1.HostConflictReason), HaveField("Status", metav1.ConditionFalse)))
	g.Expect(recordsNamed(host)).To(ConsistOf(And(
		HaveField("Owner", recordOwner(holder)), HaveField("State", simulator.StateActive))))
}

// TestLeakedRecordOfAnEarlierMyAppIsReplaced: a record left, unmarked, by an
// earlier MyApp of this namespace and name that no longer exists is a leak
// the orphan sweep would delete: the API server can remove a MyApp with its
// finalizer still on (kubernetes/kubernetes#77988) after a pass working from
// the cache wrote its record, or someone strips the finalizer by hand. The
// next MyApp of the name does not wait in HostConflict for the sweep: it
// deletes the leaked record and registers its own.
func TestLeakedRecordOfAnEarlierMyAppIsReplaced(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	leaked := "myapp-operator/" + testOwnerID + "/" + ns + "/web/0b7a4f60-0000-4000-8000-0000000000bb"
	_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: app.Spec.Host, Type: dns.TypeA, Value: "192.0.2.99", TTL: 300, Owner: leaked})
	g.Expect(err).NotTo(HaveOccurred())

	createReadyMyApp(t, g, app)
	g.Expect(recordsNamed(app.Spec.Host)).To(ConsistOf(And(
		HaveField("Owner", recordOwner(app)), HaveField("Value", defaultTarget))))
	g.Expect(eventReasons(t, ns, "web")).NotTo(ContainElement(eventDNSRecordAdopted), "replaced, not adopted")
}
