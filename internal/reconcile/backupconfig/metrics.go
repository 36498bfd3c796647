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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
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
	// created and maxBackupAge are what BackupConfigNoRecentBackup reads
	// beside lastSuccess: how old the newest successful backup (or, before
	// the first, the BackupConfig) may grow before backups count as
	// stopped.
	created = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_backupconfig_created_timestamp_seconds",
		Help: "When a BackupConfig was created, in seconds since the epoch: the age of its backups before the first succeeded.",
	}, objectLabels)
	maxBackupAge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_backupconfig_max_backup_age_seconds",
		Help: "How old a BackupConfig's newest successful backup may grow before its backups count as stopped: " +
			"twice the longest interval of its schedule, or, without a schedule, a day while a change of the MyApp " +
			"waits for its backup. Absent while no backup is owed: suspended, no MyApp, or on change only with the " +
			"MyApp's spec backed up.",
	}, objectLabels)
)

// scheduleMaxAgeFactor is how many of its schedule's periods a scheduled
// BackupConfig's newest successful backup may age: a failed slot waits for
// the next, so one missed slot is a failure the next slot repairs, and two
// in a row mean backups stopped.
const scheduleMaxAgeFactor = 2

// onChangeMaxBackupAge bounds the age of the newest successful backup of
// a BackupConfig without a schedule while a change of its MyApp waits for
// its backup. Such a BackupConfig backs up on change only, so an old
// backup is no fault while the MyApp stays as backed up; once it changed,
// its backup is owed within minutes, and a day bounds how much of the
// MyApp's history a restore loses when those backups stop.
const onChangeMaxBackupAge = 24 * time.Hour

// Bounds of the search for a schedule's period: the slots of five years
// from a fixed leap year's start (so a yearly or a February 29 schedule
// shows its longest gap, and the period never depends on when it is
// computed), at most periodScanSlots of them (about two weeks of a
// schedule firing every minute, which covers its weekends).
const periodScanSlots = 20000

var periodScanFrom = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// periods holds each schedule expression's period, computed once.
var periods sync.Map

// schedulePeriod is the longest interval between two consecutive times of
// sched, the expression expr: a schedule's period, or for one that fires
// unevenly (weekdays, the first of a month) the longest wait it makes.
func schedulePeriod(expr string, sched cron.Schedule) time.Duration {
	if p, ok := periods.Load(expr); ok {
		return p.(time.Duration)
	}
	end := periodScanFrom.AddDate(5, 0, 0)
	var longest time.Duration
	prev := sched.Next(periodScanFrom)
	for i := 0; i < periodScanSlots && !prev.IsZero() && prev.Before(end); i++ {
		next := sched.Next(prev)
		if next.IsZero() {
			break
		}
		longest = max(longest, next.Sub(prev))
		prev = next
	}
	periods.Store(expr, longest)
	return longest
}

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
		backupsDeleted, backupsHeldForCleanup, lastSuccess, backupDue, waitingForRestoreSince, created, maxBackupAge)
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
	created.WithLabelValues(s.key.Namespace, s.key.Name).Set(float64(s.bc.CreationTimestamp.Unix()))
	switch {
	case s.bc.Spec.Suspend:
		maxBackupAge.DeleteLabelValues(s.key.Namespace, s.key.Name)
	case s.schedule != nil:
		period := schedulePeriod(s.bc.Spec.Schedule, s.schedule)
		maxBackupAge.WithLabelValues(s.key.Namespace, s.key.Name).Set((scheduleMaxAgeFactor * period).Seconds())
	case s.app == nil && !s.readiness.appMissing:
		// The pass ended before it read the MyApp: what it owes is not
		// known, and a gauge dropped now would restart the alert's wait.
	case changeAwaitsBackup(s):
		maxBackupAge.WithLabelValues(s.key.Namespace, s.key.Name).Set(onChangeMaxBackupAge.Seconds())
	default:
		maxBackupAge.DeleteLabelValues(s.key.Namespace, s.key.Name)
	}
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
	created.DeleteLabelValues(key.Namespace, key.Name)
	maxBackupAge.DeleteLabelValues(key.Namespace, key.Name)
}

// changeAwaitsBackup reports whether the MyApp, backed up on change, has
// a spec no successful backup holds: no backup was started of it (of this
// MyApp, by UID, and this generation), or the last one, of its change,
// runs or failed.
func changeAwaitsBackup(s *scope) bool {
	if s.app == nil || s.bc.Spec.BackupOnChange != nil && !*s.bc.Spec.BackupOnChange {
		return false
	}
	st := s.bc.Status
	if st.ObservedAppUID != s.app.UID || st.ObservedAppGeneration != s.app.Generation {
		return true
	}
	last := st.LastBackup
	return last != nil && last.Trigger == backupv1alpha1.TriggerAppChange && last.Phase != backupv1alpha1.BackupSucceeded
}
