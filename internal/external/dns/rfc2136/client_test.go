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
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/dnstest"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
)

// server is the BIND every test shares; bindErr says why there is none.
var (
	server  *controlplane.BIND
	bindErr error
)

func TestMain(m *testing.M) {
	server, bindErr = controlplane.StartBIND(context.Background(), controlplane.BINDOptions{})
	code := m.Run()
	if server != nil {
		if err := server.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping named: %v\n", err)
		}
	}
	os.Exit(code)
}

// needBIND ends the test in one line when there is no named to test with:
// a skip where this machine cannot install it, a failure where it can.
func needBIND(t *testing.T) *controlplane.BIND {
	t.Helper()
	controlplane.RequireBIND(t, bindErr)
	return server
}

func newClient(t *testing.T, mutate ...func(*rfc2136.Config)) *rfc2136.Client {
	t.Helper()
	b := needBIND(t)
	key, err := rfc2136.ParseKey(b.Key())
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfc2136.Config{Server: b.Addr, Zone: b.Zone, Key: rfc2136.StaticKey(key), Timeout: 2 * time.Second}
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := rfc2136.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// host is a name of this test's own in the zone.
func host(t *testing.T, label string) string {
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	return label + "." + name[:min(len(name), 50)] + "." + server.Zone
}

// resolve asks the server, unsigned like any resolver, for name and returns
// the A or CNAME values at it.
func resolve(t *testing.T, addr, name string, qtype uint16) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("querying %s for %s: %v", addr, name, err)
	}
	var out []string
	for _, rr := range r.Answer {
		if !strings.EqualFold(rr.Header().Name, dns.Fqdn(name)) {
			continue
		}
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.CNAME:
			out = append(out, v.Target)
		case *dns.TXT:
			out = append(out, strings.Join(v.Txt, ""))
		}
	}
	return out
}

func wantKind(t *testing.T, err error, kind external.Kind) *external.Error {
	t.Helper()
	var e *external.Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Fatalf("want a %s error, got %v", kind, err)
	}
	return e
}

func TestCreateReadUpdateDelete(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	name := host(t, "www")
	const owner = "myapp-operator/shop/web/uid-1"

	if _, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
		t.Fatalf("Get before create: want not found, got %v", err)
	}
	rec, err := c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != extdns.StatePending {
		t.Errorf("a create returns %s, want PENDING until it is polled", rec.State)
	}
	got, err := c.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	want := extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owner, State: extdns.StateActive}
	if got != want {
		t.Fatalf("Get = %+v, want %+v", got, want)
	}
	if v := resolve(t, server.Addr, name, dns.TypeA); len(v) != 1 || v[0] != "192.0.2.1" {
		t.Fatalf("the server answers %v for %s", v, name)
	}
	if v := resolve(t, server.Addr, extdns.OwnerLabel+"."+name, dns.TypeTXT); len(v) != 1 || v[0] != owner {
		t.Fatalf("the owner TXT holds %v", v)
	}

	// An unchanged upsert writes nothing and says the record is active.
	again, err := c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owner})
	if err != nil || again.State != extdns.StateActive {
		t.Fatalf("unchanged upsert = %+v, %v; want the active record", again, err)
	}

	changeToCNAME(t, c, name, owner)

	if err := c.Delete(ctx, name, owner); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
		t.Fatalf("Get after delete: want not found, got %v", err)
	}
	if v := resolve(t, server.Addr, extdns.OwnerLabel+"."+name, dns.TypeTXT); len(v) != 0 {
		t.Fatalf("the owner TXT survived the delete: %v", v)
	}
	if err := c.Delete(ctx, name, owner); err != nil {
		t.Fatalf("deleting a missing record must succeed, got %v", err)
	}
}

// changeToCNAME turns the A record at name into a CNAME, in one update.
func changeToCNAME(t *testing.T, c *rfc2136.Client, name, owner string) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeCNAME, Value: "lb.example.net", TTL: 60, Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if v := resolve(t, server.Addr, name, dns.TypeCNAME); len(v) != 1 || v[0] != "lb.example.net." {
		t.Fatalf("after the change the server answers %v", v)
	}
	got, err := c.Get(ctx, name)
	if err != nil || got.Type != extdns.TypeCNAME || got.Value != "lb.example.net" || got.TTL != 60 || got.State != extdns.StateActive {
		t.Fatalf("Get after the change = %+v, %v", got, err)
	}
}

