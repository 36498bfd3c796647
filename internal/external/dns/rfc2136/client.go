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

// Package rfc2136 is a dns.Client for any DNS server that accepts RFC 2136
// dynamic updates signed with TSIG (RFC 8945): BIND, Knot, PowerDNS,
// Windows DNS and most appliances. It talks to one primary server and one
// zone.
//
// # Ownership
//
// Each record name N carries its owner in a TXT record at
// "_myapp-owner.N" whose single string is the owner identity, such as
// "myapp-operator/shop/web/0d9c...". The leading underscore makes the
// label one no host name has (RFC 952 host names are letters, digits and
// hyphens), and the client refuses to manage a name whose first label is
// "_myapp-owner", so an owner record can never be mistaken for a user's
// record or overwritten through this client. The owner name is 13
// characters longer than N, so N is at most 240 characters (extdns.MaxNameLength).
//
// Every write is one UPDATE message whose prerequisites make it atomic on
// the server: a create requires that neither N nor its owner name is in use,
// a change, delete or transfer requires that the owner TXT holds exactly the
// caller's identity. A concurrent writer that got there first makes the
// prerequisite fail (YXDOMAIN or NXRRSET); the client then reads the holder
// back and returns external.ErrConflict naming it. Unlike a registry that
// reads, then writes, no interleaving lets two owners both believe they
// hold N.
//
// A name whose owner TXT RRset holds more than one identity (someone added
// a TXT by hand next to ours) is held by no owner the client can prove:
// Get, Upsert, Delete and Transfer all see extdns.UnmanagedOwner, so every write is
// a conflict naming it and nothing is deleted, and List leaves the name out
// for every owner, so no sweep or confirm list ever counts it as its own.
// Removing all but one owner TXT by hand gives the name back to that owner.
//
// # Signatures
//
// Every request to the primary is TSIG-signed, and an answer is believed
// only if its signature verifies: a success, an NXDOMAIN or a failed
// prerequisite, unsigned or badly signed, fails KindUnauthorized, since it
// could be forged by anyone on the path to make a name look free or an
// update done. Only the answers that end a call in an error may come
// unsigned (a server that does not know the key or the zone cannot sign):
// NOTAUTH with BADKEY, BADSIG or BADTIME, REFUSED, SERVFAIL, FORMERR and
// NOTIMP.
//
// # Listing and propagation
//
// Get, Upsert, Delete and Transfer query the name and its owner record;
// they never transfer the zone, so their cost does not grow with it. List
// and ListByOwnerPrefix read the zone with a TSIG-signed AXFR, so the
// server must allow transfers for the key. The transfer is streamed: only
// the names whose owner TXT the list asks for are kept, each decided as the
// transfer moves past it (ownedNames), and Timeout bounds each envelope's
// wait rather than the whole transfer, so a large zone that keeps coming is
// read to its end, a server that stalls fails within Timeout, and the
// caller's context ends it at any time.
//
// A record is StateActive once every configured nameserver answers its
// value, StatePending until then. The zone's serial is not compared: an
// unrelated update raises the primary's serial, and a secondary behind it
// still serves every record written before. List judges its records by
// each nameserver's serial first: one at the transferred serial serves them
// all; one behind it is asked each record's value, for a list of at most
// 64 records, and a longer list is PENDING while a nameserver lags.
package rfc2136

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
)

// DefaultTimeout bounds one exchange with a server.
const DefaultTimeout = 5 * time.Second

// tsigFudge is the clock skew, in seconds, a TSIG signature tolerates.
const tsigFudge = 300

