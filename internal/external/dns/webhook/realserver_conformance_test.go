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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external/dns/dnstest"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// TestRealServerConformance runs the dns.Client contract's suite, with its
// fault layer and its 100 ms reader, on the client against external-dns's
// own webhook server with each provider. One server per provider serves
// every promise: their names differ.
func TestRealServerConformance(t *testing.T) {
	for _, provider := range realProviders {
		t.Run(provider, func(t *testing.T) {
			rs := startRealServer(t, provider)
			dnstest.RunConformance(t, func(t *testing.T) dnstest.Backend {
				faults := &dnstest.Faults{}
				zoneOf := func(cfg *webhook.Config) { cfg.Zone = rs.srv.Zone }
				c := newClient(t, rs.srv.URL, zoneOf, func(cfg *webhook.Config) {
					cfg.Transport = faults.RoundTripper(http.DefaultTransport, isBatch)
				})
				read := func(ctx context.Context, name string) ([]string, error) { return readServer(ctx, rs.srv.URL, name) }
				return dnstest.Backend{Client: c, Zone: strings.TrimSuffix(rs.srv.Zone, "."), Faults: faults, Read: read,
					Peer: newClient(t, rs.srv.URL, zoneOf)}
			})
		})
	}
}

// readServer is the A or CNAME values the webhook server at url lists at
// name: a zone read past every client cache.
func readServer(ctx context.Context, url, name string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/records", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", webhook.MediaType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /records: %s", resp.Status)
	}
	var eps []webhook.Endpoint
	if err := json.NewDecoder(resp.Body).Decode(&eps); err != nil {
		return nil, err
	}
	var out []string
	for _, ep := range eps {
		if strings.EqualFold(strings.TrimSuffix(ep.DNSName, "."), name) && (ep.RecordType == "A" || ep.RecordType == "CNAME") {
			out = append(out, ep.Targets...)
		}
	}
	return out, nil
}
