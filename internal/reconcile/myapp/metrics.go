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
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

var (
	cleanupDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "myapp_dns_cleanup_duration_seconds",
		Help:    "Time from a MyApp's deletion to the removal of its DNS cleanup finalizer.",
		Buckets: prometheus.ExponentialBuckets(0.1, 2, 14), // 0.1s to about 27 minutes
	})
	cleanupWaiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "myapp_dns_cleanup_waiting",
		Help: "MyApps being deleted whose DNS cleanup has not finished.",
	})
	// cleanupStarted names each MyApp that waits, so an alert can say which
	// one has waited too long. Its series exist only while a cleanup waits,
	// so its cardinality is that of the MyApps being deleted.
	cleanupStarted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_dns_cleanup_started_timestamp_seconds",
		Help: "When a MyApp whose DNS cleanup has not finished was deleted, in seconds since the epoch, by namespace and name.",
	}, []string{"namespace", "name"})
)

func init() {
	metrics.Registry.MustRegister(cleanupDuration, cleanupWaiting, cleanupStarted)
}

// cleanupTracker counts the MyApps waiting on DNS cleanup, for the gauge. It
// is keyed by name so that a MyApp that is gone when it is next reconciled,
// however its finalizer went, is forgotten.
type cleanupTracker struct {
	mu      sync.Mutex
	pending map[types.NamespacedName]struct{}
}

// waiting records that app's cleanup has started.
func (t *cleanupTracker) waiting(app *appsv1alpha1.MyApp) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = map[types.NamespacedName]struct{}{}
	}
	t.pending[client.ObjectKeyFromObject(app)] = struct{}{}
	cleanupWaiting.Set(float64(len(t.pending)))
	if app.DeletionTimestamp != nil {
		cleanupStarted.WithLabelValues(app.Namespace, app.Name).Set(float64(app.DeletionTimestamp.Unix()))
	}
}

// done records that app's cleanup finished, and how long it took.
func (t *cleanupTracker) done(app *appsv1alpha1.MyApp) {
	t.forget(client.ObjectKeyFromObject(app))
	if app.DeletionTimestamp != nil {
		cleanupDuration.Observe(time.Since(app.DeletionTimestamp.Time).Seconds())
	}
}

// forget drops a MyApp that no longer waits, without observing a duration.
func (t *cleanupTracker) forget(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, key)
	cleanupWaiting.Set(float64(len(t.pending)))
	cleanupStarted.DeleteLabelValues(key.Namespace, key.Name)
}
