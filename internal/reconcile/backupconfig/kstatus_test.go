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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/health"
	"github.com/myapp-operator/myapp-operator/internal/health/healthtest"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// backupConfigKind is the kind healthtest reads the objects of this package as.
var backupConfigKind = backupv1alpha1.GroupVersion.WithKind("BackupConfig")

// eventuallyKstatus waits until kstatus reads bc as want (and the shipped
// Argo CD check as its counterpart) and the given
// abnormal-true condition (empty for none) is the only one set, True at the
// current generation with reason. It returns the BackupConfig as it was.
func (e *testEnv) eventuallyKstatus(bc *backupv1alpha1.BackupConfig, want status.Status,
	condType, reason string) *backupv1alpha1.BackupConfig {
	e.t.Helper()
	var current *backupv1alpha1.BackupConfig
	NewWithT(e.t).Eventually(func(g Gomega) {
		current = e.fetchBackupConfig(bc)(g)
		res := healthtest.Kstatus(e.t, current, backupConfigKind)
		g.Expect(res.Status).To(Equal(want), "kstatus says %s: %s", res.Status, res.Message)
		argo := healthtest.ArgoCD(e.t, current, backupConfigKind)
		g.Expect(argo.Status).To(Equal(healthtest.ArgoCDFor[want]), "Argo CD says %s: %s", argo.Status, argo.Message)
		for _, c := range []string{string(status.ConditionReconciling), string(status.ConditionStalled)} {
			cond := fixtures.Condition(current.Status.Conditions, c)
			if c != condType {
				g.Expect(cond.Type).To(BeEmpty(), "%s is absent", c)
				continue
			}
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), "%s is set", c)
			g.Expect(cond.Reason).To(Equal(reason))
			g.Expect(cond.ObservedGeneration).To(Equal(current.Generation), "%s carries its own observedGeneration", c)
		}
	}, eventually, tick).Should(Succeed())
	return current
}

// TestKstatusReadsEveryStageOfABackupConfig: kstatus reads a BackupConfig
// right at every stage: InProgress while its MyApp is awaited and while a
// backup runs, Current once the backup is done, InProgress right after an
// edit until the controller has looked at it, Failed for a schedule no
// retry can fix, and Terminating while it is deleted.
func TestKstatusReadsEveryStageOfABackupConfig(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, func(o *simulator.Options) { o.BackupDuration = 2 * time.Second })
	e.startManager()

	// The MyApp is awaited.
	bc := e.newBackupConfig("web", "web")
	e.create(bc)
	// Just created, before any pass: a generation not observed yet, never an
	// object without status, which kstatus would take for Current.
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(backupv1alpha1.GroupVersion.WithKind("BackupConfig"))
	g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), stored)).To(Succeed())
	res, err := status.Compute(stored)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Status).To(Equal(status.InProgressStatus), "a new BackupConfig is not Current")
	e.eventuallyKstatus(bc, status.InProgressStatus, string(status.ConditionReconciling), backupv1alpha1.AppNotFoundReason)

	// Its first backup runs, then succeeds.
	e.create(e.newApp("web"))
	e.eventuallyKstatus(bc, status.InProgressStatus, string(status.ConditionReconciling), backupv1alpha1.BackupRunningReason)
	e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	current := e.eventuallyKstatus(bc, status.CurrentStatus, "", "")

	// Right after an edit the old generation's Ready does not count.
	current.Spec.Schedule = "0 3 * * *"
	g.Expect(e.c.Update(t.Context(), current)).To(Succeed())
	g.Expect(healthtest.Kstatus(t, current, backupConfigKind).Status).To(Equal(status.InProgressStatus), "the new generation is not observed yet")
	g.Expect(healthtest.ArgoCD(t, current, backupConfigKind).Status).To(Equal(health.Progressing))
	e.eventuallyKstatus(bc, status.CurrentStatus, "", "")

	// A schedule the API server accepts and the cron parser refuses: Failed.
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Schedule = "99 * * * *" })
	current = e.eventuallyKstatus(bc, status.FailedStatus, string(status.ConditionStalled), backupv1alpha1.InvalidScheduleReason)
	g.Expect(current.Status.ObservedGeneration).To(Equal(current.Generation), "a stalled spec has been looked at")

	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Schedule = "0 4 * * *" })
	e.eventuallyKstatus(bc, status.CurrentStatus, "", "")

	// Deleting: Terminating, until it is gone.
	g.Expect(e.c.Delete(t.Context(), bc)).To(Succeed())
	g.Eventually(func() status.Status {
		current := &backupv1alpha1.BackupConfig{}
		if err := e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), current); err != nil {
			return status.NotFoundStatus
		}
		return healthtest.Kstatus(t, current, backupConfigKind).Status
	}, eventually, tick).Should(BeElementOf(status.TerminatingStatus, status.NotFoundStatus))
}
