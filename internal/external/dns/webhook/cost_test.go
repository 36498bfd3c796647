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
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// TestEachOperationReadsTheZoneAtMostOnce measures what each operation
// costs, by provider class, on a zone that also holds 1,000 other MyApps'
// records: the requests, the zone reads (GET /records, the whole zone), the
// batches (POST /records) and the bytes both ways, with a cold cache (older
// than ReadInterval, so the operation reads the zone) and a warm one (a
// read just before). It states issue 39's D5: no second zone read where
// one answers the question, so an operation whose answers come back reads
// the zone at most once, and not at all on a warm cache unless its write
// must be checked by reading (a provider whose batches are not a
// compare-and-swap). The table it logs is docs/webhook.md's "What each
// operation costs".
func TestEachOperationReadsTheZoneAtMostOnce(t *testing.T) {
	const others = 1_000
	name := "web.shop.example.com"
	ownerOrphaned := strings.Replace(ownerA, "myapp-operator/", "myapp-operator-orphaned/", 1)
	type op struct {
		name string
		do   func(c *webhook.Client) error
	}
	ops := []op{
		{"create", func(c *webhook.Client) error {
			_, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA))
			return err
		}},
		{"change value", func(c *webhook.Client) error {
			_, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.2", ownerA))
			return err
		}},
		{"transfer (mark)", func(c *webhook.Client) error {
			_, err := c.Transfer(t.Context(), name, ownerA, ownerOrphaned)
			return err
		}},
		{"transfer (unmark)", func(c *webhook.Client) error {
			_, err := c.Transfer(t.Context(), name, ownerOrphaned, ownerA)
			return err
		}},
		{"read", func(c *webhook.Client) error { _, err := c.Get(t.Context(), name); return err }},
		{"delete", func(c *webhook.Client) error { return c.Delete(t.Context(), name, ownerA) }},
	}
	table := make([]string, 0, len(ops)*2*3)
	for _, sem := range []struct {
		name string
		sem  semantics
	}{{"transactional (Route 53, Cloud DNS)", transactional}, {"inmemory-like (two batches)", inmemoryLike},
		{"last-writer-wins (rfc2136)", lastWriterWins}} {
		for _, warm := range []bool{false, true} {
			f := newFake(t, sem.sem)
			seedMyApps(f, others)
			clk := newClock()
			c := newClient(t, f.URL(), clk.config, func(cfg *webhook.Config) { cfg.MaxBodyBytes = 1 << 30 })
			if _, err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, o := range ops {
				clk.Advance(webhook.DefaultReadInterval)
				if warm {
					if _, err := c.Get(t.Context(), name); err != nil && !errors.Is(err, external.ErrNotFound) {
						t.Fatalf("%s: warming the cache: %v", sem.name, err)
					}
				}
				before := c.Traffic()
				if err := o.do(c); err != nil {
					t.Fatalf("%s, %s: %v", sem.name, o.name, err)
				}
				d := c.Traffic()
				reads, writes := d.ZoneReads-before.ZoneReads, d.Writes-before.Writes
				requests := d.Requests - before.Requests
				bytes := d.BytesSent + d.BytesReceived - before.BytesSent - before.BytesReceived
				cache := map[bool]string{false: "cold", true: "warm"}[warm]
				table = append(table, fmt.Sprintf("| %s | %s | %s | %d | %d | %d | %d |", sem.name, o.name, cache, requests, reads,
					writes, bytes))
				if reads > 1 {
					t.Errorf("%s, %s, %s cache: %d zone reads where one answers the question", sem.name, o.name, cache, reads)
				}
				if warm && reads > 0 && sem.sem == transactional {
					t.Errorf("%s, %s, warm cache: read the zone %d times; a compare-and-swap provider's answer needs no read",
						sem.name, o.name, reads)
				}
			}
		}
	}
	t.Logf("a zone of %d other MyApps; per operation:\n| provider | operation | cache | requests | zone reads | batches | bytes |\n| --- | --- | --- | ---: | ---: | ---: | ---: |\n%s",
		others, strings.Join(table, "\n"))
}
