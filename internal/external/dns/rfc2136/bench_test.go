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
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
)

// benchOwner is the owner of record i of a benchmark zone: one MyApp each.
func benchOwner(i int) string { return fmt.Sprintf("myapp-operator/bench/app-%d/uid-%d", i, i) }

// BenchmarkDeletionDNSCost measures the DNS calls one MyApp deletion makes
// against an RFC 2136 server, Get(name) then Delete(name, owner), in BIND
// zones of 1,000, 10,000 and 100,000 managed records (each an A record and
// its owner TXT, so twice as many RRs), beside List(owner), the zone
// transfer a deletion used to confirm with, for contrast. Each deleted
// record is written back with the timer stopped, so the zone keeps its
// size. It needs named (BIND 9) and is skipped without it.
//
//	go test ./internal/external/dns/rfc2136/ -run '^$' -bench DeletionDNSCost -benchtime 20x
func BenchmarkDeletionDNSCost(b *testing.B) {
	if _, err := controlplane.NamedPath(); err != nil {
		b.Skip(err)
	}
	for _, size := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("zone=%d", size), func(b *testing.B) {
			srv, err := controlplane.StartBIND(b.Context(), controlplane.BINDOptions{Zone: "bench.test", Seed: func(w io.Writer) error {
				for i := range size {
					if _, err := fmt.Fprintf(w, "r%d IN A 10.%d.%d.%d\n%s.r%d IN TXT %q\n",
						i, i>>16&255, i>>8&255, i&255, extdns.OwnerLabel, i, benchOwner(i)); err != nil {
						return err
					}
				}
				return nil
			}})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = srv.Close() })
			key, err := rfc2136.ParseKey(srv.Key())
			if err != nil {
				b.Fatal(err)
			}
			c, err := rfc2136.New(rfc2136.Config{Server: srv.Addr, Zone: srv.Zone, Key: rfc2136.StaticKey(key), Timeout: 10 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			b.Run("get+delete", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					n := i % size
					name := fmt.Sprintf("r%d.%s", n, srv.Zone)
					rec, err := c.Get(b.Context(), name)
					if err != nil || rec.Owner != benchOwner(n) {
						b.Fatalf("Get(%s) = %+v, %v", name, rec, err)
					}
					if err := c.Delete(b.Context(), name, benchOwner(n)); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					rec.State = ""
					if _, err := c.Upsert(b.Context(), rec); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			})
			b.Run("list", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					list, err := c.List(b.Context(), benchOwner(i%size))
					if err != nil || len(list) != 1 {
						b.Fatalf("List = %d records, %v", len(list), err)
					}
				}
			})
		})
	}
}
