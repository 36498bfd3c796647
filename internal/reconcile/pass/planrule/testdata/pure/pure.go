// Package pure keeps the planners' rule: the standard library and the
// API's types, and time only as values.
package pure

import (
	"slices"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// Later is a decision over values only.
func Later(now time.Time, states []appsv1alpha1.DNSRecordState) time.Time {
	if slices.Contains(states, appsv1alpha1.DNSRecordActive) {
		return now.Add(time.Minute)
	}
	return now
}