// Config configures a Client.
type Config struct {
	// Server is the primary's address, host:port; ":53" is added when there
	// is no port. Updates, reads and transfers go there.
	Server string
	// Zone is the zone the records live in, such as "example.com".
	Zone string
	// Key supplies the TSIG key. Required.
	Key KeySource
	// Nameservers are the servers, host:port, that must all answer a record
	// before it is StateActive. Empty means the primary alone.
	Nameservers []string
	// Timeout bounds each exchange with a server. Zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives debug lines about calls, with the key's name but never
	// its secret.
	Logger logr.Logger
	// Now is the clock TSIG signatures are dated by; time.Now when nil.
	// Tests skew it to provoke BADTIME.
	Now func() time.Time
}

// Client manages records in one zone of an RFC 2136 server. It is safe for
// concurrent use.
type Client struct {
	server      string
	zone        string // fully qualified, lower case
	key         KeySource
	nameservers []string
	timeout     time.Duration
	log         logr.Logger
	now         func() time.Time
}

var _ extdns.Client = (*Client)(nil)

// The methods dns.Client is gaining for owner handover, pinned here so the
// signatures cannot drift before the interface has them.
var _ interface {
	ListByOwnerPrefix(ctx context.Context, prefix string) ([]extdns.Record, error)
	Transfer(ctx context.Context, name, from, to string) (extdns.Record, error)
} = (*Client)(nil)

