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
	"encoding/base64"
	"errors"
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

// cannedAnswer is what the fuzz server answers every message with: a
// message to sign and send, or, when it does not unpack, the raw bytes.
type cannedAnswer struct {
	body []byte
	sign bool
}

// FuzzDecodeDNSAnswer feeds arbitrary answers of an RFC 2136 server to
// every call of the client that reads or writes one record (the bad-input
// family of issue 11, family 8; FuzzDecodeResponse in internal/external does
// the same for the HTTP services). Whatever comes back, signed or not,
// well formed or not, a call must return a record for the name it asked
// about or an *external.Error with a kind that does not contain the TSIG
// secret, and never panic. The zone transfer behind List is left out: an
// answer that never ends it costs the whole timeout.
func FuzzDecodeDNSAnswer(f *testing.F) {
	const zone, name, owner = "example.com.", "www.example.com", "myapp-operator/shop/web/uid"
	secret := base64.StdEncoding.EncodeToString([]byte("fuzz-secret-do-not-leak"))
	pack := func(rcode int, rrs ...string) []byte {
		m := new(dns.Msg)
		m.SetQuestion(name+".", dns.TypeA)
		m.Response, m.Rcode = true, rcode
		for _, s := range rrs {
			rr, err := dns.NewRR(s)
			if err != nil {
				f.Fatal(err)
			}
			m.Answer = append(m.Answer, rr)
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	seeds := []cannedAnswer{
		{pack(dns.RcodeSuccess, "www.example.com. 300 IN A 192.0.2.1"), true},
		{pack(dns.RcodeSuccess, "_myapp-owner.www.example.com. 300 IN TXT \""+owner+"\""), true},
		{pack(dns.RcodeSuccess, "www.example.com. 300 IN CNAME lb.example.net.", "www.example.com. 300 IN A 192.0.2.2"), true},
		{pack(dns.RcodeSuccess, "example.com. 300 IN SOA ns.example.com. admin.example.com. 7 3600 600 86400 300"), true},
		{pack(dns.RcodeNameError), true},
		{pack(dns.RcodeYXDomain), false},
		{pack(dns.RcodeNXRrset), false},
		{pack(dns.RcodeRefused), false},
		{pack(dns.RcodeNotAuth), false},
		{pack(dns.RcodeServerFailure), false},
		{pack(dns.RcodeSuccess, "www.example.com. 300 IN A 192.0.2.1"), false},
		{[]byte{0, 0, 0x81, 0x80, 0, 1, 0, 1}, false},
		{nil, false},
	}
	for _, s := range seeds {
		f.Add(s.body, s.sign)
	}

	answer, addr := startCannedServer(f, secret)
	client, err := rfc2136.New(rfc2136.Config{
		Server:  addr,
		Zone:    zone,
		Key:     rfc2136.StaticKey(rfc2136.Key{Name: "fuzz", Algorithm: rfc2136.DefaultAlgorithm, Secret: secret}),
		Timeout: time.Second,
	})
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, body []byte, sign bool) {
		answer.Store(&cannedAnswer{body: body, sign: sign})
		ctx := t.Context()
		check := func(call string, err error, valid func() bool) {
			if err == nil {
				if valid != nil && !valid() {
					t.Fatalf("%s: returned an invalid value without an error", call)
				}
				return
			}
			var e *external.Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: error is %T, not *external.Error: %v", call, err, err)
			}
			if external.KindOf(err) == "" {
				t.Fatalf("%s: error without a kind: %v", call, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("%s: error contains the TSIG secret: %v", call, err)
			}
		}
		rec, err := client.Get(ctx, name)
		check("get", err, func() bool { return rec.Name == name })
		rec, err = client.Upsert(ctx, extdns.Record{Name: name, Type: extdns.TypeA, Value: "192.0.2.1", TTL: 60, Owner: owner})
		check("upsert", err, func() bool { return rec.Name == name && rec.Owner == owner })
		check("delete", client.Delete(ctx, name, owner), nil)
		rec, err = client.Transfer(ctx, name, owner, owner+"-new")
		check("transfer", err, func() bool { return rec.Name == name })
	})
}

// startCannedServer starts a TCP DNS server that answers every message with
// what answer holds, signed with secret when it says so, for the rest of f.
func startCannedServer(f testing.TB, secret string) (answer *atomic.Pointer[cannedAnswer], addr string) {
	answer = &atomic.Pointer[cannedAnswer]{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	started := make(chan struct{})
	srv := &dns.Server{
		Listener:          ln,
		Net:               "tcp",
		TsigSecret:        map[string]string{"fuzz.": secret},
		NotifyStartedFunc: func() { close(started) },
		Handler:           dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) { answerWith(w, req, answer.Load()) }),
	}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	f.Cleanup(func() { _ = srv.Shutdown() })
	return answer, ln.Addr().String()
}

// answerWith answers req with a: its message with req's ID and question,
// signed like req when a says so, or its raw bytes with req's ID when they
// are no message.
func answerWith(w dns.ResponseWriter, req *dns.Msg, a *cannedAnswer) {
	reply := new(dns.Msg)
	if a == nil || reply.Unpack(a.body) != nil {
		raw := []byte{}
		if a != nil {
			raw = append(raw, a.body...)
		}
		if len(raw) >= 2 {
			raw[0], raw[1] = byte(req.Id>>8), byte(req.Id)
		}
		_, _ = w.Write(raw)
		return
	}
	reply.Id, reply.Response, reply.Opcode = req.Id, true, req.Opcode
	reply.Question = req.Question
	extra := reply.Extra[:0]
	for _, rr := range reply.Extra {
		if _, tsig := rr.(*dns.TSIG); !tsig {
			extra = append(extra, rr)
		}
	}
	reply.Extra = extra
	if t := req.IsTsig(); t != nil && a.sign {
		reply.SetTsig(t.Hdr.Name, t.Algorithm, 300, time.Now().Unix())
	}
	_ = w.WriteMsg(reply)
}

// TestUnsignedAnswerToASignedQueryIsRefused: RFC 8945 has a server sign its
// answer to a signed request. miekg/dns verifies a signature only when the
// answer carries one, so an unsigned success, which anyone on the path could
// forge, would be believed. The client refuses it as unauthorized.
func TestUnsignedAnswerToASignedQueryIsRefused(t *testing.T) {
	const zone, name = "example.com.", "www.example.com"
	secret := base64.StdEncoding.EncodeToString([]byte("unsigned-answer-secret"))
	m := new(dns.Msg)
	m.SetQuestion(name+".", dns.TypeA)
	m.Response = true
	rr, err := dns.NewRR(name + ". 300 IN A 192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	m.Answer = append(m.Answer, rr)
	body, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	answer, addr := startCannedServer(t, secret)
	client, err := rfc2136.New(rfc2136.Config{
		Server:  addr,
		Zone:    zone,
		Key:     rfc2136.StaticKey(rfc2136.Key{Name: "fuzz", Algorithm: rfc2136.DefaultAlgorithm, Secret: secret}),
		Timeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}

	answer.Store(&cannedAnswer{body: body, sign: false})
	if rec, err := client.Get(t.Context(), name); !errors.Is(err, external.ErrUnauthorized) {
		t.Fatalf("Get with an unsigned answer = %+v, %v; want ErrUnauthorized", rec, err)
	}
	answer.Store(&cannedAnswer{body: body, sign: true})
	if _, err := client.Get(t.Context(), name); errors.Is(err, external.ErrUnauthorized) {
		t.Fatalf("Get with a signed answer: %v", err)
	}
}
