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

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// TestDNSReadyFollowsTheGeneration: a spec change that does not touch the
// record (a new image) needs no read of the DNS service, but the pass that
// handles it still judges the record for the new generation, so DNSReady
// says so. Family 7 of the reliability campaign found DNSReady left at the
// generation of the last read (B2a in docs/reliability.md), which by the
// Condition's contract says it is out of date.
func TestDNSReadyFollowsTheGeneration(t *testing.T) {
	g := NewWithT(t)
	app := newMyApp(newNamespace(t), "web")
	createReadyMyApp(t, g, app)

	g.Eventually(func() error {
		if err := k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		app.Spec.Image = "nginx:1.28"
		return k8sClient.Update(t.Context(), app)
	}, timeout, interval).Should(Succeed())
	eventuallyReady(t, g, app)

	g.Expect(app.Generation).To(BeNumerically(">", 1))
	for _, c := range app.Status.Conditions {
		g.Expect(c.ObservedGeneration).To(Equal(app.Generation), "condition %s: %s", c.Type, c.Message)
	}
	g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition)).To(HaveField("Reason", appsv1alpha1.RecordActiveReason))
}
