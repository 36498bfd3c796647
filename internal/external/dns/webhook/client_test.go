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
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/dnstest"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

const zone = "example.com"

// clock is a test clock the client's read interval runs on.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time             { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration)    { c.ns.Add(int64(d)) }
func (c *clock) config(cfg *webhook.Config) { cfg.Now = c.Now }

func newClient(t testing.TB, url string, mutate ...func(*webhook.Config)) *webhook.Client {
	t.Helper()
	cfg := webhook.Config{URL: url, Zone: zone, RetryWait: time.Millisecond, Timeout: 5 * time.Second}
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantKind(t *testing.T, err error, kind external.Kind) *external.Error {
	t.Helper()
	var e *external.Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Fatalf("want a %s error, got %v", kind, err)
	}
	return e
}

func aRecord(name, value, owner string) extdns.Record {
	return extdns.Record{Name: name, Type: extdns.TypeA, Value: value, TTL: 300, Owner: owner}
}

const (
	ownerA = "myapp-operator/install-a/shop/web/uid-1"
	ownerB = "myapp-operator/install-b/shop/web/uid-2"
)

// TestProbeMeasuresTheClass: the probe tells the three kinds of provider
// apart by what they do, not by what they answer, and leaves nothing
// behind.
func TestProbeMeasuresTheClass(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sem        semantics
		class      extdns.Class
		oneBatch   bool
		wantPhrase string
	}{
		{"transactional", transactional, extdns.ClassAtomic, true, "a race for a name has one winner"},
		{"inmemory", inmemoryLike, extdns.ClassAtomic, false, "in two batches"},
		{"last writer wins", lastWriterWins, extdns.ClassLastWriterWins, false, "detected by the next read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.sem)
			c := newClient(t, f.URL())
			res, err := c.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if res.Class != tc.class || res.ReplaceInOneBatch != tc.oneBatch {
				t.Fatalf("probe = %+v, want class %s, replace in one batch %v", res, tc.class, tc.oneBatch)
			}
			if c.ProviderClass() != res || !strings.Contains(res.Message(), tc.wantPhrase) {
				t.Fatalf("ProviderClass() = %+v, message %q", c.ProviderClass(), res.Message())
			}
			if left := f.at(res.Name); len(left) > 0 {
				t.Fatalf("the probe left %+v behind", left)
			}
			if left := f.at("_myapp-owner." + res.Name); len(left) > 0 {
				t.Fatalf("the probe left %+v behind", left)
			}
		})
	}
}

// TestNegotiation: a server whose domain filter does not cover the zone,
// or that answers another media type, stops the client with a message
// that says which.
func TestNegotiation(t *testing.T) {
	f := newFake(t, transactional)
	f.filter = webhook.DomainFilter{Include: []string{"example.org"}}
	_, err := newClient(t, f.URL()).Start(t.Context())
	if e := wantKind(t, err, external.KindInvalid); !strings.Contains(e.Message, "does not cover zone example.com") {
		t.Fatalf("message %q", e.Message)
	}

	f.filter = webhook.DomainFilter{Include: []string{zone}, Exclude: []string{"example.com"}}
	if _, err := newClient(t, f.URL()).Start(t.Context()); err == nil {
		t.Fatal("a filter that excludes the zone was accepted")
	}

	f.filter = webhook.DomainFilter{RegexInclude: `^shop\.example\.com$`}
	if _, err := newClient(t, f.URL()).Start(t.Context()); err == nil {
		t.Fatal("a regex that matches one name only was accepted for the zone")
	}
	f.filter = webhook.DomainFilter{RegexInclude: `\.example\.com$`}
	if _, err := newClient(t, f.URL()).Start(t.Context()); err != nil {
		t.Fatalf("a regex that matches the names under the zone: %v", err)
	}
	f.filter = webhook.DomainFilter{Include: []string{".example.com"}}
	if _, err := newClient(t, f.URL()).Start(t.Context()); err != nil {
		t.Fatalf("external-dns's .zone filter: %v", err)
	}

	f.filter = webhook.DomainFilter{Include: []string{zone}}
	f.contentType = "application/json"
	_, err = newClient(t, f.URL()).Start(t.Context())
	if e := wantKind(t, err, external.KindInvalid); !strings.Contains(e.Message, "not an external-dns webhook server") {
		t.Fatalf("message %q", e.Message)
	}
}

