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
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
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
		metrics.Registry.MustRegister(providerClass, zoneReads, zoneReadBytes, zoneEndpoints)
	})
}

// observe records one logical call in the request metrics every DNS
// provider shares (myapp_external_requests_total and
// myapp_external_request_duration_seconds, service "dns"), which httpapi
// owns, so that dashboards and alerts written for the HTTP client work
// whichever DNS provider runs.
func observe(operation string, d time.Duration, err error) {
	httpapi.Observe(extdns.ServiceName, operation, d, err)
}

// setProviderClass exports the probe's result.
func setProviderClass(c extdns.Class) {
	for _, k := range []extdns.Class{extdns.ClassAtomic, extdns.ClassLastWriterWins} {
		v := 0.0
		if k == c {
			v = 1
		}
		providerClass.WithLabelValues(string(k)).Set(v)
	}
}
