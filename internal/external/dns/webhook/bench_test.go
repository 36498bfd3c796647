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

package webhook_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// The cost of the protocol's whole-zone reads, for docs/benchmarks-results.md
// ("Webhook DNS provider: reads and deletions against zone size"). Run with
//
//	go test ./internal/external/dns/webhook -run '^$' -bench . -benchtime 3x
//
// The zone holds this operator's records, a record and an owner TXT per
// MyApp, as the fake provider stores them; the bytes are the JSON the
// protocol carries.

// seedMyApps puts n MyApps' records (A and owner TXT) into the fake zone
// and returns their names.
func seedMyApps(f *fakeProvider, n int) []string {
	names := make([]string, n)
	eps := make([]webhook.Endpoint, 0, 2*n)
	for i := range n {
		names[i] = fmt.Sprintf("app%06d.shop.example.com", i)
		owner := fmt.Sprintf("myapp-operator/9d3b0b6e-5d8e-4c59-8a77-0f3f1b2c4d5e/shop/app%06d/0d9c2f4e-7b1a-4c3d-9e8f-1a2b3c4d5e6f", i)
		eps = append(eps,
			webhook.Endpoint{DNSName: names[i], RecordType: "A", Targets: []string{"192.0.2.10"}, RecordTTL: 300},
			webhook.Endpoint{DNSName: "_myapp-owner." + names[i], RecordType: "TXT", Targets: []string{`"` + owner + `"`},
				RecordTTL: 300, Labels: map[string]string{"ownedRecord": names[i]}},
		)
	}
	f.seed(eps...)
	return names
}

// BenchmarkDeletionCostAgainstZoneSize: a MyApp's deletion is one POST of
// its two endpoints, plus, when the cached zone read is older than
// ReadInterval, one read of the whole zone. Reported per deletion: the
// requests, the bytes sent and read, with a cold cache (the zone is read)
// and a warm one.
func BenchmarkDeletionCostAgainstZoneSize(b *testing.B) {
	for _, zoneMyApps := range []int{1_000, 10_000, 100_000} {
		for _, warm := range []bool{false, true} {
			b.Run(fmt.Sprintf("myapps=%d/cache=%s", zoneMyApps, map[bool]string{false: "cold", true: "warm"}[warm]), func(b *testing.B) {
				f := newFake(b, transactional)
				names := seedMyApps(f, zoneMyApps)
				clk := newClock()
				c := newClient(b, f.URL(), clk.config, func(cfg *webhook.Config) { cfg.MaxBodyBytes = 1 << 30 })
				if _, err := c.Start(b.Context()); err != nil {
					b.Fatal(err)
				}
				var requests, bytes int64
				deleted := 0
				for b.Loop() {
					b.StopTimer()
					if !warm {
						clk.Advance(webhook.DefaultReadInterval)
					} else if _, err := c.Get(b.Context(), names[deleted]); err != nil {
						b.Fatal(err)
					}
					before := c.Traffic()
					b.StartTimer()
					name := names[deleted]
					owner := fmt.Sprintf("myapp-operator/9d3b0b6e-5d8e-4c59-8a77-0f3f1b2c4d5e/shop/app%06d/0d9c2f4e-7b1a-4c3d-9e8f-1a2b3c4d5e6f", deleted)
					if err := c.Delete(b.Context(), name, owner); err != nil {
						b.Fatal(err)
					}
					after := c.Traffic()
					requests += after.Requests - before.Requests
					bytes += after.BytesSent + after.BytesReceived - before.BytesSent - before.BytesReceived
					deleted++
				}
				b.ReportMetric(float64(requests)/float64(deleted), "requests/deletion")
				b.ReportMetric(float64(bytes)/float64(deleted), "wire-bytes/deletion")
				b.ReportMetric(float64(f.zoneBytes.Load())/float64(max(1, f.zoneReads.Load())), "zone-read-bytes")
			})
		}
	}
}

// BenchmarkAnHourOfReads replays an hour of the MyApp controller's steady
// state (every record ACTIVE, nothing to change) against a zone of n
// MyApps, on the test clock, and reports requests and bytes per MyApp per
// hour:
//
//   - drift=list (the default): one ListByOwnerPrefix per drift interval
//     (5m) and the orphan sweep's one per hour;
//   - drift=read: every MyApp's record read once per drift interval, the
//     reads spread evenly over it, and the sweep's list.
//
// It is a model of the controller's calls, not the controller: the figures
// are what this client sends for them.
func BenchmarkAnHourOfReads(b *testing.B) {
	const driftInterval = 5 * time.Minute
	for _, mode := range []string{"list", "read"} {
		for _, n := range []int{100, 1_000, 10_000} {
			b.Run(fmt.Sprintf("drift=%s/myapps=%d", mode, n), func(b *testing.B) {
				f := newFake(b, transactional)
				names := seedMyApps(f, n)
				clk := newClock()
				c := newClient(b, f.URL(), clk.config, func(cfg *webhook.Config) { cfg.MaxBodyBytes = 1 << 30 })
				if _, err := c.Start(b.Context()); err != nil {
					b.Fatal(err)
				}
				const prefix = "myapp-operator/9d3b0b6e-5d8e-4c59-8a77-0f3f1b2c4d5e/"
				var requests, bytes int64
				hours := 0
				for b.Loop() {
					before := c.Traffic()
					switch mode {
					case "list":
						for range int(time.Hour / driftInterval) {
							listAll(b, c, prefix, n)
							clk.Advance(driftInterval)
						}
					case "read":
						step := driftInterval / time.Duration(n)
						for range int(time.Hour / driftInterval) {
							for _, name := range names {
								if got, err := c.Get(b.Context(), name); err != nil || got.State != extdns.StateActive {
									b.Fatalf("Get = %+v, %v", got, err)
								}
								clk.Advance(step)
							}
						}
					}
					listAll(b, c, prefix, n) // the orphan sweep
					after := c.Traffic()
					requests += after.Requests - before.Requests
					bytes += after.BytesSent + after.BytesReceived - before.BytesSent - before.BytesReceived
					hours++
				}
				b.ReportMetric(float64(requests)/float64(hours*n), "requests/myapp-hour")
				b.ReportMetric(float64(bytes)/float64(hours*n), "bytes/myapp-hour")
				b.ReportMetric(float64(requests)/float64(hours), "requests/hour")
			})
		}
	}
}

