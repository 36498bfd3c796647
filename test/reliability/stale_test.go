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
	"maps"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

const (
	// staleBudget is how many reads one injection serves from the older
	// snapshot before the controllers' view catches up.
	staleBudget = 3
	// staleFor bounds how long one injection lasts, reads or not: a lagging
	// cache catches up within moments.
	staleFor = 2 * time.Second
	// nudgeAnnotation is what the test writes to the stale object once the
	// view has caught up, standing for the watch event a lagging cache
	// delivers when it catches up (the wrapper serves the old version only
	// after the real event was delivered, so without it the controllers would
	// wait for an event that a real lagging cache still owes them). Every
	// MyApp and BackupConfig of its namespace is nudged with it (see nudge).
	nudgeAnnotation = "reliability.myapp.dev/caught-up"
)

// kindOf names the Go type of a typed object or list ("MyApp" for both
// *MyApp and *MyAppList).
func kindOf(obj any) string {
	return strings.TrimSuffix(reflect.TypeOf(obj).Elem().Name(), "List")
}

func historyKey(kind string, key types.NamespacedName) string { return kind + " " + key.String() }

// history records every version of the objects the controllers watch as the
// manager's cache receives them, in order; nil stands for a deletion.
type history struct {
	mu       sync.Mutex
	versions map[string][]client.Object
}

func (h *history) add(obj client.Object, deleted bool) {
	key := historyKey(kindOf(obj), client.ObjectKeyFromObject(obj))
	var v client.Object
	if !deleted {
		v = obj.DeepCopyObject().(client.Object)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.versions[key] = append(h.versions[key], v)
}

func (h *history) of(key string) []client.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]client.Object(nil), h.versions[key]...)
}

// watch feeds h from the manager's informers of every kind the controllers
// read.
func (h *history) watch(mgr ctrl.Manager) error {
	kinds := []client.Object{&appsv1alpha1.MyApp{}, &backupv1alpha1.BackupConfig{},
		&appsv1.Deployment{}, &corev1.Service{}, &networkingv1.Ingress{}}
	for _, k := range kinds {
		inf, err := mgr.GetCache().GetInformer(context.Background(), k)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { h.add(obj.(client.Object), false) },
			UpdateFunc: func(_, obj any) { h.add(obj.(client.Object), false) },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				if o, ok := obj.(client.Object); ok {
					h.add(o, true)
				}
			},
		}); err != nil {
			return err
		}
	}
	return nil
}

// staleEvent finds, in one object's history from index from on, the event a
// stale read reaches back across: it returns the index of the first version
// after the event and the version a lagging cache would still hold (nil: the
// object did not exist).
type staleEvent func(h []client.Object, from int) (at int, stale client.Object, found bool)

// firstChange is the first pair of consecutive versions that changed holds
// for; the version before it is the stale one.
func firstChange(changed func(prev, cur client.Object) bool) staleEvent {
	return func(h []client.Object, from int) (int, client.Object, bool) {
		for i := max(from, 1); i < len(h); i++ {
			if changed(h[i-1], h[i]) {
				return i, h[i-1], true
			}
		}
		return 0, nil, false
	}
}

// newIncarnation is the first version of an object with the same name and a
// new UID; the stale version is the old incarnation's last one.
func newIncarnation(h []client.Object, from int) (int, client.Object, bool) {
	var last client.Object
	for i, v := range h {
		if v == nil {
			continue
		}
		if i >= from && last != nil && v.GetUID() != last.GetUID() {
			return i, last, true
		}
		last = v
	}
	return 0, nil, false
}

func bothExist(prev, cur client.Object) bool { return prev != nil && cur != nil }

func statusChanged(prev, cur client.Object) bool {
	return bothExist(prev, cur) &&
		!reflect.DeepEqual(prev.(*appsv1alpha1.MyApp).Status, cur.(*appsv1alpha1.MyApp).Status)
}

