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
	"strconv"
	"strings"
	"time"

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
// timeout. An error is an *external.Error; an answer is returned for the
// caller to judge by its rcode only when it can be believed: to a signed
// request, a NOERROR, NXDOMAIN or failed-prerequisite answer is believed
// only with a signature that verifies, since anyone on the path could
// forge a name away or an update done. Only the rcodes that end a call in
// an error (endsInError) may come unsigned: a server that does not know
// the key, is not authoritative or fails cannot sign.
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
	r, err := c.send(ctx, cl, m, server)
	if r != nil && signed && endsInError(r.Rcode) {
		// Often unsigned, or signed with a TSIG error and no MAC, so the
		// rcode speaks, not the failed verification; it can only end the
		// call.
		return r, nil
	}
	if err != nil {
		if isTSIGError(err) {
			return nil, c.fail(op, external.KindUnauthorized, fmt.Sprintf("the %s answer of %s failed TSIG verification with %s; "+
				"the server and the operator hold different secrets for it, or the answer is forged", rcodeName(r), server, key), err)
		}
		return nil, c.fail(op, external.KindTransient, fmt.Sprintf("no answer from %s within %s", server, c.timeout), err)
	}
	if signed && r.IsTsig() == nil {
		// miekg/dns verifies a signature only when the answer carries one.
		// A server signs its answer to a signed request (RFC 8945), so an
		// unsigned answer may be forged by anyone on the path: not believed.
		return nil, c.fail(op, external.KindUnauthorized, fmt.Sprintf("the %s answer of %s to a request signed with %s is not "+
			"signed; it is not believed", rcodeName(r), server, key), nil)
	}
	return r, nil
}

// send makes one exchange, through the Exchange hook when there is one. An
// error the hook adds to an exchange that had none drops its answer.
func (c *Client) send(ctx context.Context, cl *dns.Client, m *dns.Msg, server string) (*dns.Msg, error) {
	var r *dns.Msg
	var sendErr error
	send := func() error {
		r, _, sendErr = cl.ExchangeContext(ctx, m, server)
		return sendErr
	}
	if c.hook == nil {
		return r, send()
	}
	if err := c.hook(ctx, m, send); err != nil && sendErr == nil {
		return nil, err
	}
	return r, sendErr
}

// endsInError reports whether rcode is one of the answers that may come
// unsigned because the call can only fail on it: NOTAUTH (which carries
// BADKEY, BADSIG and BADTIME), REFUSED, SERVFAIL, FORMERR and NOTIMP.
func endsInError(rcode int) bool {
	switch rcode {
	case dns.RcodeNotAuth, dns.RcodeRefused, dns.RcodeServerFailure, dns.RcodeFormatError, dns.RcodeNotImplemented:
		return true
	}
	return false
}

func rcodeName(r *dns.Msg) string {
	if r == nil {
		return "unreadable"
	}
	if s, ok := dns.RcodeToString[r.Rcode]; ok {
		return s
	}
	return "rcode " + strconv.Itoa(r.Rcode)
}

// axfr transfers the zone from the primary and hands each record to keep
// as its envelope arrives, so only what keep holds on to stays in memory.
// It returns the zone's serial. The timeout bounds the connection and each
// envelope's wait, not the whole transfer: a large zone that keeps coming
// is read to its end, a server that stops sending fails within a timeout,
// and ctx ends the transfer whenever the caller gives up.
func (c *Client) axfr(ctx context.Context, op string, keep func(dns.RR)) (uint32, error) {
	key, err := c.signingKey(ctx, op)
	if err != nil {
		return 0, err
	}
	dialCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(dialCtx, "tcp", c.server)
	if err != nil {
		return 0, c.fail(op, external.KindTransient, "cannot reach "+c.server, err)
	}
	_ = conn.SetWriteDeadline(time.Now().Add(c.timeout))
	// Closing the connection is the only way to stop miekg/dns's reader
	// before its read deadline; it is closed again once the transfer ends.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	t := &dns.Transfer{
		Conn:        &dns.Conn{Conn: conn},
		TsigSecret:  map[string]string{key.fqdn(): key.Secret},
		ReadTimeout: c.timeout, // per envelope: the reader sets it before each
	}
	m := new(dns.Msg)
	m.SetAxfr(c.zone)
	m.SetTsig(key.fqdn(), key.algorithm(), tsigFudge, c.now().Unix())
	envelopes, err := t.In(m, c.server)
	if err != nil {
		_ = conn.Close()
		if ctx.Err() != nil {
			return 0, c.fail(op, external.KindTransient, "the zone transfer from "+c.server+" was cancelled", ctx.Err())
		}
		return 0, c.fail(op, external.KindTransient, "cannot start a zone transfer from "+c.server, err)
	}
	var failed error
	var serial uint32
	soa := false
	for env := range envelopes {
		// The reader ends the channel after an error; every envelope it
		// sent before has verified.
		if env.Error != nil {
			failed = env.Error
			continue
		}
		for _, rr := range env.RR {
			if s, ok := rr.(*dns.SOA); ok && !soa {
				serial, soa = s.Serial, true
				continue
			}
			keep(rr)
		}
	}
	if ctx.Err() != nil {
		return 0, c.fail(op, external.KindTransient, "the zone transfer from "+c.server+" was cancelled", ctx.Err())
	}
	if failed != nil {
		return 0, c.transferError(ctx, op, failed)
	}
	if !soa {
		return 0, c.fail(op, external.KindTransient, "the zone transfer from "+c.server+" has no SOA", nil)
	}
	return serial, nil
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
	switch {
	case len(st.owners) > 1:
		msg = fmt.Sprintf("%s has %d owner records at %s (%s), so no one provably holds it; remove all but one by hand",
			st.name, len(st.owners), ownerName(st.name), strings.Join(st.owners, ", "))
	case holder == extdns.UnmanagedOwner:
		msg = fmt.Sprintf("%s has records without an owner record at %s, written outside this operator", st.name, ownerName(st.name))
	}
	e := c.fail(op, external.KindConflict, msg, nil)
	e.Owner = holder
	return e
}

func (c *Client) fail(op string, kind external.Kind, msg string, err error) *external.Error {
	return &external.Error{Kind: kind, Service: extdns.ServiceName, Operation: op, Message: msg, Err: err}
}
