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

package backupconfig

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// metricLabelTrigger labels backup metrics with the trigger of the backup.
const metricLabelTrigger = "trigger"

// objectLabels label the per-BackupConfig metrics with its namespace and name.
var objectLabels = []string{"namespace", "name"}

// Metrics of the controller, served with controller-runtime's on /metrics.
// Backup outcomes are labelled by trigger only, so their cardinality is fixed;
// the cleanup gauge is per BackupConfig but exists only while one is being
// deleted.
var (
	backupsStarted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_backupconfig_backups_started_total",
		Help: "Backups started in the backup service, by trigger.",
	}, []string{metricLabelTrigger})
	backupsSucceeded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_backupconfig_backups_succeeded_total",
		Help: "Backups the backup service reported SUCCEEDED, by trigger.",
	}, []string{metricLabelTrigger})
	backupsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_backupconfig_backups_failed_total",
		Help: "Backups the backup service reported FAILED, by trigger.",
	}, []string{metricLabelTrigger})
	backupDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "myapp_backupconfig_backup_duration_seconds",
		Help: "Time from start to completion of finished backups, as the backup service reports it, by trigger and phase.",
		// Backups take from seconds to hours.
		Buckets: prometheus.ExponentialBuckets(1, 2, 15),
	}, []string{metricLabelTrigger, "phase"})
	backupsDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myapp_backupconfig_backups_deleted_total",
		Help: "Backups deleted in the backup service, by cause: retention or cleanup of a deleted BackupConfig.",
	}, []string{"cause"})
	finalBackupsAbandoned = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "myapp_backupconfig_final_backups_abandoned_total",
		Help: "Final backups a BackupConfig being deleted gave up (out of attempts or past its teardown limit), " +
			"releasing the MyApp without one.",
	})
	backupsHeldForCleanup = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_backupconfig_backups_held_for_cleanup",
		Help: "Backups a BackupConfig being deleted still waits to see deleted before its finalizer goes; while " +
			"the backup service cannot list them, the last count seen, or 1 for status.lastBackup before any count.",
	}, objectLabels)
	// The two freshness gauges are per BackupConfig, so an alert can name
	// the one whose backups are late; they go with the BackupConfig.
	lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_backupconfig_last_success_timestamp_seconds",
		Help: "When the last successful backup of a BackupConfig completed (status.lastSuccessfulBackupTime), in seconds since the epoch.",
	}, objectLabels)
	backupDue = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_backupconfig_backup_due_timestamp_seconds",
		Help: "The first schedule time after a scheduled BackupConfig's last successful backup (or its creation), in seconds " +
			"since the epoch: a newer successful backup is due then. Absent without a usable schedule or while suspended.",
	}, objectLabels)
	// waitingForRestoreSince says how long a BackupConfig has been quiet
	// for a Restore of its MyApp: no backup starts on any trigger, so
	// neither the schedule's gauge nor any change says so for a
	// BackupConfig that backs up on change only.
	waitingForRestoreSince = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_backupconfig_waiting_for_restore_since_timestamp_seconds",
		Help: "While a Restore in progress writes a BackupConfig's MyApp, so that no backup of it starts: the " +
			"Restore's status.startTime (its creation before it has one), in seconds since the epoch; 0 otherwise.",
	}, objectLabels)
)

// Causes of backup deletions, the values of the cause label.
const (
	deleteCauseRetention = "retention"
	deleteCauseCleanup   = "cleanup"
)

// init registers the metrics with controller-runtime's registry, which the
// manager serves, as the MyApp controller's do: once per process, however
// many reconcilers tests or managers construct.
func init() {
	metrics.Registry.MustRegister(finalBackupsAbandoned, backupsStarted, backupsSucceeded, backupsFailed, backupDuration,
		backupsDeleted, backupsHeldForCleanup, lastSuccess, backupDue, waitingForRestoreSince)
}

// recordFreshness sets the freshness gauges of the BackupConfig a pass
// leaves behind, from its status and parsed schedule.
func recordFreshness(s *scope) {
	if !s.bc.DeletionTimestamp.IsZero() {
		forgetFreshness(s.key)
		return
	}
	quietSince := 0.0
	if !s.readiness.waitingSince.IsZero() {
		quietSince = float64(s.readiness.waitingSince.Unix())
	}
	waitingForRestoreSince.WithLabelValues(s.key.Namespace, s.key.Name).Set(quietSince)
	since := s.bc.CreationTimestamp.Time
	if t := s.bc.Status.LastSuccessfulBackupTime; t != nil {
		lastSuccess.WithLabelValues(s.key.Namespace, s.key.Name).Set(float64(t.Unix()))
		since = t.Time
	}
	if s.schedule == nil || s.bc.Spec.Suspend {
		// Nothing is due: no schedule, or backups were stopped on purpose.
		backupDue.DeleteLabelValues(s.key.Namespace, s.key.Name)
		return
	}
	backupDue.WithLabelValues(s.key.Namespace, s.key.Name).Set(float64(s.schedule.Next(since).Unix()))
}

// forgetFreshness drops the freshness gauges of a BackupConfig that is
// being deleted or gone.
func forgetFreshness(key types.NamespacedName) {
	lastSuccess.DeleteLabelValues(key.Namespace, key.Name)
	backupDue.DeleteLabelValues(key.Namespace, key.Name)
	waitingForRestoreSince.DeleteLabelValues(key.Namespace, key.Name)
}
