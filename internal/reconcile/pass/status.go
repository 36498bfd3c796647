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
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// This file holds the status rules every kind keeps the same: the backoff
// a failing object sees, how failures in a row are counted, the kstatus
// conditions (Reconciling, Stalled) with what a suspended object reports,
// how a condition is set, and the backup service's reasons.
// Each kind decides its own causes; the rules that turn them into status
// live here, once.

// BaseRetryDelay is the first delay of RateLimiter's per-object backoff.
const BaseRetryDelay = 5 * time.Millisecond

// BackoffDelay is when RateLimiter brings an object back after one more
// failure, failures in a row having come before it: BaseRetryDelay
// doubled per failure, at most maxDelay. A status that says when the next
// attempt comes (status.*Failures.nextRetryTime) reads it from here.
func BackoffDelay(failures int32, maxDelay time.Duration) time.Duration {
	d := BaseRetryDelay
	for i := int32(0); i < failures && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// Failures is the failures-in-a-row status both kinds keep
// (status.dnsFailures of a MyApp, status.backupFailures of a
// BackupConfig). Their API types have the same fields, so a pointer to
// either converts to a *Failures and back.
type Failures struct {
	// Count is the number of attempts that failed in a row.
	Count int32 `json:"count"`
	// LastFailureTime is when the last attempt failed.
	LastFailureTime metav1.Time `json:"lastFailureTime"`
	// NextRetryTime is when the operator tries again; nil when no retry is
	// planned.
	NextRetryTime *metav1.Time `json:"nextRetryTime,omitempty"`
}

// CountFailure returns prev with one more failure, at now, and the next
// attempt at next (zero when none is planned). Times are kept to the
// second the API stores; the next attempt is rounded up, so that a pass
// before it never reads as after it (BeforeRetry).
func CountFailure(prev *Failures, now, next time.Time) *Failures {
	f := &Failures{Count: 1, LastFailureTime: metav1.NewTime(now.Truncate(time.Second))}
	if prev != nil {
		f.Count = prev.Count + 1
	}
	if !next.IsZero() {
		if rounded := next.Truncate(time.Second); rounded.Before(next) {
			next = rounded.Add(time.Second)
		}
		f.NextRetryTime = &metav1.Time{Time: next}
	}
	return f
}

// BeforeRetry reports whether a failure at now comes before the retry f
// planned, or after a failure no retry was planned for: it is not the
// planned retry. A kind whose every status write brings the object back
// at once counts only the planned retries, or each failed pass would write
// the status and start another pass, around the backoff.
func (f *Failures) BeforeRetry(now time.Time) bool {
	return f != nil && (f.NextRetryTime == nil || now.Before(f.NextRetryTime.Time))
}

// The kstatus conditions and the reason a suspended object gives; both API
// packages use the same words.
const (
	ReconcilingCondition = "Reconciling"
	StalledCondition     = "Stalled"
	SuspendedReason      = "Suspended"
)

// Cause is a condition's reason and message.
type Cause struct {
	Reason, Message string
}

// Progress is what a pass concluded about an object, for the kstatus
// conditions.
type Progress struct {
	// Generation is metadata.generation; ActedOn is the generation the pass
	// acted on (ActedGeneration).
	Generation, ActedOn int64
	// Suspended says the pass was a suspended one (ActedGeneration).
	Suspended bool
	// Stalled, when set, is what keeps the object from getting better
	// without a change of spec.
	Stalled *Cause
	// InProgress, when set, is what is under way: a retry, a wait, a
	// running job.
	InProgress *Cause
}

// ActedGeneration is the generation a pass acts on, which
// status.observedGeneration and every condition's observedGeneration
// carry: the object's own, unless the pass is suspended (spec.suspend set,
// the object not being deleted). A suspended pass applies no spec, so
// they stay at observed, the last generation a pass acted on, and kstatus
// (Helm's --wait, Flux) never reads a change made while suspended as
// Current.
func ActedGeneration(generation, observed int64, suspended bool) int64 {
	if suspended {
		return observed
	}
	return generation
}

// SetProgressConditions sets the kstatus conditions from p and reports
// whether the object is stalled. Both have abnormal-true polarity: present
// and True while they apply, absent otherwise, at the generation acted on.
// A suspended object is never Stalled (nothing is judged while suspended);
// while its generation is ahead of the one acted on (the edit that set
// spec.suspend counts too) it is Reconciling with reason Suspended,
// saying which changes wait. Otherwise Stalled wins over Reconciling.
func SetProgressConditions(conditions *[]metav1.Condition, p Progress, now time.Time) bool {
	set := func(condType string, c Cause) {
		meta.SetStatusCondition(conditions, metav1.Condition{Type: condType, Status: metav1.ConditionTrue,
			Reason: c.Reason, Message: c.Message, ObservedGeneration: p.ActedOn, LastTransitionTime: metav1.NewTime(now)})
	}
	switch {
	case p.Suspended:
		meta.RemoveStatusCondition(conditions, StalledCondition)
		if p.Generation > p.ActedOn {
			set(ReconcilingCondition, Cause{Reason: SuspendedReason, Message: SuspendedMessage(p.ActedOn)})
		} else {
			meta.RemoveStatusCondition(conditions, ReconcilingCondition)
		}
		return false
	case p.Stalled != nil:
		meta.RemoveStatusCondition(conditions, ReconcilingCondition)
		set(StalledCondition, *p.Stalled)
		return true
	case p.InProgress != nil:
		set(ReconcilingCondition, *p.InProgress)
	default:
		meta.RemoveStatusCondition(conditions, ReconcilingCondition)
	}
	meta.RemoveStatusCondition(conditions, StalledCondition)
	return false
}

// SuspendedMessage says which spec changes a suspended object has not
// applied: those since the generation it last acted on.
func SuspendedMessage(actedOn int64) string {
	if actedOn == 0 {
		return "spec.suspend is set: the spec has not been applied yet, and is not until spec.suspend is false."
	}
	return fmt.Sprintf("spec.suspend is set: the spec changes made since generation %d are not applied until "+
		"spec.suspend is false.", actedOn)
}

// SetCondition sets a condition at generation, the one the pass acted on,
// keeping its transition time while its status stays the same; a condition
// whose status changes takes now.
func SetCondition(conditions *[]metav1.Condition, condType string, status metav1.ConditionStatus,
	reason, message string, generation int64, now time.Time) {
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
	})
}

