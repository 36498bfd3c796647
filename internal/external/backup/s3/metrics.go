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

package s3

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
)

// The S3 client records its calls in the same series as the HTTP clients
// (internal/external/internal/httpapi): myapp_external_requests_total and
// myapp_external_request_duration_seconds with the labels service,
// operation and outcome, so a dashboard or an alert on the backup service
// keeps working whichever provider stores the backups. httpapi registers
// those collectors itself, with MustRegister, the first time an HTTP client
// is built, and exports no handle on them; so that neither package panics
// on a duplicate registration in either order, this one has httpapi
// register them first (by building a client that is never used) and then
// finds them in the registry.
var (
	requestsTotal   *prometheus.CounterVec
	requestDuration prometheus.ObserverVec
	metricsOnce     sync.Once
	metricsErr      error
)

// sharedMetrics returns the request collectors the HTTP clients register.
func sharedMetrics() error {
	metricsOnce.Do(func() {
		if _, err := httpapi.New("backup", external.Config{
			BaseURL: "http://127.0.0.1", Token: external.StaticTokenSource("unused"),
		}); err != nil {
			metricsErr = err
			return
		}
		counter := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "myapp_external_requests_total",
			Help: "Logical calls to external services, retries included, by outcome " +
				"(ok, not_found, conflict, unauthorized, throttled, transient, invalid).",
		}, []string{"service", "operation", "outcome"})
		histogram := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "myapp_external_request_duration_seconds",
			Help:    "Duration of logical calls to external services, retries and backoff included.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"service", "operation"})
		var c *prometheus.CounterVec
		if c, metricsErr = existing(counter); metricsErr != nil {
			return
		}
		var h *prometheus.HistogramVec
		if h, metricsErr = existing(histogram); metricsErr != nil {
			return
		}
		requestsTotal, requestDuration = c, h
	})
	return metricsErr
}

// existing registers c, or returns the collector of the same name already
// registered.
func existing[C prometheus.Collector](c C) (C, error) {
	err := metrics.Registry.Register(c)
	if err == nil {
		return c, nil
	}
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		return c, err
	}
	found, ok := already.ExistingCollector.(C)
	if !ok {
		return c, errors.New("a collector of another type is registered under the name of an external request metric")
	}
	return found, nil
}

// outcomeOK is the outcome label of a call that succeeded.
const outcomeOK = "ok"

// observe records one logical call, as httpapi does: a zero duration marks a
// call refused before anything was sent, counted but not timed.
func observe(operation string, d time.Duration, err error) {
	outcome := outcomeOK
	if err != nil {
		outcome = string(external.KindOf(err))
		if outcome == "" {
			outcome = string(external.KindTransient)
		}
	}
	requestsTotal.WithLabelValues(serviceName, operation, outcome).Inc()
	if d > 0 {
		requestDuration.WithLabelValues(serviceName, operation).Observe(d.Seconds())
	}
}
