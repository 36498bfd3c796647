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
	"maps"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
)

// TestCallsAreCountedInTheSharedRequestSeries: the webhook client's calls
// land in the request series every DNS provider shares (service "dns"), so
// the dashboards and alerts written for the HTTP client cover it; and an
// HTTP client built after it shares those collectors rather than
// panicking on a second registration.
func TestCallsAreCountedInTheSharedRequestSeries(t *testing.T) {
	f := newFake(t, transactional)
	c := newClient(t, f.URL())
	okBefore := requestCount(t, "upsert", "ok")
	missingBefore := requestCount(t, "get", "not_found")
	countBefore, sumBefore := requestDurations(t, "upsert")

	if _, err := c.Upsert(t.Context(), aRecord("metrics."+zone, "192.0.2.10", ownerA)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(t.Context(), "missing."+zone); !errors.Is(err, external.ErrNotFound) {
		t.Fatalf("Get of a missing name = %v, want not found", err)
	}
	if got := requestCount(t, "upsert", "ok"); got != okBefore+1 {
		t.Fatalf("myapp_external_requests_total{service=dns,operation=upsert,outcome=ok} went from %v to %v, want one more", okBefore, got)
	}
	if got := requestCount(t, "get", "not_found"); got != missingBefore+1 {
		t.Fatalf("myapp_external_requests_total{service=dns,operation=get,outcome=not_found} went from %v to %v, want one more", missingBefore, got)
	}
	if count, sum := requestDurations(t, "upsert"); count != countBefore+1 || sum <= sumBefore {
		t.Fatalf("myapp_external_request_duration_seconds{service=dns,operation=upsert}: %d observations (sum %v), was %d (sum %v); want one more, timed",
			count, sum, countBefore, sumBefore)
	}

	if _, err := httpdns.New(external.Config{BaseURL: "http://127.0.0.1:1", Token: external.StaticTokenSource("t")}); err != nil {
		t.Fatalf("an HTTP DNS client built after the webhook client: %v", err)
	}
}

// requestCount is myapp_external_requests_total{service="dns"} for one
// operation and outcome in controller-runtime's registry.
func requestCount(t *testing.T, operation, outcome string) float64 {
	t.Helper()
	for _, m := range gathered(t, "myapp_external_requests_total", map[string]string{
		"service": extdns.ServiceName, "operation": operation, "outcome": outcome,
	}) {
		return m.GetCounter().GetValue()
	}
	return 0
}

// requestDurations is the observation count and sum of
// myapp_external_request_duration_seconds{service="dns"} for one operation.
func requestDurations(t *testing.T, operation string) (uint64, float64) {
	t.Helper()
	for _, m := range gathered(t, "myapp_external_request_duration_seconds", map[string]string{
		"service": extdns.ServiceName, "operation": operation,
	}) {
		return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
	}
	return 0, 0
}

// gathered returns the series of the metric called name whose labels are
// exactly labels.
func gathered(t *testing.T, name string, labels map[string]string) []*dto.Metric {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, labels) {
				out = append(out, m)
			}
		}
	}
	return out
}