// TestRecordLifecycleOnEveryClass creates, changes, hands over and deletes
// a record on each kind of provider, and checks what the provider holds at
// each step: the record and one owner TXT at _myapp-owner.<name>, the
// RFC 2136 client's layout.
func TestRecordLifecycleOnEveryClass(t *testing.T) {
	for _, tc := range []struct {
		name string
		sem  semantics
	}{{"transactional", transactional}, {"inmemory", inmemoryLike}, {"last writer wins", lastWriterWins}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.sem)
			clk := newClock()
			c := newClient(t, f.URL(), clk.config)
			name := "www.example.com"
			createAndConfirm(t, f, clk, c, name)
			changeAndHandOver(t, f, c, name)
			deleteTwice(t, f, c, name)
		})
	}
}

// createAndConfirm creates name's record: PENDING until the next zone
// read, ACTIVE then, and a repeated upsert leaves it as it is.
func createAndConfirm(t *testing.T, f *fakeProvider, clk *clock, c *webhook.Client, name string) {
	t.Helper()
	ctx := t.Context()
	rec, err := c.Upsert(ctx, aRecord(name, "192.0.2.10", ownerA))
	if err != nil || rec.State != extdns.StatePending {
		t.Fatalf("create = %+v, %v; want PENDING", rec, err)
	}
	wantHeld(t, f, name, "192.0.2.10", ownerA)
	if got, err := c.Get(ctx, name); err != nil || got.State != extdns.StatePending || got.Owner != ownerA {
		t.Fatalf("Get right after the write = %+v, %v; want PENDING until a zone read confirms it", got, err)
	}
	clk.Advance(webhook.DefaultReadInterval)
	if got, err := c.Get(ctx, name); err != nil || got.State != extdns.StateActive || got.Value != "192.0.2.10" || got.TTL != 300 {
		t.Fatalf("Get after the next zone read = %+v, %v; want ACTIVE", got, err)
	}
	if again, err := c.Upsert(ctx, aRecord(name, "192.0.2.10", ownerA)); err != nil || again.State != extdns.StateActive {
		t.Fatalf("repeated upsert = %+v, %v; want the record untouched, ACTIVE", again, err)
	}
}

// changeAndHandOver changes name's record to a CNAME, then hands it from
// ownerA to ownerB, twice (the second is a no-op).
func changeAndHandOver(t *testing.T, f *fakeProvider, c *webhook.Client, name string) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeCNAME, Value: "lb.example.net", TTL: 60, Owner: ownerA}); err != nil {
		t.Fatal(err)
	}
	if got := f.at(name); len(got) != 1 || got[0].RecordType != "CNAME" || got[0].Targets[0] != "lb.example.net" || got[0].RecordTTL != 60 {
		t.Fatalf("after a change the provider holds %+v", got)
	}
	if _, err := c.Transfer(ctx, name, ownerB, "myapp-operator/install-c/shop/web/uid-3"); !errors.Is(err, external.ErrConflict) {
		t.Fatalf("a transfer from a non-holder: want a conflict, got %v", err)
	}
	for range 2 {
		if got, err := c.Transfer(ctx, name, ownerA, ownerB); err != nil || got.Owner != ownerB || got.Value != "lb.example.net" {
			t.Fatalf("Transfer = %+v, %v; want the record, held by the new owner", got, err)
		}
	}
	wantHeld(t, f, "_myapp-owner."+name, `"`+ownerB+`"`, "")
}

