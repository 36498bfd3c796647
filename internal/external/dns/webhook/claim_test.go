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
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

const claimOwnerID = "cluster-a"

// claimAt is where claimOwnerID's claim lives in the fake's zone.
var claimAt = "_myapp-installation." + claimOwnerID + "." + zone

func installationClaim(nonce, cluster string) extdns.InstallationClaim {
	return extdns.InstallationClaim{OwnerID: claimOwnerID, Nonce: nonce, Cluster: cluster, Instance: cluster + "-manager",
		CheckInterval: time.Minute}
}

// wantClaim checks that c reads the claim with nonce, as written.
func wantClaim(t *testing.T, c *webhook.Client, want extdns.InstallationClaim) {
	t.Helper()
	got, err := c.GetInstallationClaim(t.Context(), claimOwnerID)
	if err != nil {
		t.Fatalf("GetInstallationClaim: %v", err)
	}
	if got.Nonce != want.Nonce || got.Cluster != want.Cluster || got.Instance != want.Instance ||
		got.CheckInterval != want.CheckInterval || !got.WrittenAt.Equal(want.WrittenAt) || got.OwnerID != claimOwnerID {
		t.Fatalf("GetInstallationClaim = %+v, want %+v", got, want)
	}
}

// wantOneClaimTXT checks that the zone holds exactly one TXT value at the
// claim's name, holding nonce: a replace deleted what it replaced.
func wantOneClaimTXT(t *testing.T, f *fakeProvider, nonce string) {
	t.Helper()
	eps := f.at(claimAt)
	if len(eps) != 1 || eps[0].RecordType != "TXT" || len(eps[0].Targets) != 1 || !strings.Contains(eps[0].Targets[0], "nonce="+nonce+",") {
		t.Fatalf("the zone holds %+v at %s, want one TXT with nonce %s", eps, claimAt, nonce)
	}
}

// TestInstallationClaimOnEveryClass: on each kind of provider, a claim is
// written as a TXT at _myapp-installation.<owner-id>.<zone>, read back, and
// replaced by another installation's, which the first one reads although
// its own zone read, made just after its own write, is well within its
// read interval on a clock that never moves: a claim check is never
// answered from the cache. The replace leaves one TXT, and no list of
// records ever holds the claim.
func TestInstallationClaimOnEveryClass(t *testing.T) {
	for _, tc := range []struct {
		name string
		sem  semantics
	}{{"transactional", transactional}, {"inmemory", inmemoryLike}, {"last writer wins", lastWriterWins}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.sem)
			clk := newClock()
			slow := func(cfg *webhook.Config) { clk.config(cfg); cfg.ReadInterval = time.Hour }
			a, b := newClient(t, f.URL(), slow), newClient(t, f.URL(), slow)
			ctx := t.Context()
			if _, err := a.GetInstallationClaim(ctx, claimOwnerID); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("GetInstallationClaim of an empty zone: %v", err)
			}
			// A record of a MyApp whose host is under the owner ID's name,
			// so that a list that took the claim for a record would show it.
			if _, err := a.Upsert(ctx, aRecord(claimOwnerID+"."+zone, "192.0.2.1", ownerA)); err != nil {
				t.Fatal(err)
			}

			claimA, err := a.PutInstallationClaim(ctx, installationClaim("aaaa", "uid-a"))
			if err != nil {
				t.Fatal(err)
			}
			if !claimA.WrittenAt.Equal(clk.Now().UTC().Truncate(time.Second)) {
				t.Fatalf("the claim was written at %s, want the client's clock", claimA.WrittenAt)
			}
			wantClaim(t, a, claimA)
			wantOneClaimTXT(t, f, "aaaa")

			claimB, err := b.PutInstallationClaim(ctx, installationClaim("bbbb", "uid-b"))
			if err != nil {
				t.Fatal(err)
			}
			wantOneClaimTXT(t, f, "bbbb")
			// The check costs one zone read, made for it.
			readsBefore := f.zoneReads.Load()
			wantClaim(t, a, claimB)
			if reads := f.zoneReads.Load() - readsBefore; reads != 1 {
				t.Fatalf("a claim check made %d zone reads, want 1", reads)
			}

			// A writes again over B's, as the owner ID claim does when it
			// finds another's: one TXT, A's.
			if claimA, err = a.PutInstallationClaim(ctx, installationClaim("aaaa", "uid-a")); err != nil {
				t.Fatal(err)
			}
			wantOneClaimTXT(t, f, "aaaa")
			wantClaim(t, b, claimA)

			for _, list := range []func() ([]extdns.Record, error){
				func() ([]extdns.Record, error) { return a.List(ctx, "") },
				func() ([]extdns.Record, error) { return a.ListByOwnerPrefix(ctx, "myapp-operator/") },
			} {
				recs, err := list()
				if err != nil || len(recs) != 1 || recs[0].Name != claimOwnerID+"."+zone {
					t.Fatalf("the list is %+v, %v; want the one MyApp record", recs, err)
				}
			}
			if _, err := a.Get(ctx, claimAt); !errors.Is(err, external.ErrInvalid) {
				t.Fatalf("Get of the claim's name: %v", err)
			}
		})
	}
}

