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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestRestoreIntoASecondClusterSharingTheServices is the disaster-recovery
// story on two control planes of the cluster tier sharing the DNS service
// and the backup storage, on both providers. Cluster A runs a MyApp, whose
// backup its BackupConfig takes; then A is lost (the MyApp goes, and with
// deletionPolicy Delete its record too). Cluster B, installed from nothing
// with A's owner ID, restores every MyApp of the namespace from storage,
// with no BackupConfig there: the MyApp comes back Ready with its name
// resolving, marked with the UID it had in A. An installation with another
// owner ID on the same services finds no backup of it.
//
// The namespace is not multicluster's test file's (test/multicluster, which
// another change edits now): the two clusters are this package's suite's
// and one the test starts.
func TestRestoreIntoASecondClusterSharingTheServices(t *testing.T) {
	clusterB := startClusterB(t)
	for _, p := range backuptest.Providers() {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			a := newTestEnv(t, p)
			a.startMyApps()
			live := fixtures.NewMyApp(a.ns, "web", fixtures.WithReplicas(1), fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyDelete))
			a.create(live)
			fixtures.EventuallyReady(t.Context(), g, a.c, eventually, live)
			taken := a.seed(seedOptions{app: live, bcName: "web-nightly"})

			// Cluster A is lost; its MyApp went first, its record with it.
			g.Expect(a.c.Delete(t.Context(), live)).To(Succeed())
			g.Eventually(func() *appsv1alpha1.MyApp { return a.getApp("web") }, eventually, tick).Should(BeNil())
			g.Expect(a.record(live.Spec.Host)).To(BeNil())

			// Cluster B: the same namespace, the same owner ID, no
			// BackupConfig.
			b := newTestEnvIn(t, clusterB, p, a, a.ns)
			b.startMyApps()
			stopB := b.startRestoresWith(clusterB.Config, b.backups)
			r := b.newRestore("web-restore", backupv1alpha1.RestoreSource{
				Storage: &backupv1alpha1.StorageSource{AppName: "web"}})
			b.create(r)
			restored := expectRestored(b, r, taken, live, "web")
			g.Expect(restored.Namespace).To(Equal(a.ns))
			stopB()

			// Another installation on the same services, in the same
			// namespace (a Restore restores only backups of its own
			// namespace): none of its backups.
			b.ownerID = "cluster-b"
			b.startRestoresWith(clusterB.Config, a.newBackupClient("cluster-b", nil))
			foreign := b.newRestore("web-restore-b", backupv1alpha1.RestoreSource{
				Storage: &backupv1alpha1.StorageSource{AppName: "web"}},
				func(r *backupv1alpha1.Restore) { r.Spec.Target.Name = "web-b" })
			b.create(foreign)
			got := b.waitForPhase(foreign, backupv1alpha1.RestoreFailed)
			g.Expect(fixtures.Condition(got.Status.Conditions, readyCondition).Reason).To(Equal(backupv1alpha1.NoBackupFoundReason))
			g.Expect(b.getApp("web-b")).To(BeNil())
			g.Expect(b.getApp("web").UID).To(Equal(restored.UID))
		})
	}
}

// createNamedNamespace creates the namespace name in c's cluster.
func createNamedNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// startClusterB starts a second control plane for the test, stopped when
// it ends.
func startClusterB(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	clusterB, err := controlplane.Start(t.Context(), controlplane.Options{Tier: controlplane.TierCluster, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := clusterB.Stop(); err != nil {
			t.Errorf("stopping cluster B: %v", err)
		}
	})
	return clusterB
}