func finalizersChanged(prev, cur client.Object) bool {
	return bothExist(prev, cur) && !reflect.DeepEqual(prev.GetFinalizers(), cur.GetFinalizers())
}

func deletionBegan(prev, cur client.Object) bool {
	return bothExist(prev, cur) && prev.GetDeletionTimestamp() == nil && cur.GetDeletionTimestamp() != nil
}

func appRefChanged(prev, cur client.Object) bool {
	return bothExist(prev, cur) &&
		prev.(*backupv1alpha1.BackupConfig).Spec.AppRef != cur.(*backupv1alpha1.BackupConfig).Spec.AppRef
}

// anyChange is any new version of an existing object, the controllers' own
// writes included.
func anyChange(prev, cur client.Object) bool {
	return bothExist(prev, cur) && prev.GetResourceVersion() != cur.GetResourceVersion()
}

// staleTarget is the object whose reads an injection makes stale.
type staleTarget struct {
	kind  string
	key   types.NamespacedName
	event staleEvent
}

// staleReads wraps the client the controllers read their cache through.
// Once its target's event has reached the cache, it serves reads of the
// target made from site (every site when empty) from the version before the
// event, staleBudget times or for staleFor, whichever ends first: the view
// of a cache that lags behind the one that delivered the event (Sieve's
// stale read, OSDI 2022). Writes go through untouched; the API server judges
// them against the current object, as it would a lagging controller's.
type staleReads struct {
	client.Client
	hist *history
	site string

	mu     sync.Mutex
	target *staleTarget
	from   int       // the target's history length when it was armed
	opened time.Time // when the first stale read was served
	closed bool
	served int
	// sites are the call sites that read the target after its event, and
	// allSites every call site of a cache read, whatever it read.
	sites    map[string]int
	allSites map[string]bool
}

func newStaleReads(site string) *staleReads {
	return &staleReads{
		hist:     &history{versions: map[string][]client.Object{}},
		site:     site,
		sites:    map[string]int{},
		allSites: map[string]bool{},
	}
}

// install is a scenario's clientFor: the wrapper around mgr's client, fed by
// mgr's informers.
func (w *staleReads) install(mgr ctrl.Manager) client.Client {
	if err := w.hist.watch(mgr); err != nil {
		panic(fmt.Sprintf("watching the manager's informers: %v", err))
	}
	w.Client = mgr.GetClient()
	return w
}

// arm starts an injection: the event is looked for from now on.
func (w *staleReads) arm(t staleTarget) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.target = &t
	w.from = len(w.hist.of(historyKey(t.kind, t.key)))
}

// Served is how many reads were served stale.
func (w *staleReads) Served() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.served
}

// Sites lists the call sites that read the target after its event.
func (w *staleReads) Sites() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.sites))
}

// AllSites lists every call site that read the cache.
func (w *staleReads) AllSites() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.allSites))
}

// callSite names the controller code that made a read: the innermost frame
// in internal/reconcile, as "file.go:line function".
func callSite() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "/internal/reconcile/") {
			fn := f.Function[strings.LastIndex(f.Function, "/")+1:]
			return fmt.Sprintf("%s:%d %s", filepath.Base(f.File), f.Line, fn)
		}
		if !more {
			return "outside the controllers"
		}
	}
}

// stale decides one read of key of kind from site: it returns the version to
// serve instead of the cache's and true, or false to read the cache.
func (w *staleReads) stale(kind string, key types.NamespacedName, site string) (client.Object, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.allSites[site] = true
	t := w.target
	if t == nil || t.kind != kind || t.key != key {
		return nil, false
	}
	at, old, found := t.event(w.hist.of(historyKey(kind, key)), w.from)
	if !found || at < w.from {
		return nil, false
	}
	w.sites[site]++
	if w.closed || (w.site != "" && w.site != site) {
		return nil, false
	}
	if w.opened.IsZero() {
		w.opened = time.Now()
		// The view catches up after staleFor even if nothing reads it again:
		// the controllers then get the event it owed them.
		time.AfterFunc(staleFor, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.close()
		})
	}
	w.served++
	if w.served == staleBudget {
		w.close()
	}
	return old, true
}

