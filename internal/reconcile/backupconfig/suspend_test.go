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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/health"
	"github.com/myapp-operator/myapp-operator/internal/health/healthtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestSuspendSkipsSlotsAndWritesNothing: a suspended BackupConfig writes
// nothing to the backup service: slots that pass are skipped with a Normal
// event and not caught up on resume, and retention prunes nothing (even
// with keepLast lowered). Normal events mark suspend and resume, and a
// suspended BackupConfig is still deleted with its backups.
func TestSuspendSkipsSlotsAndWritesNothing(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	start := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
	clock := clocktesting.NewFakeClock(start)
	e.startManager(func(r *Reconciler) { r.Clock = clock })
	at := func(hour int) time.Time { return time.Date(2026, 3, 1, hour, 0, 0, 0, time.UTC) }

	app := e.newApp("billing")
	bc := e.newBackupConfig("hourly", "billing", fixtures.WithSchedule("0 * * * *"), fixtures.WithKeepLast(2),
		fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyDelete))
	e.create(app, bc)
	e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	clock.SetTime(at(11).Add(time.Second))
	e.poke(bc)
	e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerSchedule)
	g.Expect(e.ownBackups(bc)).To(HaveLen(2))

	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Suspend = true })
	g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, bc) }, eventually, tick).
		Should(ContainElement(eventSuspended))
	g.Eventually(func(g Gomega) string {
		return condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition).Reason
	}, eventually, tick).Should(Equal(backupv1alpha1.SuspendedReason))
	g.Expect(healthtest.ArgoCD(t, e.fetchBackupConfig(bc)(g), backupConfigKind).Status).
		To(Equal(health.Suspended))

	// Three slots pass while suspended, and retention is lowered to one.
	for hour := 12; hour <= 14; hour++ {
		clock.SetTime(at(hour).Add(time.Second))
		e.poke(bc)
		g.Eventually(func(g Gomega) time.Time {
			return e.fetchBackupConfig(bc)(g).Status.NextScheduleTime.UTC()
		}, eventually, tick).Should(Equal(at(hour + 1)))
	}
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Retention.KeepLast = 1 })
	g.Consistently(func() int { return len(e.ownBackups(bc)) }, consistently, tick).Should(Equal(2),
		"no backup is started or pruned while suspended")
	g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, bc) }, eventually, tick).
		Should(ContainElement(eventScheduledBackupSkipped))

	// Resumed: no catch-up burst; retention applies again.
	clock.SetTime(at(14).Add(30 * time.Minute))
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Suspend = false })
	g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, bc) }, eventually, tick).
		Should(ContainElement(eventResumed))
	g.Eventually(func() int { return len(e.ownBackups(bc)) }, eventually, tick).Should(Equal(1))
	g.Consistently(func() []storedBackup { return e.ownBackups(bc) }, consistently, tick).Should(HaveLen(1),
		"the slots missed while suspended are not caught up")
	g.Eventually(func(g Gomega) string {
		return condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition).Reason
	}, eventually, tick).Should(Equal(backupv1alpha1.ReadyReason))

}

// TestSuspendNeverBlocksDeletion: a suspended BackupConfig that is deleted
// still runs its cleanup (deletionPolicy Delete removes its backups) and
// goes.
func TestSuspendNeverBlocksDeletion(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	e.startManager()
	bc := e.newBackupConfig("web", "web", fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyDelete))
	e.create(e.newApp("web"), bc)
	e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Suspend = true })
	g.Eventually(func(g Gomega) string {
		return condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition).Reason
	}, eventually, tick).Should(Equal(backupv1alpha1.SuspendedReason))
	g.Expect(e.ownBackups(bc)).To(HaveLen(1))

	g.Expect(e.c.Delete(t.Context(), bc)).To(Succeed())
	g.Eventually(e.get(bc), eventually, tick).ShouldNot(Succeed())
	g.Expect(e.ownBackups(bc)).To(BeEmpty(), "deletionPolicy Delete removed its backups")
}