// loseOrphanedApp is cluster A lost: its MyApp "web", backed up and under
// deletionPolicy Orphan, is deleted and leaves its record, which a reader
// polls from before the deletion on. It returns A's environment, the old
// MyApp, its backup's ID and the reader.
func loseOrphanedApp(t *testing.T, g Gomega) (*testEnv, *appsv1alpha1.MyApp, string, *nameReader) {
	t.Helper()
	a := newTestEnv(t, backuptest.HTTP)
	a.startMyApps()
	old, backupID := a.runOldApp(g, appsv1alpha1.DeletionPolicyOrphan)
	reader := a.readName(old.Spec.Host)
	g.Expect(a.c.Delete(t.Context(), old)).To(Succeed())
	g.Eventually(func() *appsv1alpha1.MyApp { return a.getApp("web") }, eventually, tick).Should(BeNil())
	return a, old, backupID, reader
}

// TestASecondClusterTakesOverTheRecordItsLostClusterLeft: cluster A's MyApp,
// under deletionPolicy Orphan, leaves its record when it goes (the cluster
// lost); cluster B, installed with A's owner ID on the same DNS service and
// backup storage, restores it from storage, and the restored MyApp takes
// the record over on its mark. A reader polling the name every 100 ms
// never finds it without an active record.
func TestASecondClusterTakesOverTheRecordItsLostClusterLeft(t *testing.T) {
	g := NewWithT(t)
	clusterB := startClusterB(t)
	a, old, backupID, reader := loseOrphanedApp(t, g)
	b := newTestEnvIn(t, clusterB, backuptest.HTTP, a, a.ns)
	b.startMyApps()
	b.startRestores()
	r := b.newRestore("web-restore", backupv1alpha1.RestoreSource{
		Storage: &backupv1alpha1.StorageSource{AppName: "web"}})
	b.create(r)
	taken, err := a.backups.Get(t.Context(), backupID)
	g.Expect(err).NotTo(HaveOccurred())
	restored := expectRestored(b, r, taken, old, "web")
	reader.expectNeverAbsent(g, old.UID, restored.UID)
	g.Expect(b.record(old.Spec.Host).Owner).To(HavePrefix("myapp-operator-orphaned/" + ownerID + "/"))
}

// TestARebuiltClusterWhoseGitOpsRecreatedTheMyAppTakesTheRecordOverOnReplace
// is the disaster-recovery walk-through where GitOps is faster than the
// admin: cluster A's MyApp, under deletionPolicy Orphan, leaves its record
// when the cluster is lost, marked orphaned, which no leak replacement
// takes (and deploy.md's step 1 turns the sweep and leak replacement off
// anyway); in cluster B, installed with A's owner ID, GitOps recreates the
// MyApp from its repository before any Restore: the same spec, a new UID,
// and HostConflict against its own old record. A Restore from storage with existingApp Replace then marks it as
// a create would, and the MyApp takes the record over in one transfer: the
// Restore succeeds, the MyApp keeps GitOps's UID, its status shows the
// takeover done, and a reader polling the name every 100 ms never finds it
// without an active record.
func TestARebuiltClusterWhoseGitOpsRecreatedTheMyAppTakesTheRecordOverOnReplace(t *testing.T) {
	g := NewWithT(t)
	clusterB := startClusterB(t)
	a, old, backupID, reader := loseOrphanedApp(t, g)
	b := newTestEnvIn(t, clusterB, backuptest.HTTP, a, a.ns)
	b.startMyApps()
	gitops := fixtures.NewMyApp(a.ns, "web")
	gitops.Spec = *old.Spec.DeepCopy()
	b.create(gitops)
	g.Eventually(func() string {
		app := b.getApp("web")
		if app == nil {
			return ""
		}
		return fixtures.Condition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition).Reason
	}, eventually, tick).Should(Equal(appsv1alpha1.HostConflictReason))

	b.startRestores()
	r := b.newRestore("web-restore", backupv1alpha1.RestoreSource{
		Storage: &backupv1alpha1.StorageSource{AppName: "web"}},
		func(r *backupv1alpha1.Restore) { r.Spec.Target.ExistingApp = backupv1alpha1.ExistingAppReplace })
	b.create(r)
	got := b.waitForPhase(r, backupv1alpha1.RestoreSucceeded)
	g.Expect(got.Status.Backup.ID).To(Equal(backupID))
	g.Expect(got.Status.RestoredAppUID).To(Equal(gitops.UID))
	app := b.getApp("web")
	g.Expect(app.UID).To(Equal(gitops.UID), "Replace keeps the MyApp GitOps made")
	g.Expect(app.Annotations).To(HaveKeyWithValue(backupv1alpha1.RestoredFromUIDAnnotation, string(old.UID)))
	g.Expect(app.Status.DNS).NotTo(BeNil())
	g.Expect(app.Status.DNS.TakeoverDoneFor).To(Equal(string(old.UID)))
	g.Expect(b.record(old.Spec.Host).Owner).To(HaveSuffix("/" + string(gitops.UID)))
	reader.expectNeverAbsent(g, old.UID, gitops.UID)
}

