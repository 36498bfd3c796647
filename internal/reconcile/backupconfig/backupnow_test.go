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
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// annotate sets one annotation on bc with a merge patch.
func (e *testEnv) annotate(bc *backupv1alpha1.BackupConfig, key, value string) {
	e.t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + key + `":"` + value + `"}}}`)
	NewWithT(e.t).Expect(e.c.Patch(e.t.Context(), bc, client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
}

// TestBackupNowStartsOneManualBackupPerValue: each new value of
// backup.myapp.dev/backup-now starts one on-demand backup (trigger Manual,
// keyed by the value), acknowledged in status.lastHandledBackupNow; the
// same value never starts a second; manual backups count for retention.
// reconcile.myapp.dev/requested-at is acknowledged in
// status.lastHandledReconcileAt.
func TestBackupNowStartsOneManualBackupPerValue(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	e.startManager()
	bc := e.newBackupConfig("web", "web", fixtures.WithKeepLast(2))
	e.create(e.newApp("web"), bc)
	first := e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)

	e.annotate(bc, backupv1alpha1.BackupNowAnnotation, "2026-11-25T15:00:00Z")
	manual := e.waitForBackupAfter(bc, first, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerManual)
	g.Expect(manual.Status.LastHandledBackupNow).To(Equal("2026-11-25T15:00:00Z"))
	g.Expect(e.ownBackups(bc)).To(HaveLen(2))
	g.Expect(e.ownBackups(bc)[1].IdempotencyKey).To(ContainSubstring("/manual/"))

	// The same value again (another annotation wakes the controller): no
	// second backup.
	e.poke(bc)
	g.Consistently(func() int { return len(e.ownBackups(bc)) }, consistently, tick).Should(Equal(2))

	// A new value: a new backup, and retention keeps the newest two.
	e.annotate(bc, backupv1alpha1.BackupNowAnnotation, "2026-11-25T15:05:00Z")
	second := e.waitForBackupAfter(bc, manual, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerManual)
	g.Expect(second.Status.LastHandledBackupNow).To(Equal("2026-11-25T15:05:00Z"))
	g.Eventually(func() []string { return backupIDs(e.ownBackups(bc)) }, eventually, tick).
		Should(Equal([]string{manual.Status.LastBackup.ID, second.Status.LastBackup.ID}),
			"the manual backups count for keepLast: the oldest backup is pruned")

	e.annotate(bc, backupv1alpha1.ReconcileRequestAnnotation, "1764082800")
	g.Eventually(func(g Gomega) string {
		return e.fetchBackupConfig(bc)(g).Status.LastHandledReconcileAt
	}, eventually, tick).Should(Equal("1764082800"))
}

// TestABackupNowBackupDoesNotEndTheRetriesOfAFailedChange: an on-change
// backup fails, and a backup-now backup started while the change waits for
// its retry fails too. The change is still owed: its retry follows, and
// the generation gets a SUCCEEDED backup without another edit.
func TestABackupNowBackupDoesNotEndTheRetriesOfAFailedChange(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	e.startManager(func(r *Reconciler) { r.FailedBackupRetryDelay = 3 * time.Second })
	e.sim.FailBackups("disk full", 2)
	bc := e.newBackupConfig("web", "web")
	e.create(e.newApp("web"), bc)
	failed := e.waitForLastBackup(bc, backupv1alpha1.BackupFailed, backupv1alpha1.TriggerAppChange)

	e.annotate(bc, backupv1alpha1.BackupNowAnnotation, "2026-11-25T15:00:00Z")
	e.waitForBackupAfter(bc, failed, backupv1alpha1.BackupFailed, backupv1alpha1.TriggerManual)
	current := e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	g.Expect(current.Status.LastBackup.Attempt).To(BeNumerically(">=", 2), "the change's retry, not a new change")
}
