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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// SetDefault sets a tunable to def when it is unset (zero) or unusable
// (negative). Both controllers' setDefaults are lists of these, so each
// default is stated once and the code reads the fields.
func SetDefault[T int | int32 | time.Duration](field *T, def T) {
	if *field <= 0 {
		*field = def
	}
}

// FromManager fills what a Reconciler takes from its manager and was not
// given: the cached client, the API reader that bypasses the cache, and an
// event recorder named after the controller.
func FromManager(mgr ctrl.Manager, controller string, c *client.Client, apiReader *client.Reader,
	rec *recorder.EventRecorder) {
	if *c == nil {
		*c = mgr.GetClient()
	}
	if *apiReader == nil {
		*apiReader = mgr.GetAPIReader()
	}
	if *rec == nil {
		*rec = mgr.GetEventRecorder(controller + "-controller")
	}
}