// TestInstallationClaimOutcomeUnknown: a claim batch answered with a 500 or
// a closed connection is decided on a read of the zone: applied is
// success, not applied is the server's refusal with the zone unchanged.
func TestInstallationClaimOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		apply   bool
		wantErr bool
	}{
		{"500 after applying", http.StatusInternalServerError, true, false},
		{"connection closed after applying", -1, true, false},
		{"500 without applying", http.StatusInternalServerError, false, true},
		{"503 without applying", http.StatusServiceUnavailable, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, transactional)
			c := newClient(t, f.URL(), func(cfg *webhook.Config) { cfg.ReadInterval = time.Hour })
			before, err := c.PutInstallationClaim(t.Context(), installationClaim("aaaa", "uid-a"))
			if err != nil {
				t.Fatal(err)
			}
			f.beforeApply = func(ch webhook.Changes) (int, bool) { return tc.status, tc.apply }
			_, err = c.PutInstallationClaim(t.Context(), installationClaim("bbbb", "uid-b"))
			f.beforeApply = nil
			if !tc.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				wantOneClaimTXT(t, f, "bbbb")
				return
			}
			e := wantKind(t, err, external.KindTransient)
			if !strings.Contains(e.Message, "unchanged") {
				t.Fatalf("the refusal says %q", e.Message)
			}
			wantOneClaimTXT(t, f, "aaaa")
			wantClaim(t, c, before)
		})
	}
}

// TestInstallationClaimRaceOnAnAtomicProvider: another writer replaces the
// claim between this client's read and its write; the exact delete fails,
// the client reads again and replaces the claim now there.
func TestInstallationClaimRaceOnAnAtomicProvider(t *testing.T) {
	f := newFake(t, transactional)
	c := newClient(t, f.URL(), func(cfg *webhook.Config) { cfg.ReadInterval = time.Hour })
	other := newClient(t, f.URL())
	if _, err := c.PutInstallationClaim(t.Context(), installationClaim("aaaa", "uid-a")); err != nil {
		t.Fatal(err)
	}
	if _, err := other.PutInstallationClaim(t.Context(), installationClaim("bbbb", "uid-b")); err != nil {
		t.Fatal(err)
	}
	refused := 0
	f.beforeApply = func(ch webhook.Changes) (int, bool) {
		if err := f.apply(ch); err != nil {
			refused++
			return http.StatusInternalServerError, false
		}
		return http.StatusNoContent, false
	}
	mine, err := c.PutInstallationClaim(t.Context(), installationClaim("cccc", "uid-a"))
	if err != nil {
		t.Fatal(err)
	}
	if refused != 1 {
		t.Fatalf("%d batches were refused, want the one planned on the stale read", refused)
	}
	wantOneClaimTXT(t, f, "cccc")
	wantClaim(t, other, mine)
}

