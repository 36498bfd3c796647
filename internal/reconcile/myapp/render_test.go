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

package myapp

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestRenderedChildrenAreWhatTheControllerWrote renders the children of a
// Ready MyApp and compares them with the ones its controller wrote to the
// cluster: every field the rendering sets is in the live object with the
// same value (the API server adds its defaults around them), so a backup's
// children say what the cluster ran. Rendering reads and changes nothing of
// the MyApp, and gives the same objects twice.
func TestRenderedChildrenAreWhatTheControllerWrote(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "render", fixtures.WithEnv(corev1.EnvVar{Name: "MODE", Value: "render"},
		corev1.EnvVar{Name: "POD", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"},
		}}))
	app.Spec.Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
	}
	createReadyMyApp(t, g, app)
	g.Expect(heldHosts(app)).To(ConsistOf(app.Spec.Host), "the Ready MyApp holds its host")

	before := app.DeepCopy()
	rendered := RenderChildren(app, reconciler.IngressClassName)
	g.Expect(app).To(Equal(before), "rendering changes nothing of the MyApp")
	g.Expect(RenderChildren(app, reconciler.IngressClassName)).To(Equal(rendered), "rendering is deterministic")
	g.Expect(rendered).To(HaveLen(3))

	live := []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &networkingv1.Ingress{}}
	for i, obj := range rendered {
		g.Expect(reflect.TypeOf(obj)).To(Equal(reflect.TypeOf(live[i])), "child %d", i)
		g.Expect(obj.GetNamespace()).To(Equal(ns))
		g.Expect(obj.GetName()).To(Equal(app.Name))
		g.Expect(obj.GetOwnerReferences()).To(BeEmpty(), "no UID of this cluster in a rendering")
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(obj), live[i])).To(Succeed())
		want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		g.Expect(err).NotTo(HaveOccurred())
		got, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live[i])
		g.Expect(err).NotTo(HaveOccurred())
		// The typed client leaves TypeMeta empty; the rendering sets it.
		delete(want, "apiVersion")
		delete(want, "kind")
		unstructuredMeta := want["metadata"].(map[string]any)
		delete(unstructuredMeta, "creationTimestamp")
		g.Expect(notIn(want, got, "")).To(BeEmpty(), "%T %s: rendered fields the live object does not have so", obj, obj.GetName())
	}

	// The Ingress routes the held host to the Service.
	ing := rendered[2].(*networkingv1.Ingress)
	g.Expect(ing.Spec.Rules).To(HaveLen(1))
	g.Expect(ing.Spec.Rules[0].Host).To(Equal(app.Spec.Host))
	g.Expect(equality.Semantic.DeepEqual(ing.Spec.Rules, live[2].(*networkingv1.Ingress).Spec.Rules)).To(BeTrue())
}

// TestRenderChildrenRoutesOnlyHeldHosts: a MyApp whose status shows no
// record held renders an Ingress that routes nothing (the unrouted rule),
// one that holds its host routes it, and the IngressClass is the one given.
func TestRenderChildrenRoutesOnlyHeldHosts(t *testing.T) {
	g := NewWithT(t)
	app := fixtures.NewMyApp("shop", "web", func(a *appsv1alpha1.MyApp) { a.UID = "uid-1" })

	ing := RenderChildren(app, "")[2].(*networkingv1.Ingress)
	g.Expect(ing.Spec.Rules).To(Equal([]networkingv1.IngressRule{{Host: unroutedHost}}))
	g.Expect(ing.Spec.IngressClassName).To(BeNil())

	app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: app.Spec.Host, Owner: ownerOf(app)}
	ing = RenderChildren(app, "internal")[2].(*networkingv1.Ingress)
	g.Expect(hostsOf(ing)).To(Equal([]string{app.Spec.Host}))
	g.Expect(ing.Spec.IngressClassName).To(HaveValue(Equal("internal")))

	// A record the status says another MyApp owns is not this one's.
	app.Status.DNS.Owner = "myapp-operator/" + testOwnerID + "/shop/other/uid-2"
	ing = RenderChildren(app, "")[2].(*networkingv1.Ingress)
	g.Expect(ing.Spec.Rules).To(Equal([]networkingv1.IngressRule{{Host: unroutedHost}}))
}

// ownerOf is the DNS owner the MyApp controller writes for app under the
// suite's owner ID.
func ownerOf(app *appsv1alpha1.MyApp) string {
	return fmt.Sprintf("myapp-operator/%s/%s/%s/%s", testOwnerID, app.Namespace, app.Name, app.UID)
}

func hostsOf(ing *networkingv1.Ingress) []string {
	var hosts []string
	for _, r := range ing.Spec.Rules {
		hosts = append(hosts, r.Host)
	}
	return hosts
}

// notIn lists the paths of want whose value got does not have: a map's keys
// are looked up in got's map (got may have more), a list must have as many
// elements in got and each compares likewise, and anything else must be
// equal.
func notIn(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		gm, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want a map, got %v", path, got)}
		}
		var out []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			gv, ok := gm[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing (want %v)", path, k, w[k]))
				continue
			}
			out = append(out, notIn(w[k], gv, path+"."+k)...)
		}
		return out
	case []any:
		gl, ok := got.([]any)
		if !ok || len(gl) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, w, got)}
		}
		var out []string
		for i := range w {
			out = append(out, notIn(w[i], gl[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
		return nil
	}
}
