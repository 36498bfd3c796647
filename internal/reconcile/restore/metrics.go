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

package restore

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// Metrics of the controller, served with controller-runtime's on /metrics.
// Labels are the phase and the Ready reason, both from fixed sets, so the
// cardinality is bounded whatever the number of Restores.
var (
	restoresFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_restore_finished_total",
		Help: "Restores that finished, by phase (Succeeded or Failed) and the reason of their Ready condition.",
	}, []string{"phase", "reason"})
	restoreDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "myapp_restore_duration_seconds",
		Help: "Time from the choice of a Restore's backup to its end, by phase.",
		// A restore takes from seconds (the MyApp Ready at once) to many
		// minutes (a rollout, a DNS record propagating).
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"phase"})
)

func init() {
	metrics.Registry.MustRegister(restoresFinished, restoreDuration)
}

// recordFinished counts a Restore whose status write just finished it: its
// status as read was in progress, as written it is finished. A status write
// is guarded by the resourceVersion it read, so one Restore finishes in one
// write only.
func recordFinished(before, after *backupv1alpha1.Restore) {
	if before.Status.Phase.Finished() || !after.Status.Phase.Finished() {
		return
	}
	reason := ""
	if c := meta.FindStatusCondition(after.Status.Conditions, backupv1alpha1.ReadyCondition); c != nil {
		reason = c.Reason
	}
	phase := string(after.Status.Phase)
	restoresFinished.WithLabelValues(phase, reason).Inc()
	if start, end := after.Status.StartTime, after.Status.CompletionTime; start != nil && end != nil {
		restoreDuration.WithLabelValues(phase).Observe(end.Sub(start.Time).Seconds())
	}
}
