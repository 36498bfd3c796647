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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
)

func TestParseSchedule(t *testing.T) {
	tests := []struct {
		spec    string
		wantErr string
		// wantNext is the first slot after 2025-12-31 23:30 UTC.
		wantNext time.Time
	}{
		{spec: "0 3 * * *", wantNext: time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)},
		{spec: "*/15 * * * 1-5"},
		{spec: "@daily"},
		{spec: "@hourly"},
		{spec: "99 * * * *", wantErr: "above maximum"},
		{spec: "0 3 * *", wantErr: "expected exactly 5 fields"},
		{spec: "CRON_TZ=Europe/Berlin 0 3 * * *", wantErr: "UTC"},
		{spec: "TZ=UTC 0 3 * * *", wantErr: "UTC"},
		{spec: "@every 5m", wantErr: "@every"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			g := NewWithT(t)
			sched, err := parseSchedule(tt.spec)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tt.wantNext.IsZero() {
				return
			}
			// Schedules run in UTC whatever time zone the clock reads in.
			berlin := time.FixedZone("CET", 3600)
			next := sched.Next(time.Date(2026, 1, 1, 0, 30, 0, 0, berlin))
			g.Expect(next.UTC()).To(Equal(tt.wantNext))
		})
	}
}

func TestDueSlot(t *testing.T) {
	hourly, err := parseSchedule("0 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
	at := func(hour, minute int) *metav1.Time {
		return &metav1.Time{Time: time.Date(2026, 3, 1, hour, minute, 0, 0, time.UTC)}
	}
	tests := []struct {
		name     string
		stored   *metav1.Time
		wantSlot *metav1.Time
		wantDue  bool
	}{
		{name: "first time waits for the next slot", stored: nil, wantSlot: at(11, 0)},
		{name: "a future slot is kept", stored: at(11, 0), wantSlot: at(11, 0)},
		{name: "the slot that just came is due", stored: at(10, 0), wantSlot: at(10, 0), wantDue: true},
		{name: "a long missed slot is still due, once", stored: at(2, 0), wantSlot: at(2, 0), wantDue: true},
		{name: "a slot of an older schedule is dropped", stored: at(10, 30), wantSlot: at(11, 0)},
		{name: "a slot beyond the next one is dropped", stored: at(14, 0), wantSlot: at(11, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			slot, due, err := dueSlot(hourly, tt.stored, now)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(slot).To(Equal(tt.wantSlot.Time))
			g.Expect(due).To(Equal(tt.wantDue))
		})
	}

	never, err := parseSchedule("0 0 30 2 *")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = dueSlot(never, nil, now)
	NewWithT(t).Expect(err).To(MatchError(errScheduleNeverFires))
}

// TestAPassWakesJustAfterTheSlotAndExactlyAtARetry: the plan's wake-up
// becomes a requeue just after a slot (never early, jittered so that many
// BackupConfigs on one schedule do not wake at once), exactly at a retry,
// and after the poll interval for a running backup.
func TestAPassWakesJustAfterTheSlotAndExactlyAtARetry(t *testing.T) {
	g := NewWithT(t)
	r := &Reconciler{BackupPollInterval: 10 * time.Second}
	now := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
	s := &scope{now: now}

	result := r.wakeFor(s, backupplan.Wake{Kind: backupplan.WakeSlot, At: now.Add(45 * time.Minute)})
	g.Expect(result.RequeueAfter).To(BeNumerically(">=", 45*time.Minute+scheduleWakeSlack))
	g.Expect(result.RequeueAfter).To(BeNumerically("<=", 45*time.Minute+2*scheduleWakeSlack))
	g.Expect(r.wakeFor(s, backupplan.Wake{Kind: backupplan.WakeRetry, At: now.Add(40 * time.Second)})).
		To(Equal(ctrl.Result{RequeueAfter: 40 * time.Second}))
	poll := r.wakeFor(s, backupplan.Wake{Kind: backupplan.WakePoll})
	g.Expect(poll.RequeueAfter).To(BeNumerically(">=", 10*time.Second))
	g.Expect(poll.RequeueAfter).To(BeNumerically("<=", 12*time.Second))
	g.Expect(r.wakeFor(s, backupplan.Wake{})).To(Equal(ctrl.Result{}))
}
