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
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// staleIndexBudget is how many stale lists one injection of staleIndex
// serves before the view catches up (or staleFor passes).
const staleIndexBudget = 12

// staleIndex wraps the client the controllers read their cache through, for
// the lists family 2's staleReads leaves alone: BackupConfigs listed by the
// spec.appRef.name index (backupconfig.AppRefIndexKey), which the
// BackupConfig controller makes in appHoldWanted (holds.go) and
// backupConfigsForApp (backupconfig_controller.go). Once armed, such a list
// is answered from the BackupConfigs of the namespace as the cache held them
// at that moment, filtered by the index as the cache would have filtered
// them: it misses a BackupConfig whose appRef moved to the MyApp since, or
// that was created since; it still lists one that moved away or was deleted;
// and it shows a listed one's older spec and status (backupBeforeAppDeletion
// before a toggle). That is the view of a BackupConfig informer lagging
// behind the MyApp informer, the index's only way to be stale. An
// injection serves staleIndexBudget lists that differ from the cache's
// answer or lasts staleFor, whichever ends first.
//
// Once it ends, every BackupConfig the frozen view lagged on (a new
// spec or deletion, or not in the view at all) is nudged with an annotation: it
// stands for the watch event a lagging informer still owes the controller,
// which reconciles that BackupConfig once it arrives. In this test the real
// informer delivered the event already, possibly before the stale list was
// served, so without the nudge the model would lose an event a real lag
// never loses.
type staleIndex struct {
	client.Client
	// caughtUp is called once an injection that served a stale list ends,
	// with the BackupConfigs whose events the lagging view owed (nudge by
	// default).
	caughtUp func(owed []types.NamespacedName)

	mu sync.Mutex
	// view is the namespace's BackupConfigs as the cache held them when the
	// injection was armed; nil when none is armed.
	view []backupv1alpha1.BackupConfig
	ns   string
	// armed counts injections, so a timer of an earlier one ends nothing.
	armed  int
	served int // stale lists served by the current injection
	// lists counts every list by the index; stale those answered from the
	// older view, and staleSpecs those of them whose members or specs (not
	// only status) differ from the cache's answer.
	lists, stale, staleSpecs int
}

func newStaleIndex() *staleIndex {
	return &staleIndex{caughtUp: nudgeBackupConfigs}
}

// install is a scenario's clientFor: the wrapper around mgr's client.
func (w *staleIndex) install(mgr ctrl.Manager) client.Client {
	w.Client = mgr.GetClient()
	return w
}

// arm freezes the view of ns's BackupConfigs the index lists answer from,
// ending the injection before it if one is still open.
func (w *staleIndex) arm(ctx context.Context, ns string) error {
	var list backupv1alpha1.BackupConfigList
	if err := w.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("reading the view to freeze: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked()
	w.view, w.ns, w.served = list.Items, ns, 0
	w.armed++
	armed := w.armed
	// The view catches up after staleFor even if nothing lists again.
	time.AfterFunc(staleFor, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.armed == armed {
			w.closeLocked()
		}
	})
	return nil
}

// Counts returns how many lists by the index the controllers made, how many
// were answered stale, and how many of those differed in members or spec.
func (w *staleIndex) Counts() (lists, stale, staleSpecs int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lists, w.stale, w.staleSpecs
}

// closeLocked ends the current injection; if it served a stale list, the
// BackupConfigs it lagged on get the event the controller is owed.
func (w *staleIndex) closeLocked() {
	if w.view == nil {
		return
	}
	view, ns, served := w.view, w.ns, w.served
	w.view = nil
	if served == 0 {
		return
	}
	go func() {
		var current backupv1alpha1.BackupConfigList
		if err := w.Client.List(context.Background(), &current, client.InNamespace(ns)); err != nil {
			return
		}
		var owed []types.NamespacedName
		for i := range current.Items {
			bc := &current.Items[i]
			if !slices.ContainsFunc(view, func(v backupv1alpha1.BackupConfig) bool {
				return v.UID == bc.UID && sameSpec(&v, bc)
			}) {
				owed = append(owed, client.ObjectKeyFromObject(bc))
			}
		}
		if len(owed) > 0 {
			w.caughtUp(owed)
		}
	}()
}

// List answers a list of BackupConfigs by the appRef index from the frozen
// view while an injection is open; every other list goes to the cache.
func (w *staleIndex) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := w.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	bcs, ok := list.(*backupv1alpha1.BackupConfigList)
	if !ok {
		return nil
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.FieldSelector == nil {
		return nil
	}
	appName, ok := lo.FieldSelector.RequiresExactMatch(backupconfig.AppRefIndexKey)
	if !ok {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lists++
	if w.view == nil || (lo.Namespace != "" && lo.Namespace != w.ns) {
		return nil
	}
	var old []backupv1alpha1.BackupConfig
	for i := range w.view {
		if w.view[i].Spec.AppRef.Name == appName {
			old = append(old, *w.view[i].DeepCopy())
		}
	}
	if sameBackupConfigs(old, bcs.Items, func(a, b *backupv1alpha1.BackupConfig) bool {
		return a.ResourceVersion == b.ResourceVersion
	}) {
		return nil
	}
	w.stale++
	if !sameBackupConfigs(old, bcs.Items, sameSpec) {
		w.staleSpecs++
	}
	bcs.Items = old
	w.served++
	if w.served >= staleIndexBudget {
		w.closeLocked()
	}
	return nil
}

// sameBackupConfigs reports whether a and b hold the same BackupConfigs (by
// UID), each pair alike by same.
func sameBackupConfigs(a, b []backupv1alpha1.BackupConfig, same func(a, b *backupv1alpha1.BackupConfig) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		j := slices.IndexFunc(b, func(bc backupv1alpha1.BackupConfig) bool { return bc.UID == a[i].UID })
		if j < 0 || !same(&a[i], &b[j]) {
			return false
		}
	}
	return true
}

