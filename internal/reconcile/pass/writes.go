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

package pass

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OwnWrites remembers, per object, the resourceVersion that the last
// pass to write it started from and the one its write made, until a pass
// reads the write or a later version. One OwnWrites follows one kind: the
// key is the namespace and name.
//
// A controller reads from an informer's cache, and an object comes back
// for reasons other than its own write (a child's event, a referenced
// object's event, a timer) before the cache holds that write. A pass that
// starts from the object as the writing pass read it knows nothing of the
// write: it would compute the same write again from a stale copy, a
// request for nothing (a merge patch that repeats the last one, or one
// guarded by the old resourceVersion that the API server refuses as a
// conflict and the controller retries with backoff), or, from a copy
// without the last write, undo part of it. So does a pass that starts from
// a version someone else made between the writing pass's read and its
// write (an annotation, a label, a spec edit): that version is not the one
// the write started from, yet it lacks the write, and its own watch event
// brings the object back at once. Behind tells both apart, so such a pass
// writes nothing; the controller decides how it comes back
// once the cache holds the write. Only objects with a write the cache has
// not shown yet have an entry, so a controller at rest holds none. Base
// keeps every controller's finalizer and status writes to its own objects
// in one (Begin, PatchStatus); the BackupConfig controller keeps the
// final-backup holds it puts on MyApps in another.
type OwnWrites struct {
	// MaxLag, when set, bounds how long one write holds passes back: a
	// cache that has not shown the write after this long is taken for one
	// that will not (an object put back by hand to an older copy, a test's
	// frozen cache), and the pass goes ahead, at the cost of a write that
	// may repeat. Zero waits for the cache however long it takes; a
	// controller that skips the whole pass while behind (Begin) needs the
	// bound, or a cache that never catches up would stop it for good.
	MaxLag time.Duration

	mu   sync.Mutex
	from map[types.NamespacedName]written
	// now is the clock of MaxLag; nil is time.Now.
	now func() time.Time
}

// written is one write the cache has not shown yet: the resourceVersion
// the writing pass started from, the one its write made, and when it
// wrote.
type written struct {
	from, to string
	at       time.Time
}

func (w *OwnWrites) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// Behind reports whether obj, as this pass read it, is older than the last
// write to it: the version that write started from, or any version before
// the one it made, which the API server numbers in order (resource
// versions compare, KEP-5504: resourceversion.CompareResourceVersion). A
// pass on the write or any later version, which the cache shows only once
// it holds the write, forgets the entry, and so does a write older than
// MaxLag. A version that does not compare (a store that does not number
// them) is behind only when it is the one the write started from.
func (w *OwnWrites) Behind(obj client.Object) bool {
	key := client.ObjectKeyFromObject(obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.from[key]
	if ok && last.behind(obj.GetResourceVersion()) && (w.MaxLag <= 0 || w.clock().Sub(last.at) <= w.MaxLag) {
		return true
	}
	delete(w.from, key)
	return false
}

// behind reports whether version rv is older than the write: the version it
// started from, or one before the version it made.
func (last written) behind(rv string) bool {
	if rv == last.from {
		return true
	}
	order, err := resourceversion.CompareResourceVersion(rv, last.to)
	return err == nil && order < 0
}

// Wrote records that a pass that started from original, the object as it
// read it, wrote it, and the write answered with written: the object with
// the resourceVersion the write made.
func (w *OwnWrites) Wrote(original, written client.Object) {
	w.record(client.ObjectKeyFromObject(original), original.GetResourceVersion(), written.GetResourceVersion())
}

func (w *OwnWrites) record(key types.NamespacedName, from, to string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.from == nil {
		w.from = map[types.NamespacedName]written{}
	}
	w.from[key] = written{from: from, to: to, at: w.clock()}
}

// Write makes write, a change of obj in the API server that updates obj
// with its answer (as the client's Patch and Update do), and when it
// succeeds remembers the resourceVersion obj had before it and the one it
// has after (as Wrote does, without a copy of obj: only its key and
// versions are kept).
func (w *OwnWrites) Write(obj client.Object, write func() error) error {
	key, from := client.ObjectKeyFromObject(obj), obj.GetResourceVersion()
	if err := write(); err != nil {
		return err
	}
	w.record(key, from, obj.GetResourceVersion())
	return nil
}

// Forget drops what is remembered of an object that is gone, or whose
// write failed.
func (w *OwnWrites) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.from, key)
}
