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

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// currentTime reads the injected clock, in UTC like the schedules.
func (r *Reconciler) currentTime() time.Time {
	if r.Clock == nil {
		return time.Now().UTC()
	}
	return r.Clock.Now().UTC()
}

// positiveOr is d, or def when d is not set (zero) or not usable (negative):
// the Reconciler's durations are optional and default at the point of use.
func positiveOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (r *Reconciler) pollInterval() time.Duration {
	return positiveOr(r.BackupPollInterval, DefaultBackupPollInterval)
}

func (r *Reconciler) cleanupGrace() time.Duration {
	return positiveOr(r.CleanupGrace, DefaultCleanupGrace)
}

func (r *Reconciler) backupTimeout() time.Duration {
	return positiveOr(r.BackupTimeout, DefaultBackupTimeout)
}

func (r *Reconciler) failedBackupRetryDelay() time.Duration {
	return positiveOr(r.FailedBackupRetryDelay, DefaultFailedBackupRetryDelay)
}

func (r *Reconciler) reconcileTimeout() time.Duration {
	return positiveOr(r.ReconcileTimeout, DefaultReconcileTimeout)
}

// apiReader reads around the cache.
func (r *Reconciler) apiReader() client.Reader {
	if r.APIReader == nil {
		return r.Client
	}
	return r.APIReader
}

func (r *Reconciler) finalBackupAttempts() int {
	if r.FinalBackupAttempts <= 0 {
		return DefaultFinalBackupAttempts
	}
	return r.FinalBackupAttempts
}
