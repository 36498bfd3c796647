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

package httpapi

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

// Outcome label values besides the error kinds.
const outcomeOK = "ok"

// Label names shared by the metrics.
const (
	labelService   = "service"
	labelOperation = "operation"
)

var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_external_requests_total",
		Help: "Logical calls to external services, retries included, by outcome " +
			"(ok, not_found, conflict, unauthorized, throttled, transient, invalid).",
	}, []string{labelService, labelOperation, "outcome"})

	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "myapp_external_request_duration_seconds",
		Help: "Duration of logical calls to external services, retries and backoff included.",
		// From a fast local call up to the worst case of a few retries with
		// ten-second attempts.
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{labelService, labelOperation})

	retryAfterCapped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_external_retry_after_capped_total",
		Help: "Answers whose Retry-After asked for a wait longer than the client honours (--max-retry-after), by service.",
	}, []string{labelService})

	registerOnce sync.Once
)

// registerMetrics adds the collectors to controller-runtime's registry the
// first time a client is built; every later client shares them, so building
// several clients in one process cannot panic on duplicate registration.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(requestsTotal, requestDuration, retryAfterCapped)
	})
}

// Observe records one logical call of a DNS or backup client that does not
// speak this HTTP API (the RFC 2136 client) under the same metrics, names
// and labels as the HTTP clients, so the alerts and dashboards written for
// them cover it: service is the service's name ("dns"), operation the
// logical call ("get", "upsert", ...), d how long it took with its retries,
// and err its error, whose external.Kind is the outcome.
func Observe(service, operation string, d time.Duration, err error) {
	registerMetrics()
	observe(service, operation, d, err)
}

// observe records one logical call. A zero duration marks a call refused
// before anything was sent, which is counted but not timed.
func observe(service, operation string, d time.Duration, err error) {
	outcome := outcomeOK
	if err != nil {
		outcome = string(external.KindOf(err))
		if outcome == "" {
			outcome = string(external.KindTransient)
		}
	}
	requestsTotal.WithLabelValues(service, operation, outcome).Inc()
	if d > 0 {
		requestDuration.WithLabelValues(service, operation).Observe(d.Seconds())
	}
}
