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
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore/restoreplan"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// expectRestored checks what a Succeeded Restore promises: the MyApp was
// created from the backup, marked with the restore, Ready with its DNS
// record active, and the status names the backup, the backed-up MyApp and
// the MyApp written.
func expectRestored(e *testEnv, r *backupv1alpha1.Restore, b backup.Backup, from *appsv1alpha1.MyApp, target string) *appsv1alpha1.MyApp {
	e.t.Helper()
	g := NewWithT(e.t)
	got := e.waitForPhase(r, backupv1alpha1.RestoreSucceeded)
	st := got.Status
	g.Expect(st.Backup.ID).To(Equal(b.ID))
	g.Expect(*st.Backup.MyApp).To(Equal(backupv1alpha1.RestoredObject{Namespace: from.Namespace, Name: from.Name, UID: from.UID}))
	g.Expect(st.Backup.TakenAt).NotTo(BeNil())
	g.Expect(st.TargetName).To(Equal(target))
	g.Expect(st.ObservedGeneration).To(Equal(got.Generation))
	g.Expect(st.StartTime).NotTo(BeNil())
	g.Expect(st.CompletionTime).NotTo(BeNil())
	g.Expect(fixtures.Condition(st.Conditions, readyCondition).Status).To(Equal(metav1.ConditionTrue))
	g.Expect(fixtures.Condition(st.Conditions, readyCondition).Reason).To(Equal(backupv1alpha1.RestoreSucceededReason))
	g.Expect(fixtures.Condition(st.Conditions, reconcilingCondition).Type).To(BeEmpty())
	g.Expect(fixtures.Condition(st.Conditions, stalledCondition).Type).To(BeEmpty())

	app := e.getApp(target)
	g.Expect(app).NotTo(BeNil())
	g.Expect(st.RestoredAppUID).To(Equal(app.UID))
	g.Expect(app.UID).NotTo(Equal(from.UID), "a restore creates a new object")
	g.Expect(app.Spec.Image).To(Equal(from.Spec.Image))
	g.Expect(app.Spec.Host).To(Equal(from.Spec.Host))
	g.Expect(app.OwnerReferences).To(BeEmpty())
	g.Expect(app.Labels).To(HaveKeyWithValue(backupv1alpha1.RestoreNameLabel, r.Name))
	g.Expect(app.Labels).To(HaveKeyWithValue(backupv1alpha1.BackupIDLabel, backupv1alpha1.BackupIDLabelValue(b.ID)))
	g.Expect(app.Annotations).To(HaveKeyWithValue(backupv1alpha1.RestoreUIDAnnotation, string(got.UID)))
	g.Expect(app.Annotations).To(HaveKeyWithValue(backupv1alpha1.BackupIDAnnotation, b.ID))
	g.Expect(app.Annotations).To(HaveKeyWithValue(backupv1alpha1.RestoredFromUIDAnnotation, string(from.UID)))
	g.Expect(app.Status.DNS).NotTo(BeNil())
	g.Expect(app.Status.DNS.State).To(Equal(appsv1alpha1.DNSRecordActive))
	rec := e.record(app.Spec.Host)
	g.Expect(rec).NotTo(BeNil(), "the record of %s", app.Spec.Host)
	g.Expect(rec.State).To(Equal(simulator.StateActive))
	g.Expect(rec.Owner).To(HaveSuffix("/" + string(app.UID)))
	g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, r) }, eventually, tick).Should(
		ContainElements(eventBackupChosen, eventMyAppCreated, eventRestoreSucceeded))
	return app
}

// TestRestoreByBackupID: a named backup is restored, on both providers, and
// deleting the Restore afterwards leaves the MyApp and its record alone.
func TestRestoreByBackupID(t *testing.T) {
	for _, p := range backuptest.Providers() {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			e := newTestEnv(t, p)
			e.startMyApps()
			e.startRestores()
			from := backedUpApp(e.ns, "web", "nginx:1.27")
			b := e.seed(seedOptions{app: from})
			r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{BackupID: b.ID})
			e.create(r)
			app := expectRestored(e, r, b, from, "web")

			g.Expect(e.c.Delete(t.Context(), r)).To(Succeed())
			g.Consistently(func(g Gomega) {
				now := e.getApp("web")
				g.Expect(now).NotTo(BeNil(), "deleting the Restore leaves the MyApp")
				g.Expect(now.UID).To(Equal(app.UID))
				g.Expect(now.DeletionTimestamp).To(BeNil())
				g.Expect(e.record(app.Spec.Host)).NotTo(BeNil())
			}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
		})
	}
}