// deleteTwice: the old owner cannot delete name's record, the new one
// can, and deleting what is gone is success.
func deleteTwice(t *testing.T, f *fakeProvider, c *webhook.Client, name string) {
	t.Helper()
	ctx := t.Context()
	if err := c.Delete(ctx, name, ownerA); !errors.Is(err, external.ErrConflict) {
		t.Fatalf("the old owner deleted a transferred record: %v", err)
	}
	for range 2 {
		if err := c.Delete(ctx, name, ownerB); err != nil {
			t.Fatal(err)
		}
		if left := append(f.at(name), f.at("_myapp-owner."+name)...); len(left) != 0 {
			t.Fatalf("after a delete the provider holds %+v", left)
		}
	}
	if _, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
		t.Fatalf("Get after the delete: %v", err)
	}
}

// wantHeld checks that the provider holds name with value and, when owner
// is set, the owner TXT beside it, quoted, labelled with the record it
// owns.
func wantHeld(t *testing.T, f *fakeProvider, name, value, owner string) {
	t.Helper()
	got := f.at(name)
	if len(got) != 1 || len(got[0].Targets) != 1 || got[0].Targets[0] != value {
		t.Fatalf("the provider holds %+v at %s, want %s", got, name, value)
	}
	if owner == "" {
		return
	}
	txt := f.at(extdns.OwnerLabel + "." + name)
	if len(txt) != 1 || txt[0].RecordType != "TXT" || len(txt[0].Targets) != 1 || txt[0].Targets[0] != `"`+owner+`"` ||
		txt[0].Labels["ownedRecord"] != name {
		t.Fatalf("the owner TXT of %s is %+v, want %q labelled ownedRecord=%s", name, txt, owner, name)
	}
}

// TestConcurrentCreatorsOneWins races 16 installations (16 clients) for
// each of several names. On an atomic provider exactly one wins and every
// loser is told who did. On a last-writer-wins provider the race cannot be
// prevented; the promise is that it is detected: after the next zone read
// at most one writer reads the name as its own.
func TestConcurrentCreatorsOneWins(t *testing.T) {
	for _, tc := range []struct {
		name string
		sem  semantics
	}{{"transactional", transactional}, {"inmemory", inmemoryLike}, {"last writer wins", lastWriterWins}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.sem)
			clk := newClock()
			const writers = 16
			clients := make([]*webhook.Client, writers)
			for i := range clients {
				clients[i] = newClient(t, f.URL(), clk.config)
				if _, err := clients[i].Start(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			for round := range 5 {
				name := fmt.Sprintf("race%d.example.com", round)
				owner := func(i int) string { return fmt.Sprintf("myapp-operator/install-%d/ns/app/uid-%d", i, i) }
				errs := raceCreators(t, clients, name, owner)
				// Every writer reads the zone again, as after the interval.
				clk.Advance(webhook.DefaultReadInterval)
				if tc.sem == lastWriterWins {
					believers := 0
					for i, c := range clients {
						if errs[i] != nil && !errors.Is(errs[i], external.ErrConflict) {
							t.Fatalf("round %d: writer %d: want success or a conflict, got %v", round, i, errs[i])
						}
						got, err := c.Get(t.Context(), name)
						if err == nil && got.Owner == owner(i) && errs[i] == nil {
							believers++
						}
					}
					if believers > 1 {
						t.Fatalf("round %d: %d writers read %s as their own after the race", round, believers, name)
					}
					continue
				}
				winner := wantOneWinner(t, errs, owner)
				got, err := clients[0].Get(t.Context(), name)
				if err != nil || got.Owner != owner(winner) || got.Value != fmt.Sprintf("192.0.2.%d", winner+1) {
					t.Fatalf("round %d: the provider holds %+v, %v; want writer %d's record", round, got, err, winner)
				}
			}
		})
	}
}

