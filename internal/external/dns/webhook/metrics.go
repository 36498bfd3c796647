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

package webhook

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
)

// The request metrics are the HTTP clients' own (internal/external/internal/httpapi),
// with the same names, help texts, labels and buckets, so that dashboards
// and alerts on myapp_external_requests_total{service="dns"} work whichever
// DNS provider runs. httpapi registers them once with MustRegister and does
// not export them, so sharedCollector below makes httpapi register first and
// then uses the collectors it registered.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_external_requests_total",
		Help: "Logical calls to external services, retries included, by outcome " +
			"(ok, not_found, conflict, unauthorized, throttled, transient, invalid).",
	}, []string{"service", "operation", "outcome"})

	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "myapp_external_request_duration_seconds",
		Help: "Duration of logical calls to external services, retries and backoff included.",
		// From a fast local call up to the worst case of a few retries with
		// ten-second attempts.
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"service", "operation"})
)

// The webhook provider's own metrics.
var (
	providerClass = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_dns_webhook_provider_class",
		Help: "The class the start-up probe measured for the webhook DNS provider: 1 for the measured class " +
			"(atomic or last_writer_wins), 0 for the other; both 0 until the probe has run.",
	}, []string{"class"})

	zoneReads = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "myapp_dns_webhook_zone_reads_total",
		Help: "Reads of the whole zone (GET /records) from the webhook DNS provider.",
	})

	zoneReadBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "myapp_dns_webhook_zone_read_bytes_total",
		Help: "Bytes of the zone reads (GET /records) from the webhook DNS provider.",
	})

	zoneEndpoints = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "myapp_dns_webhook_zone_endpoints",
		Help: "Endpoints (record sets) in the last zone read from the webhook DNS provider, of every owner.",
	})

	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		// Building an httpapi client registers its collectors (it contacts
		// nothing); registering ours first would make its MustRegister
		// panic later in the same process.
		_, _ = httpapi.New(extdns.ServiceName, external.Config{
			BaseURL: "http://127.0.0.1", Token: external.StaticTokenSource("unused"),
		})
		requestsTotal = sharedCollector(requestsTotal)
		requestDuration = sharedCollector(requestDuration)
		metrics.Registry.MustRegister(providerClass, zoneReads, zoneReadBytes, zoneEndpoints)
	})
}

// sharedCollector registers c, or returns the identical collector already
// registered under its name.
func sharedCollector[C prometheus.Collector](c C) C {
	err := metrics.Registry.Register(c)
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	if err != nil {
		panic(err)
	}
	return c
}

// observe records one logical call as the HTTP clients do. A zero duration
// marks a call refused before anything was sent, which is counted but not
// timed.
func observe(operation string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = string(external.KindOf(err))
		if outcome == "" {
			outcome = string(external.KindTransient)
		}
	}
	requestsTotal.WithLabelValues(extdns.ServiceName, operation, outcome).Inc()
	if d > 0 {
		requestDuration.WithLabelValues(extdns.ServiceName, operation).Observe(d.Seconds())
	}
}

// setProviderClass exports the probe's result.
func setProviderClass(c Class) {
	for _, k := range []Class{ClassAtomic, ClassLastWriterWins} {
		v := 0.0
		if k == c {
			v = 1
		}
		providerClass.WithLabelValues(string(k)).Set(v)
	}
}
