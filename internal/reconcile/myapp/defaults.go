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
	"k8s.io/utils/clock"
)

// setDefaults gives every tunable left at zero (or set below zero) its
// default, as the BackupConfig controller does: SetupWithManager calls it,
// so the code reads the fields and each default is stated once.
func (r *Reconciler) setDefaults() {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.PendingPollInterval <= 0 {
		r.PendingPollInterval = DefaultPendingPollInterval
	}
	if r.DriftCheckInterval <= 0 {
		r.DriftCheckInterval = DefaultDriftCheckInterval
	}
	if r.RecordTTL <= 0 {
		r.RecordTTL = DefaultRecordTTL
	}
	if r.ReconcileTimeout <= 0 {
		r.ReconcileTimeout = DefaultReconcileTimeout
	}
	if r.MaxConcurrentReconciles <= 0 {
		r.MaxConcurrentReconciles = DefaultMaxConcurrentReconciles
	}
	if r.MaxRetryDelay <= 0 {
		r.MaxRetryDelay = DefaultMaxRetryDelay
	}
}