// TestARehearsalWithProductionsOwnerIDTakesNothingOver is issue 39's
// rehearsal (item 8): a second cluster installed with production's owner
// ID on production's DNS service and backup storage, to rehearse the
// disaster recovery while production runs. Cluster A's MyApp is live; B
// restores it from storage, and the restored MyApp finds A's record under
// the UID its restore mark names, which B's API server does not know: the
// takeover would judge it gone and take production's live record over.
// Both installations claim the owner ID (myapp.OwnerIDClaim), the claims
// meet, and the takeover waits: the MyApp's DNSReady says TakeoverWaiting,
// naming the other installation, the Restore waits and says so, and A's
// record keeps A's owner, its name resolving throughout.
func TestARehearsalWithProductionsOwnerIDTakesNothingOver(t *testing.T) {
	g := NewWithT(t)
	clusterB := startClusterB(t)
	a := newTestEnv(t, backuptest.HTTP)
	a.claimEvery, a.cluster = 200*time.Millisecond, "production"
	a.startMyApps()
	live, _ := a.runOldApp(g, appsv1alpha1.DeletionPolicyOrphan)
	owner := a.record(live.Spec.Host).Owner
	reader := a.readName(live.Spec.Host)

	b := newTestEnvIn(t, clusterB, backuptest.HTTP, a, a.ns)
	b.claimEvery, b.cluster = 200*time.Millisecond, "rehearsal"
	b.startMyApps()
	b.startRestores()
	r := b.newRestore("web-restore", backupv1alpha1.RestoreSource{
		Storage: &backupv1alpha1.StorageSource{AppName: "web"}})
	b.create(r)

	var dnsReady metav1.Condition
	g.Eventually(func(g Gomega) {
		app := b.getApp("web")
		g.Expect(app).NotTo(BeNil())
		dnsReady = fixtures.Condition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition)
		g.Expect(dnsReady.Reason).To(Equal(appsv1alpha1.TakeoverWaitingReason))
		g.Expect(dnsReady.Message).To(ContainSubstring("another installation (cluster production"))
	}, eventually, tick).Should(Succeed(), "the restored MyApp waits to take the record over")
	t.Logf("DNSReady: %s", dnsReady.Message)
	g.Consistently(func() string { return a.record(live.Spec.Host).Owner }, 3*time.Second, tick).Should(Equal(owner),
		"production's live record keeps its owner")
	var ready metav1.Condition
	g.Eventually(func(g Gomega) {
		got := &backupv1alpha1.Restore{}
		g.Expect(b.c.Get(t.Context(), client.ObjectKeyFromObject(r), got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(backupv1alpha1.RestoreRestoring))
		ready = fixtures.Condition(got.Status.Conditions, readyCondition)
		g.Expect(ready.Message).To(ContainSubstring("another installation (cluster production"))
	}, eventually, tick).Should(Succeed(), "the Restore says why it waits")
	t.Logf("the Restore's Ready: %s", ready.Message)
	g.Expect(a.getApp("web").UID).To(Equal(live.UID))
	reader.halt()
	reader.mu.Lock()
	defer reader.mu.Unlock()
	g.Expect(reader.absent).To(BeZero(), "the name resolved throughout (%d reads)", reader.reads)
	g.Expect(reader.owners).To(Equal([]string{owner}))
}
