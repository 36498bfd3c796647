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

// Package dnstest is the conformance suite of the dns.Client contract: the
// interface's comments as tests, which every backend runs against its own
// server from its own tests (as testing/fstest.TestFS does for fs.FS).
//
// It covers the calls as each backend's comments promise them when the
// server answers: create, repeat, change, conflict, delete, transfer and
// the lists. A backend that gives the suite its fault layer (Faults) and a
// way to read the server past the client (Read) also runs the promises
// about writes that half-apply (faults_promises.go): a name never reads
// without its address while it changes hands or values, a failure in any
// single write request leaves the name with the giver or the receiver, and
// the next call finishes it. One that gives a second client on the same
// server (Peer) runs the promise that a deletion never trusts a cached
// absence.
package dnstest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// Backend is a client under test and the zone it writes in.
type Backend struct {
	Client dns.Client
	Zone   string
	// Faults is the fault layer every write request of Client goes
	// through; nil skips the fault promises.
	Faults *Faults
	// Read reads a name at the server past Client's cache; nil skips the
	// fault promises.
	Read ReadFunc
	// Peer is a second client on the same server, as another replica or
	// installation; nil skips the promise about cached absences.
	Peer dns.Client
}

// Owners the suite writes as: two installations' MyApps, of one family.
const (
	ownerA = "myapp-operator/conformance/shop/web/uid-a"
	ownerB = "myapp-operator/conformance/blog/web/uid-b"
	ownerC = "myapp-operator/conformance/other/web/uid-c"
	family = "myapp-operator/conformance/"
)

// Addresses the suite writes (TEST-NET-1, RFC 5737): the one a name is
// first written with, the one a change moves it to, and a third writer's.
const (
	firstAddress = "192.0.2.1"
	newAddress   = "192.0.2.2"
	otherAddress = "192.0.2.9"
)

// RunConformance runs every promise of the contract as a subtest, each on a
// backend newBackend returns for it.
func RunConformance(t *testing.T, newBackend func(t *testing.T) Backend) {
	for _, p := range promises {
		t.Run(p.name, func(t *testing.T) {
			b := newBackend(t)
			p.check(t, b.Client, func(label string) string { return label + ".conformance." + b.Zone })
		})
	}
	for _, p := range backendPromises {
		t.Run(p.name, func(t *testing.T) {
			b := newBackend(t)
			p.check(t, b, func(label string) string { return label + ".conformance." + b.Zone })
		})
	}
}

