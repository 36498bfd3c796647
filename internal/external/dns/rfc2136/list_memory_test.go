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

package rfc2136_test

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
)

// mixedZoneOwner is the owner prefix of the records this installation owns
// in a mixedZone; every other record of it is someone else's.
const mixedZoneOwner = "myapp-operator/mine/"

// startMixedZone starts a BIND whose zone holds owned records (an A and its
// owner TXT each, owned by mixedZoneOwner), then unowned A records written
// outside the operator, spread over the zone's names as a real zone's are,
// and returns a client of it.
func startMixedZone(tb testing.TB, owned, unowned int) *rfc2136.Client {
	tb.Helper()
	if _, err := controlplane.NamedPath(); err != nil {
		controlplane.RequireBIND(tb, err)
	}
	b, err := controlplane.StartBIND(tb.Context(), controlplane.BINDOptions{Zone: "mixed.test", Seed: func(w io.Writer) error {
		for i := range owned {
			if _, err := fmt.Fprintf(w, "app%d.shop IN A 192.0.2.1\n%s.app%d.shop IN TXT %q\n",
				i, extdns.OwnerLabel, i, fmt.Sprintf("%sshop/app%d/uid-%d", mixedZoneOwner, i, i)); err != nil {
				return err
			}
		}
		for i := range unowned {
			if _, err := fmt.Fprintf(w, "host%d.team%d IN A 10.%d.%d.%d\n", i, i%97, i>>16&255, i>>8&255, i&255); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = b.Close() })
	key, err := rfc2136.ParseKey(b.Key())
	if err != nil {
		tb.Fatal(err)
	}
	c, err := rfc2136.New(rfc2136.Config{Server: b.Addr, Zone: b.Zone, Key: rfc2136.StaticKey(key), Timeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// peakLiveHeap runs f with the collector at a tenth of its usual
// headroom, so the live heap it reports after each cycle follows what f
// holds on to closely, and returns the highest live heap seen while f ran
// above the one before it.
func peakLiveHeap(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		highest := before
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(s)
			highest = max(highest, s[0].Value.Uint64())
			select {
			case <-stop:
				peak <- highest
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	return <-peak - before
}

// TestListingKeepsOnlyOwnedNames (issue 32 item 4, G5): listing the
// records of this installation in a zone of 50,000 records written by
// others holds on to this installation's records, not to the zone: the
// live heap grows by less than a megabyte while the zone streams by, where
// keeping every A record of it takes over ten.
func TestListingKeepsOnlyOwnedNames(t *testing.T) {
	c := startMixedZone(t, 20, 50_000)
	var n int
	grew := peakLiveHeap(func() {
		list, err := c.ListByOwnerPrefix(t.Context(), mixedZoneOwner)
		if err != nil {
			t.Fatal(err)
		}
		n = len(list)
		for _, r := range list {
			if !strings.HasPrefix(r.Owner, mixedZoneOwner) {
				t.Errorf("listed %+v, not this installation's", r)
			}
		}
	})
	if n != 20 {
		t.Fatalf("listed %d records, want the 20 owned", n)
	}
	t.Logf("the live heap grew by %d KiB while 50,000 unowned records streamed by", grew>>10)
	if grew > 1<<20 {
		t.Fatalf("the live heap grew by %d KiB while listing 20 owned records among 50,000 unowned ones: "+
			"the listing holds on to the records it does not return", grew>>10)
	}
}

// BenchmarkListInAZoneOfUnownedRecords measures one listing of this
// installation's 100 records (the drift pass's, or the sweep's) in a zone
// that also holds 100,000 records written by others. "time" is its time and
// allocations as the manager runs it; "memory" runs it with the collector
// at a tenth of its headroom and reports the peak of the live heap above
// where it started (peak-live-B/op), which is what a listing costs the
// manager's memory limit. It needs named (BIND 9) and is skipped without
// it.
//
//	go test ./internal/external/dns/rfc2136/ -run '^$' -bench ListInAZoneOfUnownedRecords -benchtime 5x
func BenchmarkListInAZoneOfUnownedRecords(b *testing.B) {
	if _, err := controlplane.NamedPath(); err != nil {
		b.Skip(err)
	}
	c := startMixedZone(b, 100, 100_000)
	list := func(b *testing.B) {
		list, err := c.ListByOwnerPrefix(b.Context(), mixedZoneOwner)
		if err != nil || len(list) != 100 {
			b.Fatalf("listed %d records, %v; want 100", len(list), err)
		}
	}
	b.Run("time", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			list(b)
		}
	})
	b.Run("memory", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			peak = max(peak, peakLiveHeap(func() { list(b) }))
		}
		b.ReportMetric(float64(peak), "peak-live-B/op")
	})
}
