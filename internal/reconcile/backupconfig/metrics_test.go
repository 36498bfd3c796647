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