// TestRestoreFromStorage: with the BackupConfig gone, the newest succeeded
// backup this installation holds of the MyApp is restored, under another
// name when spec.target.name says so; backups of other MyApps, and of
// another installation sharing the backup service, are passed over.
func TestRestoreFromStorage(t *testing.T) {
	for _, p := range backuptest.Providers() {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			e := newTestEnv(t, p)
			e.startMyApps()
			e.startRestores()
			older := backedUpApp(e.ns, "web", "nginx:1.26")
			e.seed(seedOptions{app: older})
			newer := older.DeepCopy()
			newer.Spec.Image, newer.Generation = "nginx:1.27", 2
			want := e.seed(seedOptions{app: newer})
			e.seed(seedOptions{app: backedUpApp(e.ns, "api", "nginx:1.28")})
			// Another installation's backup of a MyApp of the same
			// namespace and name, taken last.
			foreign := backedUpApp(e.ns, "web", "nginx:1.29")
			e.seedWith(e.newBackupClient("cluster-b", nil), seedOptions{app: foreign, ownerID: "cluster-b"})

			r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{
				Storage: &backupv1alpha1.StorageSource{AppName: "web"}},
				func(r *backupv1alpha1.Restore) { r.Spec.Target.Name = "web-restored" })
			// The copy keeps the backed-up host. No record holds it here
			// (the backed-up MyApp never ran in this cluster), so the copy
			// registers it afresh; taking over a record the old MyApp
			// still holds is the MyApp controller's part, on the mark.
			e.create(r)
			app := expectRestored(e, r, want, newer, "web-restored")
			g.Expect(app.Spec.Image).To(Equal("nginx:1.27"))
			if p == backuptest.HTTP {
				g.Eventually(func(g Gomega) string { return e.eventNote(g, r, eventBackupChosen) }, eventually, tick).
					Should(ContainSubstring("1 newer backups of it were other installations'"))
			}
		})
	}
}

// eventNote is the note of the event of reason about r, "" when none.
func (e *testEnv) eventNote(g Gomega, r *backupv1alpha1.Restore, reason eventReason) string {
	var events eventsv1.EventList
	g.Expect(e.c.List(e.t.Context(), &events, client.InNamespace(e.ns))).To(Succeed())
	for _, ev := range events.Items {
		if ev.Regarding.Name == r.Name && ev.Regarding.Kind == "Restore" && ev.Reason == string(reason) {
			return ev.Note
		}
	}
	return ""
}

// TestRestoreFromABackupConfigPinsOneBackupWhileNewOnesLand: the
// BackupConfig's newest succeeded backup when the Restore starts is chosen
// once; the backups that land while the Restore runs change nothing, on
// both providers.
func TestRestoreFromABackupConfigPinsOneBackupWhileNewOnesLand(t *testing.T) {
	for _, p := range backuptest.Providers() {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			e := newTestEnv(t, p)
			e.startMyApps()
			e.startRestores()
			// The BackupConfig exists, but its controller does not run:
			// the test takes its backups, with content, as it would.
			bc := fixtures.NewBackupConfig(e.ns, "web-nightly", "web")
			e.create(bc)
			from := backedUpApp(e.ns, "web", "nginx:1.20")
			images := map[string]string{}
			var mu sync.Mutex
			seedNext := func(n int) backup.Backup {
				app := from.DeepCopy()
				app.Spec.Image, app.Generation = fmt.Sprintf("nginx:1.%d", 20+n), int64(n+1)
				b := e.seed(seedOptions{app: app, bcName: bc.Name, bcUID: bc.UID})
				mu.Lock()
				images[b.ID] = app.Spec.Image
				mu.Unlock()
				return b
			}
			seedNext(0)
			newestBefore := seedNext(1)

			r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{
				BackupConfigRef: &backupv1alpha1.BackupConfigReference{Name: bc.Name}})
			e.create(r)
			// New backups land from the Restore's creation on, one every
			// few hundred milliseconds, during the whole restore.
			stopLanding := make(chan struct{})
			landed := make(chan int)
			go func() {
				n := 2
				defer func() { landed <- n - 2 }()
				for {
					seedNext(n)
					n++
					select {
					case <-stopLanding:
						return
					case <-time.After(300 * time.Millisecond):
					}
				}
			}()
			seen := map[string]bool{}
			g.Eventually(func(g Gomega) {
				got := &backupv1alpha1.Restore{}
				g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(r), got)).To(Succeed())
				if got.Status.Backup != nil {
					seen[got.Status.Backup.ID] = true
				}
				g.Expect(got.Status.Phase).To(Equal(backupv1alpha1.RestoreSucceeded))
			}, eventually, 50*time.Millisecond).Should(Succeed())
			close(stopLanding)
			g.Expect(<-landed).To(BeNumerically(">", 0), "backups landed while the Restore ran")

			got := e.waitForPhase(r, backupv1alpha1.RestoreSucceeded)
			g.Expect(seen).To(HaveLen(1), "one backup was ever chosen")
			pinned := got.Status.Backup.ID
			g.Expect(seen).To(HaveKey(pinned))
			all, err := e.backups.List(t.Context(), backupConfigOwner(bc.UID), backup.InNamespace(e.ns))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(len(all)).To(BeNumerically(">", 2))
			startedOf := map[string]time.Time{}
			for _, b := range all {
				startedOf[b.ID] = b.StartedAt
			}
			g.Expect(startedOf[pinned]).NotTo(BeTemporally("<", newestBefore.StartedAt),
				"the newest succeeded backup when the Restore started, or one after it, is chosen")
			g.Expect(*got.Status.Backup.BackupConfig).To(Equal(backupv1alpha1.RestoredObject{
				Namespace: e.ns, Name: bc.Name, UID: bc.UID}))
			mu.Lock()
			wantImage := images[pinned]
			mu.Unlock()
			g.Expect(e.getApp("web").Spec.Image).To(Equal(wantImage), "the MyApp is the pinned backup's")
		})
	}
}

