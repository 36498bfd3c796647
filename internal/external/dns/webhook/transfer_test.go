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
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// TestInterruptedTransfer states the contract for a transfer made in two
// batches whose second one never goes through (issue 39, D1): the name
// keeps its address, every writer but the transfer reads it as held by no
// one it may take it from, and the transfer called again finishes it
// toward its receiver without touching the address record.
func TestInterruptedTransfer(t *testing.T) {
	for _, sem := range []struct {
		name string
		sem  semantics
	}{{"inmemory", inmemoryLike}, {"last-writer-wins", lastWriterWins}} {
		t.Run(sem.name, func(t *testing.T) {
			f := newFake(t, sem.sem)
			c := newClient(t, f.URL())
			name := "h1.example.com"
			if _, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA)); err != nil {
				t.Fatal(err)
			}
			var batches [][]webhook.Endpoint
			f.beforeApply = func(ch webhook.Changes) (int, bool) {
				batches = append(batches, append(ch.Delete, ch.Create...))
				if len(ch.Create) > 0 {
					return 500, false // every batch that creates fails: the provider went away
				}
				return 0, false
			}
			_, err := c.Transfer(t.Context(), name, ownerA, ownerB)
			_ = wantKind(t, err, external.KindTransient) // only the kind is promised here
			for _, b := range batches {
				for _, ep := range b {
					if ep.RecordType != "TXT" {
						t.Fatalf("the transfer wrote the address record: %+v", ep)
					}
				}
			}
			if values, _ := f.read(t.Context(), name); len(values) != 1 || values[0] != "192.0.2.1" {
				t.Fatalf("after the interrupted transfer the name holds %v", values)
			}
			f.beforeApply = nil

			other := newClient(t, f.URL())
			_, err = other.Upsert(t.Context(), aRecord(name, "192.0.2.9", ownerB+"-other"))
			if e := wantKind(t, err, external.KindConflict); e.Owner != extdns.UnmanagedOwner {
				t.Fatalf("a third writer's conflict names %q; want %q", e.Owner, extdns.UnmanagedOwner)
			}
			if err := other.Delete(t.Context(), name, ownerA); err == nil {
				t.Fatal("the giver's Delete removed a name in the middle of its transfer")
			}

			got, err := other.Transfer(t.Context(), name, ownerA, ownerB)
			if err != nil || got.Owner != ownerB || got.Value != "192.0.2.1" {
				t.Fatalf("the transfer called again = %+v, %v; want the record held by %s", got, err, ownerB)
			}
			if _, err := other.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerB)); err != nil {
				t.Fatalf("the receiver's Upsert after the finished transfer: %v", err)
			}
		})
	}
}
