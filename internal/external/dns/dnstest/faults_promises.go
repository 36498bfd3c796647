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

package dnstest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// maxWrites bounds the write requests one change or transfer may make; the
// fault promises put a fault on each of them in turn.
const maxWrites = 4

// operation is a change of a name's value or of its holder, from the
// record ownerA holds at firstAddress to want.
type operation struct {
	name string
	run  func(t *testing.T, c dns.Client, name string) error
	want func(name string) (value, owner string)
}

var operations = []operation{
	{"change", func(t *testing.T, c dns.Client, name string) error {
		_, err := c.Upsert(t.Context(), aRecord(name, newAddress, ownerA))
		return err
	}, func(string) (string, string) { return newAddress, ownerA }},
	{"transfer", func(t *testing.T, c dns.Client, name string) error {
		_, err := c.Transfer(t.Context(), name, ownerA, ownerB)
		return err
	}, func(string) (string, string) { return firstAddress, ownerB }},
}

var backendPromises = []struct {
	name  string
	check func(t *testing.T, b Backend, host func(string) string)
}{
	{"a name never reads without its address while it changes hands or values", func(t *testing.T, b Backend, host func(string) string) {
		needFaults(t, b)
		for _, op := range operations {
			misses, reads, tried := 0, 0, 0
			for k := 1; k <= maxWrites; k++ {
				name := host(fmt.Sprintf("hold-%s-%d", op.name, k))
				mustUpsert(t, b.Client, aRecord(name, firstAddress, ownerA))
				r := startReader(t.Context(), b.Read, name)
				b.Faults.Arm(Hold, k)
				err := op.run(t, b.Client, name)
				unmet := b.Faults.Disarm()
				n, m, errs, lastErr := r.stop(t.Context(), b.Read, name)
				if errs > 0 {
					t.Fatalf("%s, write %d held: %d of %d reads failed: %v", op.name, k, errs, n, lastErr)
				}
				if err != nil {
					t.Fatalf("%s, write %d held: %v", op.name, k, err)
				}
				value, owner := op.want(name)
				wantRecord(t, b.Client, name, value, owner)
				reads, misses = reads+n, misses+m
				if m > 0 {
					t.Errorf("%s, write %d held for %v: %d of %d reads found %s without an address", op.name, k, HoldFor, m, n, name)
				}
				if unmet {
					break
				}
				tried++
			}
			t.Logf("%s with each write held in turn: %d holds, %d reads, %d without an address", op.name, tried, reads, misses)
		}
	}},
	{"a failure in any single write leaves the name with the giver or the receiver, and the next call finishes it",
		func(t *testing.T, b Backend, host func(string) string) {
			needFaults(t, b)
			for _, op := range operations {
				for _, fault := range []Fault{Fail, Lose, Down} {
					misses, tried := 0, 0
					for k := 1; k <= maxWrites; k++ {
						name := host(fmt.Sprintf("%s-%s-%d", fault, op.name, k))
						mustUpsert(t, b.Client, aRecord(name, firstAddress, ownerA))
						r := startReader(t.Context(), b.Read, name)
						b.Faults.Arm(fault, k)
						first := op.run(t, b.Client, name)
						unmet := b.Faults.Disarm()
						// A third writer finds the name held, by the giver, the
						// receiver, or no one it can take it from.
						_, err := b.Client.Upsert(t.Context(), aRecord(name, otherAddress, ownerC))
						var e *external.Error
						if !errors.As(err, &e) || e.Kind != external.KindConflict || e.Owner == ownerC {
							t.Fatalf("%s, write %d %s (the call answered %v): a third writer's Upsert answered %v; want a conflict",
								op.name, k, fault, first, err)
						}
						if err := op.run(t, b.Client, name); err != nil {
							t.Fatalf("%s, write %d %s (the call answered %v): the next call: %v", op.name, k, fault, first, err)
						}
						value, owner := op.want(name)
						wantRecord(t, b.Client, name, value, owner)
						_, m, errs, lastErr := r.stop(t.Context(), b.Read, name)
						if errs > 0 {
							t.Fatalf("%s, write %d %s: reads failed: %v", op.name, k, fault, lastErr)
						}
						misses += m
						if unmet {
							break
						}
						tried++
					}
					t.Logf("%s with each write %s in turn: %d faults injected, %d reads without an address", op.name, fault, tried, misses)
					if misses > 0 {
						t.Errorf("%s with each write %s in turn: %d reads found the name without an address", op.name, fault, misses)
					}
				}
			}
		}},
	{"a deletion never trusts a cached absence", func(t *testing.T, b Backend, host func(string) string) {
		if b.Peer == nil || b.Read == nil {
			t.Skip("the backend gives no second client or no way to read the server")
		}
		name := host("cached-absence")
		if _, err := b.Client.Get(t.Context(), name); !errors.Is(err, external.ErrNotFound) {
			t.Fatalf("Get of a name never written: %v; want NotFound", err)
		}
		mustUpsert(t, b.Peer, aRecord(name, firstAddress, ownerA))
		if err := b.Client.Delete(t.Context(), name, ownerA); err != nil {
			t.Fatalf("Delete of a record another client wrote: %v", err)
		}
		if values, err := b.Read(t.Context(), name); err != nil || len(values) != 0 {
			t.Fatalf("after the Delete the server holds %v (%v): the deletion trusted its cached absence", values, err)
		}
	}},
}

func needFaults(t *testing.T, b Backend) {
	t.Helper()
	if b.Faults == nil || b.Read == nil {
		t.Skip("the backend gives no fault layer or no way to read the server")
	}
}
