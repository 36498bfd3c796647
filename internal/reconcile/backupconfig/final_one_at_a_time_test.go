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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// slowFinalBackup is how long a backup runs in
// TestAFinalBackupWaitsForTheFinalBackupOfTheMyAppHeldBefore: long enough
// for the steps below to happen while the first final backup runs.
const slowFinalBackup = 3 * time.Second

// TestAFinalBackupWaitsForTheFinalBackupOfTheMyAppHeldBefore is B12 in
// docs/reliability.md, which family 9 found on a loaded CI machine: a
// BackupConfig takes the final backup of MyApp "old", being deleted; while
// it runs, backupBeforeAppDeletion is turned off (old is released, its
// final backup runs on), the appRef moves to MyApp "web" with the option
// on again, and web is deleted. Web's final backup must wait for old's to
// end (one backup at a time), then be taken, and web released only then;
// and so when the BackupConfig is deleted with web, where the deletion
// path must follow old's final backup to its end rather than wait for it
// for ever.
func TestAFinalBackupWaitsForTheFinalBackupOfTheMyAppHeldBefore(t *testing.T) {
	for _, deleteBC := range []bool{false, true} {
		name := "backupconfig-stays"
		if deleteBC {
			name = "backupconfig-deleted-with-the-myapp"
		}
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			e := newTestEnv(t, func(o *simulator.Options) { o.BackupDuration = slowFinalBackup })
			e.startManager()
			old := e.newApp("old", dnsCleanupFinalizer)
			web := e.newApp("web", dnsCleanupFinalizer)
			bc := e.newBackupConfig("bc", old.Name, fixtures.WithFinalBackup(), fixtures.WithoutBackupOnChange(),
				fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyRetain))
			e.create(old, web, bc)
			e.waitForHold(old)
			owner := ownerFor(bc)

			g.Expect(e.c.Delete(t.Context(), old)).To(Succeed())
			g.Eventually(func() []simulator.Backup { return e.finalBackupsOf(owner, old.UID, simulator.PhaseRunning) },
				eventually, tick).Should(HaveLen(1), "old's final backup runs")
			update(e, bc, func(bc *backupv1alpha1.BackupConfig) { bc.Spec.BackupBeforeAppDeletion = false })
			e.releaseDNS([]*appsv1alpha1.MyApp{old})
			e.waitGone(old)
			update(e, bc, func(bc *backupv1alpha1.BackupConfig) {
				bc.Spec.AppRef.Name, bc.Spec.BackupBeforeAppDeletion = web.Name, true
			})
			e.waitForHold(web)
			g.Expect(e.finalBackupsOf(owner, old.UID, simulator.PhaseRunning)).To(HaveLen(1),
				"old's final backup still runs when web is deleted (the test is too slow to show anything)")

			g.Expect(e.c.Delete(t.Context(), web)).To(Succeed())
			if deleteBC {
				g.Expect(e.c.Delete(t.Context(), bc)).To(Succeed())
			}
			e.releaseDNS([]*appsv1alpha1.MyApp{web})
			e.waitGone(web)

			oldFinal := e.finalBackupsOf(owner, old.UID, "")
			webFinal := e.finalBackupsOf(owner, web.UID, "")
			g.Expect(oldFinal).To(HaveLen(1))
			g.Expect(webFinal).To(HaveLen(1), "web went with one final backup")
			g.Expect(webFinal[0].Phase).To(Equal(simulator.PhaseSucceeded), "web went with its final backup SUCCEEDED")
			g.Expect(oldFinal[0].CompletedAt).NotTo(BeNil())
			g.Expect(webFinal[0].StartedAt).NotTo(BeTemporally("<", *oldFinal[0].CompletedAt),
				"web's final backup started while old's ran (old's ran %s to %s)",
				oldFinal[0].StartedAt.Format(time.StampMilli), oldFinal[0].CompletedAt.Format(time.StampMilli))
			if deleteBC {
				e.waitGone(bc)
			}
		})
	}
}

// finalBackupsOf lists the final backups owner took of the MyApp with uid
// in the simulator, in the given phase, or in any when phase is empty.
func (e *testEnv) finalBackupsOf(owner string, uid types.UID, phase simulator.Phase) []simulator.Backup {
	var out []simulator.Backup
	for _, b := range e.sim.Backups() {
		if b.Owner == owner && strings.HasPrefix(b.IdempotencyKey, finalKeyPrefix(owner, uid)) &&
			(phase == "" || b.Phase == phase) {
			out = append(out, b)
		}
	}
	return out
}
