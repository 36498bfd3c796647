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
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// laggingCache is the client of a Reconciler whose cache can be held
// behind the API server: while stale holds an object, a Get of that object,
// and a List of MyApps, answer with it, as an informer that has not
// delivered the controller's own last write yet does. It counts the writes
// the Reconciler sends, status patches and other patches apart, per
// object, including the ones the API server refuses.
type laggingCache struct {
	mu      sync.Mutex
	stale   map[string]client.Object
	patches map[string]int
	status  map[string]int
	// beforeStatus, when set, runs once before the next status patch is
	// sent: another writer's change between a pass's read and its write.
	beforeStatus func()
}

func newLaggingCache() *laggingCache {
	return &laggingCache{stale: map[string]client.Object{}, patches: map[string]int{}, status: map[string]int{}}
}

func objectKey(obj client.Object) string {
	return fmt.Sprintf("%T %s/%s", obj, obj.GetNamespace(), obj.GetName())
}

// serveStale makes the cache answer with obj as it is now, until
// caughtUp.
func (l *laggingCache) serveStale(obj client.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	copied, _ := obj.DeepCopyObject().(client.Object)
	l.stale[objectKey(obj)] = copied
}

// caughtUp makes the cache answer from the API server again.
func (l *laggingCache) caughtUp() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.stale)
}

// counts returns the status patches and the other patches sent for obj.
func (l *laggingCache) counts(obj client.Object) (status, patches int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status[objectKey(obj)], l.patches[objectKey(obj)]
}

func (l *laggingCache) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			switch stale := l.stale[objectKey(obj)].(type) {
			case *backupv1alpha1.BackupConfig:
				stale.DeepCopyInto(obj.(*backupv1alpha1.BackupConfig))
			case *appsv1alpha1.MyApp:
				stale.DeepCopyInto(obj.(*appsv1alpha1.MyApp))
			}
			return nil
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			apps, ok := list.(*appsv1alpha1.MyAppList)
			if !ok {
				return nil
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			for i := range apps.Items {
				if stale, ok := l.stale[objectKey(&apps.Items[i])].(*appsv1alpha1.MyApp); ok {
					stale.DeepCopyInto(&apps.Items[i])
				}
			}
			return nil
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			l.mu.Lock()
			l.patches[objectKey(obj)]++
			l.mu.Unlock()
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
			opts ...client.SubResourcePatchOption) error {
			l.mu.Lock()
			l.status[objectKey(obj)]++
			before := l.beforeStatus
			l.beforeStatus = nil
			l.mu.Unlock()
			if before != nil {
				before()
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
}

// newLaggingEnv is newPhaseEnv with a Reconciler whose cache lags as the
// returned laggingCache says.
func newLaggingEnv(t *testing.T) (*testEnv, *clocktesting.FakeClock, *Reconciler, *laggingCache) {
	t.Helper()
	clk := clocktesting.NewFakeClock(phaseNow)
	e := newTestEnv(t, func(o *simulator.Options) { o.Clock = clk })
	c, err := client.NewWithWatch(cp.Config, client.Options{Scheme: testScheme})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	lag := newLaggingCache()
	r := &Reconciler{
		Base: pass.Base{
			Client:    appRefIndexed{Client: interceptor.NewClient(c, lag.funcs())},
			APIReader: e.c, Clock: clk,
		},
		Backups: e.backups, OwnerID: testOwnerID, RenderChildren: myapp.RenderChildren,
	}
	r.setDefaults()
	return e, clk, r, lag
}

// newHourlyLaggingPair is newLaggingEnv with a MyApp "web" and a
// BackupConfig of it, backing it up every hour, created.
func newHourlyLaggingPair(t *testing.T) (*testEnv, *clocktesting.FakeClock, *Reconciler, *laggingCache,
	*appsv1alpha1.MyApp, *backupv1alpha1.BackupConfig) {
	t.Helper()
	e, clk, r, lag := newLaggingEnv(t)
	app := e.newApp("web")
	bc := e.newBackupConfig("web", "web", fixtures.WithSchedule("0 * * * *"))
	e.create(app, bc)
	return e, clk, r, lag, app, bc
}

// passesOf returns a function that runs one pass of bc with r, fails the
// test on an error, and returns the pass's result.
func passesOf(t *testing.T, r *Reconciler, bc *backupv1alpha1.BackupConfig) func() ctrl.Result {
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bc)}
	return func() ctrl.Result {
		t.Helper()
		result, err := r.Reconcile(t.Context(), req)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		return result
	}
}