// sameSpec reports whether two versions of a BackupConfig agree on what the
// controller acts on: the spec and whether it is being deleted.
func sameSpec(a, b *backupv1alpha1.BackupConfig) bool {
	return equality.Semantic.DeepEqual(a.Spec, b.Spec) && a.DeletionTimestamp.IsZero() == b.DeletionTimestamp.IsZero()
}

// nudgeBackupConfigs writes nudgeAnnotation to each BackupConfig: the
// BackupConfig controller reconciles its own kind on an annotation change,
// as it would on the watch event a lagging informer delivers late.
func nudgeBackupConfigs(owed []types.NamespacedName) {
	patch := client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, nudgeAnnotation, time.Now().Format(time.RFC3339Nano)))
	for _, key := range owed {
		bc := &backupv1alpha1.BackupConfig{}
		bc.SetName(key.Name)
		bc.SetNamespace(key.Namespace)
		// NotFound is fine: it went meanwhile.
		_ = k8sClient.Patch(context.Background(), bc, patch)
	}
}

// TestStaleIndexServesTheOlderView checks the wrapper on its own, over a
// fake client with the controller's index: once armed, a list by the index
// misses a BackupConfig moved to the MyApp, still lists one moved away,
// shows a toggled option as it was, and counts each; other lists and the
// lists after the budget are the cache's; the BackupConfigs the view lagged
// on are the ones it nudges.
func TestStaleIndexServesTheOlderView(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	ns := "stale-index"
	a := fixtures.NewBackupConfig(ns, "a", "web", fixtures.WithFinalBackup())
	b := fixtures.NewBackupConfig(ns, "b", "api", fixtures.WithFinalBackup())
	c := fixtures.NewBackupConfig(ns, "c", "api")
	for i, bc := range []*backupv1alpha1.BackupConfig{a, b, c} {
		bc.UID = types.UID(fmt.Sprintf("uid-%d", i))
	}
	cache := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(a, b, c).
		WithIndex(&backupv1alpha1.BackupConfig{}, backupconfig.AppRefIndexKey, func(obj client.Object) []string {
			return []string{obj.(*backupv1alpha1.BackupConfig).Spec.AppRef.Name}
		}).Build()
	owed := make(chan []types.NamespacedName, 1)
	w := newStaleIndex()
	w.Client = cache
	w.caughtUp = func(keys []types.NamespacedName) { owed <- keys }
	byIndex := func(app string) []string {
		var list backupv1alpha1.BackupConfigList
		g.Expect(w.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{backupconfig.AppRefIndexKey: app})).To(Succeed())
		names := make([]string, 0, len(list.Items))
		for _, bc := range list.Items {
			names = append(names, fmt.Sprintf("%s:%v", bc.Name, bc.Spec.BackupBeforeAppDeletion))
		}
		slices.Sort(names)
		return names
	}

	g.Expect(w.arm(ctx, ns)).To(Succeed())
	g.Expect(byIndex("web")).To(Equal([]string{"a:true"}), "nothing changed yet: the cache's answer")
	// b moves from api to web; c turns the final backup on.
	g.Expect(cache.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
	b.Spec.AppRef.Name = "web"
	g.Expect(cache.Update(ctx, b)).To(Succeed())
	g.Expect(cache.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
	c.Spec.BackupBeforeAppDeletion = true
	g.Expect(cache.Update(ctx, c)).To(Succeed())

	g.Expect(byIndex("web")).To(Equal([]string{"a:true"}), "b moved to web: missing")
	g.Expect(byIndex("api")).To(Equal([]string{"b:true", "c:false"}), "b moved away, c toggled: as they were")
	var all backupv1alpha1.BackupConfigList
	g.Expect(w.List(ctx, &all, client.InNamespace(ns))).To(Succeed())
	g.Expect(all.Items).To(HaveLen(3), "a list without the index is the cache's")
	lists, stale, specs := w.Counts()
	g.Expect([]int{lists, stale, specs}).To(Equal([]int{3, 2, 2}))

	for range staleIndexBudget - stale {
		g.Expect(byIndex("web")).To(Equal([]string{"a:true"}))
	}
	g.Expect(byIndex("web")).To(Equal([]string{"a:true", "b:true"}), "after the budget: the cache's answer")
	g.Expect(byIndex("api")).To(Equal([]string{"c:true"}))
	_, stale, _ = w.Counts()
	g.Expect(stale).To(Equal(staleIndexBudget))
	var keys []types.NamespacedName
	g.Eventually(owed).Should(Receive(&keys))
	g.Expect(keys).To(ConsistOf(client.ObjectKeyFromObject(b), client.ObjectKeyFromObject(c)),
		"the BackupConfigs the view lagged on get their owed event")
}
