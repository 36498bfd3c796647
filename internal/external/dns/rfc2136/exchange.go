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
	"net"
	"strings"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// errPrerequisite is an UPDATE whose prerequisites did not hold: someone
// else changed the name since it was read.
var errPrerequisite = errors.New("update prerequisite failed")

// query asks server one question, TSIG-signed when signed. NXDOMAIN is an
// answer: the name has no records.
func (c *Client) query(ctx context.Context, op, server, name string, qtype uint16, signed bool) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = false
	r, err := c.exchange(ctx, op, server, m, signed)
	if err != nil {
		return nil, err
	}
	if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
		return nil, c.rcodeError(op, r)
	}
	return r, nil
}

// update sends m to the primary. A failed prerequisite is errPrerequisite.
func (c *Client) update(ctx context.Context, op string, m *dns.Msg) error {
	r, err := c.exchange(ctx, op, c.server, m, true)
	if err != nil {
		return err
	}
	switch r.Rcode {
	case dns.RcodeSuccess:
		return nil
	case dns.RcodeYXDomain, dns.RcodeYXRrset, dns.RcodeNXRrset, dns.RcodeNameError:
		c.log.V(1).Info("DNS update prerequisite failed", "operation", op, "rcode", dns.RcodeToString[r.Rcode])
		return errPrerequisite
	default:
		return c.rcodeError(op, r)
	}
}

