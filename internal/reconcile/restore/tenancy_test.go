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

package restore

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestARestoreRestoresOnlyBackupsOfItsNamespace: a tenant who may create a
// Restore in its namespace cannot read another namespace's backed-up spec
// through it. A backup ID of another namespace's backup (labelled, or
// unlabelled so only its content says), and spec.source.storage.namespace
// naming another namespace, fail with BackupOfAnotherNamespace; nothing is
// written and the other namespace's backup is not described in status.
func TestARestoreRestoresOnlyBackupsOfItsNamespace(t *testing.T) {
	for _, p := range backuptest.Providers() {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			e := newTestEnv(t, p)
			e.startRestores()
			theirs := backedUpApp("bank-"+e.ns[len(e.ns)-5:], "vault", "nginx:1.27")
			labelled := e.seed(seedOptions{app: theirs})
			unlabelled := e.seed(seedOptions{app: theirs, labels: map[string]string{}})
			sources := map[string]backupv1alpha1.RestoreSource{
				"by-id":            {BackupID: labelled.ID},
				"by-unlabelled-id": {BackupID: unlabelled.ID},
				"by-storage":       {Storage: &backupv1alpha1.StorageSource{Namespace: theirs.Namespace, AppName: "vault"}},
			}
			for name, src := range sources {
				r := e.newRestore(name, src)
				e.create(r)
				got := e.waitForPhase(r, backupv1alpha1.RestoreFailed)
				ready := fixtures.Condition(got.Status.Conditions, readyCondition)
				g.Expect(ready.Reason).To(Equal(backupv1alpha1.BackupOfAnotherNamespaceReason), name)
				g.Expect(ready.Message).To(ContainSubstring("restores only backups of MyApps of "+e.ns), name)
				g.Expect(got.Status.Backup).To(BeNil(), "%s: another namespace's backup is not described here", name)
			}
			var apps appsv1alpha1.MyAppList
			g.Expect(e.c.List(t.Context(), &apps, client.InNamespace(e.ns))).To(Succeed())
			g.Expect(apps.Items).To(BeEmpty())

			// The namespace written out, equal to the Restore's, is a record
			// of where the backups were, and restores.
			ours := backedUpApp(e.ns, "web", "nginx:1.27")
			b := e.seed(seedOptions{app: ours})
			e.startMyApps()
			r := e.newRestore("own-namespace", backupv1alpha1.RestoreSource{
				Storage: &backupv1alpha1.StorageSource{Namespace: e.ns, AppName: "web"}})
			e.create(r)
			expectRestored(e, r, b, ours, "web")
		})
	}
}

// TestASecondRestoreOfOneTargetWaitsForTheFirst: two Restores of one MyApp
// never both write it. The first has created the MyApp and waits for it
// (the DNS service is down, so it cannot be Ready); the second, with
// existingApp Replace, waits with TargetBusy and leaves the MyApp as the
// first wrote it until the first has succeeded, then replaces its spec.
func TestASecondRestoreOfOneTargetWaitsForTheFirst(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	e.startRestores()
	from := backedUpApp(e.ns, "web", "nginx:1.27")
	first := e.seed(seedOptions{app: from})
	later := from.DeepCopy()
	later.Spec.Image = "nginx:1.28"
	second := e.seed(seedOptions{app: later})

	e.sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { e.sim.SetOutage(simulator.ServiceDNS, false) })
	a := e.newRestore("first", backupv1alpha1.RestoreSource{BackupID: first.ID})
	e.create(a)
	e.waitForPhase(a, backupv1alpha1.RestoreRestoring)
	b := e.newRestore("second", backupv1alpha1.RestoreSource{BackupID: second.ID},
		func(r *backupv1alpha1.Restore) { r.Spec.Target.ExistingApp = backupv1alpha1.ExistingAppReplace })
	e.create(b)
	g.Eventually(func(g Gomega) string {
		got := &backupv1alpha1.Restore{}
		g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(b), got)).To(Succeed())
		return fixtures.Condition(got.Status.Conditions, readyCondition).Reason
	}, eventually, tick).Should(Equal(backupv1alpha1.TargetBusyReason))
	g.Consistently(func(g Gomega) {
		app := e.getApp("web")
		g.Expect(app.Spec.Image).To(Equal("nginx:1.27"), "the second Restore waits for the first")
		g.Expect(app.Generation).To(Equal(int64(1)))
	}, 2*time.Second, tick).Should(Succeed())

	e.sim.SetOutage(simulator.ServiceDNS, false)
	e.waitForPhase(a, backupv1alpha1.RestoreSucceeded)
	e.waitForPhase(b, backupv1alpha1.RestoreSucceeded)
	g.Expect(e.getApp("web").Spec.Image).To(Equal("nginx:1.28"))
}