// TestNamesBelowAManagedNameLeaveItFree: a name with records below it (and
// the owner records' names are below every managed name) is free; only
// records at a name hold it.
func TestNamesBelowAManagedNameLeaveItFree(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	const owner = "myapp-operator/shop/web/uid-1"
	child, parent := host(t, "app.www"), host(t, "www")
	for _, n := range []string{child, parent} {
		if _, err := c.Upsert(ctx, extdns.Record{Name: n, Type: extdns.TypeA, Value: "192.0.2.3", TTL: 300, Owner: owner}); err != nil {
			t.Fatalf("creating %s: %v", n, err)
		}
	}
	for _, n := range []string{parent, child} {
		if err := c.Delete(ctx, n, owner); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOwnershipIsRefusedBothWays(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	const alice, bob = "myapp-operator/a/app/uid-a", "myapp-operator/b/app/uid-b"
	aliceName, bobName := host(t, "alice"), host(t, "bob")
	for _, r := range []extdns.Record{
		{Name: aliceName, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: alice},
		{Name: bobName, Type: extdns.TypeA, Value: "192.0.2.2", TTL: 300, Owner: bob},
	} {
		if _, err := c.Upsert(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, owner, holder string }{
		{aliceName, bob, alice},
		{bobName, alice, bob},
	} {
		_, err := c.Upsert(ctx, extdns.Record{Name: tc.name, Type: extdns.TypeA, Value: "198.51.100.9", TTL: 300, Owner: tc.owner})
		if e := wantKind(t, err, external.KindConflict); e.Owner != tc.holder {
			t.Errorf("upsert of %s by %s: conflict names %q, want %q", tc.name, tc.owner, e.Owner, tc.holder)
		}
		err = c.Delete(ctx, tc.name, tc.owner)
		if e := wantKind(t, err, external.KindConflict); e.Owner != tc.holder {
			t.Errorf("delete of %s by %s: conflict names %q, want %q", tc.name, tc.owner, e.Owner, tc.holder)
		}
		got, err := c.Get(ctx, tc.name)
		if err != nil || got.Owner != tc.holder || got.Value == "198.51.100.9" {
			t.Errorf("%s after refused writes = %+v, %v", tc.name, got, err)
		}
	}

	// A record written by hand, without an owner TXT, is no one's to take.
	manual := host(t, "manual")
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(server.Zone))
	rr, _ := dns.NewRR(dns.Fqdn(manual) + " 300 IN A 203.0.113.7")
	m.Insert([]dns.RR{rr})
	signed(t, m)
	got, err := c.Get(ctx, manual)
	if err != nil || got.Owner != extdns.UnmanagedOwner {
		t.Fatalf("Get of a hand-written record = %+v, %v", got, err)
	}
	_, err = c.Upsert(ctx, extdns.Record{Name: manual, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: alice})
	if e := wantKind(t, err, external.KindConflict); e.Owner != extdns.UnmanagedOwner {
		t.Errorf("upsert over a hand-written record: conflict names %q", e.Owner)
	}
	_ = wantKind(t, c.Delete(ctx, manual, alice), external.KindConflict)

	// Nor is a name where someone keeps records of other types.
	mx := host(t, "mx")
	m = new(dns.Msg)
	m.SetUpdate(dns.Fqdn(server.Zone))
	rr, _ = dns.NewRR(dns.Fqdn(mx) + " 300 IN MX 10 mail.example.net.")
	m.Insert([]dns.RR{rr})
	signed(t, m)
	_, err = c.Upsert(ctx, extdns.Record{Name: mx, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: alice})
	if e := wantKind(t, err, external.KindConflict); e.Owner != extdns.UnmanagedOwner {
		t.Errorf("upsert over an MX record: conflict names %q", e.Owner)
	}
	if v := resolve(t, server.Addr, manual, dns.TypeA); len(v) != 1 || v[0] != "203.0.113.7" {
		t.Fatalf("the hand-written record was touched: %v", v)
	}
}

// signed sends an update with the server's key, as an administrator's
// nsupdate would.
func signed(t *testing.T, m *dns.Msg) {
	t.Helper()
	m.SetTsig(dns.Fqdn(server.KeyName), dns.HmacSHA256, 300, time.Now().Unix())
	cl := &dns.Client{Net: "tcp", TsigSecret: map[string]string{dns.Fqdn(server.KeyName): server.KeySecret}}
	r, _, err := cl.Exchange(m, server.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		t.Fatalf("update by hand: %v %v", r, err)
	}
}

// TestConcurrentCreatorsOneWins races many owners for each of several names:
// the prerequisite in the single UPDATE lets exactly one of them win, and
// every loser is told who did.
func TestConcurrentCreatorsOneWins(t *testing.T) {
	c := newClient(t)
	const writers = 16
	for round := range 5 {
		name := host(t, fmt.Sprintf("race%d", round))
		var wg sync.WaitGroup
		errs := make([]error, writers)
		start := make(chan struct{})
		for i := range writers {
			wg.Go(func() {
				<-start
				_, errs[i] = c.Upsert(t.Context(), extdns.Record{
					Name: name, Type: extdns.TypeA, Value: fmt.Sprintf("192.0.2.%d", i+1), TTL: 300,
					Owner: fmt.Sprintf("myapp-operator/ns/app%d/uid-%d", i, i),
				})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both created %s", round, winner, i, name)
			case err == nil:
				winner = i
			case !errors.Is(err, external.ErrConflict):
				t.Fatalf("round %d: writer %d: want a conflict, got %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer created %s: %v", round, name, errs)
		}
		winnerOwner := fmt.Sprintf("myapp-operator/ns/app%d/uid-%d", winner, winner)
		for i, err := range errs {
			var e *external.Error
			if i != winner && (!errors.As(err, &e) || e.Owner != winnerOwner) {
				t.Errorf("round %d: writer %d's conflict names %v, want %s", round, i, err, winnerOwner)
			}
		}
		got, err := c.Get(t.Context(), name)
		if err != nil || got.Owner != winnerOwner || got.Value != fmt.Sprintf("192.0.2.%d", winner+1) {
			t.Fatalf("round %d: the server holds %+v, %v; want writer %d's record", round, got, err, winner)
		}
	}
}

func TestListByOwner(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	prefix := "myapp-operator/" + strings.ToLower(t.Name()) + "/"
	one, two := prefix+"one/uid-1", prefix+"two/uid-2"
	names := []string{host(t, "c"), host(t, "a"), host(t, "b")}
	owners := []string{one, one, two}
	for i, n := range names {
		if _, err := c.Upsert(ctx, extdns.Record{Name: n, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owners[i]}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.List(ctx, one)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != names[1] || list[1].Name != names[0] || list[0].Owner != one || list[0].State != extdns.StateActive {
		t.Fatalf("List(%s) = %+v, want %s and %s in order", one, list, names[1], names[0])
	}
	byPrefix, err := c.ListByOwnerPrefix(ctx, prefix)
	if err != nil || len(byPrefix) != 3 || byPrefix[0].Name != names[1] || byPrefix[2].Name != names[0] {
		t.Fatalf("ListByOwnerPrefix = %+v, %v", byPrefix, err)
	}
	if none, err := c.List(ctx, prefix+"nobody"); err != nil || len(none) != 0 {
		t.Fatalf("List of an owner with no records = %+v, %v", none, err)
	}
	// As with the HTTP client: an empty prefix would make every owner's
	// records look like the caller's, so it is refused.
	if all, err := c.ListByOwnerPrefix(ctx, ""); !errors.Is(err, external.ErrInvalid) {
		t.Fatalf("ListByOwnerPrefix(\"\") = %d records, %v; want ErrInvalid", len(all), err)
	}
}

func TestTransferChangesTheOwnerAtomically(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	prefix := "myapp-operator/" + strings.ToLower(t.Name()) + "/"
	one, two := prefix+"one/uid-1", prefix+"two/uid-2"
	names := []string{host(t, "c"), host(t, "a"), host(t, "b")}
	owners := []string{one, one, two}
	for i, n := range names {
		if _, err := c.Upsert(ctx, extdns.Record{Name: n, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owners[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Transfer(ctx, names[2], one, prefix+"three/uid-3"); !errors.Is(err, external.ErrConflict) {
		t.Fatalf("transfer from a non-holder: want a conflict, got %v", err)
	}
	rec, err := c.Transfer(ctx, names[0], one, two)
	if err != nil || rec.Owner != two {
		t.Fatalf("Transfer = %+v, %v", rec, err)
	}
	if rec, err := c.Transfer(ctx, names[0], one, two); err != nil || rec.Owner != two {
		t.Fatalf("repeated Transfer = %+v, %v; want the record, held by %s", rec, err, two)
	}
	if _, err := c.Transfer(ctx, host(t, "missing"), one, two); !errors.Is(err, external.ErrNotFound) {
		t.Fatalf("transfer of a missing record: want not found, got %v", err)
	}
	if err := c.Delete(ctx, names[0], one); !errors.Is(err, external.ErrConflict) {
		t.Fatalf("the old owner deleted a transferred record: %v", err)
	}
	list, err := c.List(ctx, two)
	if err != nil || len(list) != 2 {
		t.Fatalf("List(%s) after the transfer = %+v, %v", two, list, err)
	}
}

func TestAuthenticationFailuresSayWhich(t *testing.T) {
	b := needBIND(t)
	name := host(t, "www")
	rec := extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: "myapp-operator/a/b/c"}
	otherSecret := "c2VjcmV0LXRoYXQtdGhlLXNlcnZlci1kb2VzLW5vdC1rbm93"
	for _, tc := range []struct {
		name   string
		config func(*rfc2136.Config)
		want   string
	}{
		{"wrong secret", func(c *rfc2136.Config) {
			c.Key = rfc2136.StaticKey(rfc2136.Key{Name: b.KeyName, Algorithm: "hmac-sha256", Secret: otherSecret})
		}, "BADSIG"},
		{"unknown key", func(c *rfc2136.Config) {
			c.Key = rfc2136.StaticKey(rfc2136.Key{Name: "stranger", Algorithm: "hmac-sha256", Secret: otherSecret})
		}, "BADKEY"},
		{"clock skew", func(c *rfc2136.Config) {
			c.Now = func() time.Time { return time.Now().Add(-time.Hour) }
		}, "BADTIME"},
		{"wrong zone", func(c *rfc2136.Config) { c.Zone = "other.test" }, "REFUSED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.config)
			r := rec
			if tc.name == "wrong zone" {
				r.Name = "www.other.test"
			}
			_, err := c.Upsert(t.Context(), r)
			if e := wantKind(t, err, external.KindUnauthorized); !strings.Contains(e.Error(), tc.want) {
				t.Errorf("upsert error %q does not say %s", e, tc.want)
			}
			_, err = c.List(t.Context(), "")
			if e := wantKind(t, err, external.KindUnauthorized); !strings.Contains(e.Error(), tc.want) {
				t.Errorf("list error %q does not say %s", e, tc.want)
			}
			if strings.Contains(err.Error(), otherSecret) || strings.Contains(err.Error(), b.KeySecret) {
				t.Errorf("an error shows a secret: %v", err)
			}
		})
	}
	if _, err := newClient(t).Get(t.Context(), name); !errors.Is(err, external.ErrNotFound) {
		t.Fatalf("a refused write left something behind: %v", err)
	}
}

func TestUnreachableAndSlowServersAreTransient(t *testing.T) {
	needBIND(t)
	rec := func(name string) extdns.Record {
		return extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: "myapp-operator/a/b/c"}
	}
	t.Run("server down", func(t *testing.T) {
		addr, err := controlplane.FreeAddress()
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(t, func(c *rfc2136.Config) { c.Server = addr })
		_, err = c.Upsert(t.Context(), rec(host(t, "www")))
		_ = wantKind(t, err, external.KindTransient)
		_, err = c.List(t.Context(), "")
		_ = wantKind(t, err, external.KindTransient)
	})
	t.Run("slow server", func(t *testing.T) {
		slow, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = slow.Close() })
		key, _ := rfc2136.ParseKey(slow.Key())
		c, err := rfc2136.New(rfc2136.Config{Server: slow.Addr, Zone: slow.Zone, Key: rfc2136.StaticKey(key), Timeout: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := slow.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = slow.Resume() })
		_, err = c.Upsert(t.Context(), rec("www."+slow.Zone))
		if e := wantKind(t, err, external.KindTransient); !errors.Is(e, context.DeadlineExceeded) && !strings.Contains(e.Error(), "timeout") {
			t.Errorf("want a timeout, got %v", e)
		}
		_, err = c.List(t.Context(), "")
		_ = wantKind(t, err, external.KindTransient)
		if err := slow.Resume(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Upsert(t.Context(), rec("www."+slow.Zone)); err != nil {
			t.Fatalf("after the server recovered: %v", err)
		}
	})
}

func TestNamesAtTheLengthLimits(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	const owner = "myapp-operator/a/b/c"
	label63 := strings.Repeat("a", 63)
	// The longest name: labels of up to 63 characters under the zone,
	// extdns.MaxNameLength characters in all.
	longest := server.Zone
	for len(longest) < extdns.MaxNameLength {
		n := min(63, extdns.MaxNameLength-len(longest)-1)
		longest = strings.Repeat("x", n) + "." + longest
	}
	if len(longest) != extdns.MaxNameLength {
		t.Fatalf("built a name of %d characters", len(longest))
	}
	for _, name := range []string{longest, label63 + "." + server.Zone} {
		if _, err := c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owner}); err != nil {
			t.Fatalf("%d characters: %v", len(name), err)
		}
		if got, err := c.Get(ctx, name); err != nil || got.Owner != owner {
			t.Fatalf("%d characters: Get = %+v, %v", len(name), got, err)
		}
		if list, err := c.List(ctx, owner); err != nil || len(list) == 0 {
			t.Fatalf("%d characters: List = %+v, %v", len(name), list, err)
		}
		if err := c.Delete(ctx, name, owner); err != nil {
			t.Fatalf("%d characters: %v", len(name), err)
		}
	}
	for _, bad := range []string{
		"y" + longest, // one character too long for its owner record
		strings.Repeat("a", 64) + "." + server.Zone, // a label too long
		"www.example.org",                         // outside the zone
		extdns.OwnerLabel + ".www." + server.Zone, // an owner record's name
		"bad name." + server.Zone,
	} {
		_, err := c.Upsert(ctx, extdns.Record{Name: bad, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owner})
		_ = wantKind(t, err, external.KindInvalid)
		_, err = c.Get(ctx, bad)
		_ = wantKind(t, err, external.KindInvalid)
	}
}

// TestPendingUntilEveryNameserverAnswers checks propagation against a real
// secondary: while it is down the record is pending; once it has
// transferred the zone, active.
func TestPendingUntilEveryNameserverAnswers(t *testing.T) {
	b := needBIND(t)
	// The secondary starts only after the write, so the record reaches it
	// with its first transfer of the zone.
	secondaryAddr, err := controlplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, func(c *rfc2136.Config) { c.Nameservers = []string{b.Addr, secondaryAddr}; c.Timeout = time.Second })
	name := host(t, "www")
	if _, err := c.Upsert(t.Context(), extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: "myapp-operator/a/b/c"}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(t.Context(), name); err != nil || got.State != extdns.StatePending {
		t.Fatalf("with a nameserver down: Get = %+v, %v; want PENDING", got, err)
	}
	secondary, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{Primary: b, Zone: b.Zone, Addr: secondaryAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secondary.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.Get(t.Context(), name)
		if err == nil && got.State == extdns.StateActive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the record did not become ACTIVE after the secondary came back: %+v, %v\n%s", got, err, secondary.Log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if v := resolve(t, secondary.Addr, name, dns.TypeA); len(v) != 1 || v[0] != "192.0.2.1" {
		t.Fatalf("the secondary answers %v", v)
	}
}

func TestParseKeyNeverShowsTheSecret(t *testing.T) {
	for _, tc := range []struct{ in, name, alg string }{
		{"hmac-sha512:k1:c2VjcmV0", "k1", "hmac-sha512"},
		{"k2.example:c2VjcmV0\n", "k2.example", "hmac-sha256"},
	} {
		k, err := rfc2136.ParseKey(tc.in)
		if err != nil || k.Name != tc.name || k.Algorithm != tc.alg || k.Secret != "c2VjcmV0" {
			t.Errorf("ParseKey(%q) = %+v, %v", tc.in, k, err)
		}
		if strings.Contains(k.String(), "c2VjcmV0") || strings.Contains(fmt.Sprint(k), "c2VjcmV0") {
			t.Errorf("%v shows the secret", k)
		}
	}
	for _, bad := range []string{"", "k:", "md5:k:c2VjcmV0", "k:not base64!", "a:b:c:d"} {
		if _, err := rfc2136.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "base64!") {
			t.Errorf("ParseKey error shows the secret: %v", err)
		}
	}
}

// TestParseKeyWithNameAndSecretSwappedHidesTheSecret puts the secret where
// the name goes, in both of nsupdate's forms (audit 2, F8): a secret that
// passes for a domain name fails later as "not base64", a long one fails
// as a name; neither error may show the secret, in any case.
func TestParseKeyWithNameAndSecretSwappedHidesTheSecret(t *testing.T) {
	short := "Zm9vYmFyYmF6cXV4UVVVWA"                                // base64 without padding: passes for a domain name
	long := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo", 3) // a label longer than 63 characters
	for _, secret := range []string{short, long} {
		for _, in := range []string{
			secret + ":myapp-operator",
			"hmac-sha256:" + secret + ":myapp-operator",
			"HMAC-SHA512:" + secret + ":myapp-operator",
		} {
			_, err := rfc2136.ParseKey(in)
			if err == nil {
				t.Errorf("ParseKey accepted a key with name and secret swapped (%d-character secret)", len(secret))
				continue
			}
			msg := strings.ToLower(err.Error())
			if strings.Contains(msg, strings.ToLower(secret)) || strings.Contains(msg, strings.ToLower(secret[:16])) {
				t.Errorf("ParseKey error shows the secret: %v", err)
			}
		}
	}
	// An unknown algorithm is refused by its position, not quoted: in a
	// key written secret first, the first field is the secret
	// (TestParseKeyNeverQuotesTheSecretInAnyFieldOrder).
	if _, err := rfc2136.ParseKey("md5:k:c2VjcmV0"); err == nil || strings.Contains(err.Error(), "md5") ||
		!strings.Contains(err.Error(), "the first field") {
		t.Errorf("an unknown algorithm is not refused by its position: %v", err)
	}
}

// TestTwoOwnerRecordsAtOneNameHoldItForNoOne: someone adds a second owner
// TXT by hand next to ours (audit 2, S7). No owner can be proven, so the
// name is held by no one we know: Get names UnmanagedOwner, List leaves it
// out for every owner (the sweep never sees it), Delete and Upsert by
// either owner are conflicts naming UnmanagedOwner, and the records stay.
// Both orders of the two owners are tried, as a transfer may list them in
// either.
func TestTwoOwnerRecordsAtOneNameHoldItForNoOne(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	for _, other := range []string{"myapp-operator/aaa/first/uid-0", "myapp-operator/zzz/last/uid-9"} {
		const ours = "myapp-operator/mmm/middle/uid-5"
		name := host(t, strings.Split(other, "/")[1])
		t.Cleanup(func() { removeByHand(t, name, extdns.OwnerLabel+"."+name) })
		if _, err := c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.5", TTL: 300, Owner: ours}); err != nil {
			t.Fatal(err)
		}
		m := new(dns.Msg)
		m.SetUpdate(dns.Fqdn(server.Zone))
		m.Insert([]dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: dns.Fqdn(extdns.OwnerLabel + "." + name), Rrtype: dns.TypeTXT,
			Class: dns.ClassINET, Ttl: 300}, Txt: []string{other}}})
		signed(t, m)

		got, err := c.Get(ctx, name)
		if err != nil || got.Owner != extdns.UnmanagedOwner || got.Value != "192.0.2.5" {
			t.Fatalf("Get with owners %s and %s = %+v, %v; want the record, held by %s", ours, other, got, err, extdns.UnmanagedOwner)
		}
		for _, o := range []string{ours, other, ""} {
			list, err := c.List(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range list {
				if r.Name == name {
					t.Fatalf("List(%q) shows %+v, a name two owners claim", o, r)
				}
			}
		}
		for _, o := range []string{ours, other} {
			e := wantKind(t, c.Delete(ctx, name, o), external.KindConflict)
			if e.Owner != extdns.UnmanagedOwner || !strings.Contains(e.Error(), "2 owner records") {
				t.Fatalf("Delete by %s: %v (owner %q); want a conflict naming %s that says why", o, e, e.Owner, extdns.UnmanagedOwner)
			}
			_, err := c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeA, Value: "198.51.100.1", TTL: 300, Owner: o})
			if e := wantKind(t, err, external.KindConflict); e.Owner != extdns.UnmanagedOwner {
				t.Fatalf("Upsert by %s: conflict names %q", o, e.Owner)
			}
		}
		if v := resolve(t, server.Addr, name, dns.TypeA); len(v) != 1 || v[0] != "192.0.2.5" {
			t.Fatalf("the record was touched: %v", v)
		}
		if v := resolve(t, server.Addr, extdns.OwnerLabel+"."+name, dns.TypeTXT); len(v) != 2 {
			t.Fatalf("the owner records were touched: %v", v)
		}
	}
}

