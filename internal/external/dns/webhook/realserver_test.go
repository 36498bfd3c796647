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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// These tests run the client against external-dns's own webhook server
// (hack/external-dns-webhook, `make external-dns-webhook`) with three of
// its providers: inmemory (atomic), rfc2136 in front of a real BIND and
// pdns in front of a real PowerDNS (both last writer wins). Without the
// binary they are skipped with the line that says how to build it.

// realServer is one provider behind external-dns's webhook server.
type realServer struct {
	name  string
	class extdns.Class
	srv   *controlplane.WebhookServer
	// bind is the BIND behind the rfc2136 provider.
	bind *controlplane.BIND
}

// startRealServer starts the webhook server for provider, with what it
// needs behind it, for the test's life.
func startRealServer(t *testing.T, provider string) realServer {
	t.Helper()
	if _, err := controlplane.WebhookServerPath(); err != nil {
		controlplane.RequireWebhookServer(t, err)
	}
	rs := realServer{name: provider, class: extdns.ClassLastWriterWins}
	opts := controlplane.WebhookOptions{Provider: provider}
	switch provider {
	case controlplane.WebhookInMemory:
		rs.class = extdns.ClassAtomic
	case controlplane.WebhookRFC2136:
		b, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{})
		controlplane.RequireBIND(t, err)
		t.Cleanup(func() { _ = b.Close() })
		opts.BIND, rs.bind = b, b
	case controlplane.WebhookPDNS:
		p, err := controlplane.StartPowerDNS(t.Context(), "", "")
		controlplane.RequireWebhookServer(t, err)
		t.Cleanup(func() { _ = p.Close() })
		opts.PowerDNS = p
	}
	srv, err := controlplane.StartWebhookServer(t.Context(), opts)
	controlplane.RequireWebhookServer(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the webhook server's log:\n%s", srv.Log())
		}
		_ = srv.Close()
	})
	rs.srv = srv
	return rs
}

var realProviders = []string{controlplane.WebhookInMemory, controlplane.WebhookRFC2136, controlplane.WebhookPDNS}

// TestRealServerProbe: the probe measures inmemory as atomic (changes in
// two batches: it checks every create against the zone before any delete)
// and rfc2136 and pdns as last-writer-wins.
func TestRealServerProbe(t *testing.T) {
	for _, provider := range realProviders {
		t.Run(provider, func(t *testing.T) {
			rs := startRealServer(t, provider)
			c := newClient(t, rs.srv.URL, func(cfg *webhook.Config) { cfg.Zone = rs.srv.Zone })
			res, err := c.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", provider, res)
			if res.Class != rs.class {
				t.Fatalf("%s measured %+v, want %s", provider, res, rs.class)
			}
			if provider == controlplane.WebhookInMemory && (!res.CreateRefused || !res.WrongDeleteRefused || res.ReplaceInOneBatch) {
				t.Fatalf("inmemory measured %+v", res)
			}
			// The probe leaves nothing: a second client lists no record at
			// all.
			if all, err := newClient(t, rs.srv.URL, func(cfg *webhook.Config) { cfg.Zone = rs.srv.Zone }).List(t.Context(), ""); err != nil || len(all) != 0 {
				t.Fatalf("after the probe the zone lists %+v, %v", all, err)
			}
		})
	}
}

