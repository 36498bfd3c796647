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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// TestAZoneOverTheBodyCapIsAConfigurationProblem is issue 39's D4 on the
// webhook backend: the zone, which the protocol reads whole, grows past
// the reconciler's body cap (another tool's records, through the proxy).
// A MyApp that needs a read says so in DNSReady (DNSZoneTooLarge, naming
// the flag and what to do) with a Warning event of that reason, and its
// deletion waits, saying the same and how to let it go, rather than
// deleting blind or giving up. Once the zone fits again, within six read
// intervals, the deletion ends with both names free.
func TestAZoneOverTheBodyCapIsAConfigurationProblem(t *testing.T) {
	b := dnsBackends()[2]
	b.require(t)
	g := NewWithT(t)
	app := newMyApp(newNamespace(t), "web", b.route)
	createReadyMyApp(t, g, app)
	host := app.Spec.Host
	webhookProxyPad.Store(2 * webhookMaxBody)
	t.Cleanup(func() { webhookProxyPad.Store(0) })
	// The reconciler's client answers from a zone read for 200 ms
	// (--dns-webhook-read-interval): the next pass must need a new one.
	time.Sleep(time.Second)

	// A host change needs both names read.
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
	app.Spec.Host = "moved-" + host
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	eventuallyDNSReason(t, g, app, appsv1alpha1.DNSZoneTooLargeReason)
	g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition).Message).To(And(
		ContainSubstring("--dns-webhook-max-body-size"), ContainSubstring("domain filter")))
	g.Expect(eventReasons(t, app.Namespace, app.Name)).To(ContainElement(eventReason(appsv1alpha1.DNSZoneTooLargeReason)))

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.DeletionTimestamp).NotTo(BeNil())
		c := conditionOf(app, appsv1alpha1.DNSReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(appsv1alpha1.DNSZoneTooLargeReason))
		g.Expect(c.Message).To(ContainSubstring("set spec.deletionPolicy: Orphan"))
	}, timeout, interval).Should(Succeed(), "the deletion waits and says how to let the MyApp go")
	g.Expect(webhookServed(t, host)).To(Equal([]string{defaultTarget}), "nothing was deleted blind")

	webhookProxyPad.Store(0)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app))
	}, timeout, interval).Should(BeTrue(), "the deletion ends once the zone fits")
	g.Expect(webhookServed(t, host)).To(BeEmpty())
	g.Expect(webhookServed(t, "moved-"+host)).To(BeEmpty())
}
