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
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileSchedule parses spec.schedule and decides whether a slot is due.
// It starts nothing: reconcileNewBackup decides, once it knows whether a
// backup may be started at all, and moves the schedule on (record.go).
func (r *Reconciler) reconcileSchedule(_ context.Context, s *scope) (ctrl.Result, error) {
	if s.bc.Spec.Schedule == "" {
		s.bc.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	sched, err := parseSchedule(s.bc.Spec.Schedule)
	if err == nil {
		var slot metav1.Time
		slot.Time, s.slotDue, err = dueSlot(sched, s.bc.Status.NextScheduleTime, s.now)
		s.bc.Status.NextScheduleTime = &slot
	}
	if err != nil {
		// No retry can fix a schedule; the spec change that fixes it brings
		// the BackupConfig back. Until then no new backup is started, so a
		// broken spec is noticed rather than half followed. Every other phase
		// still runs: a running backup is still followed, and a MyApp held
		// for a final backup must still be backed up or released, through
		// the documented ways out too: reconcileNormal runs this phase
		// NotBlocking, so pass.Run returns the error once the others ran.
		s.bc.Status.NextScheduleTime = nil
		s.slotDue = false
		s.readiness.invalidSchedule = err.Error()
		if pass.TroubleStarts(s.base.Status.Conditions, backupv1alpha1.ReadyCondition, backupv1alpha1.InvalidScheduleReason) {
			s.event(corev1.EventTypeWarning, eventInvalidSchedule, actionSchedule,
				"spec.schedule %q is not usable: %v", s.bc.Spec.Schedule, err)
		}
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("spec.schedule %q: %w", s.bc.Spec.Schedule, err))
	}
	s.schedule = sched
	return ctrl.Result{}, nil
}

// parseSchedule parses spec.schedule the way Kubernetes CronJobs do (five
// fields or a descriptor such as @daily), but always in UTC: a schedule that
// follows the manager's local time zone would move when the manager moves.
func parseSchedule(spec string) (cron.Schedule, error) {
	switch {
	case strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ="):
		return nil, errors.New("a time zone cannot be set, schedules are evaluated in UTC")
	case strings.HasPrefix(spec, "@every"):
		return nil, errors.New("@every is not supported, use a cron expression")
	}
	sched, err := cron.ParseStandard("CRON_TZ=UTC " + spec)
	if err != nil {
		return nil, err
	}
	return sched, nil
}

// errScheduleNeverFires is returned for expressions such as "0 0 30 2 *"
// that parse but name no time that exists.
var errScheduleNeverFires = errors.New("it names no time that ever comes (such as February 30)")

// dueSlot decides which slot status.nextScheduleTime should hold and whether
// that slot is due now.
//
// The stored slot is kept as long as it is a slot of the current schedule and
// not later than the schedule's next one, so a slot missed while the
// controller was down is still due when it comes back: that gives the one
// catch-up backup, and it is keyed by the stored slot, which a restart cannot
// change. A missing or stale slot (a new schedule) is replaced by the next
// slot after now, so changing the schedule never fires a backup by itself.
func dueSlot(sched cron.Schedule, stored *metav1.Time, now time.Time) (slot time.Time, due bool, err error) {
	upcoming := sched.Next(now)
	if upcoming.IsZero() {
		return time.Time{}, false, errScheduleNeverFires
	}
	if stored == nil {
		return upcoming, false, nil
	}
	storedSlot := stored.UTC()
	if !isSlot(sched, storedSlot) || storedSlot.After(upcoming) {
		return upcoming, false, nil
	}
	return storedSlot, !now.Before(storedSlot), nil
}

// isSlot reports whether the schedule fires at t. Cron slots fall on whole
// minutes, so looking one second back is enough.
func isSlot(sched cron.Schedule, t time.Time) bool {
	return sched.Next(t.Add(-time.Second)).Equal(t)
}
