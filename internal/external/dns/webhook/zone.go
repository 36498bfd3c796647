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

package webhook

import (
	"fmt"
	"math"
	"slices"
	"strings"

	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// Record types the client reads.
const (
	typeA     = extdns.TypeA
	typeCNAME = extdns.TypeCNAME
	typeTXT   = "TXT"
)

// ExternalDNSHolder is the holder of a name that an external-dns TXT
// registry record claims, as a conflict names it. It cannot be an owner
// identity (those have no spaces or parentheses), so nothing this client
// writes ever matches it.
func ExternalDNSHolder(ownerID string) string {
	if ownerID == "" {
		return "(external-dns)"
	}
	return "(external-dns owner=" + ownerID + ")"
}

// nameState is what the zone holds at one name the client may manage.
type nameState struct {
	name string
	// records are the A and CNAME endpoints at the name, as read.
	records []Endpoint
	// ownerTXTs are the TXT endpoints at the name's owner name, as read;
	// owners are the identities their targets hold.
	ownerTXTs []Endpoint
	owners    []string
	// externalDNS are the owner IDs of the external-dns TXT registry
	// records that claim the name ("" for one without an owner ID).
	externalDNS []string
	// otherTypes says the name holds records of a type the client does not
	// write (an AAAA, an MX, a TXT of its own): such a name is no one's to
	// take, as on RFC 2136, whose create requires that nothing is there.
	otherTypes bool
}

func (s *nameState) exists() bool { return len(s.records) > 0 }

// holder is who holds the name: an external-dns installation whose
// registry claims it, the one owner its owner TXT names, or
// extdns.UnmanagedOwner for records without one owner (none, or several
// that disagree). It is "" for a free name.
func (s *nameState) holder() string {
	switch {
	case len(s.externalDNS) > 0:
		return ExternalDNSHolder(s.externalDNS[0])
	case len(s.owners) == 1:
		return s.owners[0]
	case len(s.owners) > 1, s.exists():
		return extdns.UnmanagedOwner
	default:
		return ""
	}
}

// record turns the state into a Record, as the RFC 2136 client does:
// several values (someone added one by hand) are joined, so the value
// never equals a desired one and an upsert replaces them.
func (s *nameState) record() extdns.Record {
	rec := extdns.Record{Name: s.name, Owner: s.holder()}
	var values []string
	for _, ep := range s.records {
		rec.Type, rec.TTL = ep.RecordType, clampTTL(ep.RecordTTL)
		for _, t := range ep.Targets {
			values = append(values, normalizeTarget(ep.RecordType, t))
		}
	}
	slices.Sort(values)
	rec.Value = strings.Join(values, ",")
	return rec
}

// matches reports whether the name holds exactly want, one endpoint with
// one value. A provider that does not report TTLs (0) matches any TTL:
// otherwise every upsert would rewrite the record.
func (s *nameState) matches(want Endpoint) bool {
	if len(s.records) != 1 || len(s.records[0].Targets) != 1 || len(want.Targets) != 1 {
		return false
	}
	got := s.records[0]
	return got.RecordType == want.RecordType &&
		normalizeTarget(got.RecordType, got.Targets[0]) == normalizeTarget(want.RecordType, want.Targets[0]) &&
		(got.RecordTTL == 0 || got.RecordTTL == want.RecordTTL)
}

// written is every endpoint at the name, as read, for an exact delete.
func (s *nameState) written() []Endpoint {
	return append(slices.Clone(s.records), s.ownerTXTs...)
}

// fingerprint identifies what the state holds, to tell whether a write
// whose outcome is unknown changed anything.
func (s *nameState) fingerprint() string {
	ext := s.externalDNS
	if s.otherTypes {
		ext = append(slices.Clone(ext), "(other types)")
	}
	return fingerprint(s.written(), ext)
}

// fingerprint identifies a set of endpoints and external-dns registry
// owners, whatever their order.
func fingerprint(written []Endpoint, externalDNS []string) string {
	parts := make([]string, 0, len(written)+len(externalDNS))
	for _, ep := range written {
		targets := make([]string, len(ep.Targets))
		for i, t := range ep.Targets {
			targets[i] = normalizeTarget(ep.RecordType, t)
		}
		slices.Sort(targets)
		parts = append(parts, fmt.Sprintf("%s %s %d %s", normalizeName(ep.DNSName), ep.RecordType, ep.RecordTTL, strings.Join(targets, ",")))
	}
	slices.Sort(parts)
	parts = append(parts, externalDNS...)
	return strings.Join(parts, "|")
}

func (s *nameState) clone() nameState {
	return nameState{name: s.name, records: slices.Clone(s.records), ownerTXTs: slices.Clone(s.ownerTXTs),
		owners: slices.Clone(s.owners), externalDNS: slices.Clone(s.externalDNS), otherTypes: s.otherTypes}
}

func clampTTL(ttl int64) int32 {
	return int32(max(0, min(ttl, math.MaxInt32))) //nolint:gosec // clamped
}

// normalizeTarget is a value as the client compares it: a CNAME target in
// lower case without the trailing dot, a TXT string without the quotes
// external-dns's registry and this client write around it.
func normalizeTarget(recordType, target string) string {
	switch recordType {
	case typeCNAME:
		return normalizeName(target)
	case typeTXT:
		return unquote(target)
	}
	return target
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// ownerName is where name's owner TXT lives: the RFC 2136 client's layout,
// so the owner records of both clients are the same records.
func ownerName(name string) string { return extdns.OwnerLabel + "." + name }

// endpointKind says what an endpoint is to this client.
type endpointKind int

const (
	kindOther endpointKind = iota
	kindRecord
	kindOwnerTXT
	kindExternalDNS
	// kindClaim is a TXT at an installation claim's name (claim.go); it
	// concerns no managed name.
	kindClaim
)

// external-dns's TXT registry puts the record type in front of the name it
// claims ("a-www.example.com", "cname-www.example.com"), and its old format
// claims the name itself; both are recognised. A registry with its own
// --txt-prefix or --txt-suffix is not: such a name's A or CNAME still has
// no owner TXT of this client's, so it is held by extdns.UnmanagedOwner
// and never touched either.
var registryTypePrefixes = []string{"a-", "aaaa-", "cname-", "txt-", "ns-", "mx-", "srv-", "naptr-", "ptr-", "caa-"}

// classify says what ep is, the name it concerns (the managed name for an
// owner TXT, the claimed names for an external-dns registry record, its own
// name for an installation claim) and, for the first two, the owner
// identities it holds.
func classify(ep Endpoint) (endpointKind, []string, []string) {
	name := normalizeName(ep.DNSName)
	switch ep.RecordType {
	case typeA, typeCNAME:
		return kindRecord, []string{name}, nil
	case typeTXT:
	default:
		return kindOther, []string{name}, nil
	}
	if rest, ok := strings.CutPrefix(name, extdns.OwnerLabel+"."); ok {
		owners := make([]string, 0, len(ep.Targets))
		for _, t := range ep.Targets {
			owners = append(owners, unquote(t))
		}
		return kindOwnerTXT, []string{rest}, owners
	}
	var ids []string
	for _, t := range ep.Targets {
		if id, ok := externalDNSOwner(unquote(t)); ok {
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) == 0 && strings.HasPrefix(name, claimLabel+"."):
		return kindClaim, []string{name}, nil
	case len(ids) == 0:
		return kindOther, []string{name}, nil
	}
	claimed := []string{name}
	first, rest, _ := strings.Cut(name, ".")
	for _, p := range registryTypePrefixes {
		if stripped, ok := strings.CutPrefix(first, p); ok && stripped != "" && rest != "" {
			claimed = append(claimed, stripped+"."+rest)
		}
	}
	return kindExternalDNS, claimed, ids
}

// externalDNSOwner parses an external-dns TXT registry value,
// "heritage=external-dns,external-dns/owner=<id>,...", and returns the
// owner ID.
func externalDNSOwner(value string) (string, bool) {
	heritage := false
	owner := ""
	for field := range strings.SplitSeq(value, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(field), "=")
		switch k {
		case "heritage":
			heritage = v == "external-dns"
		case "external-dns/owner":
			owner = v
		}
	}
	return owner, heritage
}

// zoneState holds the names of one zone read, and apart from them the
// installation claims, so that no list of records ever holds a claim.
type zoneState struct {
	zone  string
	names map[string]*nameState
	// claims are the TXT endpoints at each installation claim's name.
	claims map[string][]Endpoint
}

func newZoneState(zone string) *zoneState {
	return &zoneState{zone: zone, names: map[string]*nameState{}, claims: map[string][]Endpoint{}}
}

func (z *zoneState) inZone(name string) bool {
	return name == z.zone || strings.HasSuffix(name, "."+z.zone)
}

func (z *zoneState) get(name string) *nameState {
	st := z.names[name]
	if st == nil {
		st = &nameState{name: name}
		z.names[name] = st
	}
	return st
}

// add puts an endpoint read or written into the state; adding one that is
// there already changes nothing. Endpoints outside the zone are dropped,
// and of the records of other types only that they are there is kept: the
// zone may be large, and only that concerns the client.
func (z *zoneState) add(ep Endpoint) {
	kind, names, owners := classify(ep)
	for _, name := range names {
		if !z.inZone(name) {
			continue
		}
		if kind == kindClaim {
			if !slices.ContainsFunc(z.claims[name], func(e Endpoint) bool { return sameEndpoint(e, ep) }) {
				z.claims[name] = append(z.claims[name], ep)
			}
			continue
		}
		st := z.get(name)
		switch kind {
		case kindRecord:
			if !slices.ContainsFunc(st.records, func(e Endpoint) bool { return sameEndpoint(e, ep) }) {
				st.records = append(st.records, ep)
			}
		case kindOwnerTXT:
			if !slices.ContainsFunc(st.ownerTXTs, func(e Endpoint) bool { return sameEndpoint(e, ep) }) {
				st.ownerTXTs = append(st.ownerTXTs, ep)
				st.owners = append(st.owners, owners...)
			}
		case kindExternalDNS:
			st.externalDNS = append(st.externalDNS, owners...)
		case kindOther:
			st.otherTypes = true
		}
	}
}

// remove takes a deleted endpoint out of the state: the one with the same
// name, type and values.
func (z *zoneState) remove(ep Endpoint) {
	kind, names, _ := classify(ep)
	for _, name := range names {
		if kind == kindClaim {
			z.claims[name] = slices.DeleteFunc(z.claims[name], func(e Endpoint) bool { return sameEndpoint(e, ep) })
			if len(z.claims[name]) == 0 {
				delete(z.claims, name)
			}
			continue
		}
		st := z.names[name]
		if st == nil {
			continue
		}
		switch kind {
		case kindRecord:
			st.records = slices.DeleteFunc(st.records, func(e Endpoint) bool { return sameEndpoint(e, ep) })
		case kindOwnerTXT:
			st.ownerTXTs = slices.DeleteFunc(st.ownerTXTs, func(e Endpoint) bool { return sameEndpoint(e, ep) })
			st.owners = st.owners[:0]
			for _, e := range st.ownerTXTs {
				for _, t := range e.Targets {
					st.owners = append(st.owners, unquote(t))
				}
			}
		}
		if !st.exists() && len(st.ownerTXTs) == 0 && len(st.externalDNS) == 0 {
			delete(z.names, name)
		}
	}
}

// apply makes a batch's changes: the deletes, then the creates.
func (z *zoneState) apply(ch Changes) {
	for _, ep := range slices.Concat(ch.Delete, ch.UpdateOld) {
		z.remove(ep)
	}
	for _, ep := range slices.Concat(ch.Create, ch.UpdateNew) {
		z.add(ep)
	}
}

func sameEndpoint(a, b Endpoint) bool {
	if normalizeName(a.DNSName) != normalizeName(b.DNSName) || a.RecordType != b.RecordType ||
		a.SetIdentifier != b.SetIdentifier || len(a.Targets) != len(b.Targets) {
		return false
	}
	at, bt := make([]string, len(a.Targets)), make([]string, len(b.Targets))
	for i := range a.Targets {
		at[i], bt[i] = normalizeTarget(a.RecordType, a.Targets[i]), normalizeTarget(b.RecordType, b.Targets[i])
	}
	slices.Sort(at)
	slices.Sort(bt)
	return slices.Equal(at, bt)
}
