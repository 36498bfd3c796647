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
	"errors"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// TestInstallationClaimsInTheZone (issue 32 item 5, T2): an installation's
// claim of its owner ID is a TXT at _myapp-installation.<owner-id>.<zone>,
// absent until written, then the last one written, whoever wrote it; a TXT
// there that is not a claim, such as one a wildcard makes up, is none.
func TestInstallationClaimsInTheZone(t *testing.T) {
	for _, zone := range []struct{ name, seed string }{{"plain", ""}, {"TXT wildcard", "* IN TXT \"v=spf1 -all\"\n"}} {
		t.Run(zone.name, func(t *testing.T) {
			b, c := startWildcardBIND(t, zone.seed)
			ctx := t.Context()
			if _, err := c.GetInstallationClaim(ctx, "prod-eu"); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("a claim nobody wrote: %v, want not found", err)
			}
			mine := extdns.InstallationClaim{OwnerID: "prod-eu", Nonce: "aaaa1111", Cluster: "uid-a", Instance: "manager-a",
				CheckInterval: time.Minute}
			if _, err := c.PutInstallationClaim(ctx, mine); err != nil {
				t.Fatal(err)
			}
			got, err := c.GetInstallationClaim(ctx, "prod-eu")
			if err != nil || got.Nonce != mine.Nonce || got.Cluster != "uid-a" || got.Instance != "manager-a" ||
				got.CheckInterval != time.Minute || got.WrittenAt.IsZero() {
				t.Fatalf("the claim read back = %+v, %v", got, err)
			}
			theirs := mine
			theirs.Nonce, theirs.Cluster = "bbbb2222", "uid-b"
			if _, err := c.PutInstallationClaim(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			if got, err := c.GetInstallationClaim(ctx, "prod-eu"); err != nil || got.Nonce != "bbbb2222" {
				t.Fatalf("after another installation's claim: %+v, %v", got, err)
			}
			if v := resolveTXT(t, b.Addr, extdns.InstallationLabel+".prod-eu."+b.Zone); len(v) != 1 {
				t.Fatalf("the claim is one TXT record, not %d", len(v))
			}
			if _, err := c.GetInstallationClaim(ctx, "other-id"); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("another owner ID's claim: %v, want not found", err)
			}
		})
	}
}

// resolveTXT is the TXT records at name, each as its joined strings.
func resolveTXT(t *testing.T, addr, name string) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeTXT)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range r.Answer {
		if txt, ok := rr.(*dns.TXT); ok {
			out = append(out, txt.String())
		}
	}
	return out
}
