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
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// EventReason is the reason of an event. An event that explains a
// condition's trouble carries the condition's reason (the API package's
// XxxReason); the others name what the controller did, in CamelCase.
type EventReason string

// Eventf records an event about regarding, with related (nil for none) as
// the object it concerns. A nil recorder records nothing, so a Reconciler a
// test builds without one still runs.
func Eventf(rec recorder.EventRecorder, regarding, related runtime.Object, eventType string, reason EventReason,
	action, note string, args ...any) {
	if rec == nil {
		return
	}
	if v := reflect.ValueOf(related); related != nil && v.Kind() == reflect.Pointer && v.IsNil() {
		related = nil // a typed nil pointer would be taken for an object
	}
	rec.Eventf(regarding, related, eventType, string(reason), action, note, args...)
}

// TroubleStarts is the event policy of both controllers: a warning goes out
// when trouble starts, not on every retry. conditions are the ones the pass
// read, before it changed any; the trouble is new when condType does not
// already carry reason.
func TroubleStarts(conditions []metav1.Condition, condType, reason string) bool {
	c := meta.FindStatusCondition(conditions, condType)
	return c == nil || c.Reason != reason
}