// TestRealServerLifecycle creates, changes, hands over and deletes a record
// through each provider. Behind rfc2136, the record is checked in BIND
// itself and read back by the RFC 2136 client: both clients keep the owner
// in the same TXT.
func TestRealServerLifecycle(t *testing.T) {
	for _, provider := range realProviders {
		t.Run(provider, func(t *testing.T) {
			rs := startRealServer(t, provider)
			c := newClient(t, rs.srv.URL, func(cfg *webhook.Config) { cfg.Zone = rs.srv.Zone; cfg.ReadInterval = time.Nanosecond })
			ctx := t.Context()
			name := "www." + rs.srv.Zone
			if _, err := c.Upsert(ctx, aRecord(name, "192.0.2.10", ownerA)); err != nil {
				t.Fatal(err)
			}
			got, err := c.Get(ctx, name)
			if err != nil || got.Owner != ownerA || got.Value != "192.0.2.10" || got.State != extdns.StateActive {
				t.Fatalf("Get after the create = %+v, %v", got, err)
			}
			rs.wantInBIND(t, name, "192.0.2.10", ownerA)
			if _, err := c.Upsert(ctx, aRecord(name, "192.0.2.11", ownerA)); err != nil {
				t.Fatal(err)
			}
			if got, err := c.Get(ctx, name); err != nil || got.Value != "192.0.2.11" || got.Owner != ownerA {
				t.Fatalf("Get after the change = %+v, %v", got, err)
			}
			if got, err := c.Transfer(ctx, name, ownerA, ownerB); err != nil || got.Owner != ownerB {
				t.Fatalf("Transfer = %+v, %v", got, err)
			}
			if got, err := c.Get(ctx, name); err != nil || got.Value != "192.0.2.11" || got.Owner != ownerB {
				t.Fatalf("Get after the transfer = %+v, %v", got, err)
			}
			rs.wantInBIND(t, name, "192.0.2.11", ownerB)
			if err := c.Delete(ctx, name, ownerA); !errors.Is(err, external.ErrConflict) {
				t.Fatalf("the old owner's delete: %v", err)
			}
			if err := c.Delete(ctx, name, ownerB); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Get(ctx, name); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("Get after the delete: %v", err)
			}
			rs.wantInBIND(t, name, "", "")
		})
	}
}

