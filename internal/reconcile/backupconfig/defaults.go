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
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// Defaults of the Reconciler's tunables.
const (
	// DefaultBackupPollInterval is how often a RUNNING backup is polled, and
	// how soon a cleanup waiting for the service to finish deleting looks
	// again. The backup service emits no events, so polling is the only way
	// to learn that a backup finished.
	DefaultBackupPollInterval = 10 * time.Second
	// DefaultFinalBackupAttempts is how many final backups are tried before
	// the controller gives up and asks a person to decide.
	DefaultFinalBackupAttempts = 3
	// DefaultFinalBackupTeardownLimit is how long a BackupConfig deleted
	// together with its MyApp (a namespace teardown) waits for the MyApp's
	// final backup before it gives it up and lets the MyApp go.
	DefaultFinalBackupTeardownLimit = 10 * time.Minute
	// DefaultCleanupGrace is how long after a deletion began the backup
	// service must list no backups of the BackupConfig before it goes.
	DefaultCleanupGrace = 10 * time.Second
	// DefaultBackupTimeout is how long a backup may run before the
	// controller gives up on it. Backups take from seconds to hours; one
	// still RUNNING after this long is taken for a job the service wedged.
	DefaultBackupTimeout = 6 * time.Hour
	// DefaultFailedBackupRetryDelay is how long the first retry of a failed
	// on-change backup waits.
	DefaultFailedBackupRetryDelay = time.Minute
	// DefaultMaxConcurrentReconciles is one: a BackupConfig's pass mostly
	// waits on the backup service, which is better asked one question at
	// a time than many.
	DefaultMaxConcurrentReconciles = 1
)

const (
	// scheduleWakeSlack is how long after a slot the controller wakes up, at
	// most twice this with jitter, so it never wakes a moment too early and
	// many BackupConfigs on the same schedule do not wake at once.
	scheduleWakeSlack = time.Second
	// backupVisibilityGrace is how long a backup the service just started may
	// be missing from reads: the service is eventually consistent.
	backupVisibilityGrace = time.Minute
	// missingBackupPolls is how many polls in a row must find a backup
	// missing, over at least backupVisibilityGrace, before it counts as gone.
	missingBackupPolls = 3
)

// setDefaults gives every tunable left at zero (or set below zero) its
// default, as the MyApp controller does: SetupWithManager calls it, so the
// code reads the fields and each default is stated once.
func (r *Reconciler) setDefaults() {
	r.SetDefaults(DefaultMaxConcurrentReconciles)
	pass.SetDefault(&r.BackupPollInterval, DefaultBackupPollInterval)
	pass.SetDefault(&r.FinalBackupAttempts, DefaultFinalBackupAttempts)
	pass.SetDefault(&r.FinalBackupTeardownLimit, DefaultFinalBackupTeardownLimit)
	pass.SetDefault(&r.CleanupGrace, DefaultCleanupGrace)
	pass.SetDefault(&r.BackupTimeout, DefaultBackupTimeout)
	pass.SetDefault(&r.FailedBackupRetryDelay, DefaultFailedBackupRetryDelay)
	r.holds.MaxLag = pass.MaxCacheLag
}

// currentTime reads the clock in UTC, like the schedules.
func (r *Reconciler) currentTime() time.Time {
	return r.Clock.Now().UTC()
}