// TestInstallationClaimEdges: what is at the claim's name besides a claim.
func TestInstallationClaimEdges(t *testing.T) {
	t.Run("a TXT that is not a claim is none, and is replaced", func(t *testing.T) {
		f := newFake(t, transactional)
		f.seed(webhook.Endpoint{DNSName: claimAt, RecordType: "TXT", Targets: []string{`"hello"`}, RecordTTL: 60})
		c := newClient(t, f.URL())
		if _, err := c.GetInstallationClaim(t.Context(), claimOwnerID); !errors.Is(err, external.ErrNotFound) {
			t.Fatalf("GetInstallationClaim: %v", err)
		}
		if _, err := c.PutInstallationClaim(t.Context(), installationClaim("aaaa", "uid-a")); err != nil {
			t.Fatal(err)
		}
		wantOneClaimTXT(t, f, "aaaa")
	})
	t.Run("a name external-dns's registry claims is a conflict, untouched", func(t *testing.T) {
		f := newFake(t, transactional)
		heritage := webhook.Endpoint{DNSName: claimAt, RecordType: "TXT", RecordTTL: 300,
			Targets: []string{`"heritage=external-dns,external-dns/owner=prod,external-dns/resource=crd/x/y"`}}
		f.seed(heritage)
		c := newClient(t, f.URL())
		_, err := c.PutInstallationClaim(t.Context(), installationClaim("aaaa", "uid-a"))
		if e := wantKind(t, err, external.KindConflict); e.Owner != "(external-dns owner=prod)" {
			t.Fatalf("conflict %v", err)
		}
		if got := f.at(claimAt); len(got) != 1 || got[0].Targets[0] != heritage.Targets[0] {
			t.Fatalf("the zone holds %+v", got)
		}
	})
	t.Run("two claims at once read as the one written last, and a write replaces both", func(t *testing.T) {
		f := newFake(t, lastWriterWins)
		f.seed(webhook.Endpoint{DNSName: claimAt, RecordType: "TXT", RecordTTL: 60, Targets: []string{
			`"nonce=bbbb,cluster=uid-b,instance=b,every=60,written=2026-11-27T12:00:05Z"`,
			`"nonce=aaaa,cluster=uid-a,instance=a,every=60,written=2026-11-27T12:00:00Z"`,
		}})
		c := newClient(t, f.URL())
		got, err := c.GetInstallationClaim(t.Context(), claimOwnerID)
		if err != nil || got.Nonce != "bbbb" || got.Cluster != "uid-b" {
			t.Fatalf("GetInstallationClaim = %+v, %v; want b's, written last", got, err)
		}
		if _, err := c.PutInstallationClaim(t.Context(), installationClaim("cccc", "uid-c")); err != nil {
			t.Fatal(err)
		}
		wantOneClaimTXT(t, f, "cccc")
	})
}

// TestInstallationClaimLimits: what a claim write refuses or shortens, and
// a write that has nothing to change.
func TestInstallationClaimLimits(t *testing.T) {
	t.Run("a long cluster and instance are shortened to fit one TXT string", func(t *testing.T) {
		f := newFake(t, transactional)
		c := newClient(t, f.URL())
		claim := installationClaim(strings.Repeat("a", 64), strings.Repeat("c", 200)+"-uid")
		claim.Instance = strings.Repeat("i", 200) + "-pod"
		stored, err := c.PutInstallationClaim(t.Context(), claim)
		if err != nil {
			t.Fatal(err)
		}
		eps := f.at(claimAt)
		if len(eps) != 1 || len(eps[0].Targets[0]) > 255+2 {
			t.Fatalf("the zone holds %+v", eps)
		}
		if stored.Nonce != claim.Nonce || !strings.HasSuffix(stored.Instance, "-pod") || !strings.HasSuffix(stored.Cluster, "-uid") {
			t.Fatalf("stored %+v", stored)
		}
		wantClaim(t, c, stored)
	})
	t.Run("the same claim written twice in one second is written once", func(t *testing.T) {
		f := newFake(t, lastWriterWins)
		clk := newClock()
		c := newClient(t, f.URL(), clk.config)
		first, err := c.PutInstallationClaim(t.Context(), installationClaim("aaaa", "uid-a"))
		if err != nil {
			t.Fatal(err)
		}
		writes := f.writes.Load()
		if _, err := c.PutInstallationClaim(t.Context(), installationClaim("aaaa", "uid-a")); err != nil {
			t.Fatal(err)
		}
		if n := f.writes.Load() - writes; n != 0 {
			t.Fatalf("the second write sent %d batches", n)
		}
		wantOneClaimTXT(t, f, "aaaa")
		wantClaim(t, c, first)
	})
	t.Run("a domain filter that leaves out the claim's name", func(t *testing.T) {
		f := newFake(t, transactional)
		// The fake applies its filter as a provider does, so the filter
		// covers the owner records and leaves out only the claims.
		f.filter = webhook.DomainFilter{RegexInclude: `\.example\.com$`, RegexExclude: `^_myapp-installation\.`}
		c := newClient(t, f.URL())
		_, err := c.PutInstallationClaim(t.Context(), installationClaim("aaaa", "uid-a"))
		if e := wantKind(t, err, external.KindInvalid); !strings.Contains(e.Message, "domain filter") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("a MyApp record at the claim's name is refused", func(t *testing.T) {
		f := newFake(t, transactional)
		c := newClient(t, f.URL())
		_, err := c.Upsert(t.Context(), aRecord(claimAt, "192.0.2.1", ownerA))
		if e := wantKind(t, err, external.KindInvalid); !strings.Contains(e.Message, "reserved for installation claims") {
			t.Fatalf("error %v", err)
		}
		if got := f.at(claimAt); len(got) != 0 {
			t.Fatalf("the zone holds %+v", got)
		}
	})
}