// raceCreators has every client create name at once, each with its own
// owner and value, and returns their errors.
func raceCreators(t *testing.T, clients []*webhook.Client, name string, owner func(int) string) []error {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range clients {
		wg.Go(func() {
			<-start
			_, errs[i] = c.Upsert(t.Context(), aRecord(name, fmt.Sprintf("192.0.2.%d", i+1), owner(i)))
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// wantOneWinner checks that exactly one writer succeeded and every other
// got a conflict naming it, and returns the winner.
func wantOneWinner(t *testing.T, errs []error, owner func(int) string) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both created the name", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, external.ErrConflict):
			t.Fatalf("writer %d: want a conflict, got %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer created the name: %v", errs)
	}
	for i, err := range errs {
		var e *external.Error
		if i != winner && (!errors.As(err, &e) || e.Owner != owner(winner)) {
			t.Errorf("writer %d's conflict names %v, want %s", i, err, owner(winner))
		}
	}
	return winner
}

// TestOutcomeUnknownIsReadBack: an error answer to a batch says nothing of
// what happened, so the client reads the zone before deciding.
func TestOutcomeUnknownIsReadBack(t *testing.T) {
	name := "www.example.com"
	t.Run("applied, then a 500", func(t *testing.T) {
		f := newFake(t, transactional)
		c := newClient(t, f.URL())
		f.beforeApply = func(webhook.Changes) (int, bool) { return http.StatusInternalServerError, true }
		if _, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA)); err != nil {
			t.Fatalf("a create that happened, answered 500: %v", err)
		}
		if err := c.Delete(t.Context(), name, ownerA); err != nil {
			t.Fatalf("a delete that happened, answered 500: %v", err)
		}
		if left := f.at(name); len(left) != 0 {
			t.Fatalf("left %+v", left)
		}
	})
	t.Run("a 500 that changed nothing", func(t *testing.T) {
		f := newFake(t, transactional)
		c := newClient(t, f.URL())
		if _, err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.beforeApply = func(webhook.Changes) (int, bool) { return http.StatusInternalServerError, false }
		_, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA))
		if e := wantKind(t, err, external.KindTransient); !strings.Contains(e.Message, "unchanged") || e.StatusCode != 500 {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("a conflict answered as a bare 500", func(t *testing.T) {
		f := newFake(t, transactional)
		c := newClient(t, f.URL())
		if _, err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		other := newClient(t, f.URL())
		// The other installation creates the name between this client's
		// read and its write: the batch fails with a bare 500.
		if _, err := c.Get(t.Context(), name); !errors.Is(err, external.ErrNotFound) {
			t.Fatal(err)
		}
		if _, err := other.Upsert(t.Context(), aRecord(name, "192.0.2.2", ownerB)); err != nil {
			t.Fatal(err)
		}
		_, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA))
		if e := wantKind(t, err, external.KindConflict); e.Owner != ownerB {
			t.Fatalf("conflict names %q, want %q", e.Owner, ownerB)
		}
	})
	t.Run("throttled or refused, nothing applied", func(t *testing.T) {
		f := newFake(t, transactional)
		c := newClient(t, f.URL())
		if _, err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.answerHeader = http.Header{"Retry-After": {"30"}}
		f.beforeApply = func(webhook.Changes) (int, bool) { return http.StatusTooManyRequests, false }
		_, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA))
		if e := wantKind(t, err, external.KindThrottled); e.RetryAfter != 30*time.Second {
			t.Fatalf("error %v: want the server's wait kept", err)
		}
		f.beforeApply = func(webhook.Changes) (int, bool) { return http.StatusForbidden, false }
		_, err = c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA))
		_ = wantKind(t, err, external.KindUnauthorized)
	})
	t.Run("a lost connection", func(t *testing.T) {
		f := newFake(t, transactional)
		c := newClient(t, f.URL())
		if _, err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		f.beforeApply = func(webhook.Changes) (int, bool) {
			// Applied, then the server closes the connection unanswered.
			return -1, true
		}
		if _, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA)); err != nil {
			t.Fatalf("a create that happened, unanswered: %v", err)
		}
	})
}

