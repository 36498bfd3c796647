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
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// Default intervals. Each is jittered by up to pass.JitterFactor, so many
// MyApps created together do not poll the DNS service in lockstep.
const (
	// DefaultPendingPollInterval is how often a PENDING record is polled
	// until the service reports it ACTIVE.
	DefaultPendingPollInterval = 5 * time.Second
	// DefaultDriftCheckInterval is how often an ACTIVE record is checked for
	// changes made outside the operator.
	DefaultDriftCheckInterval = 5 * time.Minute
	// DefaultRecordTTL is the TTL of the records the operator writes.
	DefaultRecordTTL int32 = 300
	// DefaultMaxConcurrentReconciles lets a slow DNS answer for one MyApp
	// not delay the others.
	DefaultMaxConcurrentReconciles = 4
)

// setDefaults gives every tunable left at zero (or set below zero) its
// default, as the other controllers do: SetupWithManager calls it, so the
// code reads the fields and each default is stated once.
func (r *Reconciler) setDefaults() {
	r.SetDefaults(DefaultMaxConcurrentReconciles)
	pass.SetDefault(&r.PendingPollInterval, DefaultPendingPollInterval)
	pass.SetDefault(&r.DriftCheckInterval, DefaultDriftCheckInterval)
	pass.SetDefault(&r.RecordTTL, DefaultRecordTTL)
}