func listAll(b *testing.B, c *webhook.Client, prefix string, n int) {
	b.Helper()
	recs, err := c.ListByOwnerPrefix(b.Context(), prefix)
	if err != nil || len(recs) != n {
		b.Fatalf("ListByOwnerPrefix = %d records, %v; want %d", len(recs), err, n)
	}
}

// BenchmarkZoneRead is the client's CPU and memory for one read of the
// whole zone: the request, decoding the JSON and indexing the names.
func BenchmarkZoneRead(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("myapps=%d", n), func(b *testing.B) {
			f := newFake(b, transactional)
			seedMyApps(f, n)
			clk := newClock()
			c := newClient(b, f.URL(), clk.config, func(cfg *webhook.Config) { cfg.MaxBodyBytes = 1 << 30 })
			if _, err := c.Start(b.Context()); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				clk.Advance(webhook.DefaultReadInterval)
				if _, err := c.Get(b.Context(), "app000000.shop.example.com"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(f.zoneBytes.Load())/float64(f.zoneReads.Load()), "zone-bytes")
			b.ReportMetric(float64(f.zoneBytes.Load())/float64(f.zoneReads.Load())/float64(n), "bytes/myapp")
		})
	}
}

// seedForeign puts n names of another tool into the fake zone, as
// external-dns writes them: an A record and its TXT registry record.
func seedForeign(f *fakeProvider, n int) {
	eps := make([]webhook.Endpoint, 0, 2*n)
	for i := range n {
		name := fmt.Sprintf("svc%06d.example.com", i)
		eps = append(eps,
			webhook.Endpoint{DNSName: name, RecordType: "A", Targets: []string{"198.51.100.7"}, RecordTTL: 300,
				Labels: map[string]string{"owner": "default", "resource": "service/prod/svc"}},
			webhook.Endpoint{DNSName: "a-" + name, RecordType: "TXT", RecordTTL: 300, Targets: []string{
				`"heritage=external-dns,external-dns/owner=default,external-dns/resource=service/prod/svc"`}},
		)
	}
	f.seed(eps...)
}

// BenchmarkZoneReadMemory is issue 39's D4 figure: a zone of 100,000
// names another tool (external-dns) manages, 200,000 endpoints, read by a
// client that holds none of them. Reported: the bytes the read carried,
// the bytes allocated to read it (alloc-B/read, what the garbage
// collector has to absorb at each read), the heap still held once the
// read is cached (retained-B, what a zone of this size costs the manager
// between reads), measured after a forced collection, and the most heap in
// use during the next read, over the heap before the first (peak-heap-B,
// what the memory limit must leave room for).
func BenchmarkZoneReadMemory(b *testing.B) {
	const names = 100_000
	zone := newFake(b, transactional)
	seedForeign(zone, names)
	body, err := json.Marshal(zone.eps)
	if err != nil {
		b.Fatal(err)
	}
	zone = nil
	var retained, allocated, read, peak float64
	for range b.N {
		// The probe runs on an empty zone, and the zone read measured is
		// the Get's, served as encoded above: the server's own memory is
		// not the client's.
		f := newFake(b, transactional)
		c := newClient(b, f.URL(), func(cfg *webhook.Config) { cfg.ReadInterval = time.Nanosecond })
		if _, err := c.Start(b.Context()); err != nil {
			b.Fatal(err)
		}
		f.mu.Lock()
		f.zoneBody = body
		f.mu.Unlock()
		before := heapAfterGC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		allocBefore := ms.TotalAlloc
		sentBefore := f.zoneBytes.Load()
		if _, err := c.Get(b.Context(), "www.example.com"); !errors.Is(err, external.ErrNotFound) {
			b.Fatalf("reading a free name: %v", err)
		}
		runtime.ReadMemStats(&ms)
		allocated += float64(ms.TotalAlloc - allocBefore)
		read += float64(f.zoneBytes.Load() - sentBefore)
		retained += float64(heapAfterGC()) - float64(before)
		// The next read, as the cache makes it: the state of the last
		// one is held while the new one is built.
		stop := samplePeakHeap()
		if _, err := c.Get(b.Context(), "www.example.com"); !errors.Is(err, external.ErrNotFound) {
			b.Fatalf("reading a free name: %v", err)
		}
		peak += float64(stop()) - float64(before)
		runtime.KeepAlive(c)
	}
	b.ReportMetric(read/float64(b.N), "body-B/read")
	b.ReportMetric(allocated/float64(b.N), "alloc-B/read")
	b.ReportMetric(retained/float64(b.N), "retained-B")
	b.ReportMetric(peak/float64(b.N), "peak-heap-B")
}

// samplePeakHeap samples the heap in use every millisecond until the
// returned function is called, which returns the most it saw (the Go
// runtime's pacing included, GOGC as the process runs).
func samplePeakHeap() func() uint64 {
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}

// heapAfterGC is the live heap after a forced collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
