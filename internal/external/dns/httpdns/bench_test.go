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

package httpdns_test

import (
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

// The benchmarks measure the paths a reconciler takes on every pass once its
// record exists: an upsert that changes nothing, and a poll. They run against
// the simulator over loopback, so they include HTTP and JSON on both sides.

func benchmarkClient(b *testing.B) (*simulator.Server, dns.Client) {
	sim, url := simtest.Start(b, simulator.Options{Token: testToken})
	c := newClient(b, url)
	if _, err := c.Upsert(b.Context(), record("www.example.com", "team-a")); err != nil {
		b.Fatal(err)
	}
	sim.ResetRequestCounts()
	return sim, c
}

// reportRequests shows that each operation cost exactly one HTTP request.
func reportRequests(b *testing.B, sim *simulator.Server, op simulator.Operation) {
	b.ReportMetric(float64(sim.RequestCount(simulator.ServiceDNS, op))/float64(b.N), "requests/op")
}

func BenchmarkUpsertUnchanged(b *testing.B) {
	sim, c := benchmarkClient(b)
	ctx := b.Context()
	rec := record("www.example.com", "team-a")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Upsert(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	reportRequests(b, sim, simulator.OpUpsert)
}

func BenchmarkGet(b *testing.B) {
	sim, c := benchmarkClient(b)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Get(ctx, "www.example.com"); err != nil {
			b.Fatal(err)
		}
	}
	reportRequests(b, sim, simulator.OpGet)
}

func BenchmarkGetParallel(b *testing.B) {
	sim, c := benchmarkClient(b)
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Get(ctx, "www.example.com"); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRequests(b, sim, simulator.OpGet)
}
