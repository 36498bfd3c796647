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
	"net"
	"strings"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

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
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q is not in zone %s (--rfc2136-zone); choose a host under it",
			name, strings.TrimSuffix(c.zone, ".")), extdns.ErrNotServed)
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
