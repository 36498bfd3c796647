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
	"math/rand/v2"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// TestCachedReadsShowWhatTheProviderHolds runs seeded sequences of writes
// by two installations (two clients) on a few names, with the provider
// sometimes answering 500 after or instead of applying a batch, and states
// the cache's promise: after any call, what a client reads from its cached
// zone read for the names it wrote is what the provider holds, as a client
// with no cache reads it, except for another installation's writes since
// its last zone read. Each client here writes only its own names, so for
// them the two must agree exactly.
func TestCachedReadsShowWhatTheProviderHolds(t *testing.T) {
	for _, sem := range []semantics{transactional, inmemoryLike} {
		for seed := range uint64(40) {
			t.Run(fmt.Sprintf("semantics=%d/seed=%d", sem, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 35))
				f := newFake(t, sem, zone)
				clk := newClock()
				clients := []*webhook.Client{newClient(t, f.URL(), clk.config), newClient(t, f.URL(), clk.config)}
				for _, c := range clients {
					if _, err := c.Start(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				truthClient := newClient(t, f.URL(), func(cfg *webhook.Config) { cfg.ReadInterval = 1 })
				if _, err := truthClient.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				owners := [][]string{
					{"myapp-operator/a/ns/x/uid-1", "myapp-operator/a/ns/y/uid-2"},
					{"myapp-operator/b/ns/x/uid-1", "myapp-operator/b/ns/y/uid-2"},
				}
				values := []string{"192.0.2.1", "192.0.2.2", "lb.example.net"}
				fault := 0 // 0: none, 1: apply then 500, 2: 500 without applying
				f.beforeApply = func(webhook.Changes) (int, bool) {
					switch fault {
					case 1:
						return 500, true
					case 2:
						return 500, false
					}
					return 0, false
				}
				for step := range 40 {
					ci := rng.IntN(2)
					c := clients[ci]
					name := fmt.Sprintf("n%d-%d.example.com", ci, rng.IntN(3))
					owner := owners[ci][rng.IntN(2)]
					fault = rng.IntN(5) % 3 // faults on about a third of the calls
					if fault > 0 && rng.IntN(2) == 0 {
						fault = 0
					}
					var err error
					switch op := rng.IntN(4); op {
					case 0, 1:
						v := values[rng.IntN(len(values))]
						typ := extdns.TypeA
						if v == "lb.example.net" {
							typ = extdns.TypeCNAME
						}
						_, err = c.Upsert(t.Context(), extdns.Record{Name: name, Type: typ, Value: v, TTL: int32(60 * (1 + rng.IntN(2))), Owner: owner})
					case 2:
						_, err = c.Transfer(t.Context(), name, owners[ci][0], owners[ci][1])
					case 3:
						err = c.Delete(t.Context(), name, owner)
					}
					fault = 0
					if err != nil && !errors.Is(err, external.ErrConflict) && !errors.Is(err, external.ErrNotFound) &&
						!errors.Is(err, external.ErrTransient) {
						t.Fatalf("step %d: %v", step, err)
					}
					if rng.IntN(4) == 0 {
						clk.Advance(webhook.DefaultReadInterval)
					}
					for i := range 3 {
						n := fmt.Sprintf("n%d-%d.example.com", ci, i)
						cached, cerr := c.Get(t.Context(), n)
						truth, terr := truthClient.Get(t.Context(), n)
						if !errors.Is(cerr, external.ErrNotFound) && cerr != nil {
							t.Fatalf("step %d: cached Get(%s): %v", step, n, cerr)
						}
						if (cerr == nil) != (terr == nil) || cached.Owner != truth.Owner || cached.Value != truth.Value ||
							cached.Type != truth.Type || cached.TTL != truth.TTL {
							t.Fatalf("step %d: client %d reads %s as %+v (%v) from its cache; the provider holds %+v (%v)",
								step, ci, n, cached, cerr, truth, terr)
						}
					}
				}
			})
		}
	}
}
