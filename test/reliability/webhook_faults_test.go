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

package reliability

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
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// The external fault matrix (family 3) on the DNS side, with the webhook
// provider: external-dns's own webhook server with its inmemory provider
// behind a proxy that misbehaves as the simulator's faults do. The
// simulator's oracle knows only the simulator's records, so each point
// judges the zone itself once the fault has cleared: exactly the MyApp's A
// record and owner TXT at its host while it lives, nothing of its
// namespace once it is gone.

// webhookReadInterval is how long the campaign's webhook client serves
// reads from one read of the zone.
const webhookReadInterval = 200 * time.Millisecond

// webhookFault is one misbehaviour of the proxy in front of the server.
type webhookFault string

const (
	// webhook5xx answers every request 503 without forwarding it.
	webhook5xx webhookFault = "5xx-burst"
	// webhookHang holds every request past the client's timeout.
	webhookHang webhookFault = "hang"
	// webhookResetAfterCommit forwards each batch (POST /records), so it is
	// applied, then drops the connection without an answer; reads pass.
	webhookResetAfterCommit webhookFault = "reset-after-commit-writes"
	// webhookMalformed forwards every request and answers a body that is
	// not JSON.
	webhookMalformed webhookFault = "malformed-body"
)

// webhookFaults are the faults of the family and what DNSReady must say
// while each is in place.
var webhookFaults = []struct {
	fault webhookFault
	class faultClass
}{
	{webhook5xx, classUnavailable},
	{webhookHang, classUnavailable},
	{webhookResetAfterCommit, classNone},
	{webhookMalformed, classUnavailable},
}

// faultyProxy forwards to a webhook server unless a fault is in place.
type faultyProxy struct {
	fault   atomic.Pointer[webhookFault]
	forward *httputil.ReverseProxy
	// closing ends the requests held by a hang when the point ends: a
	// caller that gave up may leave its connection open.
	closing chan struct{}
}

func (p *faultyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := p.fault.Load()
	if f == nil {
		p.forward.ServeHTTP(w, r)
		return
	}
	switch *f {
	case webhook5xx:
		http.Error(w, "injected", http.StatusServiceUnavailable)
	case webhookHang:
		select {
		case <-r.Context().Done():
		case <-p.closing:
		}
	case webhookResetAfterCommit:
		if r.Method != http.MethodPost || r.URL.Path != "/records" {
			p.forward.ServeHTTP(w, r)
			return
		}
		p.forward.ServeHTTP(httptest.NewRecorder(), r)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	case webhookMalformed:
		rec := httptest.NewRecorder()
		p.forward.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write([]byte("{not json"))
	}
}

// TestWebhookFaultMatrix runs each fault of webhookFaults in each phase
// (create, update with a host move, delete) on the webhook provider. Each
// point checks that DNSReady says the provider is unavailable within 30
// seconds (a committed write whose answer was lost needs no report: the
// client reads the zone back), that everything converges once the fault
// clears, and that the zone then holds exactly what the MyApp should.
func TestWebhookFaultMatrix(t *testing.T) {
	if _, err := controlplane.WebhookServerPath(); err != nil {
		controlplane.RequireWebhookServer(t, err)
	}
	type point struct {
		fault webhookFault
		class faultClass
		phase string
	}
	points := make([]point, 0, 3*len(webhookFaults))
	for _, f := range webhookFaults {
		for _, phase := range []string{"create", "update", "delete"} {
			points = append(points, point{f.fault, f.class, phase})
		}
	}
	// The sample: one point per phase, each with another fault.
	if n := scale(3, len(points)); n < len(points) {
		points = []point{points[1], points[5], points[9]}
	}
	for _, p := range points {
		t.Run(fmt.Sprintf("%s/%s", p.fault, p.phase), func(t *testing.T) {
			start := time.Now()
			runWebhookFaultPoint(t, p.fault, p.class, p.phase)
			t.Logf("%s during %s: %s", p.fault, p.phase, time.Since(start).Round(time.Millisecond))
		})
	}
}

