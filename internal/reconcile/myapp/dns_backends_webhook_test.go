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

package myapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// webhookBackend labels the MyApps of the webhook backend's manager.
const webhookBackend = "webhook"

// The webhook backend: external-dns's webhook server with its inmemory
// provider (atomic), reached by the reconciler through a proxy that can
// answer 503 for an outage (the inmemory zone lives in the server's
// memory, so stopping the server would lose it), a client of its own for
// the tests' reads, and the reconciler using the provider.
var (
	webhookServer    *controlplane.WebhookServer
	webhookProxyDown atomic.Bool
	// webhookProxyRefuse, when set, is asked about each batch the
	// reconciler sends (POST /records): true answers it 500 without
	// passing it on, as a provider that failed it does.
	webhookProxyRefuse atomic.Pointer[func(webhook.Changes) bool]
	// webhookProxyPad, when above 0, adds that many bytes of another
	// tool's A records to every zone read (GET /records) the reconciler
	// makes, whose client reads at most webhookMaxBody.
	webhookProxyPad   atomic.Int64
	webhookClient     *webhook.Client
	webhookReconciler *Reconciler
	// webhookErr says why there is no webhook backend (the server is not
	// built); its tests are skipped with it, the others run.
	webhookErr error
)

// setupWebhookBackend starts the webhook server and a manager whose MyApp
// controller keeps records there, through the proxy.
func setupWebhookBackend(cp *controlplane.ControlPlane) (func(), error) {
	var err error
	if webhookServer, err = controlplane.StartWebhookServer(context.Background(),
		controlplane.WebhookOptions{Provider: controlplane.WebhookInMemory, Zone: "example.com"}); err != nil {
		webhookErr = err
		return func() {}, nil
	}
	target, err := url.Parse(webhookServer.URL)
	if err != nil {
		return nil, err
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if webhookProxyDown.Load() {
			http.Error(w, "the DNS provider is down", http.StatusServiceUnavailable)
			return
		}
		if pad := webhookProxyPad.Load(); pad > 0 && r.Method == http.MethodGet && r.URL.Path == "/records" {
			servePadded(w, r, pad)
			return
		}
		if refuse := webhookProxyRefuse.Load(); refuse != nil && r.Method == http.MethodPost && r.URL.Path == "/records" {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var ch webhook.Changes
			if json.Unmarshal(body, &ch) == nil && (*refuse)(ch) {
				http.Error(w, "the provider failed the batch", http.StatusInternalServerError)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		forward.ServeHTTP(w, r)
	}))
	newClient := func(serverURL string, readInterval time.Duration, mutate ...func(*webhook.Config)) (*webhook.Client, error) {
		cfg := webhook.Config{
			URL: serverURL, Zone: webhookServer.Zone, Timeout: 5 * time.Second, ReadInterval: readInterval,
			RetryWait: 10 * time.Millisecond,
		}
		for _, m := range mutate {
			m(&cfg)
		}
		c, err := webhook.New(cfg)
		if err != nil {
			return nil, err
		}
		if _, err := c.Start(context.Background()); err != nil {
			return nil, err
		}
		return c, nil
	}
	// The tests read every zone change at once; the reconciler reads as
	// the manager does with a short --dns-webhook-read-interval.
	if webhookClient, err = newClient(webhookServer.URL, time.Nanosecond); err != nil {
		return nil, err
	}
	reconcilerClient, err := newClient(proxy.URL, 200*time.Millisecond, func(cfg *webhook.Config) {
		cfg.MaxBodyBytes = webhookMaxBody
	})
	if err != nil {
		return nil, err
	}
	_, stop, err := startManager(cp, webhookBackend, cache.Options{ByObject: map[client.Object]cache.ByObject{
		&appsv1alpha1.MyApp{}: {Label: labels.SelectorFromSet(labels.Set{dnsBackendLabel: webhookBackend})},
	}}, func(ctrl.Manager) *Reconciler {
		webhookReconciler = &Reconciler{
			OwnerID:             testOwnerID,
			DNS:                 reconcilerClient,
			DefaultTarget:       defaultTarget,
			PendingPollInterval: 200 * time.Millisecond,
			DriftCheckInterval:  driftCheckInterval,
		}
		return webhookReconciler
	})
	if err != nil {
		return nil, err
	}
	return func() {
		stop()
		proxy.Close()
		if err := webhookServer.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the webhook server: %v\n", err)
		}
	}, nil
}

// webhookMaxBody is the body cap of the reconciler's webhook client: far
// above the zone the package's tests make, below one webhookProxyPad
// makes.
const webhookMaxBody = 2 << 20

// servePadded answers a zone read with the server's zone and pad bytes of
// another tool's A records after it.
func servePadded(w http.ResponseWriter, r *http.Request, pad int64) {
	zone, err := readZone(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	// Each is about 90 bytes of JSON.
	for i := range pad/80 + 1 {
		zone = append(zone, webhook.Endpoint{DNSName: fmt.Sprintf("svc%07d.%s", i, webhookServer.Zone),
			RecordType: "A", Targets: []string{"198.51.100.9"}, RecordTTL: 300})
	}
	w.Header().Set("Content-Type", "application/external.dns.webhook+json;version=1")
	_ = json.NewEncoder(w).Encode(zone)
}

// webhookServed is what the webhook server's zone holds as host's A
// record, read with the protocol's GET /records rather than the client
// under test: the inmemory provider answers no DNS query.
func webhookServed(t *testing.T, host string) []string {
	t.Helper()
	out, err := webhookZoneValues(t.Context(), host)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// webhookZoneValues reads host's A record values from the webhook server's
// zone (GET /records), sorted.
func webhookZoneValues(ctx context.Context, host string) ([]string, error) {
	zone, err := readZone(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range zone {
		if e.RecordType == "A" && strings.EqualFold(strings.TrimSuffix(e.DNSName, "."), host) {
			out = append(out, e.Targets...)
		}
	}
	slices.Sort(out)
	return out, nil
}

// readZone reads the webhook server's zone (GET /records).
func readZone(ctx context.Context) ([]webhook.Endpoint, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, webhookServer.URL+"/records", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/external.dns.webhook+json;version=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /records: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /records: %s", resp.Status)
	}
	var zone []webhook.Endpoint
	if err := json.NewDecoder(resp.Body).Decode(&zone); err != nil {
		return nil, fmt.Errorf("GET /records: %w", err)
	}
	return zone, nil
}