// TestExternalDNSOwnedNamesAreConflicts: a name external-dns's TXT registry
// claims, in its current format (a TXT at the type-prefixed name) or its
// old one (a TXT at the name), is never written, deleted or listed, and the
// conflict names external-dns and its owner ID.
func TestExternalDNSOwnedNamesAreConflicts(t *testing.T) {
	f := newFake(t, transactional)
	heritage := `"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/shop/web"`
	f.seed(
		webhook.Endpoint{DNSName: "new.example.com", RecordType: "A", Targets: []string{"198.51.100.1"}, RecordTTL: 300},
		webhook.Endpoint{DNSName: "a-new.example.com", RecordType: "TXT", Targets: []string{heritage}, RecordTTL: 300},
		webhook.Endpoint{DNSName: "old.example.com", RecordType: "TXT", Targets: []string{heritage}, RecordTTL: 300},
		// A name external-dns has claimed but whose record it has not
		// written yet.
		webhook.Endpoint{DNSName: "cname-soon.example.com", RecordType: "TXT", Targets: []string{heritage}, RecordTTL: 300},
	)
	c := newClient(t, f.URL())
	ctx := t.Context()
	for _, name := range []string{"new.example.com", "old.example.com", "soon.example.com"} {
		_, err := c.Upsert(ctx, aRecord(name, "192.0.2.1", ownerA))
		e := wantKind(t, err, external.KindConflict)
		if e.Owner != "(external-dns owner=default)" || !strings.Contains(e.Message, "managed by external-dns") {
			t.Fatalf("%s: conflict %v", name, err)
		}
	}
	if got, err := c.Get(ctx, "new.example.com"); err != nil || got.Owner != "(external-dns owner=default)" {
		t.Fatalf("Get of an external-dns record = %+v, %v", got, err)
	}
	if err := c.Delete(ctx, "new.example.com", ownerA); !errors.Is(err, external.ErrConflict) {
		t.Fatalf("Delete of an external-dns record: %v", err)
	}
	if all, err := c.List(ctx, ""); err != nil || len(all) != 0 {
		t.Fatalf("List = %+v, %v; want none of external-dns's", all, err)
	}
	if got := f.at("new.example.com"); len(got) != 1 || got[0].Targets[0] != "198.51.100.1" {
		t.Fatalf("external-dns's record changed: %+v", got)
	}
}

// TestNamesHeldByNoOne: a record without an owner TXT, or with two owner
// TXTs, is held by no owner the client can prove, as with the RFC 2136
// client.
func TestNamesHeldByNoOne(t *testing.T) {
	f := newFake(t, transactional)
	f.seed(
		webhook.Endpoint{DNSName: "hand.example.com", RecordType: "A", Targets: []string{"198.51.100.1"}, RecordTTL: 300},
		webhook.Endpoint{DNSName: "two.example.com", RecordType: "A", Targets: []string{"198.51.100.2"}, RecordTTL: 300},
		webhook.Endpoint{DNSName: "_myapp-owner.two.example.com", RecordType: "TXT", Targets: []string{`"` + ownerA + `"`, `"` + ownerB + `"`}, RecordTTL: 300},
	)
	c := newClient(t, f.URL())
	for _, name := range []string{"hand.example.com", "two.example.com"} {
		_, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA))
		if e := wantKind(t, err, external.KindConflict); e.Owner != extdns.UnmanagedOwner {
			t.Fatalf("%s: %v", name, err)
		}
		if err := c.Delete(t.Context(), name, ownerA); !errors.Is(err, external.ErrConflict) {
			t.Fatalf("%s: Delete: %v", name, err)
		}
	}
	if mine, err := c.List(t.Context(), ownerA); err != nil || len(mine) != 0 {
		t.Fatalf("List(%s) = %+v, %v", ownerA, mine, err)
	}
}

