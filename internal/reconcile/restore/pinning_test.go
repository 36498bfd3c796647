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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestABackupARestoreNeedsOutlivesRetentionAndItsBackupConfig: a backup a
// Restore in progress has chosen is kept by retention (keepLast 1, while
// newer backups land) and by its BackupConfig's deletion with
// deletionPolicy Delete, which waits for it; once the Restore has
// succeeded, the deletion deletes it and the BackupConfig goes. The
// Restore is held in progress by a DNS outage: its MyApp cannot be Ready.
func TestABackupARestoreNeedsOutlivesRetentionAndItsBackupConfig(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	e.startRestores()
	mgr, err := newBackupConfigManager(e)
	g.Expect(err).NotTo(HaveOccurred())
	e.run(mgr)

	bc := fixtures.NewBackupConfig(e.ns, "web-nightly", "web", fixtures.WithKeepLast(1),
		fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyDelete))
	e.create(bc)
	owner := backupConfigOwner(bc.UID)
	// A backup of this BackupConfig (of another MyApp, so the restored
	// copy has a host of its own), which retention is to prune as newer
	// ones land.
	pinned := e.seed(seedOptions{app: backedUpApp(e.ns, "old", "nginx:1.20"), bcName: bc.Name, bcUID: bc.UID})

	e.sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { e.sim.SetOutage(simulator.ServiceDNS, false) })
	r := e.newRestore("old-restore", backupv1alpha1.RestoreSource{BackupID: pinned.ID})
	e.create(r)
	e.waitForPhase(r, backupv1alpha1.RestoreRestoring)
	// Only now the BackupConfig's MyApp: its backups start, and retention
	// with them, once the Restore has chosen its backup.
	e.create(fixtures.NewMyApp(e.ns, "web", fixtures.WithReplicas(1)))

	listOwn := func(g Gomega) []string {
		all, err := e.backups.List(t.Context(), owner, backup.InNamespace(e.ns))
		g.Expect(err).NotTo(HaveOccurred())
		var ids []string
		for _, b := range all {
			if b.Owner == owner {
				ids = append(ids, b.ID)
			}
		}
		return ids
	}
	for i := range 2 {
		value := fmt.Sprint("now-", i)
		g.Expect(e.c.Patch(t.Context(), bc, client.RawPatch(types.MergePatchType, []byte(
			fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, backupv1alpha1.BackupNowAnnotation, value))))).To(Succeed())
		g.Eventually(func(g Gomega) {
			got := &backupv1alpha1.BackupConfig{}
			g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), got)).To(Succeed())
			g.Expect(got.Status.LastHandledBackupNow).To(Equal(value))
			g.Expect(got.Status.LastBackup).NotTo(BeNil())
			g.Expect(got.Status.LastBackup.Phase).To(Equal(backupv1alpha1.BackupSucceeded))
		}, eventually, tick).Should(Succeed())
	}
	// Retention keeps the newest success and the pinned backup, and
	// prunes the rest.
	g.Eventually(listOwn, eventually, tick).Should(And(HaveLen(2), ContainElement(pinned.ID)))
	g.Consistently(listOwn, 2*time.Second, 200*time.Millisecond).Should(ContainElement(pinned.ID))

	// The BackupConfig's deletion deletes every other backup, and waits
	// for the Restore.
	g.Expect(e.c.Delete(t.Context(), bc)).To(Succeed())
	g.Eventually(listOwn, eventually, tick).Should(Equal([]string{pinned.ID}))
	g.Consistently(func(g Gomega) {
		g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), &backupv1alpha1.BackupConfig{})).To(Succeed())
		g.Expect(listOwn(g)).To(Equal([]string{pinned.ID}))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
	// Its Ready condition names the backup it keeps and the Restore it
	// waits for, not only the log.
	g.Eventually(func(g Gomega) {
		got := &backupv1alpha1.BackupConfig{}
		g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), got)).To(Succeed())
		ready := fixtures.Condition(got.Status.Conditions, backupv1alpha1.ReadyCondition)
		g.Expect(ready.Reason).To(Equal(backupv1alpha1.CleanupInProgressReason))
		g.Expect(ready.Message).To(ContainSubstring(fmt.Sprintf("keeps backup %s while Restore %q restores from it",
			pinned.ID, r.Name)))
	}, eventually, tick).Should(Succeed())

	e.sim.SetOutage(simulator.ServiceDNS, false)
	e.waitForPhase(r, backupv1alpha1.RestoreSucceeded)
	g.Eventually(func(g Gomega) {
		err := e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), &backupv1alpha1.BackupConfig{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred(), "the BackupConfig goes once the Restore has finished")
		g.Expect(listOwn(g)).To(BeEmpty())
	}, eventually, tick).Should(Succeed())
}

