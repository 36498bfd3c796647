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
	"testing"
	"time"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// TestCallsAreCountedAsTheHTTPClientsCountThem (issue 32 item 2, G3): the
// RFC 2136 client exports the request metrics the HTTP clients do, under
// the same names and labels (service "dns", the operation, the outcome by
// error kind, and the duration), so the alerts written for them
// (MyAppExternalServiceFailing, MyAppExternalServiceThrottling) cover it.
// A server that fails every answer is counted as transient, one that finds
// nothing as not_found, one whose update succeeds as ok.
func TestCallsAreCountedAsTheHTTPClientsCountThem(t *testing.T) {
	failing := startLoopback(t, signedRight, func(l *loopback, w dns.ResponseWriter, q *dns.Msg) {
		l.reply(w, q, answer(q, dns.RcodeServerFailure))
	})
	empty := startLoopback(t, signedRight, func(l *loopback, w dns.ResponseWriter, q *dns.Msg) {
		l.reply(w, q, answer(q, dns.RcodeNameError))
	})
	ctx := t.Context()
	before := map[string]float64{}
	for _, outcome := range []string{"transient", "not_found", "ok", "invalid"} {
		for _, op := range []string{"get", "delete", "list", "upsert"} {
			before[op+"/"+outcome] = requests(t, op, outcome)
		}
	}
	durations := observedDurations(t, "get")

	_, _ = loopClient(t, failing.addr, time.Second).Get(ctx, "www.loop.test")
	_, _ = loopClient(t, failing.addr, time.Second).List(ctx, "myapp-operator/a/b/c")
	_, _ = loopClient(t, empty.addr, time.Second).Get(ctx, "www.loop.test")
	// A delete of a name that is not there is a success, as over HTTP.
	_ = loopClient(t, empty.addr, time.Second).Delete(ctx, "www.loop.test", "myapp-operator/a/b/c")
	// A record the client refuses before sending anything is counted too.
	_, _ = loopClient(t, empty.addr, time.Second).Upsert(ctx, extdns.Record{Name: "www.loop.test", Type: "MX", Value: "x", TTL: 60, Owner: "o"})

	for _, want := range []struct{ op, outcome string }{
		{"get", "transient"}, {"list", "transient"}, {"get", "not_found"}, {"delete", "ok"}, {"upsert", "invalid"},
	} {
		key := want.op + "/" + want.outcome
		if got := requests(t, want.op, want.outcome) - before[key]; got != 1 {
			t.Errorf(`myapp_external_requests_total{service="dns",operation=%q,outcome=%q} grew by %v, want 1`, want.op, want.outcome, got)
		}
	}
	if got := observedDurations(t, "get") - durations; got != 2 {
		t.Errorf(`myapp_external_request_duration_seconds{service="dns",operation="get"} has %d more observations, want 2`, got)
	}
}

// requests is myapp_external_requests_total for the DNS service's operation
// and outcome, 0 when the series does not exist.
func requests(t *testing.T, operation, outcome string) float64 {
	t.Helper()
	var total float64
	for _, m := range family(t, "myapp_external_requests_total") {
		if hasLabels(m, "service", "dns", "operation", operation, "outcome", outcome) {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

// observedDurations is how many DNS calls of operation were timed.
func observedDurations(t *testing.T, operation string) uint64 {
	t.Helper()
	var n uint64
	for _, m := range family(t, "myapp_external_request_duration_seconds") {
		if hasLabels(m, "service", "dns", "operation", operation) {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

func family(t *testing.T, name string) []*dto.Metric {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}

// hasLabels reports whether m carries every name/value pair of kv.
func hasLabels(m *dto.Metric, kv ...string) bool {
	for i := 0; i < len(kv); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == kv[i] && l.GetValue() == kv[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