// TestReadsShareOneZoneReadPerInterval: the protocol reads the whole zone,
// so every read within ReadInterval is served by one GET /records, however
// many records are read, and concurrent readers share one request.
func TestReadsShareOneZoneReadPerInterval(t *testing.T) {
	f := newFake(t, transactional)
	clk := newClock()
	c := newClient(t, f.URL(), clk.config)
	ctx := t.Context()
	const n = 50
	for i := range n {
		if _, err := c.Upsert(ctx, aRecord(fmt.Sprintf("app%d.example.com", i), "192.0.2.1", ownerA)); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(webhook.DefaultReadInterval)
	before := f.zoneReads.Load()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if got, err := c.Get(ctx, fmt.Sprintf("app%d.example.com", i)); err != nil || got.State != extdns.StateActive {
				t.Errorf("Get = %+v, %v", got, err)
			}
		})
	}
	wg.Wait()
	if _, err := c.List(ctx, ownerA); err != nil {
		t.Fatal(err)
	}
	if reads := f.zoneReads.Load() - before; reads != 1 {
		t.Fatalf("%d reads and a list made %d zone reads, want 1", n, reads)
	}
	clk.Advance(webhook.DefaultReadInterval)
	if _, err := c.Get(ctx, "app0.example.com"); err != nil {
		t.Fatal(err)
	}
	if reads := f.zoneReads.Load() - before; reads != 2 {
		t.Fatalf("a read after the interval made %d zone reads in all, want 2", reads)
	}
	if traffic := c.Traffic(); traffic.ZoneReads != f.zoneReads.Load() || traffic.BytesReceived < f.zoneBytes.Load() {
		t.Fatalf("Traffic() = %+v; the server counted %d zone reads of %d bytes", traffic, f.zoneReads.Load(), f.zoneBytes.Load())
	}
}

// TestAdjustedRecordsReadAsAsked: a provider that normalises a record
// (here a minimum TTL of 600) keeps it as normalised; the client writes the
// adjusted form, reads it back as the record it was asked for, and does not
// rewrite it on the next upsert.
func TestAdjustedRecordsReadAsAsked(t *testing.T) {
	f := newFake(t, transactional)
	f.adjust = func(ep webhook.Endpoint) webhook.Endpoint {
		ep.RecordTTL = max(ep.RecordTTL, 600)
		return ep
	}
	c := newClient(t, f.URL())
	ctx := t.Context()
	name := "www.example.com"
	if _, err := c.Upsert(ctx, aRecord(name, "192.0.2.1", ownerA)); err != nil {
		t.Fatal(err)
	}
	if got := f.at(name); len(got) != 1 || got[0].RecordTTL != 600 {
		t.Fatalf("the provider holds %+v, want the adjusted TTL 600", got)
	}
	writes := f.writes.Load()
	got, err := c.Upsert(ctx, aRecord(name, "192.0.2.1", ownerA))
	if err != nil || got.TTL != 300 {
		t.Fatalf("second upsert = %+v, %v; want the record as asked (TTL 300)", got, err)
	}
	if f.writes.Load() != writes {
		t.Fatalf("the second upsert wrote again (%d batches)", f.writes.Load()-writes)
	}
	if got, err := c.Get(ctx, name); err != nil || got.TTL != 300 {
		t.Fatalf("Get = %+v, %v; want TTL 300", got, err)
	}

	f.adjust = func(ep webhook.Endpoint) webhook.Endpoint {
		if ep.RecordType == "TXT" {
			ep.RecordType = "SPF"
		}
		return ep
	}
	_, err = c.Upsert(ctx, aRecord("other.example.com", "192.0.2.1", ownerA))
	if e := wantKind(t, err, external.KindInvalid); !strings.Contains(e.Message, "cannot hold the owner") {
		t.Fatalf("a provider that cannot keep the owner TXT: %v", err)
	}
}