// TestABackupConfigIsQuietWhileItsMyAppIsRestored: the BackupConfig of the
// MyApp a Restore writes starts no backup while the Restore is in progress
// (held there by a DNS outage: the MyApp cannot be Ready), although the
// new MyApp is a generation no backup was taken of. Once the Restore has
// succeeded, its first backup says it follows the Restore: the
// backup.myapp.dev/follows-restore label, the BackupStarted event, and the
// Restore's mark in the content's MyApp.
func TestABackupConfigIsQuietWhileItsMyAppIsRestored(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	e.startRestores()
	mgr, err := newBackupConfigManager(e)
	g.Expect(err).NotTo(HaveOccurred())
	e.run(mgr)

	bc := fixtures.NewBackupConfig(e.ns, "web-nightly", "web")
	e.create(bc)
	owner := backupConfigOwner(bc.UID)
	from := backedUpApp(e.ns, "web", "nginx:1.20")
	seeded := e.seed(seedOptions{app: from, bcName: bc.Name, bcUID: bc.UID})
	listOwn := func(g Gomega) []backup.Backup {
		all, err := e.backups.List(t.Context(), owner, backup.InNamespace(e.ns))
		g.Expect(err).NotTo(HaveOccurred())
		var own []backup.Backup
		for _, b := range all {
			if b.Owner == owner {
				own = append(own, b)
			}
		}
		return own
	}

	e.sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { e.sim.SetOutage(simulator.ServiceDNS, false) })
	r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{BackupID: seeded.ID})
	e.create(r)
	e.waitForPhase(r, backupv1alpha1.RestoreRestoring)
	quietReady := func(g Gomega) {
		got := &backupv1alpha1.BackupConfig{}
		g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), got)).To(Succeed())
		ready := meta.FindStatusCondition(got.Status.Conditions, backupv1alpha1.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), "Ready while quiet: %s", ready.Message)
		g.Expect(ready.Reason).To(Equal(backupv1alpha1.WaitingForRestoreReason))
		g.Expect(ready.Message).To(ContainSubstring("Restore " + r.Name))
	}
	g.Eventually(quietReady, eventually, tick).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(listOwn(g)).To(HaveLen(1), "no backup starts while the Restore is in progress")
		quietReady(g)
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())

	e.sim.SetOutage(simulator.ServiceDNS, false)
	e.waitForPhase(r, backupv1alpha1.RestoreSucceeded)
	var after backup.Backup
	g.Eventually(func(g Gomega) {
		own := listOwn(g)
		g.Expect(own).To(HaveLen(2))
		for _, b := range own {
			if b.ID != seeded.ID {
				after = b
			}
		}
		g.Expect(after.Phase).To(Equal(backup.PhaseSucceeded))
	}, eventually, tick).Should(Succeed())
	g.Expect(after.Labels).To(HaveKeyWithValue("backup.myapp.dev/follows-restore", r.Name))
	data, err := e.backups.Content(t.Context(), after.ID)
	g.Expect(err).NotTo(HaveOccurred())
	payload, err := backupcontent.DecodePayload(data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(payload.MyApp.Annotations).To(HaveKeyWithValue(backupv1alpha1.RestoredFromUIDAnnotation, string(from.UID)))
	g.Expect(payload.MyApp.Labels).To(HaveKeyWithValue(backupv1alpha1.RestoreNameLabel, r.Name))
	g.Eventually(func(g Gomega) []string {
		var events eventsv1.EventList
		g.Expect(e.c.List(t.Context(), &events, client.InNamespace(e.ns))).To(Succeed())
		var notes []string
		for _, ev := range events.Items {
			if ev.Regarding.Kind == "BackupConfig" && ev.Regarding.Name == bc.Name {
				notes = append(notes, ev.Note)
			}
		}
		return notes
	}, eventually, tick).Should(ContainElement(ContainSubstring("its first since Restore " + r.Name + " restored it")))
	g.Eventually(func(g Gomega) string {
		got := &backupv1alpha1.BackupConfig{}
		g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(bc), got)).To(Succeed())
		ready := meta.FindStatusCondition(got.Status.Conditions, backupv1alpha1.ReadyCondition)
		g.Expect(ready).NotTo(BeNil())
		return ready.Reason
	}, eventually, tick).Should(Equal(backupv1alpha1.ReadyReason), "the quiet period ends with the Restore")
}
