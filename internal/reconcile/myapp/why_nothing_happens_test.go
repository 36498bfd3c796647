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
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// TestDNSFailuresSayWhyNothingHappens: while the DNS service fails,
// status.dnsFailures counts the failed calls and says when the last one
// failed and when the next one comes (the service's Retry-After when it
// sent one, the backoff otherwise); DNSReady's message stays the same from
// one failure to the next; the first success clears it.
func TestDNSFailuresSayWhyNothingHappens(t *testing.T) {
	g := NewWithT(t)
	sim.SetFault(simulator.ServiceDNS, simulator.OpUpsert, simulator.Fault{Status: 429, RetryAfter: 2 * time.Second})
	t.Cleanup(func() { sim.ClearFault(simulator.ServiceDNS, simulator.OpUpsert) })
	app := newMyApp(newNamespace(t), "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())

	var first appsv1alpha1.FailureStatus
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Status.DNSFailures).NotTo(BeNil())
		first = *app.Status.DNSFailures
	}, timeout, interval).Should(Succeed())
	g.Expect(first.NextRetryTime).NotTo(BeNil(), "a retry is scheduled")
	g.Expect(first.NextRetryTime.Sub(first.LastFailureTime.Time)).To(BeNumerically(">=", time.Second),
		"no sooner than the service's Retry-After")

	// A failure's status write starts another pass, which fails too; it
	// must not write again before the planned retry, or the two would
	// loop around the backoff.
	before := writes.statusCount(app.Namespace)
	time.Sleep(3 * time.Second)
	g.Expect(writes.statusCount(app.Namespace)-before).To(BeNumerically("<=", 4),
		"about one status write per retry (Retry-After 2s), not one per pass")

	// The next failures count, and nothing else about the condition moves
	// (the first failure was the write; the gate then fails the reads).
	nextFailure := func(after int32) {
		g.Eventually(func(g Gomega) int32 {
			g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			return app.Status.DNSFailures.Count
		}, timeout, interval).Should(BeNumerically(">", after))
	}
	nextFailure(first.Count)
	g.Expect(app.Status.DNSFailures.LastFailureTime.Time).NotTo(BeTemporally("<", first.LastFailureTime.Time))
	reason := conditionOf(app, appsv1alpha1.DNSReadyCondition).Reason
	nextFailure(app.Status.DNSFailures.Count)
	// The message says which call failed (the write, or the read of the
	// next pass) and how the service answered, never when or how often:
	// that is dnsFailures' job.
	g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition)).To(And(
		HaveField("Reason", reason),
		HaveField("Message", MatchRegexp(`^Could not (read|write) the DNS record for `+app.Spec.Host+`: [^0-9]*$`))),
		"the same failure reads the same")

	sim.ClearFault(simulator.ServiceDNS, simulator.OpUpsert)
	eventuallyReady(t, g, app)
	g.Expect(app.Status.DNSFailures).To(BeNil(), "a success clears the failures")
}