// TestTheBodyCapIsAClearError: a zone larger than the body cap cannot be
// read. It is a configuration problem (external.KindTooLarge), not an
// outage: the error names the cap and what to do; the client does not ask
// the server again for a minute, however many calls fail meanwhile, so
// MyApps retrying with backoff do not each read the whole zone; after the
// minute it reads again, and once the zone fits, it works.
func TestTheBodyCapIsAClearError(t *testing.T) {
	f := newFake(t, transactional)
	var mu sync.Mutex
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	step := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	c := newClient(t, f.URL(), func(cfg *webhook.Config) { cfg.MaxBodyBytes = 4096; cfg.Now = clock })
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The zone grows past the cap while the client runs (at start, the
	// manager refuses to start, naming the cap: cmd/manager).
	for i := range 100 {
		f.seed(webhook.Endpoint{DNSName: fmt.Sprintf("h%d.example.com", i), RecordType: "A", Targets: []string{"198.51.100.1"}, RecordTTL: 300})
	}
	step(time.Minute)
	reads := f.zoneReads.Load()
	_, err := c.Get(t.Context(), "www.example.com")
	if e := wantKind(t, err, external.KindTooLarge); !strings.Contains(e.Message, "larger than 4096 bytes") ||
		!strings.Contains(e.Message, "--dns-webhook-max-body-size") || !strings.Contains(e.Message, "webhook-provider-max-body-size") {
		t.Fatalf("error %v", err)
	}
	if got := f.zoneReads.Load() - reads; got != 1 {
		t.Fatalf("the first call read the zone %d times, want 1 (a configuration problem is not retried)", got)
	}
	for range 10 {
		step(5 * time.Second)
		if _, err := c.Get(t.Context(), "h1.example.com"); !errors.Is(err, external.ErrTooLarge) {
			t.Fatalf("a call within the minute: %v, want the same too-large error", err)
		}
		if err := c.Delete(t.Context(), "h1.example.com", ownerA); !errors.Is(err, external.ErrTooLarge) {
			t.Fatalf("a deletion within the minute: %v, want the same too-large error", err)
		}
	}
	if got := f.zoneReads.Load() - reads; got != 1 {
		t.Fatalf("20 calls within the minute read the zone %d more times, want none", got-1)
	}

	f.mu.Lock()
	f.eps = f.eps[:10]
	f.mu.Unlock()
	step(10 * time.Second)
	if _, err := c.Get(t.Context(), "h1.example.com"); err != nil {
		t.Fatalf("a minute later, the zone fitting the cap: %v", err)
	}
	if got := f.zoneReads.Load() - reads; got != 2 {
		t.Fatalf("the zone was read %d times, want 2", got)
	}
}

// TestAZoneReadIsDecodedAsItArrives: the zone read is decoded endpoint by
// endpoint with the body cap counted on the stream. An empty zone may come
// as null; an answer that is not a list of endpoints, one cut short or
// followed by more data is a transient failure (a proxy's page, a dropped
// connection), never a zone read as empty; a zone of exactly the cap is
// read, one byte more is too large.
func TestAZoneReadIsDecodedAsItArrives(t *testing.T) {
	record := `{"dnsName":"www.example.com","targets":["192.0.2.1"],"recordType":"A","recordTTL":300}`
	owner := `{"dnsName":"_myapp-owner.www.example.com","targets":["\"` + ownerA + `\""],"recordType":"TXT","recordTTL":300}`
	// Other names make the zone larger than the probe's batches, which the
	// cap counts too.
	others := ""
	for i := range 10 {
		others += fmt.Sprintf(`,{"dnsName":"other%d.example.com","targets":["198.51.100.1"],"recordType":"A","recordTTL":300}`, i)
	}
	zoneOf := "[" + record + "," + owner + others + "]"
	for _, tc := range []struct {
		name string
		body string
		cap  int64
		// want is the error's kind, or "" for the record read, "none" for
		// a zone without it.
		want external.Kind
	}{
		{name: "a zone", body: zoneOf},
		{name: "null", body: "null", want: "none"},
		{name: "an empty list", body: "[]", want: "none"},
		{name: "exactly the cap", body: zoneOf, cap: int64(len(zoneOf))},
		{name: "a byte over the cap", body: zoneOf, cap: int64(len(zoneOf)) - 1, want: external.KindTooLarge},
		{name: "an object", body: `{"endpoints":[]}`, want: external.KindTransient},
		{name: "cut short", body: zoneOf[:len(zoneOf)-20], want: external.KindTransient},
		{name: "data after it", body: zoneOf + " []", want: external.KindTransient},
		{name: "an endpoint of the wrong shape", body: `[{"dnsName":5}]`, want: external.KindTransient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, transactional)
			c := newClient(t, f.URL(), func(cfg *webhook.Config) {
				cfg.ReadInterval = time.Nanosecond
				cfg.MaxRetries = -1
				if tc.cap > 0 {
					cfg.MaxBodyBytes = tc.cap
				}
			})
			if _, err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			f.zoneBody = []byte(tc.body)
			f.mu.Unlock()
			rec, err := c.Get(t.Context(), "www.example.com")
			switch tc.want {
			case "":
				if err != nil || rec.Owner != ownerA || rec.Value != "192.0.2.1" {
					t.Fatalf("got %+v, %v; want the record held by %s", rec, err, ownerA)
				}
			case "none":
				_ = wantKind(t, err, external.KindNotFound)
			default:
				_ = wantKind(t, err, tc.want)
			}
		})
	}
}

