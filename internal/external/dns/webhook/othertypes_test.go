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

package webhook_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// otherTypeCases are names that hold records of a type the client does not
// write, and nothing else: none of them is free, whatever the type.
var otherTypeCases = []webhook.Endpoint{
	{DNSName: "v6.example.com", RecordType: "AAAA", Targets: []string{"2001:db8::1"}, RecordTTL: 300},
	{DNSName: "mail.example.com", RecordType: "MX", Targets: []string{"10 mx.example.net"}, RecordTTL: 300},
	{DNSName: "spf.example.com", RecordType: "TXT", Targets: []string{`"v=spf1 -all"`}, RecordTTL: 300},
	{DNSName: "svc.example.com", RecordType: "SRV", Targets: []string{"0 5 443 web.example.net"}, RecordTTL: 300},
	{DNSName: "ca.example.com", RecordType: "CAA", Targets: []string{`0 issue "letsencrypt.org"`}, RecordTTL: 300},
}

// TestNamesWithOtherTypesAreConflicts: a name that holds only records of
// another type (an AAAA, an MX, a TXT of its own, ...) is a conflict
// naming extdns.UnmanagedOwner, as the RFC 2136 client answers for the same
// name (D2, D7): the client never adds its A beside another owner's AAAA.
// It reads as no record (Get is NotFound), a delete has nothing to remove,
// and the records stay as they were, on every class of provider.
func TestNamesWithOtherTypesAreConflicts(t *testing.T) {
	for _, sem := range []struct {
		name string
		sem  semantics
	}{{"transactional", transactional}, {"inmemory", inmemoryLike}, {"last-writer-wins", lastWriterWins}} {
		t.Run(sem.name, func(t *testing.T) {
			f := newFake(t, sem.sem)
			f.seed(otherTypeCases...)
			c := newClient(t, f.URL())
			ctx := t.Context()
			for _, ep := range otherTypeCases {
				name := ep.DNSName
				_, err := c.Upsert(ctx, aRecord(name, "192.0.2.1", ownerA))
				var e *external.Error
				if !errors.As(err, &e) || e.Kind != external.KindConflict || e.Owner != extdns.UnmanagedOwner ||
					!strings.Contains(e.Message, "records of other types") {
					t.Errorf("Upsert of an A at %s, which holds only a %s: %v; want a conflict naming %s that says why",
						name, ep.RecordType, err, extdns.UnmanagedOwner)
				}
				if _, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
					t.Errorf("Get(%s) = %v; want NotFound, as RFC 2136 answers", name, err)
				}
				if err := c.Delete(ctx, name, ownerA); err != nil {
					t.Errorf("Delete(%s): %v; want success, nothing of ours being there", name, err)
				}
				if got := f.at(name); len(got) != 1 || got[0].RecordType != ep.RecordType {
					t.Errorf("%s after the calls holds %+v; want its %s alone", name, got, ep.RecordType)
				}
				if got := f.at("_myapp-owner." + name); len(got) != 0 {
					t.Errorf("an owner TXT was written for %s: %+v", name, got)
				}
			}
		})
	}
}
