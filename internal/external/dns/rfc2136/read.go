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
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// state is what the primary holds for one name.
type state struct {
	name string
	// rrs are the A and CNAME records at the name.
	rrs []dns.RR
	// owners are the identities in the owner TXT RRset: one for a name
	// this client wrote, none for a free name or a hand-written record.
	// More than one (someone added a TXT by hand) proves no owner.
	owners []string
}

func (s state) exists() bool { return len(s.rrs) > 0 }

// holder is who holds the name: its owner, or extdns.UnmanagedOwner for records
// without one or with owner TXTs that disagree. It is "" for a free name.
func (s state) holder() string {
	switch {
	case len(s.owners) == 1:
		return s.owners[0]
	case len(s.owners) > 1, s.exists():
		return extdns.UnmanagedOwner
	default:
		return ""
	}
}

// record turns the state into a Record; several RRs (someone added one by
// hand) are joined, so the value never equals a desired one and an upsert
// replaces them.
func (s state) record() extdns.Record {
	rec := extdns.Record{Name: s.name, Owner: s.holder()}
	values := make([]string, 0, len(s.rrs))
	for _, rr := range s.rrs {
		typ, value := rrValue(rr)
		rec.Type, rec.TTL = typ, int32(rr.Header().Ttl) //nolint:gosec // a TTL fits, MaxTTL is far below 2^31
		values = append(values, value)
	}
	slices.Sort(values)
	rec.Value = strings.Join(values, ",")
	return rec
}

func (s state) matches(rec extdns.Record) bool {
	cur := s.record()
	return len(s.rrs) == 1 && cur.Type == rec.Type && cur.Value == rec.Value && cur.TTL == rec.TTL
}

func rrValue(rr dns.RR) (typ, value string) {
	switch v := rr.(type) {
	case *dns.A:
		return extdns.TypeA, v.A.String()
	case *dns.CNAME:
		return extdns.TypeCNAME, strings.TrimSuffix(strings.ToLower(v.Target), ".")
	}
	return "", ""
}

// Get returns the record called name with its owner and whether every
// nameserver serves it yet.
func (c *Client) Get(ctx context.Context, name string) (_ extdns.Record, err error) {
	const op = "get"
	defer c.observe(op, time.Now(), &err)
	name, err = c.checkName(op, name)
	if err != nil {
		return extdns.Record{}, err
	}
	st, err := c.read(ctx, op, name)
	if err != nil {
		return extdns.Record{}, err
	}
	if !st.exists() {
		return extdns.Record{}, c.fail(op, external.KindNotFound, fmt.Sprintf("no A or CNAME record at %s", name), nil)
	}
	rec := st.record()
	rec.State = c.propagation(ctx, rec)
	return rec, nil
}

// List returns the records owner holds, or every record that has an owner
// TXT when owner is empty, sorted by name. Records without an owner TXT are
// not this client's to list.
func (c *Client) List(ctx context.Context, owner string) (_ []extdns.Record, err error) {
	defer c.observe("list", time.Now(), &err)
	return c.list(ctx, "list", func(o string) bool { return owner == "" || o == owner })
}

// ListByOwnerPrefix returns the records whose owner starts with prefix,
// sorted by name. An empty prefix is refused, as by the HTTP client, so a
// caller cannot mistake every owner's records for its own.
func (c *Client) ListByOwnerPrefix(ctx context.Context, prefix string) (_ []extdns.Record, err error) {
	defer c.observe("list", time.Now(), &err)
	if prefix == "" {
		return nil, c.fail("list", external.KindInvalid, "owner prefix is required", nil)
	}
	return c.list(ctx, "list", func(o string) bool { return strings.HasPrefix(o, prefix) })
}

func (c *Client) list(ctx context.Context, op string, keep func(owner string) bool) ([]extdns.Record, error) {
	// Only the names whose owner TXT keep accepts are held (ownedNames);
	// every owner TXT at such a name is, so that a name with two of them
	// is seen as read sees it: held by no one.
	names := newOwnedNames(keep, false)
	serial, err := c.axfr(ctx, op, names.add)
	if err != nil {
		return nil, err
	}
	owned, restart := names.finish()
	if restart {
		c.log.V(1).Info("Zone transfer arrived out of canonical order; reading it again, keeping every name", "zone", c.zone)
		names = newOwnedNames(keep, true)
		if serial, err = c.axfr(ctx, op, names.add); err != nil {
			return nil, err
		}
		owned, _ = names.finish()
	}
	var out []extdns.Record
	for _, st := range owned {
		if len(st.owners) != 1 || !st.exists() {
			continue
		}
		out = append(out, st.record())
	}
	slices.SortFunc(out, func(a, b extdns.Record) int { return strings.Compare(a.Name, b.Name) })
	c.listStates(ctx, serial, out)
	if out == nil {
		out = []extdns.Record{}
	}
	return out, nil
}

// read asks the primary for the A or CNAME at name and for its owner TXT,
// as the zone holds them at that exact name (confirmExact).
func (c *Client) read(ctx context.Context, op, name string) (state, error) {
	st := state{name: name}
	fqdn := dns.Fqdn(name)
	r, err := c.query(ctx, op, c.server, fqdn, dns.TypeA, true)
	if err != nil {
		return st, err
	}
	for _, rr := range r.Answer {
		// An A query at a CNAME also answers the target's records; only the
		// ones at name itself are the record.
		if strings.EqualFold(rr.Header().Name, fqdn) {
			if typ, _ := rrValue(rr); typ != "" {
				st.rrs = append(st.rrs, rr)
			}
		}
	}
	r, err = c.query(ctx, op, c.server, dns.Fqdn(ownerName(name)), dns.TypeTXT, true)
	if err != nil {
		return st, err
	}
	for _, rr := range r.Answer {
		if txt, ok := rr.(*dns.TXT); ok && strings.EqualFold(rr.Header().Name, dns.Fqdn(ownerName(name))) {
			st.owners = append(st.owners, strings.Join(txt.Txt, ""))
		}
	}
	slices.Sort(st.owners)
	return st, c.confirmExact(ctx, op, &st)
}