// A BackupConfig comes back for reasons other than its own writes (a
// MyApp event, a poll), and the cache may not hold the BackupConfig's own
// last write yet. A pass that starts from the BackupConfig as the writing
// pass read it knows nothing of that write: it found the running backup
// again, through the service, and patched the same status again from its
// stale copy (or, with status.nextScheduleTime in the patch, had it
// refused as a conflict and retried), a status patch for nothing. Such a
// pass writes nothing and comes back once the cache has caught up. A
// creation costs one status patch until the baseline backup finishes and
// one when it does; a scheduled backup, one when it starts and one when it
// finishes.
func TestAPassOnACacheBehindItsOwnStatusWriteWritesNoStatus(t *testing.T) {
	g := NewWithT(t)
	e, clk, r, lag, _, bc := newHourlyLaggingPair(t)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bc)}
	reconcileOnce := passesOf(t, r, bc)
	statusPatches := func() int {
		n, _ := lag.counts(bc)
		return n
	}

	reconcileOnce() // the finalizer
	g.Expect(e.get(bc)()).To(Succeed())
	lag.serveStale(bc)
	reconcileOnce() // the baseline backup starts
	g.Expect(statusPatches()).To(Equal(1), "the pass that starts the baseline backup writes the status")

	// Its MyApp brings the BackupConfig back before the cache has that
	// write.
	result, err := r.Reconcile(t.Context(), req)
	g.Expect(statusPatches()).To(Equal(1), "a pass on a cache without the last status write writes no status")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0), "it comes back once the cache has caught up")
	g.Expect(result.RequeueAfter).To(BeNumerically("<=", time.Second))
	g.Expect(e.ownBackups(bc)).To(HaveLen(1))

	lag.caughtUp()
	reconcileOnce() // the backup still runs
	g.Expect(statusPatches()).To(Equal(1), "nothing changed")
	clk.Step(time.Second)
	reconcileOnce() // the backup succeeded
	g.Expect(statusPatches()).To(Equal(2), "the baseline backup succeeded")
	current := e.fetchBackupConfig(bc)(g)
	g.Expect(current.Status.LastBackup).To(HaveField("Phase", backupv1alpha1.BackupSucceeded))
	g.Expect(condition(current, backupv1alpha1.ReadyCondition).Status).To(BeEquivalentTo("True"))
	g.Expect(current.Status.ObservedGeneration).To(Equal(current.Generation))
	t.Logf("a creation: %d status patches", statusPatches())

	// The slot comes: the scheduled backup starts, and a pass on a cache
	// without that write follows.
	clk.SetTime(slotAt(11).Add(30 * time.Second))
	lag.serveStale(current)
	lag.caughtUp()
	before := statusPatches()
	reconcileOnce()
	g.Expect(statusPatches()-before).To(Equal(1), "the pass that starts the scheduled backup writes the status")
	lag.serveStale(current)
	result, err = r.Reconcile(t.Context(), req)
	g.Expect(statusPatches()-before).To(Equal(1), "a pass on a cache without the last status write writes no status")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0), "it comes back once the cache has caught up")
	lag.caughtUp()
	reconcileOnce()
	g.Expect(statusPatches()-before).To(Equal(1), "the backup still runs")
	clk.Step(time.Second)
	reconcileOnce()
	g.Expect(statusPatches()-before).To(Equal(2), "the scheduled backup succeeded")
	current = e.fetchBackupConfig(bc)(g)
	g.Expect(current.Status.LastBackup).To(HaveField("Trigger", backupv1alpha1.TriggerSchedule))
	g.Expect(current.Status.LastBackup).To(HaveField("Phase", backupv1alpha1.BackupSucceeded))
	g.Expect(current.Status.NextScheduleTime.UTC()).To(Equal(slotAt(12)))
	g.Expect(e.ownBackups(bc)).To(HaveLen(2))
	t.Logf("a scheduled backup: %d status patches", statusPatches()-before)
}