// New returns a Client for cfg. It does not contact the server.
func New(cfg Config) (*Client, error) {
	if cfg.Server == "" {
		return nil, errors.New("rfc2136: Server is required")
	}
	if cfg.Zone == "" {
		return nil, errors.New("rfc2136: Zone is required")
	}
	if cfg.Key == nil {
		return nil, errors.New("rfc2136: Key is required")
	}
	zone := strings.ToLower(dns.Fqdn(cfg.Zone))
	if _, ok := dns.IsDomainName(zone); !ok {
		return nil, fmt.Errorf("rfc2136: Zone %q is not a domain name", cfg.Zone)
	}
	c := &Client{
		server:  withPort(cfg.Server),
		zone:    zone,
		key:     cfg.Key,
		timeout: cfg.Timeout,
		log:     cfg.Logger,
		now:     cfg.Now,
	}
	for _, ns := range cfg.Nameservers {
		c.nameservers = append(c.nameservers, withPort(ns))
	}
	if len(c.nameservers) == 0 {
		c.nameservers = []string{c.server}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

func withPort(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(strings.Trim(addr, "[]"), "53")
}

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

// Upsert creates the record or changes it in one UPDATE whose prerequisites
// make it atomic; see the package documentation.
func (c *Client) Upsert(ctx context.Context, rec extdns.Record) (_ extdns.Record, err error) {
	const op = "upsert"
	defer c.observe(op, time.Now(), &err)
	name, err := c.checkName(op, rec.Name)
	if err != nil {
		return extdns.Record{}, err
	}
	rec.Name = name
	if err := c.checkRecord(op, rec); err != nil {
		return extdns.Record{}, err
	}
	// Each pass reads, then writes on the condition that what it read still
	// holds. A failed condition means another writer moved in between: the
	// next pass sees what they did.
	createRefused := false
	for range 3 {
		st, err := c.read(ctx, op, name)
		if err != nil {
			return extdns.Record{}, err
		}
		m := c.newUpdate()
		switch st.holder() {
		case "":
			if createRefused {
				// The name is in use, but not by an A, a CNAME or an owner
				// TXT: someone keeps other records there.
				e := c.fail(op, external.KindConflict, fmt.Sprintf("%s has records of other types, written outside this operator", name), nil)
				e.Owner = extdns.UnmanagedOwner
				return extdns.Record{}, e
			}
			createRefused = true
			m.NameNotUsed([]dns.RR{anyRR(name), anyRR(ownerName(name))})
		case rec.Owner:
			if st.matches(rec) {
				out := st.record()
				out.State = c.propagation(ctx, out)
				return out, nil
			}
			m.Used([]dns.RR{ownerTXT(name, rec.Owner, 0)})
			m.RemoveRRset([]dns.RR{typedRR(name, dns.TypeA), typedRR(name, dns.TypeCNAME), typedRR(ownerName(name), dns.TypeTXT)})
		default:
			return extdns.Record{}, c.conflict(op, st)
		}
		rr, err := newRR(rec)
		if err != nil {
			return extdns.Record{}, c.fail(op, external.KindInvalid, err.Error(), nil)
		}
		m.Insert([]dns.RR{rr, ownerTXT(name, rec.Owner, uint32(rec.TTL))}) //nolint:gosec // checked positive
		err = c.update(ctx, op, m)
		if errors.Is(err, errPrerequisite) {
			continue
		}
		if err != nil {
			return extdns.Record{}, err
		}
		c.log.V(1).Info("Wrote DNS record", "name", name, "type", rec.Type, "value", rec.Value, "owner", rec.Owner)
		rec.State = extdns.StatePending
		return rec, nil
	}
	return extdns.Record{}, c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

// Delete removes the record and its owner TXT in one UPDATE that requires
// the owner TXT to be owner's.
func (c *Client) Delete(ctx context.Context, name, owner string) (err error) {
	const op = "delete"
	defer c.observe(op, time.Now(), &err)
	name, err = c.checkName(op, name)
	if err != nil {
		return err
	}
	if err := c.checkOwner(op, owner); err != nil {
		return err
	}
	for range 3 {
		m := c.newUpdate()
		m.Used([]dns.RR{ownerTXT(name, owner, 0)})
		m.RemoveRRset([]dns.RR{typedRR(name, dns.TypeA), typedRR(name, dns.TypeCNAME), typedRR(ownerName(name), dns.TypeTXT)})
		err := c.update(ctx, op, m)
		if err == nil {
			c.log.V(1).Info("Deleted DNS record", "name", name, "owner", owner)
			return nil
		}
		if !errors.Is(err, errPrerequisite) {
			return err
		}
		// The owner TXT is not owner's: find out whether the name is free
		// (nothing to delete) or someone else's.
		st, err := c.read(ctx, op, name)
		if err != nil {
			return err
		}
		switch st.holder() {
		case "":
			return nil
		case owner:
			continue // it changed back between the update and the read
		default:
			return c.conflict(op, st)
		}
	}
	return c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

// Transfer hands the record from one owner to another in one UPDATE that
// requires the owner TXT to be from's. A record already held by to is
// returned as it is.
func (c *Client) Transfer(ctx context.Context, name, from, to string) (_ extdns.Record, err error) {
	const op = "transfer"
	defer c.observe(op, time.Now(), &err)
	name, err = c.checkName(op, name)
	if err != nil {
		return extdns.Record{}, err
	}
	if err := errors.Join(c.checkOwner(op, from), c.checkOwner(op, to)); err != nil {
		return extdns.Record{}, err
	}
	for range 3 {
		st, err := c.read(ctx, op, name)
		if err != nil {
			return extdns.Record{}, err
		}
		if !st.exists() {
			return extdns.Record{}, c.fail(op, external.KindNotFound, fmt.Sprintf("no A or CNAME record at %s", name), nil)
		}
		rec := st.record()
		switch st.holder() {
		case to:
			rec.State = c.propagation(ctx, rec)
			return rec, nil
		case from:
		default:
			return extdns.Record{}, c.conflict(op, st)
		}
		m := c.newUpdate()
		m.Used([]dns.RR{ownerTXT(name, from, 0)})
		m.RemoveRRset([]dns.RR{typedRR(ownerName(name), dns.TypeTXT)})
		m.Insert([]dns.RR{ownerTXT(name, to, uint32(rec.TTL))}) //nolint:gosec // read from the server
		err = c.update(ctx, op, m)
		if errors.Is(err, errPrerequisite) {
			continue
		}
		if err != nil {
			return extdns.Record{}, err
		}
		c.log.V(1).Info("Transferred DNS record", "name", name, "from", from, "to", to)
		rec.Owner = to
		rec.State = c.propagation(ctx, rec)
		return rec, nil
	}
	return extdns.Record{}, c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
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

func (c *Client) newUpdate() *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(c.zone)
	return m
}

// checkName normalises name and refuses one this client cannot manage.
func (c *Client) checkName(op, name string) (string, error) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" {
		return "", c.fail(op, external.KindInvalid, "record name is required", nil)
	}
	if err := contract.ValidateName(name); err != nil {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q: %v", name, err), nil)
	}
	if len(name) > extdns.MaxNameLength {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q: must be at most %d characters, so that its owner "+
			"record %s.<name> fits in a domain name", name, extdns.MaxNameLength, extdns.OwnerLabel), nil)
	}
	if !dns.IsSubDomain(c.zone, dns.Fqdn(name)) {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q is not in zone %s", name, strings.TrimSuffix(c.zone, ".")), nil)
	}
	if first, _, _ := strings.Cut(name, "."); first == extdns.OwnerLabel {
		return "", c.fail(op, external.KindInvalid,
			fmt.Sprintf("record name %q: the label %s is reserved for owner records", name, extdns.OwnerLabel), nil)
	}
	return name, nil
}