// close ends the injection; if it served anything, the object is nudged, as
// the caught-up cache would deliver its current version.
func (w *staleReads) close() {
	if w.closed {
		return
	}
	w.closed = true
	if w.served == 0 {
		return
	}
	t := *w.target
	go nudge(t.kind, t.key)
}

func nudge(kind string, key types.NamespacedName) {
	var target client.Object
	switch kind {
	case "MyApp":
		target = &appsv1alpha1.MyApp{}
	case "BackupConfig":
		target = &backupv1alpha1.BackupConfig{}
	case "Deployment":
		target = &appsv1.Deployment{}
	case "Service":
		target = &corev1.Service{}
	case "Ingress":
		target = &networkingv1.Ingress{}
	default:
		return
	}
	target.SetName(key.Name)
	target.SetNamespace(key.Namespace)
	objs := []client.Object{target}
	// The handlers the owed event would have reached may filter an
	// annotation change of the target out (the BackupConfig controller
	// watches MyApps for spec, deletion and its finalizer only), and a target
	// that is gone cannot be deleted again. Every MyApp and BackupConfig of
	// the namespace stands for whatever they would have enqueued: both
	// controllers reconcile their own kind on an annotation change.
	ctx := context.Background()
	var apps appsv1alpha1.MyAppList
	var bcs backupv1alpha1.BackupConfigList
	if k8sClient.List(ctx, &apps, client.InNamespace(key.Namespace)) == nil {
		for i := range apps.Items {
			objs = append(objs, &apps.Items[i])
		}
	}
	if k8sClient.List(ctx, &bcs, client.InNamespace(key.Namespace)) == nil {
		for i := range bcs.Items {
			objs = append(objs, &bcs.Items[i])
		}
	}
	patch := client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, nudgeAnnotation, time.Now().Format(time.RFC3339Nano)))
	for _, o := range objs {
		// NotFound is fine: it went meanwhile.
		_ = k8sClient.Patch(ctx, o, patch)
	}
}

func (w *staleReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	old, ok := w.stale(kindOf(obj), key, callSite())
	if !ok {
		return w.Client.Get(ctx, key, obj, opts...)
	}
	if old == nil {
		gvk, _ := w.GroupVersionKindFor(obj)
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}, key.Name)
	}
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(old.DeepCopyObject()).Elem())
	return nil
}

// List serves the target from the older snapshot within a list of its
// namespace: replaced, dropped (it did not exist) or put back (it exists no
// more). Lists with a label or field selector are read from the cache: the
// wrapper cannot tell whether the older version matches an index. Family 9's
// staleIndex (stale_index_test.go) serves the BackupConfig controller's
// index lists stale, from a whole older view of the BackupConfigs.
func (w *staleReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := w.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	site := callSite()
	w.mu.Lock()
	t := w.target
	w.mu.Unlock()
	if t == nil || kindOf(list) != t.kind || (lo.Namespace != "" && lo.Namespace != t.key.Namespace) {
		w.stale(kindOf(list), types.NamespacedName{}, site) // counts the site only
		return nil
	}
	if (lo.LabelSelector != nil && !lo.LabelSelector.Empty()) || (lo.FieldSelector != nil && !lo.FieldSelector.Empty()) {
		w.stale(kindOf(list), types.NamespacedName{}, site)
		return nil
	}
	old, ok := w.stale(t.kind, t.key, site)
	if !ok {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	var out []k8sruntime.Object
	placed := false
	for _, item := range items {
		o := item.(client.Object)
		if o.GetName() != t.key.Name {
			out = append(out, o)
			continue
		}
		placed = true
		if old != nil {
			out = append(out, old.DeepCopyObject().(client.Object))
		}
	}
	if !placed && old != nil {
		out = append(out, old.DeepCopyObject().(client.Object))
	}
	return meta.SetList(list, out)
}
