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
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
)

// The loopback server's zone and key: these tests need no BIND.
const (
	loopZone    = "loop.test."
	loopKeyName = "loop-key."
)

var (
	loopSecret  = base64.StdEncoding.EncodeToString([]byte("the-loopback-server-secret"))
	otherSecret = base64.StdEncoding.EncodeToString([]byte("a-secret-the-client-does-not-hold"))
)

// signing is how the loopback server signs its answers.
type signing int

const (
	signedRight signing = iota // with the client's secret
	unsigned                   // not at all
	wrongMAC                   // with another secret: a MAC that does not verify
)

// loopback is a miekg/dns server on 127.0.0.1 whose handler is the test's.
// It counts the zone transfers it is asked for.
type loopback struct {
	addr  string
	axfrs atomic.Int32
	sign  signing
}

func startLoopback(t *testing.T, sign signing, handle func(l *loopback, w dns.ResponseWriter, q *dns.Msg)) *loopback {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &loopback{addr: ln.Addr().String(), sign: sign}
	srv := &dns.Server{Listener: ln, Net: "tcp", Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		if len(q.Question) == 1 && q.Question[0].Qtype == dns.TypeAXFR {
			l.axfrs.Add(1)
		}
		handle(l, w, q)
	})}
	switch sign {
	case signedRight:
		srv.TsigSecret = map[string]string{loopKeyName: loopSecret}
	case wrongMAC:
		srv.TsigSecret = map[string]string{loopKeyName: otherSecret}
	}
	// Updates too: the default refuses every opcode but QUERY and NOTIFY.
	srv.MsgAcceptFunc = func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept }
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return l
}

// reply writes r as the answer to q, signed as the server signs.
func (l *loopback) reply(w dns.ResponseWriter, q, r *dns.Msg) {
	if t := q.IsTsig(); t != nil && l.sign != unsigned {
		r.SetTsig(t.Hdr.Name, t.Algorithm, t.Fudge, time.Now().Unix())
	}
	_ = w.WriteMsg(r)
}

// answer is a reply to q with rcode and rrs.
func answer(q *dns.Msg, rcode int, rrs ...dns.RR) *dns.Msg {
	r := new(dns.Msg)
	r.SetRcode(q, rcode)
	r.Authoritative = true
	r.Answer = rrs
	return r
}

