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

package rfc2136

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// TestOwnedNamesKeepsWhatTheOwnerFilterAccepts states the promise of the
// listing's collector over random zones: whatever order the records come
// in, the names kept are exactly those with an owner TXT the filter
// accepts, each with all of its A/CNAME records and owner TXTs (so a name
// with two owners is seen as two-owned); in canonical order it never holds
// more names open than the depth of the zone plus one and never asks to be
// read again; out of order, it asks to be read again whenever it let a name
// go, and read whole it keeps them all. The zones are made of raw parts: a
// tree of names, each with or without an A, with zero to two owner TXTs
// from a pool of owners, and unrelated records.
func TestOwnedNamesKeepsWhatTheOwnerFilterAccepts(t *testing.T) {
	keep := func(owner string) bool { return strings.HasPrefix(owner, "mine/") }
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		rrs := randomZone(rng)
		want := expectedOwned(rrs, keep)

		canonical := slices.Clone(rrs)
		slices.SortStableFunc(canonical, func(a, b dns.RR) int { return canonicalOrder(a, b) })
		o := newOwnedNames(keep, false)
		maxOpen := 0
		for _, rr := range canonical {
			o.add(rr)
			maxOpen = max(maxOpen, len(o.open))
		}
		got, restart := o.finish()
		if restart {
			t.Fatalf("seed %d: a zone in canonical order asked to be read again", seed)
		}
		if diff := describe(got); diff != describe(want) {
			t.Fatalf("seed %d, canonical order: kept\n%s\nwant\n%s", seed, diff, describe(want))
		}
		if maxOpen > 5 { // the zone's names are at most four labels below it
			t.Fatalf("seed %d: %d names held open at once in canonical order", seed, maxOpen)
		}

		shuffled := slices.Clone(rrs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		o = newOwnedNames(keep, false)
		for _, rr := range shuffled {
			o.add(rr)
		}
		got, restart = o.finish()
		if !restart && describe(got) != describe(want) {
			t.Fatalf("seed %d: out of order, kept\n%s\nwant\n%s\nwithout asking to be read again", seed, describe(got), describe(want))
		}
		o = newOwnedNames(keep, true)
		for _, rr := range shuffled {
			o.add(rr)
		}
		if got, _ := o.finish(); describe(got) != describe(want) {
			t.Fatalf("seed %d: read whole out of order, kept\n%s\nwant\n%s", seed, describe(got), describe(want))
		}
	}
}

// randomZone is a zone below z.test. of up to 40 names at most four labels
// deep, some sharing parents.
func randomZone(rng *rand.Rand) []dns.RR {
	owners := []string{"mine/a", "mine/b", "theirs/c", "v=spf1 -all"}
	// "0db" and "_a" sort before the owner label "_myapp-owner", so a name's
	// owner TXT can come after names below it.
	// "ba" ends in "a" without being below it.
	labels := []string{"a", "b", "www", "_x", "shop", "0db", "_a", "ba"}
	var rrs []dns.RR
	for range rng.IntN(40) {
		name := ""
		for range 1 + rng.IntN(4) {
			name = labels[rng.IntN(len(labels))] + "." + name
		}
		name += "z.test."
		if rng.IntN(3) > 0 {
			rrs = append(rrs, &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{192, 0, 2, byte(rng.IntN(250))}})
		}
		for range rng.IntN(3) {
			rrs = append(rrs, &dns.TXT{Hdr: dns.RR_Header{Name: extdns.OwnerLabel + "." + name, Rrtype: dns.TypeTXT, Class: dns.ClassINET},
				Txt: []string{owners[rng.IntN(len(owners))]}})
		}
		if rng.IntN(4) == 0 {
			rrs = append(rrs, &dns.MX{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeMX, Class: dns.ClassINET}, Mx: "mx.z.test."})
		}
	}
	return rrs
}

// expectedOwned groups every A, CNAME and owner TXT of rrs by name and
// keeps the names with an owner keep accepts: what a listing that holds the
// whole zone finds.
func expectedOwned(rrs []dns.RR, keep func(string) bool) map[string]*state {
	all := map[string]*state{}
	for _, rr := range rrs {
		name := lowerName(rr)
		switch v := rr.(type) {
		case *dns.A, *dns.CNAME:
			if all[name] == nil {
				all[name] = &state{name: name}
			}
			all[name].rrs = append(all[name].rrs, rr)
		case *dns.TXT:
			if rest, ok := strings.CutPrefix(name, extdns.OwnerLabel+"."); ok {
				if all[rest] == nil {
					all[rest] = &state{name: rest}
				}
				all[rest].owners = append(all[rest].owners, strings.Join(v.Txt, ""))
			}
		}
	}
	out := map[string]*state{}
	for name, st := range all {
		if slices.ContainsFunc(st.owners, keep) {
			out[name] = st
		}
	}
	return out
}

// canonicalOrder orders two records' names as RFC 4034 section 6.1 says,
// with miekg/dns's label split: the labels from the right, each compared
// as octets, a name before the names below it.
func canonicalOrder(a, b dns.RR) int {
	la, lb := dns.SplitDomainName(lowerName(a)), dns.SplitDomainName(lowerName(b))
	for i := 1; i <= min(len(la), len(lb)); i++ {
		if c := strings.Compare(la[len(la)-i], lb[len(lb)-i]); c != 0 {
			return c
		}
	}
	return len(la) - len(lb)
}

func lowerName(rr dns.RR) string { return strings.TrimSuffix(strings.ToLower(rr.Header().Name), ".") }

// describe prints the names kept with their records and owners, sorted.
func describe(m map[string]*state) string {
	lines := make([]string, 0, len(m))
	for name, st := range m {
		values := make([]string, 0, len(st.rrs))
		for _, rr := range st.rrs {
			_, v := rrValue(rr)
			values = append(values, v)
		}
		owners := slices.Clone(st.owners)
		slices.Sort(values)
		slices.Sort(owners)
		lines = append(lines, fmt.Sprintf("%s %v %v", name, values, owners))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestCanonicalOrderOfNames pins the two name relations the collector
// decides by: canonical order, an ancestor before its descendants and
// labels compared from the right, and being at or below a name, which is
// by whole labels, not by the characters a name ends in.
func TestCanonicalOrderOfNames(t *testing.T) {
	// RFC 4034 section 6.1's example, in lower case and without escapes.
	ordered := []string{"example", "a.example", "yljkjljk.a.example", "z.a.example", "zabc.a.example", "z.example"}
	for i := range ordered {
		for j := range ordered {
			if got := compareNames(ordered[i], ordered[j]); (got < 0) != (i < j) || (got == 0) != (i == j) {
				t.Errorf("compareNames(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
	for _, tc := range []struct {
		name, top string
		want      bool
	}{
		{"a.example", "a.example", true},
		{"x.a.example", "a.example", true},
		{"ba.example", "a.example", false},
		{"example", "a.example", false},
		{"a.example.net", "a.example", false},
	} {
		if got := within(tc.name, tc.top); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.name, tc.top, got, tc.want)
		}
	}
}