// TestRealServerConcurrentCreators races 16 installations for each of
// several names. On inmemory one wins and the others are told who; behind
// rfc2136 and pdns a batch has no condition, so several "win": the promise
// there is detection, at most one of them reads the name as its own once
// the zone is read again.
func TestRealServerConcurrentCreators(t *testing.T) {
	for _, provider := range realProviders {
		t.Run(provider, func(t *testing.T) {
			rs := startRealServer(t, provider)
			const writers = 16
			clients := make([]*webhook.Client, writers)
			for i := range clients {
				clients[i] = newClient(t, rs.srv.URL, func(cfg *webhook.Config) { cfg.Zone = rs.srv.Zone; cfg.ReadInterval = time.Nanosecond })
				if _, err := clients[i].Start(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			for round := range 3 {
				name := fmt.Sprintf("race%d.%s", round, rs.srv.Zone)
				owner := func(i int) string { return fmt.Sprintf("myapp-operator/install-%d/ns/app/uid-%d", i, i) }
				errs := raceCreators(t, clients, name, owner)
				if rs.class == extdns.ClassAtomic {
					winner := wantOneWinner(t, errs, owner)
					if got, err := clients[0].Get(t.Context(), name); err != nil || got.Owner != owner(winner) {
						t.Fatalf("round %d: the server holds %+v, %v; want writer %d's", round, got, err, winner)
					}
					continue
				}
				succeeded, believers := 0, 0
				for i, c := range clients {
					if errs[i] != nil {
						// A writer whose read before its write showed
						// another's record is told so.
						if !errors.Is(errs[i], external.ErrConflict) {
							t.Fatalf("round %d: writer %d: want success or a conflict, got %v", round, i, errs[i])
						}
						continue
					}
					succeeded++
					if got, err := c.Get(t.Context(), name); err == nil && got.Owner == owner(i) {
						believers++
						// The one writer that reads the name as its own reads
						// its own record, not another writer's value under its
						// owner.
						if want := fmt.Sprintf("192.0.2.%d", i+1); got.Value != want {
							t.Fatalf("round %d: writer %d reads %+v as its own, want value %s", round, i, got, want)
						}
					}
				}
				t.Logf("round %d: %d writers' creates went through, %d read the name as theirs afterwards", round, succeeded, believers)
				if believers > 1 {
					t.Fatalf("round %d: %d writers read %s as their own", round, believers, name)
				}
			}
		})
	}
}

// TestRealServerExternalDNSOwnedName: a name whose ownership external-dns's
// TXT registry records, as external-dns itself writes it through the same
// server, is a conflict naming external-dns, and stays as it is.
func TestRealServerExternalDNSOwnedName(t *testing.T) {
	for _, provider := range realProviders {
		t.Run(provider, func(t *testing.T) {
			rs := startRealServer(t, provider)
			name := "shop." + rs.srv.Zone
			heritage := `"heritage=external-dns,external-dns/owner=prod,external-dns/resource=ingress/shop/web"`
			post(t, rs.srv.URL, webhook.Changes{Create: []webhook.Endpoint{
				{DNSName: name, RecordType: "A", Targets: []string{"198.51.100.7"}, RecordTTL: 300},
				{DNSName: "a-" + name, RecordType: "TXT", Targets: []string{heritage}, RecordTTL: 300},
			}})
			c := newClient(t, rs.srv.URL, func(cfg *webhook.Config) { cfg.Zone = rs.srv.Zone })
			_, err := c.Upsert(t.Context(), aRecord(name, "192.0.2.1", ownerA))
			if e := wantKind(t, err, external.KindConflict); e.Owner != "(external-dns owner=prod)" {
				t.Fatalf("conflict %v", err)
			}
			if err := c.Delete(t.Context(), name, ownerA); !errors.Is(err, external.ErrConflict) {
				t.Fatalf("Delete: %v", err)
			}
			if got, err := c.Get(t.Context(), name); err != nil || got.Value != "198.51.100.7" {
				t.Fatalf("external-dns's record is now %+v, %v", got, err)
			}
		})
	}
}

// wantInBIND checks, behind rfc2136, that BIND itself holds name's record
// with value and its owner TXT with owner (neither when both are empty),
// and that the RFC 2136 client reads the same owner: both clients keep it in
// the same TXT. Other providers have nothing to check.
func (rs realServer) wantInBIND(t *testing.T, name, value, owner string) {
	t.Helper()
	if rs.bind == nil {
		return
	}
	wantBIND(t, rs.bind, name, dns.TypeA, value)
	wantBIND(t, rs.bind, "_myapp-owner."+name, dns.TypeTXT, owner)
	if owner == "" {
		return
	}
	if got, err := rfc2136Client(t, rs.bind).Get(t.Context(), name); err != nil || got.Owner != owner || got.Value != value {
		t.Fatalf("the RFC 2136 client reads %+v, %v; want %s held by %s", got, err, value, owner)
	}
}

// post sends a batch to the server as another writer would.
func post(t *testing.T, url string, ch webhook.Changes) {
	t.Helper()
	body, _ := json.Marshal(ch)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/records", bytes.NewReader(body))
	req.Header.Set("Content-Type", webhook.MediaType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /records: %s", resp.Status)
	}
}

// wantBIND asks BIND for name and type and checks the one value (none when
// want is empty).
func wantBIND(t *testing.T, b *controlplane.BIND, name string, qtype uint16, want string) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, b.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rr := range r.Answer {
		switch v := rr.(type) {
		case *dns.A:
			got = append(got, v.A.String())
		case *dns.TXT:
			got = append(got, strings.Join(v.Txt, ""))
		}
	}
	if (want == "" && len(got) != 0) || (want != "" && (len(got) != 1 || got[0] != want)) {
		t.Fatalf("BIND answers %v for %s %s, want %q", got, name, dns.TypeToString[qtype], want)
	}
}

func rfc2136Client(t *testing.T, b *controlplane.BIND) *rfc2136.Client {
	t.Helper()
	key, err := rfc2136.ParseKey(b.Key())
	if err != nil {
		t.Fatal(err)
	}
	c, err := rfc2136.New(rfc2136.Config{Server: b.Addr, Zone: b.Zone, Key: rfc2136.StaticKey(key), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRealServerInstallationClaim: through each provider, an installation
// claim is written, read back, replaced by another installation's and
// read as that one by the first, whose cached zone read is within its read
// interval; the replace leaves one claim (in BIND itself, behind rfc2136),
// and the record list holds the MyApp record only.
func TestRealServerInstallationClaim(t *testing.T) {
	for _, provider := range realProviders {
		t.Run(provider, func(t *testing.T) {
			rs := startRealServer(t, provider)
			cfg := func(cfg *webhook.Config) { cfg.Zone = rs.srv.Zone; cfg.ReadInterval = time.Hour }
			a, b := newClient(t, rs.srv.URL, cfg), newClient(t, rs.srv.URL, cfg)
			ctx := t.Context()
			const ownerID = "restored"
			claimName := "_myapp-installation." + ownerID + "." + rs.srv.Zone
			claim := func(nonce, cluster string) extdns.InstallationClaim {
				return extdns.InstallationClaim{OwnerID: ownerID, Nonce: nonce, Cluster: cluster, Instance: cluster + "-manager-7d9f8-x2k4p",
					CheckInterval: time.Minute}
			}
			if _, err := a.GetInstallationClaim(ctx, ownerID); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("GetInstallationClaim of an empty zone: %v", err)
			}
			host := ownerID + "." + rs.srv.Zone
			if _, err := a.Upsert(ctx, aRecord(host, "192.0.2.10", ownerA)); err != nil {
				t.Fatal(err)
			}
			mine, err := a.PutInstallationClaim(ctx, claim("aaaa", "3f2c9a51-0d4e-4c1b-9e7a-5b8d2f6c1a90"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := a.GetInstallationClaim(ctx, ownerID); err != nil || got != mine {
				t.Fatalf("GetInstallationClaim = %+v, %v; want %+v", got, err, mine)
			}
			theirs, err := b.PutInstallationClaim(ctx, claim("bbbb", "9c1e7b20-5a3f-4d8e-a6b4-0f2d9e8c7b31"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := a.GetInstallationClaim(ctx, ownerID); err != nil || got != theirs {
				t.Fatalf("after another installation's claim, GetInstallationClaim = %+v, %v; want %+v", got, err, theirs)
			}
			if rs.bind != nil {
				wantBIND(t, rs.bind, claimName, dns.TypeTXT, webhookClaimValue(theirs))
			}
			if mine, err = a.PutInstallationClaim(ctx, claim("aaaa", "3f2c9a51-0d4e-4c1b-9e7a-5b8d2f6c1a90")); err != nil {
				t.Fatal(err)
			}
			if got, err := b.GetInstallationClaim(ctx, ownerID); err != nil || got != mine {
				t.Fatalf("GetInstallationClaim = %+v, %v; want %+v", got, err, mine)
			}
			if rs.bind != nil {
				wantBIND(t, rs.bind, claimName, dns.TypeTXT, webhookClaimValue(mine))
			}
			for _, c := range []*webhook.Client{a, newClient(t, rs.srv.URL, cfg)} {
				recs, err := c.List(ctx, "")
				if err != nil || len(recs) != 1 || recs[0].Name != host {
					t.Fatalf("the list is %+v, %v; want the one MyApp record", recs, err)
				}
			}
		})
	}
}

// webhookClaimValue is a claim's TXT as the webhook client writes it.
func webhookClaimValue(c extdns.InstallationClaim) string {
	return fmt.Sprintf("nonce=%s,cluster=%s,instance=%s,every=%g,written=%s", c.Nonce, c.Cluster, c.Instance,
		c.CheckInterval.Seconds(), c.WrittenAt.UTC().Format(time.RFC3339))
}
