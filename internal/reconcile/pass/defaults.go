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

package pass

import (
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// The defaults every controller gives the tunables of Base.
const (
	// DefaultReconcileTimeout bounds one reconcile.
	DefaultReconcileTimeout = time.Minute
	// DefaultMaxRetryDelay caps the backoff of an object whose passes keep
	// failing (RateLimiter).
	DefaultMaxRetryDelay = 30 * time.Second
)

// Base is what every controller's Reconciler holds, embedded: the clients,
// the clock, the tunables every controller has, and the writes its passes
// made that the cache may not show yet. The manager sets the exported
// fields; zero values mean their defaults (SetDefaults).
type Base struct {
	// Client reads objects from the manager's cache and writes them.
	// Defaults to the manager's client.
	Client client.Client
	// APIReader reads from the API server, bypassing the cache, where a
	// stale read could make a decision the controller cannot take back;
	// each controller's Reconciler says where. Defaults to the manager's API
	// reader; nil means Client.
	APIReader client.Reader
	// Recorder records events. Defaults to the manager's recorder named
	// after the controller; nil turns events off.
	Recorder recorder.EventRecorder
	// Clock tells the time of the status and of what is due. Defaults to
	// the real clock; tests move a fake one.
	Clock clock.PassiveClock
	// ReconcileTimeout bounds one reconcile's calls to the API server and
	// to external services, so a hung service cannot hold a worker; the
	// status is still written after it. Defaults to
	// DefaultReconcileTimeout.
	ReconcileTimeout time.Duration
	// MaxConcurrentReconciles is how many objects are reconciled at once.
	// Each controller gives its own default.
	MaxConcurrentReconciles int
	// MaxRetryDelay caps the backoff between failed passes of one object.
	// Defaults to DefaultMaxRetryDelay.
	MaxRetryDelay time.Duration

	// writes is the resourceVersion each object's last writing pass (its
	// finalizer or its status) started from, until the cache shows a newer
	// one: Begin holds back a pass on a copy behind that write.
	writes OwnWrites
}

// FromManager fills what a Reconciler takes from its manager and was not
// given: the cached client, the API reader that bypasses the cache, and an
// event recorder named after the controller.
func (b *Base) FromManager(mgr ctrl.Manager, controllerName string) {
	if b.Client == nil {
		b.Client = mgr.GetClient()
	}
	if b.APIReader == nil {
		b.APIReader = mgr.GetAPIReader()
	}
	if b.Recorder == nil {
		b.Recorder = mgr.GetEventRecorder(controllerName + "-controller")
	}
}

// SetDefaults gives every field of Base left at zero (or set below zero)
// its default, maxConcurrentReconciles being the controller's own. Each
// controller's setDefaults calls it, so the code reads the fields and each
// default is stated once.
func (b *Base) SetDefaults(maxConcurrentReconciles int) {
	if b.APIReader == nil {
		b.APIReader = b.Client
	}
	if b.Clock == nil {
		b.Clock = clock.RealClock{}
	}
	SetDefault(&b.ReconcileTimeout, DefaultReconcileTimeout)
	SetDefault(&b.MaxConcurrentReconciles, maxConcurrentReconciles)
	SetDefault(&b.MaxRetryDelay, DefaultMaxRetryDelay)
	b.writes.MaxLag = MaxCacheLag
}

// ControllerOptions are the options of the controller's builder that Base
// sets: how many objects at once, and the backoff of failed passes.
func (b *Base) ControllerOptions() controller.Options {
	return controller.Options{
		MaxConcurrentReconciles: b.MaxConcurrentReconciles,
		RateLimiter:             RateLimiter(b.MaxRetryDelay),
	}
}

// SetDefault sets a tunable to def when it is unset (zero) or unusable
// (negative). Every controller's setDefaults is a list of these, so each
// default is stated once and the code reads the fields.
func SetDefault[T int | int32 | time.Duration](field *T, def T) {
	if *field <= 0 {
		*field = def
	}
}