func (c *Client) checkOwner(op, owner string) error {
	if p := extdns.OwnerProblem(owner); p != "" {
		return c.fail(op, external.KindInvalid, p, nil)
	}
	return nil
}

func (c *Client) checkRecord(op string, rec extdns.Record) error {
	if p := extdns.RecordProblem(rec); p != "" {
		return c.fail(op, external.KindInvalid, p, nil)
	}
	return nil
}

// ownerName is where name's owner TXT lives.
func ownerName(name string) string { return extdns.OwnerLabel + "." + name }

func ownerTXT(name, owner string, ttl uint32) dns.RR {
	return &dns.TXT{
		Hdr: dns.RR_Header{Name: dns.Fqdn(ownerName(name)), Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: ttl},
		Txt: []string{owner},
	}
}

// anyRR and typedRR name an RRset in a prerequisite or a deletion.
func anyRR(name string) dns.RR {
	return &dns.ANY{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: dns.TypeANY}}
}

func typedRR(name string, typ uint16) dns.RR {
	return &dns.ANY{Hdr: dns.RR_Header{Name: dns.Fqdn(name), Rrtype: typ}}
}

func newRR(rec extdns.Record) (dns.RR, error) {
	hdr := dns.RR_Header{Name: dns.Fqdn(rec.Name), Class: dns.ClassINET, Ttl: uint32(rec.TTL)} //nolint:gosec // checked positive
	switch rec.Type {
	case extdns.TypeA:
		ip := net.ParseIP(rec.Value).To4()
		if ip == nil {
			return nil, fmt.Errorf("%q is not an IPv4 address", rec.Value)
		}
		hdr.Rrtype = dns.TypeA
		return &dns.A{Hdr: hdr, A: ip}, nil
	case extdns.TypeCNAME:
		hdr.Rrtype = dns.TypeCNAME
		return &dns.CNAME{Hdr: hdr, Target: dns.Fqdn(strings.ToLower(rec.Value))}, nil
	}
	return nil, fmt.Errorf("record type must be A or CNAME, not %q", rec.Type)
}

// String names the server and zone, for logs.
func (c *Client) String() string {
	return "rfc2136 " + c.server + " zone " + strings.TrimSuffix(c.zone, ".") + " (" + strconv.Itoa(len(c.nameservers)) + " nameservers)"
}

// observe counts one logical call, started at start and ended with *err, in
// the request metrics the HTTP clients export (httpapi.Observe), so the
// alerts on a failing or throttling DNS service cover this backend too. The
// queries and updates a call makes are its attempts, as an HTTP client's
// retries are.
func (c *Client) observe(op string, start time.Time, err *error) {
	httpapi.Observe(extdns.ServiceName, op, time.Since(start), *err)
}