// TestExistingApp: a live MyApp of the target's name fails a Restore with
// existingApp Fail, and is left as it was; with Replace its spec is
// replaced, and, as it is another incarnation than the backed-up MyApp, it
// carries the restore's restored-from-uid mark and a read request; the
// Restore succeeds once it is Ready at the new generation.
func TestExistingApp(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	e.startRestores()
	live := fixtures.NewMyApp(e.ns, "web", fixtures.WithReplicas(1))
	live.Spec.Image = "nginx:1.25"
	live.Labels = map[string]string{"team": "live"}
	e.create(live)
	fixtures.EventuallyReady(t.Context(), g, e.c, eventually, live)
	from := backedUpApp(e.ns, "web", "nginx:1.27")
	from.Labels = map[string]string{"team": "backed-up"}
	b := e.seed(seedOptions{app: from})

	failing := e.newRestore("web-fail", backupv1alpha1.RestoreSource{BackupID: b.ID})
	e.create(failing)
	got := e.waitForPhase(failing, backupv1alpha1.RestoreFailed)
	ready := fixtures.Condition(got.Status.Conditions, readyCondition)
	g.Expect(ready.Reason).To(Equal(backupv1alpha1.TargetExistsReason))
	g.Expect(ready.Message).To(ContainSubstring(string(live.UID)))
	g.Expect(fixtures.Condition(got.Status.Conditions, stalledCondition).Reason).To(Equal(backupv1alpha1.TargetExistsReason))
	g.Expect(got.Status.Backup.ID).To(Equal(b.ID), "the backup was chosen before the target was checked")
	g.Expect(got.Status.RestoredAppUID).To(BeEmpty())
	unchanged := e.getApp("web")
	g.Expect(unchanged.Generation).To(Equal(live.Generation))
	g.Expect(unchanged.Spec.Image).To(Equal("nginx:1.25"))
	g.Expect(unchanged.Annotations).NotTo(HaveKey(backupv1alpha1.RestoreUIDAnnotation))
	g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, failing) }, eventually, tick).Should(
		ContainElement(eventReason(backupv1alpha1.TargetExistsReason)))

	replacing := e.newRestore("web-replace", backupv1alpha1.RestoreSource{BackupID: b.ID},
		func(r *backupv1alpha1.Restore) { r.Spec.Target.ExistingApp = backupv1alpha1.ExistingAppReplace })
	e.create(replacing)
	got = e.waitForPhase(replacing, backupv1alpha1.RestoreSucceeded)
	replaced := e.getApp("web")
	g.Expect(got.Status.RestoredAppUID).To(Equal(live.UID))
	g.Expect(replaced.UID).To(Equal(live.UID), "Replace keeps the MyApp")
	g.Expect(replaced.Spec.Image).To(Equal("nginx:1.27"))
	g.Expect(replaced.Generation).To(BeNumerically(">", live.Generation))
	g.Expect(replaced.Status.ObservedGeneration).To(Equal(replaced.Generation), "Ready at the replaced spec")
	g.Expect(replaced.Labels).To(Equal(map[string]string{"team": "live"}), "the labels stay")
	// Another incarnation than the backed-up MyApp: marked as a create
	// marks it, and asked to read its DNS record again with the mark.
	g.Expect(replaced.Annotations).To(HaveKeyWithValue(backupv1alpha1.RestoredFromUIDAnnotation, string(from.UID)))
	g.Expect(replaced.Annotations).To(HaveKeyWithValue(appsv1alpha1.ReconcileRequestAnnotation,
		restoreplan.ReadRequest(string(got.UID))))
	g.Expect(replaced.Annotations).NotTo(HaveKey(backupv1alpha1.RestoreUIDAnnotation))
	g.Expect(replaced.Status.LastHandledReconcileAt).To(Equal(restoreplan.ReadRequest(string(got.UID))),
		"the MyApp read its record with the mark before the Restore succeeded")
	g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, replacing) }, eventually, tick).Should(
		ContainElements(eventMyAppSpecReplaced, eventRestoreSucceeded))
}

