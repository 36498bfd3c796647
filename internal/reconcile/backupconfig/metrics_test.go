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
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// TestRecordFreshness checks the per-object series the
// BackupConfigBackupOverdue alert reads: the last success, and the first
// schedule time after it, when a newer backup is due; no due time without a
// schedule or while suspended, and neither series once the BackupConfig is
// being deleted.
func TestRecordFreshness(t *testing.T) {
	g := NewWithT(t)
	sched, err := parseSchedule("0 3 * * *")
	g.Expect(err).NotTo(HaveOccurred())
	created := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	succeeded := time.Date(2026, 1, 2, 3, 0, 40, 0, time.UTC)
	key := types.NamespacedName{Namespace: "metrics", Name: "nightly"}
	newScope := func(lastSuccess *time.Time) *scope {
		bc := &backupv1alpha1.BackupConfig{ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name, CreationTimestamp: metav1.NewTime(created)}}
		if lastSuccess != nil {
			bc.Status.LastSuccessfulBackupTime = &metav1.Time{Time: *lastSuccess}
		}
		return &scope{bc: bc, key: key, schedule: sched}
	}
	due := func() float64 { return testutil.ToFloat64(backupDue.WithLabelValues(key.Namespace, key.Name)) }

	s := newScope(nil)
	recordFreshness(s)
	g.Expect(due()).To(Equal(float64(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC).Unix())), "due at the first slot after creation")

	s = newScope(&succeeded)
	recordFreshness(s)
	g.Expect(testutil.ToFloat64(lastSuccess.WithLabelValues(key.Namespace, key.Name))).To(Equal(float64(succeeded.Unix())))
	g.Expect(due()).To(Equal(float64(time.Date(2026, 1, 3, 3, 0, 0, 0, time.UTC).Unix())), "due at the first slot after the success")

	s.bc.Spec.Suspend = true
	recordFreshness(s)
	g.Expect(backupDue.DeleteLabelValues(key.Namespace, key.Name)).To(BeFalse(), "nothing is due while suspended")

	s.bc.Spec.Suspend = false
	s.schedule = nil
	recordFreshness(s)
	g.Expect(backupDue.DeleteLabelValues(key.Namespace, key.Name)).To(BeFalse(), "nothing is due without a schedule")

	// Quiet for a Restore: the gauge says since when, 0 once it ends.
	waiting := func() float64 {
		return testutil.ToFloat64(waitingForRestoreSince.WithLabelValues(key.Namespace, key.Name))
	}
	g.Expect(waiting()).To(BeZero(), "not quiet for a Restore")
	restoreStarted := time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
	s.readiness.waitingForRestore, s.readiness.waitingSince = "web-restore", restoreStarted
	recordFreshness(s)
	g.Expect(waiting()).To(Equal(float64(restoreStarted.Unix())), "quiet since the Restore started")
	s.readiness.waitingForRestore, s.readiness.waitingSince = "", time.Time{}
	recordFreshness(s)
	g.Expect(waiting()).To(BeZero(), "the quiet period ends with the Restore")

	s = newScope(&succeeded)
	recordFreshness(s)
	s.bc.DeletionTimestamp = &metav1.Time{Time: succeeded}
	recordFreshness(s)
	g.Expect(lastSuccess.DeleteLabelValues(key.Namespace, key.Name)).To(BeFalse(), "a BackupConfig being deleted drops its series")
	g.Expect(backupDue.DeleteLabelValues(key.Namespace, key.Name)).To(BeFalse(), "a BackupConfig being deleted drops its series")
	g.Expect(waitingForRestoreSince.DeleteLabelValues(key.Namespace, key.Name)).To(BeFalse(), "a BackupConfig being deleted drops its series")
}

