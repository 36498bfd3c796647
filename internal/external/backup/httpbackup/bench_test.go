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

package httpbackup_test

import (
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

// The benchmarks measure what a reconciler repeats while a backup runs: a
// start that finds its idempotency key already used, and a poll. They run
// against the simulator over loopback, so they include HTTP and JSON on both
// sides.

func BenchmarkStartIdempotent(b *testing.B) {
	sim, url := simtest.Start(b, simulator.Options{Token: testToken})
	c := newClient(b, url)
	ctx := b.Context()
	req := start("shop", "shop/prod", "nightly-2026-01-01")
	if _, err := c.Start(ctx, req); err != nil {
		b.Fatal(err)
	}
	sim.ResetRequestCounts()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Start(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(sim.RequestCount(simulator.ServiceBackup, simulator.OpStart))/float64(b.N), "requests/op")
	if n := len(sim.Backups()); n != 1 {
		b.Fatalf("%d backups, want 1", n)
	}
}

func BenchmarkGet(b *testing.B) {
	sim, url := simtest.Start(b, simulator.Options{Token: testToken})
	c := newClient(b, url)
	ctx := b.Context()
	started, err := c.Start(ctx, start("shop", "shop/prod", "nightly-2026-01-01"))
	if err != nil {
		b.Fatal(err)
	}
	sim.ResetRequestCounts()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, started.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(sim.RequestCount(simulator.ServiceBackup, simulator.OpGet))/float64(b.N), "requests/op")
}
