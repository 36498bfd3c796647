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
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const testFinalizer = "example.com/cleanup"

// skeletonWorld is an API server (the fake client) behind a cache that a
// test can hold at an older copy of the object, and counts the patches a
// Base sends.
type skeletonWorld struct {
	b       *Base
	stale   *appsv1.Deployment
	patches int
	// quiet makes a status patch change nothing, as the API server does for
	// a patch that matches what it stores: the resourceVersion stays.
	quiet bool
}

func newSkeletonWorld(t *testing.T, objs ...client.Object) *skeletonWorld {
	t.Helper()
	scheme := runtime.NewScheme()
	NewWithT(t).Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	w := &skeletonWorld{}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&appsv1.Deployment{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if d, ok := obj.(*appsv1.Deployment); ok && w.stale != nil {
					w.stale.DeepCopyInto(d)
					return nil
				}
				return c.Get(ctx, key, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				w.patches++
				return c.Patch(ctx, obj, patch, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
				opts ...client.SubResourcePatchOption) error {
				w.patches++
				if w.quiet {
					return nil
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	w.b = &Base{Client: c}
	w.b.SetDefaults(1)
	return w
}

func (w *skeletonWorld) begin(t *testing.T, obj *appsv1.Deployment) (bool, ctrl.Result) {
	t.Helper()
	ok, result, err := w.b.Begin(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)}, obj,
		testFinalizer, nil)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return ok, result
}

func deployment() *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
}

func deploymentStatus(d *appsv1.Deployment) any { return d.Status }

// read is the object as the API server holds it.
func (w *skeletonWorld) read(t *testing.T) *appsv1.Deployment {
	t.Helper()
	d := deployment()
	stale := w.stale
	w.stale = nil
	NewWithT(t).Expect(w.b.Client.Get(t.Context(), client.ObjectKeyFromObject(d), d)).To(Succeed())
	w.stale = stale
	return d
}

// TestBeginAddsTheFinalizerOnce: the finalizer goes on before the pass
// goes on, and a pass on a cache that does not show it yet neither adds it
// again nor goes on, but comes back soon; once the cache shows it, the pass
// goes on.
func TestBeginAddsTheFinalizerOnce(t *testing.T) {
	g := NewWithT(t)
	w := newSkeletonWorld(t, deployment())
	before := w.read(t)
	ok, _ := w.begin(t, deployment())
	g.Expect(ok).To(BeFalse(), "the pass that adds the finalizer ends there")
	g.Expect(w.patches).To(Equal(1))
	g.Expect(w.read(t).Finalizers).To(ConsistOf(testFinalizer))

	w.stale = before // a cache without the finalizer
	ok, result := w.begin(t, deployment())
	g.Expect(ok).To(BeFalse(), "a pass on a copy behind the finalizer write does not go on")
	g.Expect(w.patches).To(Equal(1), "nor adds the finalizer again")
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0), "it comes back")
	g.Expect(result.RequeueAfter).To(BeNumerically("<=", 2*CacheLagRetryDelay))

	w.stale = nil // the cache caught up
	ok, _ = w.begin(t, deployment())
	g.Expect(ok).To(BeTrue())
}

// TestAPassBehindItsOwnStatusWriteDoesNotGoOn: after a status write, a
// pass on the copy the write started from does not go on; one on the copy
// the write made does.
func TestAPassBehindItsOwnStatusWriteDoesNotGoOn(t *testing.T) {
	g := NewWithT(t)
	d := deployment()
	d.Finalizers = []string{testFinalizer}
	w := newSkeletonWorld(t, d)
	obj := deployment()
	ok, _ := w.begin(t, obj)
	g.Expect(ok).To(BeTrue())
	base := obj.DeepCopy()
	written, err := PatchStatus(t.Context(), w.b, base, obj, deploymentStatus)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(written).To(BeFalse(), "an unchanged status is not written")
	g.Expect(w.patches).To(BeZero())

	obj.Status.Replicas = 1
	written, err = PatchStatus(t.Context(), w.b, base, obj, deploymentStatus)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(written).To(BeTrue())
	g.Expect(w.read(t).Status.Replicas).To(Equal(int32(1)))

	w.stale = base
	ok, result := w.begin(t, deployment())
	g.Expect(ok).To(BeFalse(), "a pass on the copy the write started from does not go on")
	g.Expect(result.RequeueAfter).To(BeNumerically(">", 0))
	w.stale = nil
	ok, _ = w.begin(t, deployment())
	g.Expect(ok).To(BeTrue(), "a pass on the copy the write made goes on")
}

// TestAStatusWriteThatMovedNothingHoldsNoPassBack: a status patch the API
// server found to change nothing leaves the resourceVersion as it was; the
// cache will never show a newer one, so the write must not hold the next
// pass back.
func TestAStatusWriteThatMovedNothingHoldsNoPassBack(t *testing.T) {
	g := NewWithT(t)
	d := deployment()
	d.Finalizers = []string{testFinalizer}
	w := newSkeletonWorld(t, d)
	obj := deployment()
	ok, _ := w.begin(t, obj)
	g.Expect(ok).To(BeTrue())
	base := obj.DeepCopy()
	obj.Status.Replicas = 1
	w.quiet = true
	written, err := PatchStatus(t.Context(), w.b, base, obj, deploymentStatus, client.MergeFromWithOptimisticLock{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(written).To(BeTrue())
	g.Expect(w.patches).To(Equal(1))

	ok, _ = w.begin(t, deployment())
	g.Expect(ok).To(BeTrue(), "the same resourceVersion, and no write of ours it lacks")
}

// TestBeginForgetsAnObjectThatIsGone: a pass on an object that is gone
// does not go on; the controller forgets what it kept (gone), and an
// error of that is the pass's.
func TestBeginForgetsAnObjectThatIsGone(t *testing.T) {
	g := NewWithT(t)
	w := newSkeletonWorld(t)
	forgotten := 0
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(deployment())}
	ok, result, err := w.b.Begin(t.Context(), req, deployment(), testFinalizer, func() error {
		forgotten++
		return nil
	})
	g.Expect(ok).To(BeFalse())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result.IsZero()).To(BeTrue())
	g.Expect(forgotten).To(Equal(1))

	_, _, err = w.b.Begin(t.Context(), req, deployment(), testFinalizer, func() error { return errors.New("release failed") })
	g.Expect(err).To(MatchError("release failed"))
	g.Expect(w.patches).To(BeZero())
}
