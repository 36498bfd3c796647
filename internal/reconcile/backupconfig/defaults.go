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

// setDefaults gives every tunable left at zero (or set below zero) its
// default, as the MyApp controller does: SetupWithManager calls it, so the
// code reads the fields and each default is stated once.
func (r *Reconciler) setDefaults() {
	r.SetDefaults(DefaultMaxConcurrentReconciles)
	pass.SetDefault(&r.BackupPollInterval, DefaultBackupPollInterval)
	pass.SetDefault(&r.FinalBackupAttempts, DefaultFinalBackupAttempts)
	pass.SetDefault(&r.FinalBackupTeardownLimit, DefaultFinalBackupTeardownLimit)
	pass.SetDefault(&r.CleanupGrace, DefaultCleanupGrace)
	pass.SetDefault(&r.AppDeletionGrace, DefaultAppDeletionGrace)
	pass.SetDefault(&r.BackupTimeout, DefaultBackupTimeout)
	pass.SetDefault(&r.FailedBackupRetryDelay, DefaultFailedBackupRetryDelay)
	r.holds.MaxLag = pass.MaxCacheLag
}

// currentTime reads the clock in UTC, like the schedules.
func (r *Reconciler) currentTime() time.Time {
	return r.Clock.Now().UTC()
}
