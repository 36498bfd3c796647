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
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

const (
	// CacheLagRetryDelay is how soon a pass that met a copy behind the
	// controller's own last write runs again (Begin). The cache usually
	// holds the write within milliseconds, and not every controller lets
	// the write's own event through its predicates.
	CacheLagRetryDelay = 250 * time.Millisecond
	// MaxCacheLag bounds how long one write holds passes back
	// (OwnWrites.MaxLag): a cache that still shows the copy the write
	// started from after this long is taken for one that will not catch up
	// (the object put back to an older copy), and the pass runs rather than
	// wait for ever.
	MaxCacheLag = 5 * time.Second
)

// Begin starts a pass over the object req names: it reads it from the
// cache into obj and reports whether the pass goes on. When it does not,
// result and err are what Reconcile returns:
//   - the object is gone: what b remembers of it is forgotten, and gone (when
//     not nil) forgets what the controller remembers; its error is the pass's;
//   - the copy read is behind this controller's own last write to the object
//     (OwnWrites.Behind): the pass writes nothing and comes back after
//     CacheLagRetryDelay (the package comment says why the whole pass waits);
//   - the object is not being deleted and lacks finalizer (none when empty):
//     the finalizer is added before anything else is written, so nothing can
//     exist outside the cluster that a deletion would not clean up, and the
//     patch's own event starts the next pass.
func (b *Base) Begin(ctx context.Context, req ctrl.Request, obj client.Object, finalizer string,
	gone func() error) (proceed bool, result ctrl.Result, err error) {
	if err := b.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return false, ctrl.Result{}, err
		}
		b.writes.Forget(req.NamespacedName)
		if gone != nil {
			err = gone()
		}
		result, err = Conclude(ctrl.Result{}, err).Return()
		return false, result, err
	}
	log := ctrl.LoggerFrom(ctx)
	if b.writes.Behind(obj) {
		log.V(1).Info("Waiting for the cache to show the last write", "resourceVersion", obj.GetResourceVersion())
		return false, RequeueAfter(CacheLagRetryDelay), nil
	}
	if finalizer != "" && obj.GetDeletionTimestamp().IsZero() && !controllerutil.ContainsFinalizer(obj, finalizer) {
		log.Info("Adding finalizer", "finalizer", finalizer)
		err := b.writes.Write(obj, func() error { return AddFinalizer(ctx, b.Client, obj, finalizer) })
		result, err = Conclude(ctrl.Result{}, err).Return()
		return false, result, err
	}
	return true, ctrl.Result{}, nil
}

// PatchStatus writes the status a pass computed in obj, from base, the
// object as the pass read it, in one merge patch, and reports whether it
// did. status gives an object's status, for the guard: a status the pass
// did not change is not written, so a pass at steady state makes no write.
// opts go to the patch: client.MergeFromWithOptimisticLock{} sends the
// resourceVersion the pass read, so the API server refuses a write from a
// stale copy as a conflict (which Run turns into a quick retry), where a
// plain merge patch would write older values. An object gone meanwhile is
// no error: its last finalizer went, or it was deleted without one.
//
// A write is remembered as this controller's own (Begin holds back the
// passes behind it) only when it moved the resourceVersion: a patch the API
// server found to change nothing leaves it as it was, and no newer one
// would ever tell that the cache caught up.
func PatchStatus[T client.Object](ctx context.Context, b *Base, base, obj T, status func(T) any,
	opts ...client.MergeFromOption) (bool, error) {
	if equality.Semantic.DeepEqual(status(base), status(obj)) {
		return false, nil
	}
	err := b.Client.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, opts...))
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("writing the status: %w", err)
	}
	if obj.GetResourceVersion() != base.GetResourceVersion() {
		b.writes.Wrote(base, obj)
	}
	return true, nil
}