// confirmExact drops from st what the zone does not hold at st.name itself.
// A zone with a wildcard ("*.example.com CNAME lb.example.net", an SPF
// "*.example.com TXT") answers a query for any name that has no records of
// its own with records made up from the wildcard (RFC 4592), and nothing in
// an unsigned answer tells them apart: taken for real, they would make every
// name the operator has not written yet look held by someone. So unless st
// is exactly what this client writes (one A or CNAME and one owner TXT
// holding an owner identity, which no wildcard makes up, since a name with
// an owner record below it is never answered from a wildcard), each RRset
// it shows is confirmed on the zone's own data: an absent name, the common
// case, costs nothing more, and a record written by hand one update.
func (c *Client) confirmExact(ctx context.Context, op string, st *state) error {
	if len(st.rrs) == 1 && len(st.owners) == 1 && contract.ValidateOwner(st.owners[0]) == nil {
		return nil
	}
	if len(st.rrs) > 0 {
		held, err := c.rrsetExists(ctx, op, st.name, st.rrs[0].Header().Rrtype)
		if err != nil {
			return err
		}
		if !held {
			c.log.V(1).Info("DNS answer made up from a wildcard; the name holds no record", "name", st.name)
			st.rrs = nil
		}
	}
	if len(st.owners) > 0 {
		held, err := c.rrsetExists(ctx, op, ownerName(st.name), dns.TypeTXT)
		if err != nil {
			return err
		}
		if !held {
			c.log.V(1).Info("DNS owner answer made up from a wildcard; the name has no owner record", "name", st.name)
			st.owners = nil
		}
	}
	return nil
}

// rrsetExists asks the primary whether name holds records of type typ of
// its own, with an UPDATE that carries only the prerequisite "RRset exists
// (value independent)" (RFC 2136 section 2.4.1) and changes nothing. A
// server checks prerequisites against the zone's data, where a wildcard
// makes nothing up; an update that changes nothing leaves the serial alone.
func (c *Client) rrsetExists(ctx context.Context, op, name string, typ uint16) (bool, error) {
	m := c.newUpdate()
	m.RRsetUsed([]dns.RR{typedRR(name, typ)})
	err := c.update(ctx, op, m)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, errPrerequisite):
		return false, nil
	default:
		return false, err
	}
}

// propagation says whether every nameserver serves rec yet: answers its
// value. A nameserver that does not answer is one that has not caught up.
// The zone's serial is not compared: a nameserver one serial behind,
// because of an unrelated update, still serves a record written before.
func (c *Client) propagation(ctx context.Context, rec extdns.Record) extdns.RecordState {
	for _, ns := range c.nameservers {
		if !c.serves(ctx, ns, rec) {
			return extdns.StatePending
		}
	}
	return extdns.StateActive
}

// serves reports whether nameserver ns answers rec's value.
func (c *Client) serves(ctx context.Context, ns string, rec extdns.Record) bool {
	fqdn := dns.Fqdn(rec.Name)
	r, err := c.query(ctx, "get", ns, fqdn, dns.TypeA, false)
	if err != nil {
		return false
	}
	var values []string
	for _, rr := range r.Answer {
		if strings.EqualFold(rr.Header().Name, fqdn) {
			if _, v := rrValue(rr); v != "" {
				values = append(values, v)
			}
		}
	}
	slices.Sort(values)
	if strings.Join(values, ",") != rec.Value {
		c.log.V(1).Info("DNS record not served by a nameserver yet", "name", rec.Name, "nameserver", ns)
		return false
	}
	return true
}

// maxListChecks is the most records of a list whose values are asked of a
// nameserver that lags the transferred serial; a longer list is reported
// PENDING rather than cost a query per record and nameserver.
const maxListChecks = 64

// listStates sets the state of records read in a zone transfer at serial.
// A nameserver at that serial or later serves them all; one behind it may
// still serve them (an unrelated update raised the serial), so each value
// is asked of it as Get does, for a list of at most maxListChecks records.
// A nameserver that does not answer serves nothing.
func (c *Client) listStates(ctx context.Context, serial uint32, records []extdns.Record) {
	state := extdns.StateActive
	var behind []string
	for _, ns := range c.nameservers {
		got, err := c.serial(ctx, ns, false)
		switch {
		case err != nil:
			state = extdns.StatePending
		case !serialAtLeast(got, serial):
			behind = append(behind, ns)
		}
	}
	if len(behind) > 0 && len(records) > maxListChecks {
		state = extdns.StatePending
	}
	for i := range records {
		records[i].State = state
		for _, ns := range behind {
			if state == extdns.StatePending || !c.serves(ctx, ns, records[i]) {
				records[i].State = extdns.StatePending
				break
			}
		}
	}
}

func (c *Client) serial(ctx context.Context, server string, signed bool) (uint32, error) {
	r, err := c.query(ctx, "get", server, c.zone, dns.TypeSOA, signed)
	if err != nil {
		return 0, err
	}
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial, nil
		}
	}
	return 0, c.fail("get", external.KindTransient, fmt.Sprintf("%s has no SOA for zone %s", server, c.zone), nil)
}

// serialAtLeast compares zone serials in RFC 1982 arithmetic.
func serialAtLeast(got, want uint32) bool { return int32(got-want) >= 0 } //nolint:gosec // wrap-around is the point
