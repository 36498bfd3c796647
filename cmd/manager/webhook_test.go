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

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// lastWriterWinsServer is a webhook server whose provider applies every
// batch without a condition, as external-dns's rfc2136 and pdns providers
// do: a create adds, a delete of what is not there is ignored.
func lastWriterWinsServer(t *testing.T) string {
	var mu sync.Mutex
	var eps []webhook.Endpoint
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", webhook.MediaType)
		_, _ = w.Write([]byte(`{"include":["example.com"]}`))
	})
	mux.HandleFunc("/records", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", webhook.MediaType)
			_ = json.NewEncoder(w).Encode(eps)
			return
		}
		var ch webhook.Changes
		if err := json.NewDecoder(r.Body).Decode(&ch); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		eps = append(eps, ch.Create...)
		for _, d := range ch.Delete {
			eps = slices.DeleteFunc(eps, func(e webhook.Endpoint) bool {
				return e.DNSName == d.DNSName && e.RecordType == d.RecordType && slices.Equal(e.Targets, d.Targets)
			})
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/adjustendpoints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", webhook.MediaType)
		var in []webhook.Endpoint
		_ = json.NewDecoder(r.Body).Decode(&in)
		_ = json.NewEncoder(w).Encode(in)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestWebhookProviderClassGatesTheStart: on a last-writer-wins provider the
// manager does not start unless --dns-webhook-single-writer says this
// installation writes its names alone; an atomic provider (external-dns's
// inmemory, behind its own webhook server) starts without it. The MyApp
// controller is given the measured class.
func TestWebhookProviderClassGatesTheStart(t *testing.T) {
	g := NewWithT(t)
	opts := webhookOptions{url: lastWriterWinsServer(t), zone: "example.com", timeout: webhook.DefaultTimeout,
		readInterval: webhook.DefaultReadInterval, maxBodyBytes: webhook.DefaultMaxBodyBytes}
	_, err := newWebhookDNSClient(t.Context(), logr.Discard(), opts)
	g.Expect(err).To(MatchError(And(ContainSubstring("last-writer-wins"), ContainSubstring("--dns-webhook-single-writer"))))

	opts.singleWriter = true
	c, err := newWebhookDNSClient(t.Context(), logr.Discard(), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.ProviderClass().Class).To(Equal(dns.ClassLastWriterWins))
	g.Expect(dnsClassOf(c)).To(Equal(dnsplan.ClassLastWriterWins), "the MyApp controller is told the class")

	t.Run("atomic", func(t *testing.T) {
		g := NewWithT(t)
		srv, err := controlplane.StartWebhookServer(t.Context(), controlplane.WebhookOptions{Provider: controlplane.WebhookInMemory})
		controlplane.RequireWebhookServer(t, err)
		t.Cleanup(func() { _ = srv.Close() })
		opts.url, opts.singleWriter = srv.URL, false
		c, err := newWebhookDNSClient(t.Context(), logr.Discard(), opts)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.ProviderClass().Class).To(Equal(dns.ClassAtomic))
		g.Expect(dnsClassOf(c)).To(Equal(dnsplan.ClassAtomic))
	})
}

// TestWebhookServerThatIsNotOneStopsTheStartAtOnce: a URL that answers,
// but not the protocol, is a misconfiguration no wait fixes.
func TestWebhookServerThatIsNotOneStopsTheStartAtOnce(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>hello</html>"))
	}))
	t.Cleanup(srv.Close)
	opts := webhookOptions{url: srv.URL, zone: "example.com", timeout: webhook.DefaultTimeout,
		readInterval: webhook.DefaultReadInterval, maxBodyBytes: webhook.DefaultMaxBodyBytes}
	_, err := newWebhookDNSClient(t.Context(), logr.Discard(), opts)
	g.Expect(err).To(MatchError(ContainSubstring("not an external-dns webhook server")))
}

// TestAZoneOverTheBodyCapStopsTheStartAtOnce: a zone larger than
// --dns-webhook-max-body-size at start is a configuration problem: the
// manager stops at once rather than retry for two minutes as for a server
// not up yet, naming the flag and what to do.
func TestAZoneOverTheBodyCapStopsTheStartAtOnce(t *testing.T) {
	g := NewWithT(t)
	url := lastWriterWinsServer(t)
	filler := webhook.Changes{}
	for i := range 50 {
		filler.Create = append(filler.Create, webhook.Endpoint{DNSName: fmt.Sprintf("svc%d.example.com", i),
			RecordType: "A", Targets: []string{"198.51.100.1"}, RecordTTL: 300})
	}
	body, err := json.Marshal(filler)
	g.Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/records", bytes.NewReader(body))
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Body.Close()).To(Succeed())

	opts := webhookOptions{url: url, zone: "example.com", timeout: webhook.DefaultTimeout, singleWriter: true,
		readInterval: webhook.DefaultReadInterval, maxBodyBytes: 2048}
	_, err = newWebhookDNSClient(t.Context(), logr.Discard(), opts)
	g.Expect(err).To(MatchError(And(ContainSubstring("larger than 2048 bytes"), ContainSubstring("--dns-webhook-max-body-size"),
		ContainSubstring("domain filter"))))
	g.Expect(err).NotTo(MatchError(ContainSubstring("did not answer within")), "not retried as a server not up yet")
}