var promises = []struct {
	name  string
	check func(t *testing.T, c dns.Client, host func(string) string)
}{
	{"a create is read back and repeated for free", func(t *testing.T, c dns.Client, host func(string) string) {
		name := host("create")
		got := mustUpsert(t, c, aRecord(name, firstAddress, ownerA))
		if got.Name != name || got.Value != firstAddress || got.Owner != ownerA {
			t.Fatalf("Upsert answered %+v", got)
		}
		wantRecord(t, c, name, firstAddress, ownerA)
		again := mustUpsert(t, c, aRecord(name, firstAddress, ownerA))
		if again.Value != firstAddress || again.Owner != ownerA {
			t.Fatalf("a repeated Upsert answered %+v", again)
		}
	}},
	{"a change is read back", func(t *testing.T, c dns.Client, host func(string) string) {
		name := host("change")
		mustUpsert(t, c, aRecord(name, firstAddress, ownerA))
		mustUpsert(t, c, aRecord(name, newAddress, ownerA))
		wantRecord(t, c, name, newAddress, ownerA)
	}},
	{"another owner's record is a conflict naming it, and stays", func(t *testing.T, c dns.Client, host func(string) string) {
		name := host("conflict")
		mustUpsert(t, c, aRecord(name, firstAddress, ownerA))
		_, err := c.Upsert(t.Context(), aRecord(name, otherAddress, ownerB))
		wantConflict(t, "Upsert by another owner", err, ownerA)
		wantConflict(t, "Delete by another owner", c.Delete(t.Context(), name, ownerB), ownerA)
		wantRecord(t, c, name, firstAddress, ownerA)
	}},
	{"a delete removes the record, and a delete of what is gone succeeds", func(t *testing.T, c dns.Client, host func(string) string) {
		name := host("delete")
		mustUpsert(t, c, aRecord(name, firstAddress, ownerA))
		for i := range 2 {
			if err := c.Delete(t.Context(), name, ownerA); err != nil {
				t.Fatalf("Delete %d: %v", i+1, err)
			}
		}
		if _, err := c.Get(t.Context(), name); !errors.Is(err, external.ErrNotFound) {
			t.Fatalf("Get after Delete: %v; want NotFound", err)
		}
	}},
	{"a transfer changes the owner only, and repeats", func(t *testing.T, c dns.Client, host func(string) string) {
		name := host("transfer")
		mustUpsert(t, c, aRecord(name, firstAddress, ownerA))
		for i := range 2 {
			got, err := c.Transfer(t.Context(), name, ownerA, ownerB)
			if err != nil || got.Owner != ownerB || got.Value != firstAddress {
				t.Fatalf("Transfer %d = %+v, %v", i+1, got, err)
			}
		}
		wantRecord(t, c, name, firstAddress, ownerB)
		_, err := c.Transfer(t.Context(), name, ownerA, ownerA+"-x")
		wantConflict(t, "Transfer from an owner that no longer holds it", err, ownerB)
		if _, err := c.Transfer(t.Context(), host("missing"), ownerA, ownerB); !errors.Is(err, external.ErrNotFound) {
			t.Fatalf("Transfer of a missing record: %v; want NotFound", err)
		}
	}},
	{"the lists hold an owner's records, sorted, and refuse an empty prefix", func(t *testing.T, c dns.Client, host func(string) string) {
		names := []string{host("list-b"), host("list-a"), host("list-c")}
		for i, n := range names {
			owner := ownerA
			if i == 2 {
				owner = ownerB
			}
			mustUpsert(t, c, aRecord(n, fmt.Sprintf("192.0.2.%d", i+1), owner))
		}
		mine, err := c.List(t.Context(), ownerA)
		if err != nil {
			t.Fatal(err)
		}
		if got := recordNames(mine); !slices.Equal(got, []string{host("list-a"), host("list-b")}) {
			t.Fatalf("List(%s) = %v", ownerA, got)
		}
		all, err := c.ListByOwnerPrefix(t.Context(), family)
		if err != nil {
			t.Fatal(err)
		}
		if got := recordNames(all); !slices.IsSorted(got) || !slices.Contains(got, host("list-c")) || len(got) != 3 {
			t.Fatalf("ListByOwnerPrefix(%s) = %v", family, got)
		}
		if _, err := c.ListByOwnerPrefix(t.Context(), ""); !errors.Is(err, external.ErrInvalid) {
			t.Fatalf("ListByOwnerPrefix with an empty prefix: %v; want Invalid", err)
		}
	}},
}

func aRecord(name, value, owner string) dns.Record {
	return dns.Record{Name: name, Type: dns.TypeA, Value: value, TTL: 300, Owner: owner}
}

func mustUpsert(t *testing.T, c dns.Client, rec dns.Record) dns.Record {
	t.Helper()
	got, err := c.Upsert(t.Context(), rec)
	if err != nil {
		t.Fatalf("Upsert %s %s for %s: %v", rec.Name, rec.Value, rec.Owner, err)
	}
	return got
}

func wantRecord(t *testing.T, c dns.Client, name, value, owner string) {
	t.Helper()
	got, err := c.Get(t.Context(), name)
	if err != nil || got.Value != value || got.Owner != owner {
		t.Fatalf("Get(%s) = %+v, %v; want %s held by %s", name, got, err, value, owner)
	}
	if got.State != dns.StatePending && got.State != dns.StateActive {
		t.Fatalf("Get(%s): state %q", name, got.State)
	}
}

func wantConflict(t *testing.T, what string, err error, holder string) {
	t.Helper()
	var e *external.Error
	if !errors.As(err, &e) || e.Kind != external.KindConflict || e.Owner != holder {
		t.Fatalf("%s: %v; want a conflict naming %s", what, err, holder)
	}
}

// recordNames are the names of the list promise's records among recs: a
// backend's zone may hold other promises' records, and anyone's.
func recordNames(recs []dns.Record) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		if !strings.HasPrefix(r.Name, "list-") || !strings.Contains(r.Name, ".conformance.") {
			continue
		}
		out = append(out, r.Name)
	}
	return out
}
