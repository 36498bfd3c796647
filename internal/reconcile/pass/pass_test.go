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
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ran records which phases of a pass ran.
type ran struct{ names []string }

func phase(name string, result ctrl.Result, err error) Phase[*ran] {
	return func(_ context.Context, r *ran) (ctrl.Result, error) {
		r.names = append(r.names, name)
		return result, err
	}
}

func after(d time.Duration) ctrl.Result { return ctrl.Result{RequeueAfter: d} }

func TestRun(t *testing.T) {
	failed := errors.New("service unreachable")
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "myapps"}, "web", errors.New("changed"))
	terminal := reconcile.TerminalError(errors.New("spec.schedule is not a cron expression"))

	tests := []struct {
		name         string
		phases       []Phase[*ran]
		wantRan      []string
		wantResult   ctrl.Result
		wantErr      error
		wantComplete bool
	}{{
		name:         "every phase runs and the soonest requeue wins",
		phases:       []Phase[*ran]{phase("a", after(time.Minute), nil), phase("b", ctrl.Result{}, nil), phase("c", after(time.Second), nil)},
		wantRan:      []string{"a", "b", "c"},
		wantResult:   after(time.Second),
		wantComplete: true,
	}, {
		name:    "an error ends the pass for the controller's backoff",
		phases:  []Phase[*ran]{phase("a", after(time.Second), nil), phase("b", ctrl.Result{}, failed), phase("c", ctrl.Result{}, nil)},
		wantRan: []string{"a", "b"},
		wantErr: failed,
	}, {
		name: "a wait ends the pass and only the wait brings it back",
		phases: []Phase[*ran]{phase("a", after(time.Second), nil), phase("b", ctrl.Result{}, Wait(time.Minute, failed)),
			phase("c", ctrl.Result{}, nil)},
		wantRan:    []string{"a", "b"},
		wantResult: after(time.Minute),
	}, {
		name: "a not-blocking phase's wait is held until the later phases ran",
		phases: []Phase[*ran]{NotBlocking(phase("a", ctrl.Result{}, Wait(time.Minute, failed))),
			phase("b", after(time.Second), nil)},
		wantRan:    []string{"a", "b"},
		wantResult: after(time.Minute),
	}, {
		name:    "a not-blocking phase's error is returned after the later phases ran",
		phases:  []Phase[*ran]{NotBlocking(phase("a", ctrl.Result{}, failed)), phase("b", ctrl.Result{}, nil)},
		wantRan: []string{"a", "b"},
		wantErr: failed,
	}, {
		name:    "a terminal error is returned when nothing asks to come back",
		phases:  []Phase[*ran]{NotBlocking(phase("a", ctrl.Result{}, terminal)), phase("b", ctrl.Result{}, nil)},
		wantRan: []string{"a", "b"},
		wantErr: terminal,
	}, {
		name:       "a terminal error gives way to a requeue, which it would drop",
		phases:     []Phase[*ran]{NotBlocking(phase("a", ctrl.Result{}, terminal)), phase("b", after(10*time.Second), nil)},
		wantRan:    []string{"a", "b"},
		wantResult: after(10 * time.Second),
	}, {
		name:    "a conflict after a held wait keeps the wait",
		phases:  []Phase[*ran]{NotBlocking(phase("a", ctrl.Result{}, Wait(time.Minute, failed))), phase("b", ctrl.Result{}, conflict), phase("c", ctrl.Result{}, failed)},
		wantRan: []string{"a", "b"},
		// The conflict ends the pass; the wait asked for longer.
		wantResult: after(time.Minute),
	}, {
		name:    "a wait without a duration is the controller's backoff",
		phases:  []Phase[*ran]{phase("a", ctrl.Result{}, Wait(0, failed))},
		wantRan: []string{"a"},
		wantErr: failed,
	}, {
		name:    "of joined errors a plain one decides",
		phases:  []Phase[*ran]{phase("a", ctrl.Result{}, errors.Join(Wait(time.Minute, failed), failed))},
		wantRan: []string{"a"},
		wantErr: failed,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := &ran{}
			out := Run(t.Context(), r, tc.phases...)
			g.Expect(r.names).To(Equal(tc.wantRan))
			g.Expect(out.Result).To(Equal(tc.wantResult))
			if tc.wantErr == nil {
				g.Expect(out.Err).NotTo(HaveOccurred())
			} else {
				g.Expect(out.Err).To(MatchError(tc.wantErr))
			}
			g.Expect(out.Complete).To(Equal(tc.wantComplete))
		})
	}
}

func TestRunTurnsAConflictIntoAQuickRetry(t *testing.T) {
	g := NewWithT(t)
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "myapps"}, "web", errors.New("changed"))
	out := Run(t.Context(), &ran{}, phase("a", ctrl.Result{}, fmtWrap(conflict)))
	g.Expect(out.Err).NotTo(HaveOccurred())
	g.Expect(out.Complete).To(BeFalse())
	g.Expect(out.Result.RequeueAfter).To(BeNumerically(">=", ConflictRetryDelay))
	g.Expect(out.Result.RequeueAfter).To(BeNumerically("<=", time.Duration(float64(ConflictRetryDelay)*(1+JitterFactor))))
}

func fmtWrap(err error) error { return errors.Join(err) }

func TestTroubleStarts(t *testing.T) {
	g := NewWithT(t)
	conds := []metav1.Condition{{Type: "Ready", Reason: "ServiceUnavailable"}}
	g.Expect(TroubleStarts(conds, "Ready", "ServiceUnavailable")).To(BeFalse())
	g.Expect(TroubleStarts(conds, "Ready", "Throttled")).To(BeTrue())
	g.Expect(TroubleStarts(nil, "Ready", "Throttled")).To(BeTrue())
}

func TestSoonest(t *testing.T) {
	g := NewWithT(t)
	none, short, long := ctrl.Result{}, ctrl.Result{RequeueAfter: time.Second}, ctrl.Result{RequeueAfter: time.Hour}
	g.Expect(Soonest(none, none)).To(Equal(none))
	g.Expect(Soonest(none, long)).To(Equal(long))
	g.Expect(Soonest(long, none)).To(Equal(long))
	g.Expect(Soonest(long, short)).To(Equal(short))
	g.Expect(Soonest(short, long)).To(Equal(short))
}

func TestSetDefault(t *testing.T) {
	g := NewWithT(t)
	unset, negative, set := time.Duration(0), -time.Second, 3*time.Second
	SetDefault(&unset, time.Minute)
	SetDefault(&negative, time.Minute)
	SetDefault(&set, time.Minute)
	g.Expect([]time.Duration{unset, negative, set}).To(Equal([]time.Duration{time.Minute, time.Minute, 3 * time.Second}))
}
