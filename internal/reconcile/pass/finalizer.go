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

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// AddFinalizer adds finalizer to obj in the API server; see patchFinalizers.
func AddFinalizer(ctx context.Context, c client.Writer, obj client.Object, finalizer string) error {
	return patchFinalizers(ctx, c, obj, func(o client.Object) { controllerutil.AddFinalizer(o, finalizer) })
}

// RemoveFinalizer removes finalizer from obj in the API server; see
// patchFinalizers.
func RemoveFinalizer(ctx context.Context, c client.Writer, obj client.Object, finalizer string) error {
	return patchFinalizers(ctx, c, obj, func(o client.Object) { controllerutil.RemoveFinalizer(o, finalizer) })
}

// patchFinalizers changes obj's finalizers with a merge patch guarded by
// its resourceVersion: other controllers edit the same list (BackupConfig's
// final-backup finalizer sits on MyApps beside the DNS one), and a patch
// without the lock would overwrite their change. A lost race is a conflict,
// which Run turns into a quick retry on fresh data.
//
// It patches a copy and takes back only the finalizers and the
// resourceVersion: the server's answer carries the stored status, which
// would otherwise overwrite the status this pass computed before its
// deferred status write sends it.
func patchFinalizers(ctx context.Context, c client.Writer, obj client.Object, mutate func(client.Object)) error {
	patched, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("copying %T for a finalizer patch", obj)
	}
	mutate(patched)
	if err := c.Patch(ctx, patched, client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	obj.SetFinalizers(patched.GetFinalizers())
	obj.SetResourceVersion(patched.GetResourceVersion())
	return nil
}
