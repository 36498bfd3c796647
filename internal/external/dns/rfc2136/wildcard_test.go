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
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
)

// wildcardZones are zones with a wildcard at their apex of each kind a real
// zone has: a CNAME to an ingress for every unknown name, an A, a TXT (an
// SPF record for every name), and an A with a TXT.
var wildcardZones = []struct {
	name string
	seed string
}{
	{"CNAME", "* IN CNAME lb.example.net.\n"},
	{"A", "* IN A 198.51.100.80\n"},
	{"TXT", "* IN TXT \"v=spf1 -all\"\n"},
	{"A and TXT", "* IN A 198.51.100.80\n* IN TXT \"v=spf1 -all\"\n"},
}

// startWildcardBIND starts a BIND of its own serving example.com with seed
// at the apex, and returns a client of it.
func startWildcardBIND(t *testing.T, seed string) (*controlplane.BIND, *rfc2136.Client) {
	t.Helper()
	needBIND(t)
	b, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{
		Seed: func(w io.Writer) error { _, err := io.WriteString(w, seed); return err },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	key, err := rfc2136.ParseKey(b.Key())
	if err != nil {
		t.Fatal(err)
	}
	c, err := rfc2136.New(rfc2136.Config{Server: b.Addr, Zone: b.Zone, Key: rfc2136.StaticKey(key), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

// TestWildcardsDoNotHoldNames (issue 32 item 3, G4): in a zone with a
// wildcard, a resolver gets an answer for every name, made up from the
// wildcard (RFC 4592). The client must not take it for a record someone
// holds: a name with no record of its own reads as free, is created, read,
// changed and deleted as ours. A record written by hand at the exact name
// is still held by (unmanaged): a conflict, and never touched.
func TestWildcardsDoNotHoldNames(t *testing.T) {
	for _, zone := range wildcardZones {
		t.Run(zone.name, func(t *testing.T) {
			b, c := startWildcardBIND(t, zone.seed)
			ctx := t.Context()
			const owner = "myapp-operator/cluster/shop/web/uid-1"
			name := "web.shop." + b.Zone
			if got := resolveAt(t, b.Addr, name, dns.TypeA); len(got) == 0 && zone.name != "TXT" {
				t.Fatalf("the wildcard answers nothing for %s: the test proves nothing", name)
			}

			if got, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("Get of a name only the wildcard answers = %+v, %v; want not found", got, err)
			}
			rec := extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.10", TTL: 300, Owner: owner}
			if _, err := c.Upsert(ctx, rec); err != nil {
				t.Fatalf("creating %s under the wildcard: %v", name, err)
			}
			got, err := c.Get(ctx, name)
			if err != nil || got.Owner != owner || got.Value != "192.0.2.10" {
				t.Fatalf("Get after the create = %+v, %v", got, err)
			}
			rec.Value = "192.0.2.11"
			if _, err := c.Upsert(ctx, rec); err != nil {
				t.Fatalf("changing %s: %v", name, err)
			}
			list, err := c.List(ctx, owner)
			if err != nil || len(list) != 1 || list[0].Name != name {
				t.Fatalf("List(%s) = %+v, %v; want the one record", owner, list, err)
			}
			if err := c.Delete(ctx, name, owner); err != nil {
				t.Fatalf("deleting %s: %v", name, err)
			}
			if got, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("Get after the delete = %+v, %v; want not found", got, err)
			}

			handWrittenIsAConflict(t, b, c, owner)
		})
	}
}

// handWrittenIsAConflict writes a record by hand at a name in b's zone and
// checks that it is held by (unmanaged): a read says so without moving the
// zone's serial, and an upsert is a conflict that leaves the record alone.
func handWrittenIsAConflict(t *testing.T, b *controlplane.BIND, c *rfc2136.Client, owner string) {
	t.Helper()
	ctx := t.Context()
	taken := "taken.shop." + b.Zone
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(b.Zone))
	m.Insert([]dns.RR{mustRR(t, taken+". 300 IN A 203.0.113.5")})
	signedAt(t, b, m)
	serial := soaSerial(t, b.Addr, b.Zone)
	got, err := c.Get(ctx, taken)
	if err != nil || got.Owner != extdns.UnmanagedOwner || got.Value != "203.0.113.5" {
		t.Fatalf("Get of a record written by hand = %+v, %v; want it, held by %s", got, err, extdns.UnmanagedOwner)
	}
	if after := soaSerial(t, b.Addr, b.Zone); after != serial {
		t.Fatalf("reading %s moved the zone's serial from %d to %d: a confirming update changed the zone", taken, serial, after)
	}
	_, err = c.Upsert(ctx, extdns.Record{Name: taken, Type: extdns.TypeA, Value: "192.0.2.10", TTL: 300, Owner: owner})
	if e := wantKind(t, err, external.KindConflict); e.Owner != extdns.UnmanagedOwner {
		t.Fatalf("Upsert over a record written by hand: conflict names %q", e.Owner)
	}
	if v := resolveAt(t, b.Addr, taken, dns.TypeA); len(v) != 1 || v[0] != "203.0.113.5" {
		t.Fatalf("the record written by hand was touched: %v", v)
	}
}

// resolveAt asks addr, unsigned like a resolver, for name's A or CNAME
// values.
func resolveAt(t *testing.T, addr, name string, qtype uint16) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatalf("querying %s for %s: %v", addr, name, err)
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
	return out
}

// soaSerial is the zone's serial as addr serves it.
func soaSerial(t *testing.T, addr, zone string) uint32 {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeSOA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil || len(r.Answer) == 0 {
		t.Fatalf("querying %s for the SOA of %s: %v %v", addr, zone, r, err)
	}
	return r.Answer[0].(*dns.SOA).Serial
}

// signedAt sends an update by hand to b, signed with its key.
func signedAt(t *testing.T, b *controlplane.BIND, m *dns.Msg) {
	t.Helper()
	m.SetTsig(dns.Fqdn(b.KeyName), dns.HmacSHA256, 300, time.Now().Unix())
	cl := &dns.Client{Net: "tcp", TsigSecret: map[string]string{dns.Fqdn(b.KeyName): b.KeySecret}}
	r, _, err := cl.Exchange(m, b.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		t.Fatalf("update by hand: %v %v", r, fmt.Sprint(err))
	}
}