// TestBadInputIsRefusedWithAConditionNamingIt: each backup a Restore must
// not restore, and each source that names none, fails it with a reason
// and a message naming the cause, and writes no MyApp.
func TestBadInputIsRefusedWithAConditionNamingIt(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	e.startRestores()
	app := func(name string) *appsv1alpha1.MyApp { return backedUpApp(e.ns, name, "nginx:1.27") }

	foreign := e.seed(seedOptions{app: app("foreign"), ownerID: "cluster-b"})
	future := e.seed(seedOptions{app: app("future"),
		content: gzipJSON(t, `{"formatVersion": 2, "metadata": {"ownerID": "cluster-a"}, "myApp": {}}`)})
	empty := e.seed(seedOptions{app: app("empty"), noContent: true})
	e.sim.FailBackups("the disk is full", 1)
	failedApp := app("failed")
	failedStart, err := e.backups.Start(t.Context(), backup.StartRequest{App: e.ns + "-failed",
		Owner: backupConfigOwner("bc-failed"), IdempotencyKey: backupConfigOwner("bc-failed") + "/manual/1",
		Labels: map[string]string{backup.LabelNamespace: e.ns, labelMyApp: failedApp.Name}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) backup.Phase {
		b, err := e.backups.Get(t.Context(), failedStart.ID)
		g.Expect(err).NotTo(HaveOccurred())
		return b.Phase
	}, eventually, tick).Should(Equal(backup.PhaseFailed))
	noBackups := fixtures.NewBackupConfig(e.ns, "never-backed-up", "nothing")
	e.create(noBackups)

	cases := []struct {
		name, reason string
		source       backupv1alpha1.RestoreSource
		wantInStatus string
		message      []string
	}{
		{"another installation's backup", backupv1alpha1.ForeignBackupReason,
			backupv1alpha1.RestoreSource{BackupID: foreign.ID}, foreign.ID,
			[]string{foreign.ID, "owner ID cluster-b", "owner ID cluster-a"}},
		{"a missing backup", backupv1alpha1.BackupNotFoundReason,
			backupv1alpha1.RestoreSource{BackupID: "bk-does-not-exist"}, "",
			[]string{"bk-does-not-exist"}},
		{"a payload of an unknown version", backupv1alpha1.UnsupportedBackupFormatReason,
			backupv1alpha1.RestoreSource{BackupID: future.ID}, future.ID,
			[]string{future.ID, "formatVersion 2"}},
		{"a backup that failed", backupv1alpha1.BackupNotSucceededReason,
			backupv1alpha1.RestoreSource{BackupID: failedStart.ID}, failedStart.ID,
			[]string{failedStart.ID, "the disk is full"}},
		{"a backup without content", backupv1alpha1.BackupHasNoContentReason,
			backupv1alpha1.RestoreSource{BackupID: empty.ID}, empty.ID,
			[]string{empty.ID, "without content"}},
		{"a missing BackupConfig", backupv1alpha1.BackupConfigNotFoundReason,
			backupv1alpha1.RestoreSource{BackupConfigRef: &backupv1alpha1.BackupConfigReference{Name: "gone"}}, "",
			[]string{"BackupConfig gone", e.ns}},
		{"a BackupConfig without a succeeded backup", backupv1alpha1.NoSucceededBackupReason,
			backupv1alpha1.RestoreSource{BackupConfigRef: &backupv1alpha1.BackupConfigReference{Name: noBackups.Name}}, "",
			[]string{noBackups.Name, "lists 0 of its backups"}},
		{"a MyApp this installation holds no backup of", backupv1alpha1.NoBackupFoundReason,
			backupv1alpha1.RestoreSource{Storage: &backupv1alpha1.StorageSource{AppName: "foreign"}}, "",
			[]string{e.ns + "/foreign", "owner ID cluster-a", "1 of it were taken by other installations"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := e.newRestore(fmt.Sprintf("bad-%d", i), tc.source)
			e.create(r)
			got := e.waitForPhase(r, backupv1alpha1.RestoreFailed)
			ready := fixtures.Condition(got.Status.Conditions, readyCondition)
			g.Expect(ready.Reason).To(Equal(tc.reason))
			for _, m := range tc.message {
				g.Expect(ready.Message).To(ContainSubstring(m))
			}
			stalled := fixtures.Condition(got.Status.Conditions, stalledCondition)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(tc.reason))
			g.Expect(fixtures.Condition(got.Status.Conditions, reconcilingCondition).Type).To(BeEmpty())
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation), "kstatus reads Failed")
			if tc.wantInStatus != "" {
				g.Expect(got.Status.Backup).NotTo(BeNil())
				g.Expect(got.Status.Backup.ID).To(Equal(tc.wantInStatus), "the backup refused is named in the status")
			} else {
				g.Expect(got.Status.Backup).To(BeNil(), "nothing was chosen")
			}
			g.Expect(got.Status.RestoredAppUID).To(BeEmpty())
			g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, r) }, eventually, tick).Should(
				ContainElement(eventReason(tc.reason)))
		})
	}
	var apps appsv1alpha1.MyAppList
	g.Expect(e.c.List(t.Context(), &apps, client.InNamespace(e.ns))).To(Succeed())
	g.Expect(apps.Items).To(BeEmpty(), "no refused Restore wrote a MyApp")
}

