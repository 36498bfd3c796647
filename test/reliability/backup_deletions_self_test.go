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

package reliability

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// TestDeletionCheckCountsEachProblem plants, with no manager running, one
// problem of each kind family 9's deletionCheck claims to catch, and one
// BackupConfig of each policy that does everything right: a check that
// cannot fail would make the family pass.
func TestDeletionCheckCountsEachProblem(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	s := newScenario(t)
	backups, err := httpbackup.New(external.Config{BaseURL: s.url, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())
	start := func(owner, key string, labels map[string]string) string {
		b, err := backups.Start(ctx, backup.StartRequest{App: "app", Owner: owner, IdempotencyKey: key, Labels: labels})
		g.Expect(err).NotTo(HaveOccurred())
		return b.ID
	}
	newBC := func(name string, policy backupv1alpha1.DeletionPolicy) *backupv1alpha1.BackupConfig {
		bc := s.newBackupConfig(name, "app", policy)
		s.create(bc)
		return bc
	}
	dc := watchDeletions(ctx, s.sim, s.ns)
	// Without a manager, nothing holds a deleted BackupConfig: it is gone at
	// once.
	deleteAndWait := func(bc *backupv1alpha1.BackupConfig) {
		dc.deleted(bc)
		s.remove(bc)
		g.Eventually(func() []string { return dc.stillThere(ctx) }).Should(BeEmpty())
		time.Sleep(300 * time.Millisecond) // a few samples see it gone
	}

	// Delete, gone while the service holds one of its backups.
	leaky := newBC("leaky", backupv1alpha1.DeletionPolicyDelete)
	start(backupOwner(leaky), backupOwner(leaky)+"/change/0/1", nil)
	deleteAndWait(leaky)
	// Delete, gone with none, then one appears.
	late := newBC("late", backupv1alpha1.DeletionPolicyDelete)
	deleteAndWait(late)
	start(backupOwner(late), backupOwner(late)+"/change/0/1", nil)
	// Retain, one of its backups deleted after it went.
	lost := newBC("lost", backupv1alpha1.DeletionPolicyRetain)
	id := start(backupOwner(lost), backupOwner(lost)+"/change/0/1", nil)
	deleteAndWait(lost)
	g.Expect(backups.Delete(ctx, id, backupOwner(lost))).To(Succeed())
	// Right: Delete gone with none and none later, Retain whose backups stay.
	deleteAndWait(newBC("clean", backupv1alpha1.DeletionPolicyDelete))
	kept := newBC("kept", backupv1alpha1.DeletionPolicyRetain)
	start(backupOwner(kept), backupOwner(kept)+"/change/0/1", nil)
	deleteAndWait(kept)
	// Two SUCCEEDED final backups of one MyApp by one owner; one of another
	// MyApp is fine.
	final := func(app string) map[string]string {
		return map[string]string{"backup.myapp.dev/trigger": string(backupv1alpha1.TriggerAppDeletion),
			"backup.myapp.dev/myapp-uid": app}
	}
	start("backupconfig/twice", "backupconfig/twice/final/a/1", final("a"))
	start("backupconfig/twice", "backupconfig/twice/final/a/2", final("a"))
	start("backupconfig/twice", "backupconfig/twice/final/b/1", final("b"))
	time.Sleep(time.Second) // the backups succeed after 300 ms

	f := dc.finish(ctx)
	g.Expect(f.problems).To(ConsistOf(
		ContainSubstring("BackupConfig leaky (Delete) gone while the service held 1 of its backups"),
		ContainSubstring("of BackupConfig late (Delete) appeared after it was gone"),
		ContainSubstring("of BackupConfig lost (Retain) is gone"),
		ContainSubstring("two SUCCEEDED final backups of MyApp uid a by backupconfig/twice"),
	))
	g.Expect([]int{f.deleteGone, f.retainGone, f.retainedBackups, f.finals}).To(Equal([]int{3, 2, 2, 2}),
		"Delete ones gone, Retain ones gone, retained backups, final backups")
	t.Logf("deletion check: %d problems planted, %d found over %d samples", 4, len(f.problems), f.samples)
}

// TestReleaseCheckKnowsTheWaysOut feeds family 9's release judge releases
// directly: a BackupConfig taken a documented way out before the release
// owes nothing, one taken it after the release, or never, still owes a
// SUCCEEDED final backup, and one that has it owes nothing.
func TestReleaseCheckKnowsTheWaysOut(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	s := newScenario(t)
	backups, err := httpbackup.New(external.Config{BaseURL: s.url, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())
	rc := &releaseCheck{sim: s.sim, want: map[types.UID][]*backupv1alpha1.BackupConfig{}, held: map[types.UID]bool{},
		wayOut: map[types.UID]time.Time{}}
	bc := func(name string) *backupv1alpha1.BackupConfig {
		return &backupv1alpha1.BackupConfig{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name, UID: types.UID("uid-" + name)}}
	}
	release := func(app string, seen time.Time) {
		obj := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: app, UID: types.UID(app),
			DeletionTimestamp: &metav1.Time{Time: seen}, Finalizers: []string{backupv1alpha1.FinalBackupFinalizer}}}
		rc.observe(watch.Modified, obj, seen)
		obj.Finalizers = nil
		rc.observe(watch.Modified, obj, seen)
	}
	now := time.Now()

	// Option turned off (or deleted under Delete) before the release: owes
	// nothing. Its neighbour, taken no way out, owes its final backup.
	out, stays := bc("out"), bc("stays")
	rc.expect("app-1", []*backupv1alpha1.BackupConfig{out, stays})
	rc.tookOut(out.UID, now)
	release("app-1", now.Add(time.Second))
	// The way out taken after the release was seen: early.
	after := bc("after")
	rc.expect("app-2", []*backupv1alpha1.BackupConfig{after})
	rc.tookOut(after.UID, now.Add(time.Minute))
	release("app-2", now.Add(time.Second))
	// A SUCCEEDED final backup of the MyApp: owes nothing.
	done := bc("done")
	_, err = backups.Start(ctx, backup.StartRequest{App: "app", Owner: backupOwner(done), IdempotencyKey: "final-app-3",
		Labels: map[string]string{"backup.myapp.dev/trigger": string(backupv1alpha1.TriggerAppDeletion),
			"backup.myapp.dev/myapp-uid": "app-3"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() simulator.Phase { return s.sim.Backups()[0].Phase }).Should(Equal(simulator.PhaseSucceeded))
	rc.expect("app-3", []*backupv1alpha1.BackupConfig{done})
	release("app-3", time.Now())

	checked, waysOut, early, _ := rc.Results()
	g.Expect(checked).To(Equal(3))
	g.Expect(waysOut).To(Equal(1))
	g.Expect(early).To(ConsistOf(
		ContainSubstring("MyApp app-1 (uid app-1) released at"),
		ContainSubstring("MyApp app-2 (uid app-2) released at"),
	))
	g.Expect(early[0]).To(HaveSuffix("by BackupConfig stays"))
	g.Expect(early[1]).To(HaveSuffix("by BackupConfig after"))
}
