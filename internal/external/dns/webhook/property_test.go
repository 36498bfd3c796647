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
				f := newFake(t, sem)
				clk := newClock()
				clients := []*webhook.Client{newClient(t, f.URL(), clk.config), newClient(t, f.URL(), clk.config)}
				truth := newClient(t, f.URL(), func(cfg *webhook.Config) { cfg.ReadInterval = 1 })
				for _, c := range append(clients, truth) {
					if _, err := c.Start(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
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
					// Faults on about a third of the calls.
					if fault = rng.IntN(5) % 3; fault > 0 && rng.IntN(2) == 0 {
						fault = 0
					}
					err := randomCall(t, rng, clients[ci], ci)
					fault = 0
					if err != nil && !errors.Is(err, external.ErrConflict) && !errors.Is(err, external.ErrNotFound) &&
						!errors.Is(err, external.ErrTransient) {
						t.Fatalf("step %d: %v", step, err)
					}
					if rng.IntN(4) == 0 {
						clk.Advance(webhook.DefaultReadInterval)
					}
					for i := range 3 {
						wantSameRecord(t, fmt.Sprintf("step %d: client %d", step, ci), clients[ci], truth, fmt.Sprintf("n%d-%d.example.com", ci, i))
					}
				}
			})
		}
	}
}

// propertyOwners are each installation's two owners.
var propertyOwners = [][]string{
	{"myapp-operator/a/ns/x/uid-1", "myapp-operator/a/ns/y/uid-2"},
	{"myapp-operator/b/ns/x/uid-1", "myapp-operator/b/ns/y/uid-2"},
}

// randomCall makes one call of installation ci, drawn from rng: an upsert
// of a value (an A or a CNAME) and TTL, a transfer between its two owners,
// or a delete, on one of its three names.
func randomCall(t *testing.T, rng *rand.Rand, c *webhook.Client, ci int) error {
	name := fmt.Sprintf("n%d-%d.example.com", ci, rng.IntN(3))
	owner := propertyOwners[ci][rng.IntN(2)]
	switch rng.IntN(4) {
	case 0, 1:
		values := []string{"192.0.2.1", "192.0.2.2", "lb.example.net"}
		v := values[rng.IntN(len(values))]
		typ := extdns.TypeA
		if v == "lb.example.net" {
			typ = extdns.TypeCNAME
		}
		_, err := c.Upsert(t.Context(), extdns.Record{Name: name, Type: typ, Value: v, TTL: int32(60 * (1 + rng.IntN(2))), Owner: owner})
		return err
	case 2:
		_, err := c.Transfer(t.Context(), name, propertyOwners[ci][0], propertyOwners[ci][1])
		return err
	default:
		return c.Delete(t.Context(), name, owner)
	}
}

// wantSameRecord checks that c reads name from its cache as truth, a
// client that reads the zone every time, does.
func wantSameRecord(t *testing.T, at string, c, truth *webhook.Client, name string) {
	t.Helper()
	cached, cerr := c.Get(t.Context(), name)
	held, herr := truth.Get(t.Context(), name)
	if !errors.Is(cerr, external.ErrNotFound) && cerr != nil {
		t.Fatalf("%s: cached Get(%s): %v", at, name, cerr)
	}
	if (cerr == nil) != (herr == nil) || cached.Owner != held.Owner || cached.Value != held.Value ||
		cached.Type != held.Type || cached.TTL != held.TTL {
		t.Fatalf("%s reads %s as %+v (%v) from its cache; the provider holds %+v (%v)", at, name, cached, cerr, held, herr)
	}
}