// TestRestoreWaitsForTheBackupAndTheTarget: a named backup still running
// is waited for, and so is a MyApp of the target's name that is being
// deleted; the Restore then goes on.
func TestRestoreWaitsForTheBackupAndTheTarget(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	e.startRestores()
	const hold = "test.myapp.dev/hold"
	live := fixtures.NewMyApp(e.ns, "web", fixtures.WithReplicas(1), fixtures.WithFinalizers(hold))
	e.create(live)
	fixtures.EventuallyReady(t.Context(), g, e.c, eventually, live)
	g.Expect(e.c.Delete(t.Context(), live)).To(Succeed())

	from := backedUpApp(e.ns, "web", "nginx:1.27")
	from.Spec.Host = live.Spec.Host
	e.sim.SetBackupDuration(3 * time.Second)
	owner := backupConfigOwner("bc-slow")
	payload, err := backupcontent.EncodePayload(&backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{Trigger: "Manual", MyAppUID: string(from.UID), MyAppGeneration: 1, TakenAt: time.Now(),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: e.ns, Name: "slow", UID: "bc-slow"}, OwnerID: ownerID,
			Owner: owner, IdempotencyKey: owner + "/manual/1"},
		MyApp: backupcontent.SnapshotApp(from),
	})
	g.Expect(err).NotTo(HaveOccurred())
	running, err := e.backups.Start(t.Context(), backup.StartRequest{App: e.ns + "-web", Owner: owner,
		IdempotencyKey: owner + "/manual/1", Payload: payload,
		Labels: map[string]string{backup.LabelNamespace: e.ns, labelMyApp: "web"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(running.Phase).To(Equal(backup.PhaseRunning))

	r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{BackupID: running.ID})
	e.create(r)
	reasonOf := func(g Gomega) string {
		got := &backupv1alpha1.Restore{}
		g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(r), got)).To(Succeed())
		g.Expect(got.Status.Phase).To(Equal(backupv1alpha1.RestorePending))
		return fixtures.Condition(got.Status.Conditions, reconcilingCondition).Reason
	}
	g.Eventually(reasonOf, eventually, tick).Should(Equal(backupv1alpha1.BackupRunningReason))
	g.Eventually(reasonOf, eventually, tick).Should(Equal(backupv1alpha1.TargetBeingDeletedReason))
	g.Consistently(reasonOf, time.Second, tick).Should(Equal(backupv1alpha1.TargetBeingDeletedReason))
	g.Expect(e.getApp("web").UID).To(Equal(live.UID), "the MyApp being deleted is left to go")

	g.Eventually(func() error {
		if err := e.c.Get(t.Context(), client.ObjectKeyFromObject(live), live); err != nil {
			return err
		}
		controllerutil.RemoveFinalizer(live, hold)
		return e.c.Update(t.Context(), live)
	}, eventually, tick).Should(Succeed())
	expectRestored(e, r, running, from, "web")
}

