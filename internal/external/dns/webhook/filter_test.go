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

// TestHostsOutsideTheDomainFilterAreRefused (issue 39, D3): a provider
// drops a change to a name outside its domain filter and answers 2xx, and
// hides such names from its reads. So each host, and its owner name, is
// checked against the filter negotiated (include, exclude, regex): a host
// outside it is refused, the error naming the filter, and nothing is
// sent; a host outside the zone says so. Both errors match
// extdns.ErrNotServed, for the MyApp's condition.
func TestHostsOutsideTheDomainFilterAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		filter webhook.DomainFilter
		host   string
		says   string
	}{
		{"exclude", webhook.DomainFilter{Include: []string{zone}, Exclude: []string{"corp.example.com"}},
			"app.corp.example.com", "exclude corp.example.com"},
		{"regex exclude", webhook.DomainFilter{RegexInclude: `\.example\.com$`, RegexExclude: `^(_myapp-owner\.)?internal\.`},
			"internal.example.com", `regexExclude ^(_myapp-owner\.)?internal\.`},
		{"outside the zone", webhook.DomainFilter{Include: []string{zone}}, "app.example.org", "is not in zone example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, transactional)
			f.filter = tc.filter
			c := newClient(t, f.URL())
			if _, err := c.Start(t.Context()); err != nil {
				t.Fatalf("Start: %v", err)
			}
			writes := f.writes.Load()
			_, err := c.Upsert(t.Context(), aRecord(tc.host, "192.0.2.1", ownerA))
			e := wantKind(t, err, external.KindInvalid)
			if !errors.Is(err, extdns.ErrNotServed) || !strings.Contains(e.Message, tc.says) {
				t.Fatalf("Upsert of %s: %v; want an error matching ErrNotServed that says %q", tc.host, err, tc.says)
			}
			if _, err := c.Get(t.Context(), tc.host); !errors.Is(err, extdns.ErrNotServed) {
				t.Fatalf("Get of %s: %v; want ErrNotServed", tc.host, err)
			}
			if got := f.writes.Load(); got != writes {
				t.Fatalf("%d batches were sent for a host the provider does not serve", got-writes)
			}
		})
	}
}

// TestARecordOutsideANarrowedFilterIsNotCountedAsDeleted (issue 39, D3):
// a filter narrowed after a record was written hides the record from the
// zone reads. Its delete must not read it free and succeed (the record
// would leak, and no sweep would see it): it is refused, naming the
// filter, and the record stays for someone to remove.
func TestARecordOutsideANarrowedFilterIsNotCountedAsDeleted(t *testing.T) {
	f := newFake(t, transactional)
	const host = "app.corp.example.com"
	if _, err := newClient(t, f.URL()).Upsert(t.Context(), aRecord(host, "192.0.2.1", ownerA)); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.filter = webhook.DomainFilter{Include: []string{zone}, Exclude: []string{"corp.example.com"}}
	f.mu.Unlock()
	c := newClient(t, f.URL())
	err := c.Delete(t.Context(), host, ownerA)
	if !errors.Is(err, extdns.ErrNotServed) || !strings.Contains(err.Error(), "exclude corp.example.com") {
		t.Fatalf("Delete of a record the narrowed filter hides: %v; want a refusal naming the filter", err)
	}
	if got := f.at(host); len(got) != 1 {
		t.Fatalf("the record is %+v; want it kept", got)
	}
}