// exchange sends m over TCP, so an answer is never truncated, within the
// timeout. An error is an *external.Error; an answer with any rcode is
// returned for the caller to judge.
func (c *Client) exchange(ctx context.Context, op, server string, m *dns.Msg, signed bool) (*dns.Msg, error) {
	cl := &dns.Client{Net: "tcp", Timeout: c.timeout}
	var key Key
	if signed {
		var err error
		if key, err = c.signingKey(ctx, op); err != nil {
			return nil, err
		}
		cl.TsigSecret = map[string]string{key.fqdn(): key.Secret}
		m.SetTsig(key.fqdn(), key.algorithm(), tsigFudge, c.now().Unix())
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	r, _, err := cl.ExchangeContext(ctx, m, server)
	if r != nil && r.Rcode != dns.RcodeSuccess {
		// Error answers are often unsigned (a server that does not know the
		// key cannot sign), so the rcode speaks, not the failed
		// verification.
		return r, nil
	}
	if err != nil {
		if isTSIGError(err) {
			return nil, c.fail(op, external.KindUnauthorized, fmt.Sprintf("the answer of %s failed TSIG verification with %s; "+
				"the server and the operator hold different secrets for it", server, key), err)
		}
		return nil, c.fail(op, external.KindTransient, fmt.Sprintf("no answer from %s within %s", server, c.timeout), err)
	}
	if signed && r.IsTsig() == nil {
		// miekg/dns verifies a signature only when the answer carries one.
		// A server signs its answer to a signed request (RFC 8945), so an
		// unsigned success may be forged by anyone on the path: not believed.
		return nil, c.fail(op, external.KindUnauthorized, fmt.Sprintf("the answer of %s to a request signed with %s is not "+
			"signed; it is not believed", server, key), nil)
	}
	return r, nil
}

// axfr transfers the zone from the primary and returns its records and
// serial.
func (c *Client) axfr(ctx context.Context, op string) ([]dns.RR, uint32, error) {
	key, err := c.signingKey(ctx, op)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", c.server)
	if err != nil {
		return nil, 0, c.fail(op, external.KindTransient, "cannot reach "+c.server, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	t := &dns.Transfer{
		Conn:        &dns.Conn{Conn: conn},
		TsigSecret:  map[string]string{key.fqdn(): key.Secret},
		ReadTimeout: c.timeout,
	}
	m := new(dns.Msg)
	m.SetAxfr(c.zone)
	m.SetTsig(key.fqdn(), key.algorithm(), tsigFudge, c.now().Unix())
	envelopes, err := t.In(m, c.server)
	if err != nil {
		_ = conn.Close()
		return nil, 0, c.fail(op, external.KindTransient, "cannot start a zone transfer from "+c.server, err)
	}
	var rrs []dns.RR
	var failed error
	for env := range envelopes {
		if env.Error != nil && failed == nil {
			failed = env.Error
		}
		rrs = append(rrs, env.RR...)
	}
	if failed != nil {
		return nil, 0, c.transferError(ctx, op, failed)
	}
	for _, rr := range rrs {
		if soa, ok := rr.(*dns.SOA); ok {
			return rrs, soa.Serial, nil
		}
	}
	return nil, 0, c.fail(op, external.KindTransient, "the zone transfer from "+c.server+" has no SOA", nil)
}

// transferError explains a failed transfer. miekg/dns reports a refused
// transfer without its rcode or TSIG error (an error answer is often
// unsigned, which it reports as a verification failure), so a signed SOA
// query tells a bad key (BADKEY, BADSIG, BADTIME), a zone the server does
// not serve and an unreachable server apart from a server that merely does
// not allow the transfer.
func (c *Client) transferError(ctx context.Context, op string, err error) error {
	if _, qerr := c.query(ctx, op, c.server, c.zone, dns.TypeSOA, true); qerr != nil {
		return qerr
	}
	if strings.Contains(err.Error(), "bad xfr rcode") || isTSIGError(err) || errors.Is(err, dns.ErrAuth) {
		return c.fail(op, external.KindUnauthorized, fmt.Sprintf("%s refused a zone transfer of %s: allow it for the key with "+
			"allow-transfer { key ...; }", c.server, strings.TrimSuffix(c.zone, ".")), err)
	}
	return c.fail(op, external.KindTransient, "the zone transfer from "+c.server+" failed", err)
}

func isTSIGError(err error) bool {
	return errors.Is(err, dns.ErrSig) || errors.Is(err, dns.ErrTime) || errors.Is(err, dns.ErrSecret) || errors.Is(err, dns.ErrKeyAlg)
}

func (c *Client) signingKey(ctx context.Context, op string) (Key, error) {
	key, err := c.key.Key(ctx)
	if err != nil {
		if external.IsRetryable(err) {
			return Key{}, c.fail(op, external.KindTransient, "reading the TSIG key", err)
		}
		return Key{}, c.fail(op, external.KindUnauthorized, "reading the TSIG key", err)
	}
	return key, nil
}

// rcodeError maps an error rcode onto the taxonomy the reconcilers know.
func (c *Client) rcodeError(op string, r *dns.Msg) error {
	zone := strings.TrimSuffix(c.zone, ".")
	rcode := dns.RcodeToString[r.Rcode]
	var tsigErr uint16
	var keyName string
	if t := r.IsTsig(); t != nil {
		tsigErr, keyName = t.Error, strings.TrimSuffix(t.Hdr.Name, ".")
	}
	switch {
	case tsigErr == dns.RcodeBadKey:
		return c.fail(op, external.KindUnauthorized, fmt.Sprintf("%s BADKEY: %s does not know the TSIG key %q or not with that algorithm",
			rcode, c.server, keyName), nil)
	case tsigErr == dns.RcodeBadSig:
		return c.fail(op, external.KindUnauthorized, fmt.Sprintf("%s BADSIG: %s knows the TSIG key %q with another secret",
			rcode, c.server, keyName), nil)
	case tsigErr == dns.RcodeBadTime:
		return c.fail(op, external.KindUnauthorized, fmt.Sprintf("%s BADTIME: the clocks of the operator and %s differ by more "+
			"than %ds; synchronise them (NTP)", rcode, c.server, tsigFudge), nil)
	case r.Rcode == dns.RcodeNotAuth:
		return c.fail(op, external.KindUnauthorized, fmt.Sprintf("NOTAUTH: %s is not authoritative for zone %s", c.server, zone), nil)
	case r.Rcode == dns.RcodeRefused:
		return c.fail(op, external.KindUnauthorized, fmt.Sprintf("REFUSED: %s refused the %s in zone %s; check that it serves the zone "+
			"and allows the key to update and transfer it (allow-update, allow-transfer)", c.server, op, zone), nil)
	case r.Rcode == dns.RcodeServerFailure:
		return c.fail(op, external.KindTransient, fmt.Sprintf("SERVFAIL from %s", c.server), nil)
	case r.Rcode == dns.RcodeNotZone:
		return c.fail(op, external.KindInvalid, fmt.Sprintf("NOTZONE: a name is outside zone %s", zone), nil)
	default:
		return c.fail(op, external.KindInvalid, fmt.Sprintf("%s from %s", rcode, c.server), nil)
	}
}

// conflict is the error for a name someone else holds.
func (c *Client) conflict(op string, st state) error {
	holder := st.holder()
	msg := fmt.Sprintf("%s is held by %q", st.name, holder)
	if holder == UnmanagedOwner {
		msg = fmt.Sprintf("%s has records without an owner record at %s, written outside this operator", st.name, ownerName(st.name))
	}
	e := c.fail(op, external.KindConflict, msg, nil)
	e.Owner = holder
	return e
}

func (c *Client) fail(op string, kind external.Kind, msg string, err error) *external.Error {
	return &external.Error{Kind: kind, Service: extdns.ServiceName, Operation: op, Message: msg, Err: err}
}