// removeByHand removes every record at names, as an administrator would.
func removeByHand(t *testing.T, names ...string) {
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(server.Zone))
	for _, n := range names {
		m.RemoveName([]dns.RR{&dns.ANY{Hdr: dns.RR_Header{Name: dns.Fqdn(n), Rrtype: dns.TypeANY, Class: dns.ClassANY}}})
	}
	signed(t, m)
}

// TestUnrelatedUpdatesLeaveASettledRecordActive: a secondary that serves a
// record stays counted as serving it while unrelated updates raise the
// primary's serial faster than the secondary follows (audit 2, F6). The
// secondary is never notified, so it keeps the serial of its first
// transfer; the records written after it are PENDING, the settled one
// stays ACTIVE, by Get and by List.
func TestUnrelatedUpdatesLeaveASettledRecordActive(t *testing.T) {
	b := needBIND(t)
	secondaryAddr, err := controlplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, func(c *rfc2136.Config) { c.Nameservers = []string{b.Addr, secondaryAddr}; c.Timeout = time.Second })
	ctx := t.Context()
	owner := "myapp-operator/" + strings.ToLower(t.Name()) + "/settled/uid-1"
	settled := host(t, "settled")
	var written []string // removed at the end, so that a repeated run writes them again
	t.Cleanup(func() {
		for _, n := range written {
			removeByHand(t, n, extdns.OwnerLabel+"."+n)
		}
	})
	written = append(written, settled)
	if _, err := c.Upsert(ctx, extdns.Record{Name: settled, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owner}); err != nil {
		t.Fatal(err)
	}
	// More settled records than List asks a lagging nameserver about one by
	// one: while it lags, a list of them is PENDING, as documented.
	many := "myapp-operator/" + strings.ToLower(t.Name()) + "/many/"
	for i := range 65 {
		written = append(written, host(t, fmt.Sprintf("many%d", i)))
		if _, err := c.Upsert(ctx, extdns.Record{Name: host(t, fmt.Sprintf("many%d", i)), Type: extdns.TypeA, Value: "192.0.2.3", TTL: 300,
			Owner: many + fmt.Sprintf("uid-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	secondary, err := controlplane.StartBIND(ctx, controlplane.BINDOptions{Primary: b, Zone: b.Zone, Addr: secondaryAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = secondary.Close() })
	waitActive(t, c, settled)
	for i := range 5 {
		other := host(t, fmt.Sprintf("other%d", i))
		written = append(written, other)
		if _, err := c.Upsert(ctx, extdns.Record{Name: other, Type: extdns.TypeA, Value: "192.0.2.2", TTL: 300,
			Owner: fmt.Sprintf("myapp-operator/%s/other%d/uid", strings.ToLower(t.Name()), i)}); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Get(ctx, settled); err != nil || got.State != extdns.StateActive {
			t.Fatalf("after %d unrelated updates: Get = %+v, %v; want ACTIVE, the secondary serves it", i+1, got, err)
		}
		if v := resolve(t, secondary.Addr, other, dns.TypeA); len(v) != 0 {
			continue // the secondary refreshed on its own: this record proves nothing
		}
		if got, err := c.Get(ctx, other); err != nil || got.State != extdns.StatePending {
			t.Fatalf("a record the secondary does not serve: Get = %+v, %v; want PENDING", got, err)
		}
	}
	list, err := c.List(ctx, owner)
	if err != nil || len(list) != 1 || list[0].State != extdns.StateActive {
		t.Fatalf("List(%s) = %+v, %v; want the settled record, ACTIVE", owner, list, err)
	}
	wantAllPending(t, c, many, 65)
}

// wantAllPending checks that the n records whose owners start with prefix
// are listed, every one PENDING.
func wantAllPending(t *testing.T, c *rfc2136.Client, prefix string, n int) {
	t.Helper()
	list, err := c.ListByOwnerPrefix(t.Context(), prefix)
	if err != nil || len(list) != n {
		t.Fatalf("ListByOwnerPrefix(%s) = %d records, %v; want %d", prefix, len(list), err, n)
	}
	for _, r := range list {
		if r.State != extdns.StatePending {
			t.Fatalf("ListByOwnerPrefix(%s) shows %+v; want all %d PENDING while the secondary lags", prefix, r, n)
		}
	}
}

// waitActive waits until Get says name is ACTIVE.
func waitActive(t *testing.T, c *rfc2136.Client, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.Get(t.Context(), name)
		if err == nil && got.State == extdns.StateActive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not become ACTIVE: %+v, %v", name, got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestNamesWithOtherTypesAreConflicts: a name that holds only records of
// another type is a conflict naming extdns.UnmanagedOwner, reads as no
// record and has nothing of ours to delete: the answer the webhook client
// gives for the same names (its TestNamesWithOtherTypesAreConflicts), so a
// zone moved between the two RFC 2136 paths keeps its conflicts (D7).
func TestNamesWithOtherTypesAreConflicts(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	const owner = "myapp-operator/shop/web/uid-1"
	for _, tc := range []struct{ label, rr string }{
		{"v6", "AAAA 2001:db8::1"},
		{"mail", "MX 10 mx.example.net."},
		{"spf", `TXT "v=spf1 -all"`},
		{"svc", "SRV 0 5 443 web.example.net."},
		{"ca", `CAA 0 issue "letsencrypt.org"`},
	} {
		name := host(t, tc.label)
		m := new(dns.Msg)
		m.SetUpdate(dns.Fqdn(server.Zone))
		rr, err := dns.NewRR(dns.Fqdn(name) + " 300 IN " + tc.rr)
		if err != nil {
			t.Fatal(err)
		}
		m.Insert([]dns.RR{rr})
		signed(t, m)
		_, err = c.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 300, Owner: owner})
		if e := wantKind(t, err, external.KindConflict); e.Owner != extdns.UnmanagedOwner ||
			!strings.Contains(e.Message, "records of other types") {
			t.Errorf("Upsert of an A at %s, which holds only %s: %v (owner %q)", name, tc.rr, err, e.Owner)
		}
		if _, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
			t.Errorf("Get(%s) = %v; want NotFound", name, err)
		}
		if err := c.Delete(ctx, name, owner); err != nil {
			t.Errorf("Delete(%s): %v; want success, nothing of ours being there", name, err)
		}
		if v := resolve(t, server.Addr, name, dns.TypeA); len(v) != 0 {
			t.Errorf("an A was written at %s: %v", name, v)
		}
	}
}

// TestConformance runs the dns.Client contract's suite on the RFC 2136
// client against BIND.
func TestConformance(t *testing.T) {
	dnstest.RunConformance(t, func(t *testing.T) dnstest.Backend {
		b := needBIND(t)
		faults := &dnstest.Faults{}
		c := newClient(t, func(cfg *rfc2136.Config) {
			cfg.Exchange = func(ctx context.Context, m *dns.Msg, send func() error) error {
				if m.Opcode != dns.OpcodeUpdate {
					return send()
				}
				return faults.Do(ctx, send)
			}
		})
		read := func(ctx context.Context, name string) ([]string, error) { return readAddress(ctx, b.Addr, name) }
		return dnstest.Backend{Client: c, Zone: strings.TrimSuffix(b.Zone, "."), Faults: faults, Read: read, Peer: newClient(t)}
	})
}

// readAddress is the A or CNAME values addr serves at name, as a resolver
// reads them.
func readAddress(ctx context.Context, addr, name string) ([]string, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).ExchangeContext(ctx, m, addr)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range r.Answer {
		switch v := rr.(type) {
		case *dns.A:
			out = append(out, v.A.String())
		case *dns.CNAME:
			out = append(out, v.Target)
		}
	}
	return out, nil
}