func runWebhookFaultPoint(t *testing.T, fault webhookFault, class faultClass, phase string) {
	srv, err := controlplane.StartWebhookServer(t.Context(), controlplane.WebhookOptions{Provider: controlplane.WebhookInMemory})
	controlplane.RequireWebhookServer(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the webhook server's log:\n%s", srv.Log())
		}
		_ = srv.Close()
	})
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &faultyProxy{forward: httputil.NewSingleHostReverseProxy(target), closing: make(chan struct{})}
	front := httptest.NewServer(proxy)
	t.Cleanup(func() {
		close(proxy.closing)
		front.Close()
	})

	s := newScenario(t)
	s.dnsFor = func(ext http.RoundTripper) dns.Client {
		// The campaign's clients: an attempt gets 2 s, a read is retried
		// once.
		c, err := webhook.New(webhook.Config{URL: front.URL, Zone: srv.Zone, Timeout: 2 * time.Second,
			ReadInterval: webhookReadInterval, MaxRetries: 1, RetryWait: 100 * time.Millisecond, Transport: ext})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		return c
	}
	s.startManager(newCrashGate(0))

	app := s.newMyApp("web")
	// A fault goes in once the client's last read of the zone is older
	// than its read interval: the pass must then read through the fault,
	// rather than decide on the zone read a moment before (a deletion
	// whose batch is answered without a body would otherwise go through a
	// malformed-body fault unharmed, which is right but tests nothing).
	inject := func() {
		time.Sleep(2 * webhookReadInterval)
		proxy.fault.Store(&fault)
	}
	reported := func() {
		if class == classNone {
			return
		}
		s.waitFor("DNSReady reports the fault", func(ctx context.Context) error { return dnsConditionSays(ctx, app, class) })
	}
	switch phase {
	case "create":
		inject()
		s.create(app)
		reported()
		proxy.fault.Store(nil)
		s.waitFor("the MyApp is Ready", s.readyAt(app))
	case "update":
		s.create(app)
		s.waitFor("the MyApp is Ready", s.readyAt(app))
		inject()
		update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Host = "moved." + s.ns + "." + srv.Zone })
		reported()
		proxy.fault.Store(nil)
		s.waitFor("the MyApp is Ready at its new host", s.readyAt(app))
	case "delete":
		s.create(app)
		s.waitFor("the MyApp is Ready", s.readyAt(app))
		inject()
		s.remove(app)
		reported()
		proxy.fault.Store(nil)
		s.waitFor("the MyApp is gone", gone(app))
	}

	// The zone, read past the proxy: the MyApp's pair at its host while it
	// lives, nothing else of the namespace, before and after the sweep and
	// the drift checks could have changed it.
	want := map[string][]string{}
	if phase != "delete" {
		owner := fmt.Sprintf("myapp-operator/%s/%s/%s/%s", ownerID, app.Namespace, app.Name, app.UID)
		want = map[string][]string{
			"A " + app.Spec.Host:                          {defaultTarget},
			"TXT " + dns.OwnerLabel + "." + app.Spec.Host: {owner},
		}
	}
	s.waitFor("the zone holds what the MyApp should", func(ctx context.Context) error {
		got, err := zoneOf(ctx, srv.URL, "."+s.ns+"."+srv.Zone)
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("the zone holds %v, want %v", got, want)
		}
		return nil
	})
	time.Sleep(orphanSweepInterval + time.Second)
	got, err := zoneOf(t.Context(), srv.URL, "."+s.ns+"."+srv.Zone)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a sweep interval the zone holds %v (%v), want %v", got, err, want)
	}
}

// zoneOf is what the webhook server at serverURL holds under suffix, by type and
// name, each with its values sorted, TXT values without their quotes.
func zoneOf(ctx context.Context, serverURL, suffix string) (map[string][]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverURL+"/records", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/external.dns.webhook+json;version=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /records: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	var zone []webhook.Endpoint
	if err := json.Unmarshal(body, &zone); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, e := range zone {
		name := strings.TrimSuffix(e.DNSName, ".")
		if !strings.HasSuffix(name, suffix) {
			continue
		}
		key := e.RecordType + " " + name
		for _, v := range e.Targets {
			out[key] = append(out[key], strings.Trim(v, `"`))
		}
		slices.Sort(out[key])
	}
	return out, nil
}