// Issue 40's B11, as family 9 of the reliability campaign once met it:
// someone annotates a BackupConfig (here; a GitOps tool's label, a
// person's backup-now request) after a pass read it and before the pass
// wrote the status that records the backup it started. The status patch, a
// plain merge patch, lands on top of the annotation. The annotation's own
// event brings the BackupConfig back at once, and the cache shows the
// annotation before the status write: a version the writing pass did not
// start from, yet without the backup in status.lastBackup. The service's
// list lags its writes (its consistency delay), so the running backup is
// not listed either, and the MyApp's new generation wants a backup of its
// own: a pass from that copy started a second backup while the first ran.
// It waits for the cache instead, then follows the running backup, and
// backs the newer generation up once that one has finished. (The write
// has to be one that moves no schedule slot: a status write that does is
// sent with the resourceVersion it read, and the annotation makes it a
// conflict.)
func TestAPassOnACacheThatShowsAnotherWriteButNotItsOwnStartsNoSecondBackup(t *testing.T) {
	g := NewWithT(t)
	e, clk, r, lag, app, bc := newHourlyLaggingPair(t)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bc)}
	reconcileOnce := passesOf(t, r, bc)
	editApp := func(image string) {
		g.Expect(e.get(app)()).To(Succeed())
		app.Spec.Image = image
		g.Expect(e.c.Update(t.Context(), app)).To(Succeed())
	}
	reconcileOnce() // the finalizer
	reconcileOnce() // the baseline backup starts
	clk.Step(time.Second)
	reconcileOnce() // and succeeds
	g.Expect(e.ownBackups(bc)).To(HaveLen(1))

	// The MyApp changes; while the pass that backs that change up runs,
	// someone annotates the BackupConfig. The pass's status write (no
	// new slot, so no lock) lands on top of the annotation.
	editApp("nginx:1.28")
	annotated := bc.DeepCopy()
	lag.beforeStatus = func() {
		e.annotate(annotated, "example.com/owner-team", "shop")
	}
	reconcileOnce()
	g.Expect(annotated.Annotations).To(HaveKey("example.com/owner-team"), "the annotation was written")
	g.Expect(e.ownBackups(bc)).To(HaveLen(2))
	current := e.fetchBackupConfig(bc)(g)
	g.Expect(current.Status.LastBackup).To(HaveField("Phase", backupv1alpha1.BackupRunning))
	g.Expect(current.Annotations).To(HaveKey("example.com/owner-team"))

	// The MyApp changes again, and the annotation's event brings the
	// BackupConfig back from a cache that shows the annotation but not the
	// status write. The service's reads lag its writes for a while: its
	// list does not show the backup just started.
	editApp("nginx:1.29")
	lag.serveStale(annotated)
	e.sim.SetConsistencyDelay(simulator.ServiceBackup, time.Hour)
	result, err := r.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.ownBackups(bc)).To(HaveLen(2),
		"a pass on a copy without its own last status write started a second backup while the first runs")
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0), "it comes back once the cache has caught up")
	g.Expect(result.RequeueAfter).To(BeNumerically("<=", time.Second))

	e.sim.SetConsistencyDelay(simulator.ServiceBackup, 0)
	lag.caughtUp()
	reconcileOnce() // the change's backup still runs
	g.Expect(e.ownBackups(bc)).To(HaveLen(2))
	clk.Step(time.Second)
	reconcileOnce() // it succeeded; the newer generation's backup starts
	reconcileOnce()
	g.Expect(e.ownBackups(bc)).To(HaveLen(3), "the MyApp's newer generation is backed up once the first has finished")
	current = e.fetchBackupConfig(bc)(g)
	g.Expect(current.Status.LastBackup).To(HaveField("Trigger", backupv1alpha1.TriggerAppChange))
}

// The finalizer a pass put on the BackupConfig, and the hold it put on
// the MyApp, are not put on again by a pass on a cache that does not show
// them yet, nor is a released hold released again: the patch, guarded by
// the resourceVersion, would be refused as a conflict and the pass retried
// with backoff.
func TestAPassOnACacheBehindItsOwnFinalizerWritesRepeatsNone(t *testing.T) {
	g := NewWithT(t)
	e, _, r, lag := newLaggingEnv(t)
	app := e.newApp("web")
	bc := e.newBackupConfig("web", "web", fixtures.WithFinalBackup())
	e.create(app, bc)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bc)}
	patches := func(obj client.Object) int {
		_, n := lag.counts(obj)
		return n
	}

	lag.serveStale(bc)
	_, err := r.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(patches(bc)).To(Equal(1), "the finalizer")
	_, err = r.Reconcile(t.Context(), req)
	g.Expect(patches(bc)).To(Equal(1), "a pass on a cache without the finalizer does not add it again")
	g.Expect(err).NotTo(HaveOccurred())

	lag.caughtUp()
	g.Expect(e.get(app)()).To(Succeed())
	lag.serveStale(app)
	_, err = r.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(patches(app)).To(Equal(1), "the hold on the MyApp")
	_, err = r.Reconcile(t.Context(), req)
	g.Expect(patches(app)).To(Equal(1), "a pass on a cache without the hold does not put it on again")
	g.Expect(err).NotTo(HaveOccurred())

	lag.caughtUp()
	_, err = r.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(patches(app)).To(Equal(1))
	g.Expect(e.get(app)()).To(Succeed())
	g.Expect(app.Finalizers).To(ContainElement(backupv1alpha1.FinalBackupFinalizer))

	// The option goes off: the hold is released, and a pass on a cache
	// that still shows it does not release it again.
	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.BackupBeforeAppDeletion = false })
	lag.serveStale(app)
	_, err = r.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(patches(app)).To(Equal(2), "the hold released")
	_, err = r.Reconcile(t.Context(), req)
	g.Expect(patches(app)).To(Equal(2), "a pass on a cache that still shows the hold does not release it again")
	g.Expect(err).NotTo(HaveOccurred())
	lag.caughtUp()
	_, err = r.Reconcile(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(patches(app)).To(Equal(2))
	g.Expect(e.get(app)()).To(Succeed())
	g.Expect(app.Finalizers).NotTo(ContainElement(backupv1alpha1.FinalBackupFinalizer))
}