// TestMaxBackupAge checks the series BackupConfigNoRecentBackup reads, from
// the spec's words: with a schedule, twice the longest wait between two of
// its times (worked out here by hand from the calendar); without one, a day
// while the MyApp's spec has no successful backup, and no series while it
// has one, however old; none while suspended or without a MyApp; and a
// pass that ended before it read the MyApp changes nothing.
func TestMaxBackupAge(t *testing.T) {
	g := NewWithT(t)
	key := types.NamespacedName{Namespace: "metrics", Name: "max-age"}
	createdAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	age := func() time.Duration {
		seconds := testutil.ToFloat64(maxBackupAge.WithLabelValues(key.Namespace, key.Name))
		return time.Duration(seconds * float64(time.Second))
	}
	exists := func() bool {
		// Deleting reports whether it was there; put nothing back.
		return maxBackupAge.DeleteLabelValues(key.Namespace, key.Name)
	}
	app := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "app-uid", Generation: 3}}
	backedUp := backupv1alpha1.BackupConfigStatus{ObservedAppUID: "app-uid", ObservedAppGeneration: 3,
		LastBackup: &backupv1alpha1.BackupStatus{Trigger: backupv1alpha1.TriggerAppChange, Phase: backupv1alpha1.BackupSucceeded}}
	newScope := func(schedule string, status backupv1alpha1.BackupConfigStatus, app *appsv1alpha1.MyApp) *scope {
		bc := &backupv1alpha1.BackupConfig{ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name, CreationTimestamp: metav1.NewTime(createdAt)}}
		bc.Spec.Schedule, bc.Status = schedule, status
		s := &scope{bc: bc, key: key, app: app}
		if schedule != "" {
			sched, err := parseSchedule(schedule)
			g.Expect(err).NotTo(HaveOccurred())
			s.schedule = sched
		}
		return s
	}
	day := 24 * time.Hour
	for _, tt := range []struct {
		schedule string
		want     time.Duration
	}{
		{"0 3 * * *", 2 * day},
		{"*/5 * * * *", 10 * time.Minute},
		{"0 3 * * 1-5", 2 * 3 * day},               // Friday 03:00 to Monday 03:00
		{"* * * * 1-5", 2 * (2*day + time.Minute)}, // Friday 23:59 to Monday 00:00
		{"0 0 1 * *", 2 * 31 * day},                // the longest month
		{"0 0 29 2 *", 2 * (4*365 + 1) * day},      // one leap day to the next
		{"30 4 1 1 *", 2 * 366 * day},              // a year with a leap day
	} {
		recordFreshness(newScope(tt.schedule, backedUp, app))
		got := age()
		g.Expect(got).To(Equal(tt.want), "schedule %q", tt.schedule)
	}
	g.Expect(testutil.ToFloat64(created.WithLabelValues(key.Namespace, key.Name))).To(Equal(float64(createdAt.Unix())))

	// Without a schedule: backed up on change only.
	recordFreshness(newScope("", backedUp, app))
	g.Expect(exists()).To(BeFalse(), "the MyApp is as last backed up: no backup is owed, however old")
	changed := app.DeepCopy()
	changed.Generation = 4
	recordFreshness(newScope("", backedUp, changed))
	got := age()
	g.Expect(got).To(Equal(day), "a change waits for its backup")
	recreated := app.DeepCopy()
	recreated.UID = "other-uid"
	recordFreshness(newScope("", backedUp, recreated))
	got = age()
	g.Expect(got).To(Equal(day), "a MyApp of the same name, created again, has no backup")
	failed := *backedUp.DeepCopy()
	failed.LastBackup.Phase = backupv1alpha1.BackupFailed
	recordFreshness(newScope("", failed, app))
	got = age()
	g.Expect(got).To(Equal(day), "the backup of the change failed")
	// A pass that ended before it read the MyApp leaves the series as it was.
	recordFreshness(newScope("", backedUp, nil))
	got = age()
	g.Expect(got).To(Equal(day), "nothing learned, nothing changed")
	missing := newScope("", backedUp, nil)
	missing.readiness.appMissing = true
	recordFreshness(missing)
	g.Expect(exists()).To(BeFalse(), "no MyApp, nothing owed")
	off := newScope("", failed, app)
	off.bc.Spec.BackupOnChange = ptr.To(false)
	recordFreshness(off)
	g.Expect(exists()).To(BeFalse(), "no trigger at all")
	suspended := newScope("0 3 * * *", backedUp, app)
	suspended.bc.Spec.Suspend = true
	recordFreshness(suspended)
	g.Expect(exists()).To(BeFalse(), "backups stopped on purpose")
}
