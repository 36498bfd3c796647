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

	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// BenchmarkSteadyStateReconcile measures the pass every MyApp at rest costs
// on each drift check: reads from the informer cache, one read from the DNS
// service, and no write. The clock moves one drift interval per pass, so
// every pass is a check. It runs against the suite's control plane and
// simulator, so it includes a real HTTP round trip.
func BenchmarkSteadyStateReconcile(b *testing.B) {
	ns := fixtures.CreateNamespace(b, k8sClient, "bench")
	ctx := b.Context()
	app := newMyApp(ns, "web")
	if err := k8sClient.Create(ctx, app); err != nil {
		b.Fatal(err)
	}
	fixtures.EventuallyReady(ctx, gomega.NewWithT(b), k8sClient, timeout, app)
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)}
	writesBefore := writes.count(ns)

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		suiteClock.step(driftCheckInterval)
		if _, err := reconciler.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := writes.count(ns) - writesBefore; n != 0 {
		b.Fatalf("a steady-state reconcile wrote %d times", n)
	}
}