// TestSuspendNeverHoldsADeletedMyApp: a suspended BackupConfig with
// backupBeforeAppDeletion does not keep its MyApp from going. Suspend means
// no writes to the backup service, so the final backup is given up the way
// a teardown gives it up: the Ready condition FinalBackupAbandoned and a
// Warning event first, then the MyApp is released, with no backup started.
func TestSuspendNeverHoldsADeletedMyApp(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	e.startManager()
	app := e.newApp("paused")
	bc := e.newBackupConfig("paused", "paused", fixtures.WithFinalBackup())
	e.create(app, bc)
	e.waitForHold(app)
	e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Suspend = true })
	g.Eventually(func(g Gomega) string {
		return condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition).Reason
	}, eventually, tick).Should(Equal(backupv1alpha1.SuspendedReason))
	backupsBefore := len(e.ownBackups(bc))

	g.Expect(e.c.Delete(t.Context(), app)).To(Succeed())
	g.Expect(e.waitGoneSeeingAbandoned(app, bc, "the MyApp goes although its BackupConfig is suspended")).To(BeTrue(),
		"Ready said FinalBackupAbandoned before the MyApp went")
	g.Eventually(func(g Gomega) []eventReason {
		return e.eventReasons(g, bc)
	}, eventually, tick).Should(ContainElement(eventFinalBackupAbandoned))
	g.Expect(e.ownBackups(bc)).To(HaveLen(backupsBefore), "no backup is started while suspended")
}

// TestASuspendedBackupConfigNeverReportsAnEditAsApplied is G7 (audit 3):
// while spec.suspend is set, status.observedGeneration and every
// condition's observedGeneration stay at the last generation a pass acted
// on, and Reconciling says Suspended with the generation the changes since
// wait from, so kstatus (Helm's --wait, Flux) reads InProgress, never
// Current, for a spec that is not applied. The edit that sets suspend
// counts too. Resumed, the pass acts on the latest generation.
func TestASuspendedBackupConfigNeverReportsAnEditAsApplied(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	e.startManager()
	bc := e.newBackupConfig("web", "web")
	e.create(e.newApp("web"), bc)
	e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	acted := e.eventuallyKstatus(bc, status.CurrentStatus, "", "").Generation

	suspendedAt := func(g Gomega, generation int64) *backupv1alpha1.BackupConfig {
		current := e.fetchBackupConfig(bc)(g)
		g.Expect(current.Generation).To(Equal(generation))
		g.Expect(condition(current, backupv1alpha1.ReadyCondition).Reason).To(Equal(backupv1alpha1.SuspendedReason))
		g.Expect(current.Status.ObservedGeneration).To(Equal(acted), "observedGeneration stays at the generation acted on")
		for _, c := range current.Status.Conditions {
			g.Expect(c.ObservedGeneration).To(Equal(acted), "condition %s stays at the generation acted on", c.Type)
		}
		reconciling := condition(current, backupv1alpha1.ReconcilingCondition)
		g.Expect(reconciling.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(reconciling.Reason).To(Equal(backupv1alpha1.SuspendedReason))
		g.Expect(reconciling.Message).To(ContainSubstring(fmt.Sprintf("since generation %d", acted)))
		g.Expect(healthtest.Kstatus(t, current, backupConfigKind).Status).To(Equal(status.InProgressStatus))
		return current
	}
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Suspend = true })
	g.Eventually(func(g Gomega) { suspendedAt(g, acted+1) }, eventually, tick).Should(Succeed())
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Schedule = "0 3 * * *" })
	g.Eventually(func(g Gomega) { suspendedAt(g, acted+2) }, eventually, tick).Should(Succeed())
	g.Consistently(func(g Gomega) { suspendedAt(g, acted+2) }, consistently, tick).Should(Succeed())

	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Suspend = false })
	resumed := e.eventuallyKstatus(bc, status.CurrentStatus, "", "")
	g.Expect(resumed.Status.ObservedGeneration).To(Equal(acted + 3))
}
