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
//
// The files are cut by verb: client.go (configuration), read.go (Get, the
// lists and propagation), write.go (Upsert, Delete and Transfer), checks.go
// (names, owners and the records they become), list.go (the streamed zone
// transfer), exchange.go (one signed exchange), key.go and claim.go.
package rfc2136

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/miekg/dns"

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
	// Exchange, when set, is called with each message sent to a server and
	// a send that makes the exchange, and returns what the exchange then
	// answers: a test's fault layer fails, holds or loses messages there.
	Exchange func(ctx context.Context, m *dns.Msg, send func() error) error
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
	hook        func(ctx context.Context, m *dns.Msg, send func() error) error
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
		hook:    cfg.Exchange,
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
