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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OwnWrites remembers, per object, the resourceVersion that the last
// pass to write it started from, until a pass reads a newer one. One
// OwnWrites follows one kind: the key is the namespace and name.
//
// A controller reads from an informer's cache, and an object comes back
// for reasons other than its own write (a child's event, a referenced
// object's event, a timer) before the cache holds that write. A pass that
// starts from the object as the writing pass read it knows nothing of the
// write: it would compute the same write again from a stale copy, a
// request for nothing (a merge patch that repeats the last one, or one
// guarded by the old resourceVersion that the API server refuses as a
// conflict and the controller retries with backoff), or, from a copy
// without the last write, undo part of it. Behind tells such a pass
// apart, so it writes nothing; the controller decides how it comes back
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
// the writing pass started from, and when it wrote.
type written struct {
	from string
	at   time.Time
}

func (w *OwnWrites) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// Behind reports whether obj, as this pass read it, is the version the last
// writing pass started from: the cache is behind that write. A pass on any
// other version, which the cache shows only once it holds the write (or a
// later change by anyone), forgets the entry, and so does a write older
// than MaxLag.
func (w *OwnWrites) Behind(obj client.Object) bool {
	key := client.ObjectKeyFromObject(obj)
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.from[key]
	if ok && last.from == obj.GetResourceVersion() && (w.MaxLag <= 0 || w.clock().Sub(last.at) <= w.MaxLag) {
		return true
	}
	delete(w.from, key)
	return false
}

// Wrote records that a pass that started from original, the object as it
// read it, wrote it. Pass the object as read, not the one the write
// returned: the write moves the resourceVersion on.
func (w *OwnWrites) Wrote(original client.Object) {
	w.record(client.ObjectKeyFromObject(original), original.GetResourceVersion())
}

func (w *OwnWrites) record(key types.NamespacedName, from string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.from == nil {
		w.from = map[types.NamespacedName]written{}
	}
	w.from[key] = written{from: from, at: w.clock()}
}

// Write makes write, a change of obj in the API server, and when it
// succeeds remembers the resourceVersion obj had before it (as Wrote does,
// without a copy of obj: only its key and version are kept).
func (w *OwnWrites) Write(obj client.Object, write func() error) error {
	key, from := client.ObjectKeyFromObject(obj), obj.GetResourceVersion()
	if err := write(); err != nil {
		return err
	}
	w.record(key, from)
	return nil
}

// Forget drops what is remembered of an object that is gone, or whose
// write failed.
func (w *OwnWrites) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.from, key)
}
