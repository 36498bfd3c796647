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
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// metricLabelTrigger labels backup metrics with the trigger of the backup.
const metricLabelTrigger = "trigger"

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
	backupsHeldForCleanup = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_backupconfig_backups_held_for_cleanup",
		Help: "Backups a BackupConfig being deleted still waits to see deleted before its finalizer goes; while " +
			"the backup service cannot list them, the last count seen, or 1 for status.lastBackup before any count.",
	}, []string{"namespace", "name"})
)

// Causes of backup deletions, the values of the cause label.
const (
	deleteCauseRetention = "retention"
	deleteCauseCleanup   = "cleanup"
)

var registerOnce sync.Once

// registerMetrics registers the metrics once per process, however many
// reconcilers tests or managers construct.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(backupsStarted, backupsSucceeded, backupsFailed, backupDuration,
			backupsDeleted, backupsHeldForCleanup)
	})
}