// TestBadInput: names outside the zone, owner names and bad records are
// refused before anything is sent.
func TestBadInput(t *testing.T) {
	f := newFake(t, transactional)
	c := newClient(t, f.URL())
	for _, tc := range []struct {
		rec  extdns.Record
		want string
	}{
		{aRecord("www.example.org", "192.0.2.1", ownerA), "not in zone example.com"},
		{aRecord("_myapp-owner.www.example.com", "192.0.2.1", ownerA), "reserved for owner records"},
		{aRecord("www.example.com", "192.0.2.1", "(external-dns owner=default)"), "record owner"},
		{aRecord("www.example.com", "not-an-ip", ownerA), "record A not-an-ip"},
	} {
		_, err := c.Upsert(t.Context(), tc.rec)
		if e := wantKind(t, err, external.KindInvalid); !strings.Contains(e.Message, tc.want) {
			t.Errorf("%+v: %v, want %q", tc.rec, err, tc.want)
		}
	}
	if f.writes.Load() != 0 {
		t.Fatalf("bad input reached the server: %d batches", f.writes.Load())
	}
}

// TestDeleteDoesNotTrustACachedAbsence: a deletion ends a MyApp's
// finalizer, so a name the cached zone read shows free is read again before
// the deletion is called done: here another replica of the installation
// wrote it after this client's read.
func TestDeleteDoesNotTrustACachedAbsence(t *testing.T) {
	f := newFake(t, transactional)
	clk := newClock()
	c := newClient(t, f.URL(), clk.config)
	name := "www.example.com"
	if _, err := c.Get(t.Context(), name); !errors.Is(err, external.ErrNotFound) {
		t.Fatalf("Get = %v", err)
	}
	if _, err := newClient(t, f.URL()).Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA)); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), name, ownerA); err != nil {
		t.Fatal(err)
	}
	if left := f.at(name); len(left) != 0 {
		t.Fatalf("the delete trusted its cached read: the provider still holds %+v", left)
	}
}

// TestConformance runs the dns.Client contract's suite on the webhook
// client, on each class of provider the fake plays.
func TestConformance(t *testing.T) {
	for _, sem := range []struct {
		name string
		sem  semantics
	}{{"transactional", transactional}, {"inmemory", inmemoryLike}, {"last-writer-wins", lastWriterWins}} {
		t.Run(sem.name, func(t *testing.T) {
			dnstest.RunConformance(t, func(t *testing.T) dnstest.Backend {
				f := newFake(t, sem.sem)
				faults := &dnstest.Faults{}
				c := newClient(t, f.URL(), func(cfg *webhook.Config) {
					cfg.Transport = faults.RoundTripper(http.DefaultTransport, isBatch)
				})
				return dnstest.Backend{Client: c, Zone: zone, Faults: faults, Read: f.read, Peer: newClient(t, f.URL())}
			})
		})
	}
}

// isBatch says whether a request is a write: a POST /records batch.
func isBatch(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/records"
}