func loopClient(t *testing.T, addr string, timeout time.Duration) *rfc2136.Client {
	t.Helper()
	c, err := rfc2136.New(rfc2136.Config{
		Server: addr, Zone: loopZone, Timeout: timeout,
		Key: rfc2136.StaticKey(rfc2136.Key{Name: strings.TrimSuffix(loopKeyName, "."), Algorithm: "hmac-sha256", Secret: loopSecret}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRR(t testing.TB, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// TestNegativeAnswersAreBelievedOnlySigned: a server (or anyone on the path)
// that answers a signed request with an NXDOMAIN that is unsigned or whose
// MAC does not verify is not believed (audit 2, F7). Get, Transfer, Delete
// and List fail Unauthorized instead of seeing a free name, a record gone,
// nothing to delete or an empty zone. The same NXDOMAIN, correctly signed,
// is believed: the server can make the test fail the other way.
func TestNegativeAnswersAreBelievedOnlySigned(t *testing.T) {
	const name, owner, to = "www.loop.test", "myapp-operator/a/b/c", "myapp-operator/a/b/d"
	nxdomain := func(l *loopback, w dns.ResponseWriter, q *dns.Msg) {
		l.reply(w, q, answer(q, dns.RcodeNameError))
	}
	calls := []struct {
		name string
		call func(ctx context.Context, c *rfc2136.Client) error
		// believed is what the call says when it believes the NXDOMAIN.
		believed func(error) bool
	}{
		{"Get", func(ctx context.Context, c *rfc2136.Client) error { _, err := c.Get(ctx, name); return err },
			func(err error) bool { return errors.Is(err, external.ErrNotFound) }},
		{"Transfer", func(ctx context.Context, c *rfc2136.Client) error {
			_, err := c.Transfer(ctx, name, owner, to)
			return err
		},
			func(err error) bool { return errors.Is(err, external.ErrNotFound) }},
		{"Delete", func(ctx context.Context, c *rfc2136.Client) error { return c.Delete(ctx, name, owner) },
			func(err error) bool { return err == nil }},
		{"List", func(ctx context.Context, c *rfc2136.Client) error { _, err := c.List(ctx, owner); return err },
			// A transfer answered NXDOMAIN, signed, is a zone the server
			// does not serve: an error, but not one of TSIG.
			func(err error) bool {
				return err != nil && !strings.Contains(err.Error(), "TSIG") && !strings.Contains(err.Error(), "not signed")
			}},
	}
	for _, sign := range []struct {
		name string
		sign signing
	}{{"unsigned", unsigned}, {"wrong MAC", wrongMAC}, {"signed", signedRight}} {
		l := startLoopback(t, sign.sign, nxdomain)
		c := loopClient(t, l.addr, time.Second)
		for _, call := range calls {
			t.Run(sign.name+"/"+call.name, func(t *testing.T) {
				err := call.call(t.Context(), c)
				if sign.sign == signedRight {
					if !call.believed(err) {
						t.Fatalf("a signed NXDOMAIN is not believed: %v", err)
					}
					return
				}
				var e *external.Error
				if !errors.As(err, &e) || e.Kind != external.KindUnauthorized {
					t.Fatalf("an %s NXDOMAIN: want an Unauthorized error, got %v", sign.name, err)
				}
			})
		}
	}
}

// TestUnsignedErrorAnswersEndTheCall: a server that cannot or will not sign
// (it does not know the key, it is not authoritative, it fails) answers
// unsigned; those rcodes are errors whatever the signature, so they are
// reported as what they say, never as a success.
func TestUnsignedErrorAnswersEndTheCall(t *testing.T) {
	for _, tc := range []struct {
		rcode int
		kind  external.Kind
	}{
		{dns.RcodeRefused, external.KindUnauthorized},
		{dns.RcodeServerFailure, external.KindTransient},
		{dns.RcodeFormatError, external.KindInvalid},
		{dns.RcodeNotImplemented, external.KindInvalid},
		{dns.RcodeNotAuth, external.KindUnauthorized},
	} {
		t.Run(dns.RcodeToString[tc.rcode], func(t *testing.T) {
			l := startLoopback(t, unsigned, func(l *loopback, w dns.ResponseWriter, q *dns.Msg) {
				l.reply(w, q, answer(q, tc.rcode))
			})
			c := loopClient(t, l.addr, time.Second)
			_, err := c.Get(t.Context(), "www.loop.test")
			var e *external.Error
			if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(e.Error(), dns.RcodeToString[tc.rcode]) {
				t.Fatalf("an unsigned %s: want a %s error naming it, got %v", dns.RcodeToString[tc.rcode], tc.kind, err)
			}
			err = c.Delete(t.Context(), "www.loop.test", "myapp-operator/a/b/c")
			if !errors.As(err, &e) || e.Kind != tc.kind {
				t.Fatalf("Delete on an unsigned %s: want a %s error, got %v", dns.RcodeToString[tc.rcode], tc.kind, err)
			}
		})
	}
}

// zoneServer answers like a primary holding one record, www with its owner,
// among junk: SOA and A/TXT queries, updates (accepted), and an AXFR sent
// in envelopes of perEnvelope RRs, waiting delay before each. A stall
// closed channel, when not nil, is waited on before every envelope after
// the first.
type zoneServer struct {
	envelopes   int
	perEnvelope int
	delay       time.Duration
	stall       chan struct{}
	// ownerLate sends the owner TXT of the owned record www after a name
	// that canonical order puts after both, out of the order BIND keeps.
	ownerLate bool
}

const loopOwner = "myapp-operator/shop/web/uid-1"

func (z zoneServer) handle(t *testing.T) func(l *loopback, w dns.ResponseWriter, q *dns.Msg) {
	soa := mustRR(t, loopZone+" 300 IN SOA ns.loop.test. hostmaster.loop.test. 7 60 60 3600 30")
	www := mustRR(t, "www."+loopZone+" 300 IN A 192.0.2.1")
	owner := mustRR(t, extdns.OwnerLabel+".www."+loopZone+" 300 IN TXT \""+loopOwner+"\"")
	return func(l *loopback, w dns.ResponseWriter, q *dns.Msg) {
		if q.Opcode == dns.OpcodeUpdate {
			l.reply(w, q, answer(q, dns.RcodeSuccess))
			return
		}
		qq := q.Question[0]
		switch {
		case qq.Qtype == dns.TypeAXFR:
			for i := range z.envelopes {
				if i > 0 {
					if z.stall != nil {
						<-z.stall
						return
					}
					time.Sleep(z.delay)
				}
				var rrs []dns.RR
				if i == 0 {
					rrs = append(rrs, soa)
					if z.ownerLate {
						rrs = append(rrs, www, mustRR(t, "zz."+loopZone+" 300 IN A 198.51.100.2"), owner)
					}
				}
				for j := range z.perEnvelope {
					// Junk of every kind the filter drops, and A records
					// without owners, named so that the zone comes in
					// canonical order, as BIND sends it.
					n := fmt.Sprintf("h%03d-%03d.%s", i, j, loopZone)
					rrs = append(rrs, mustRR(t, n+" 300 IN A 198.51.100.1"), mustRR(t, n+" 300 IN MX 10 mail.example.net."),
						mustRR(t, n+" 300 IN TXT \"v=spf1 -all\""))
				}
				switch {
				case i == z.envelopes-1 && z.ownerLate:
					rrs = append(rrs, soa)
				case i == z.envelopes-1:
					rrs = append(rrs, www, owner, soa)
				}
				r := answer(q, dns.RcodeSuccess, rrs...)
				l.reply(w, q, r)
				w.TsigTimersOnly(true)
			}
		case qq.Qtype == dns.TypeSOA:
			l.reply(w, q, answer(q, dns.RcodeSuccess, soa))
		case strings.EqualFold(qq.Name, "www."+loopZone) && qq.Qtype == dns.TypeA:
			l.reply(w, q, answer(q, dns.RcodeSuccess, www))
		case strings.EqualFold(qq.Name, extdns.OwnerLabel+".www."+loopZone) && qq.Qtype == dns.TypeTXT:
			l.reply(w, q, answer(q, dns.RcodeSuccess, owner))
		default:
			l.reply(w, q, answer(q, dns.RcodeNameError))
		}
	}
}

// TestSlowButProgressingTransferSucceeds: a zone transfer whose envelopes
// each arrive well within the timeout, but which takes several timeouts in
// all, succeeds (audit 2, F5): the timeout bounds each envelope's wait,
// not the transfer.
func TestSlowButProgressingTransferSucceeds(t *testing.T) {
	const timeout = 300 * time.Millisecond
	z := zoneServer{envelopes: 8, perEnvelope: 50, delay: 100 * time.Millisecond}
	l := startLoopback(t, signedRight, z.handle(t))
	c := loopClient(t, l.addr, timeout)
	start := time.Now()
	list, err := c.List(t.Context(), loopOwner)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("a transfer of %s in all, each envelope within %s: %v", took, timeout, err)
	}
	if took < 2*timeout {
		t.Fatalf("the transfer took %s: the test needs one longer than the timeout %s", took, timeout)
	}
	if len(list) != 1 || list[0].Name != "www.loop.test" || list[0].Owner != loopOwner || list[0].Value != "192.0.2.1" {
		t.Fatalf("List = %+v; want www only", list)
	}
	all, err := c.List(t.Context(), "")
	if err != nil || len(all) != 1 {
		t.Fatalf("List of every owner = %+v, %v; want www only (the rest has no owner)", all, err)
	}
}

// TestStalledTransferFailsWithinTheEnvelopeDeadline: a transfer that
// stops sending fails within about one timeout of its last envelope, and a
// caller's cancelled context ends it at once, whatever the timeout.
func TestStalledTransferFailsWithinTheEnvelopeDeadline(t *testing.T) {
	stall := make(chan struct{})
	z := zoneServer{envelopes: 4, perEnvelope: 10, stall: stall}
	l := startLoopback(t, signedRight, z.handle(t))
	t.Cleanup(func() { close(stall) })

	const timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := loopClient(t, l.addr, timeout).List(t.Context(), loopOwner)
	took := time.Since(start)
	var e *external.Error
	if !errors.As(err, &e) || e.Kind != external.KindTransient {
		t.Fatalf("a stalled transfer: want a Transient error, got %v", err)
	}
	if took > 3*timeout {
		t.Fatalf("a stalled transfer failed after %s; want about the envelope deadline %s", took, timeout)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = loopClient(t, l.addr, 10*time.Second).List(ctx, loopOwner)
	took = time.Since(start)
	if err == nil || took > 2*time.Second {
		t.Fatalf("a stalled transfer whose caller gave up after 200ms ended after %s with %v", took, err)
	}
}

// TestGetAndDeleteNeverTransferTheZone: the calls a MyApp's deletion makes,
// Get(name) then Delete(name, owner), query the name and its owner record;
// they never transfer the zone, so their cost does not grow with it.
func TestGetAndDeleteNeverTransferTheZone(t *testing.T) {
	z := zoneServer{envelopes: 2, perEnvelope: 10}
	l := startLoopback(t, signedRight, z.handle(t))
	c := loopClient(t, l.addr, time.Second)
	ctx := t.Context()
	rec, err := c.Get(ctx, "www.loop.test")
	if err != nil || rec.Owner != loopOwner || rec.State != extdns.StateActive {
		t.Fatalf("Get = %+v, %v", rec, err)
	}
	if err := c.Delete(ctx, "www.loop.test", loopOwner); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transfer(ctx, "www.loop.test", loopOwner, "myapp-operator/shop/web/uid-2"); err != nil {
		t.Fatal(err)
	}
	if n := l.axfrs.Load(); n != 0 {
		t.Fatalf("Get, Delete and Transfer made %d zone transfers; want none", n)
	}
	if _, err := c.List(ctx, loopOwner); err != nil {
		t.Fatal(err)
	}
	if n := l.axfrs.Load(); n != 1 {
		t.Fatalf("List made %d zone transfers; want 1 (the counter counts)", n)
	}
}

// TestAZoneOutOfCanonicalOrderIsListedWhole: a server that sends a zone out
// of DNSSEC canonical order (an owned name, then a name canonical order
// puts after it, which lets the owned one go, then its owner TXT) is read a
// second time, keeping every name, and the owned record is listed all the
// same.
func TestAZoneOutOfCanonicalOrderIsListedWhole(t *testing.T) {
	z := zoneServer{envelopes: 3, perEnvelope: 10, ownerLate: true}
	l := startLoopback(t, signedRight, z.handle(t))
	list, err := loopClient(t, l.addr, time.Second).List(t.Context(), loopOwner)
	if err != nil || len(list) != 1 || list[0].Name != "www.loop.test" || list[0].Value != "192.0.2.1" {
		t.Fatalf("List = %+v, %v; want www", list, err)
	}
	if n := l.axfrs.Load(); n != 2 {
		t.Fatalf("List made %d zone transfers of a zone out of order; want 2, the second keeping every name", n)
	}
}