// StatusTime is t as status stores it: metav1.Time keeps whole seconds
// only, so a time with a fraction would never equal the one read back, and
// every pass would write an unchanged status again.
func StatusTime(t time.Time) *metav1.Time {
	return &metav1.Time{Time: t.UTC().Truncate(time.Second)}
}

// Capitalize makes a clause the start of a sentence, for a message built
// from an error's text.
func Capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// BackupServiceReasons are the Ready reasons a BackupConfig and a Restore
// give the backup service's failures: the same service, in the same words.
var BackupServiceReasons = external.Reasons{
	Unauthorized: backupv1alpha1.BackupServiceUnauthorizedReason,
	Throttled:    backupv1alpha1.BackupServiceUnavailableReason,
	Unavailable:  backupv1alpha1.BackupServiceUnavailableReason,
	Rejected:     backupv1alpha1.BackupServiceErrorReason,
	Other:        backupv1alpha1.BackupServiceErrorReason,
}

// BackupServiceCause is what the backup provider's client says of err, a
// failure of one of its calls (backup.Explainer): the cause and the
// endpoint, and the way out where a setting is it, in words that stay the
// same while the cause does. "" when the client says nothing of it; the
// reason (BackupServiceReasons) then words it by kind.
func BackupServiceCause(c backup.Client, err error) string {
	explainer, ok := c.(backup.Explainer)
	if !ok || err == nil {
		return ""
	}
	cause, _ := explainer.Explain(err)
	return cause
}