// TestARestoredMyAppDeletedBeforeItIsReadyFailsTheRestore: the Restore
// follows the MyApp it wrote, that incarnation only.
func TestARestoredMyAppDeletedBeforeItIsReadyFailsTheRestore(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	// No MyApp controller: the MyApp is never Ready.
	e.startRestores()
	from := backedUpApp(e.ns, "web", "nginx:1.27")
	b := e.seed(seedOptions{app: from})
	r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{BackupID: b.ID})
	e.create(r)
	got := e.waitForPhase(r, backupv1alpha1.RestoreRestoring)
	g.Expect(fixtures.Condition(got.Status.Conditions, reconcilingCondition).Reason).To(Equal(backupv1alpha1.WaitingForAppReason))
	app := e.getApp("web")
	g.Expect(app).NotTo(BeNil())
	g.Expect(e.c.Delete(t.Context(), app)).To(Succeed())
	got = e.waitForPhase(r, backupv1alpha1.RestoreFailed)
	ready := fixtures.Condition(got.Status.Conditions, readyCondition)
	g.Expect(ready.Reason).To(Equal(backupv1alpha1.RestoredAppDeletedReason))
	g.Expect(ready.Message).To(ContainSubstring(string(app.UID)))
}

// TestTheSourcesReadWhatBackupConfigsWrite: the labels the storage source
// filters by, and the owner the backupConfigRef source lists, are the ones
// the BackupConfig controller writes.
func TestTheSourcesReadWhatBackupConfigsWrite(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	mgr, err := newBackupConfigManager(e)
	g.Expect(err).NotTo(HaveOccurred())
	e.run(mgr)
	app := fixtures.NewMyApp(e.ns, "web")
	e.create(app)
	bc := fixtures.NewBackupConfig(e.ns, "web-nightly", "web")
	e.create(bc)
	var listed []backup.Backup
	g.Eventually(func(g Gomega) {
		listed, err = e.backups.List(t.Context(), backupConfigOwner(bc.UID), backup.InNamespace(e.ns))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(listed).NotTo(BeEmpty())
	}, eventually, tick).Should(Succeed())
	labels := listed[0].Labels
	g.Expect(labels).To(HaveKeyWithValue(backup.LabelNamespace, e.ns))
	g.Expect(labels).To(HaveKeyWithValue(labelMyApp, "web"))
	g.Expect(labels).To(HaveKeyWithValue(labelMyAppUID, string(app.UID)))
	g.Expect(labels).To(HaveKeyWithValue(labelBackupConfig, "web-nightly"))
	g.Expect(labels).To(HaveKey(labelTrigger))
	g.Expect(labels).To(HaveKeyWithValue(backup.LabelOwnerID, e.ownerID), "whose backup it is, without its content")
	described := chosenBackup(listed[0])
	g.Expect(*described.BackupConfig).To(Equal(backupv1alpha1.RestoredObject{Namespace: e.ns, Name: bc.Name, UID: bc.UID}))
	g.Expect(strings.HasPrefix(listed[0].IdempotencyKey, backupConfigOwner(bc.UID)+"/")).To(BeTrue())
}

// newBackupConfigManager is a manager running the BackupConfig controller
// on the env's namespace and backup service.
func newBackupConfigManager(e *testEnv) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(e.cp.Config, managerOptions(e.ns))
	if err != nil {
		return nil, err
	}
	err = (&backupconfig.Reconciler{Backups: e.backups, BackupPollInterval: 200 * time.Millisecond,
		OwnerID: e.ownerID, RenderChildren: myapp.RenderChildren, CleanupGrace: time.Second}).
		SetupWithManager(e.t.Context(), mgr)
	return mgr, err
}
