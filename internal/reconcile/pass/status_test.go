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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
)

// TestBackoffDelayIsTheRateLimitersDelay: the delay a status announces is
// the one RateLimiter waits, after any number of failures in a row.
func TestBackoffDelayIsTheRateLimitersDelay(t *testing.T) {
	for _, maxDelay := range []time.Duration{30 * time.Second, 1000 * time.Second} {
		limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](BaseRetryDelay, maxDelay)
		item := ctrl.Request{}
		for failures := range int32(40) {
			if got, want := BackoffDelay(failures, maxDelay), limiter.When(item); got != want {
				t.Errorf("after %d failures (cap %s): BackoffDelay says %s, the rate limiter waits %s", failures, maxDelay, got, want)
			}
		}
	}
}

func TestCountFailure(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 3, 1, 3, 0, 0, 400_000_000, time.UTC)
	first := CountFailure(nil, now, now.Add(1500*time.Millisecond))
	g.Expect(first.Count).To(Equal(int32(1)))
	g.Expect(first.LastFailureTime.Time).To(Equal(now.Truncate(time.Second)), "the API keeps seconds")
	g.Expect(first.NextRetryTime.Time).To(Equal(now.Truncate(time.Second).Add(2*time.Second)),
		"the next attempt is rounded up, never before the retry")
	g.Expect(first.BeforeRetry(now.Add(time.Second))).To(BeTrue())
	g.Expect(first.BeforeRetry(now.Add(1600 * time.Millisecond))).To(BeFalse())

	second := CountFailure(first, now.Add(2*time.Second), time.Time{})
	g.Expect(second.Count).To(Equal(int32(2)))
	g.Expect(second.NextRetryTime).To(BeNil(), "no retry planned")
	g.Expect(second.BeforeRetry(now.Add(time.Hour))).To(BeTrue(), "a failure no retry was planned for is not the planned retry")
	var none *Failures
	g.Expect(none.BeforeRetry(now)).To(BeFalse(), "the first failure always counts")
}

// kstatusOf computes kstatus for an object with the given generation,
// observedGeneration and conditions.
func kstatusOf(t *testing.T, generation, observed int64, conditions []metav1.Condition) status.Status {
	t.Helper()
	conds := make([]any, 0, len(conditions))
	for _, c := range conditions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		if err != nil {
			t.Fatal(err)
		}
		conds = append(conds, m)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.myapp.dev/v1", "kind": "Thing",
		"metadata": map[string]any{"name": "x", "generation": generation},
		"status":   map[string]any{"observedGeneration": observed, "conditions": conds},
	}}
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}

// TestASuspendedObjectNeverReportsAnEditAsApplied is the G7 rule (audit 3):
// a suspended pass keeps status.observedGeneration and every condition at
// the last generation a pass acted on, and says Reconciling with reason
// Suspended while the generation is ahead of it, so kstatus reads an edit
// made while suspended as InProgress, never Current. Not suspended, a
// stalled object is Failed and one in progress InProgress, both at the
// new generation.
func TestASuspendedObjectNeverReportsAnEditAsApplied(t *testing.T) {
	now := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	stalled := &Cause{Reason: "InvalidSchedule", Message: "no"}
	running := &Cause{Reason: "BackupRunning", Message: "a backup runs"}
	for _, tt := range []struct {
		name                 string
		generation, observed int64
		suspended            bool
		stalled, inProgress  *Cause
		wantReconciling      string
		wantStalled          string
		wantKstatus          status.Status
	}{
		{name: "suspended, an edit waits", generation: 5, observed: 3, suspended: true, stalled: stalled,
			wantReconciling: SuspendedReason, wantKstatus: status.InProgressStatus},
		{name: "suspended by the last edit", generation: 4, observed: 3, suspended: true,
			wantReconciling: SuspendedReason, wantKstatus: status.InProgressStatus},
		{name: "created suspended", generation: 1, observed: 0, suspended: true,
			wantReconciling: SuspendedReason, wantKstatus: status.InProgressStatus},
		{name: "suspended, nothing waits", generation: 3, observed: 3, suspended: true, inProgress: running,
			wantKstatus: status.CurrentStatus},
		{name: "stalled", generation: 5, observed: 3, stalled: stalled, inProgress: running,
			wantStalled: "InvalidSchedule", wantKstatus: status.FailedStatus},
		{name: "in progress", generation: 5, observed: 3, inProgress: running,
			wantReconciling: "BackupRunning", wantKstatus: status.InProgressStatus},
		{name: "at rest", generation: 5, observed: 3, wantKstatus: status.CurrentStatus},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			acted := ActedGeneration(tt.generation, tt.observed, tt.suspended)
			conditions := []metav1.Condition{
				{Type: ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Old", ObservedGeneration: tt.observed},
				{Type: StalledCondition, Status: metav1.ConditionTrue, Reason: "Old", ObservedGeneration: tt.observed},
			}
			gotStalled := SetProgressConditions(&conditions, Progress{Generation: tt.generation, ActedOn: acted,
				Suspended: tt.suspended, Stalled: tt.stalled, InProgress: tt.inProgress}, now)
			g.Expect(gotStalled).To(Equal(tt.wantStalled != ""))
			for condType, want := range map[string]string{ReconcilingCondition: tt.wantReconciling, StalledCondition: tt.wantStalled} {
				c := meta.FindStatusCondition(conditions, condType)
				if want == "" {
					g.Expect(c).To(BeNil(), "%s is absent", condType)
					continue
				}
				g.Expect(c).NotTo(BeNil(), "%s is set", condType)
				g.Expect(c.Reason).To(Equal(want))
				g.Expect(c.ObservedGeneration).To(Equal(acted), "%s carries the generation acted on", condType)
			}
			if tt.suspended {
				g.Expect(acted).To(Equal(tt.observed), "a suspended pass acts on no new generation")
				if c := meta.FindStatusCondition(conditions, ReconcilingCondition); c != nil {
					g.Expect(c.Message).To(ContainSubstring("spec.suspend is false"))
				}
			}
			g.Expect(kstatusOf(t, tt.generation, acted, conditions)).To(Equal(tt.wantKstatus))
		})
	}
}
