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
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// fill sets every exported field of v that it can reach to a random value:
// strings, numbers, booleans, pointers, two-element slices and maps, to a
// depth of 12. Structs with unexported fields only (times, quantities) are
// left zero.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", r.IntN(1000)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1 + r.Int64N(100))
	case reflect.Uint8, reflect.Uint32, reflect.Uint64:
		v.SetUint(1 + r.Uint64N(100))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(r, k, depth+1)
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	}
}

// TestCacheTransformKeepsWhatReconcilesUse: the cache transform changes no
// field of a cached object but the managedFields and a Deployment's
// condition reasons, messages and times. A child is updated from its cached
// copy (createOrUpdateChild), so any other field it lost would be wiped in
// the API server; every field is filled at random, so a field added to the
// transform's cuts by mistake fails here.
func TestCacheTransformKeepsWhatReconcilesUse(t *testing.T) {
	transform := CacheTransform()
	r := rand.New(rand.NewPCG(1, 2))
	for _, proto := range []client.Object{&appsv1alpha1.MyApp{}, &appsv1.Deployment{}, &corev1.Service{}, &networkingv1.Ingress{}, &corev1.Secret{}} {
		for range 20 {
			obj := reflect.New(reflect.TypeOf(proto).Elem()).Interface().(client.Object)
			fill(r, reflect.ValueOf(obj).Elem(), 0)
			want := obj.DeepCopyObject().(client.Object)
			want.SetManagedFields(nil)
			if d, ok := want.(*appsv1.Deployment); ok {
				for i, c := range d.Status.Conditions {
					d.Status.Conditions[i] = appsv1.DeploymentCondition{Type: c.Type, Status: c.Status}
				}
			}
			got, err := transform(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got, want) {
				t.Fatalf("%T changed beyond the documented cuts:\n got %+v\nwant %+v", proto, got, want)
			}
		}
	}
}

// TestCacheTransformKeepsDeploymentReadiness: what the status reads from a
// Deployment (deploymentRolledOut, setReplicaStatus) is the same on the
// trimmed copy, for every state of its Available condition.
func TestCacheTransformKeepsDeploymentReadiness(t *testing.T) {
	transform := CacheTransform()
	app := &appsv1alpha1.MyApp{Spec: appsv1alpha1.MyAppSpec{Replicas: ptr.To[int32](2)}}
	for _, status := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown, ""} {
		for _, ready := range []int32{0, 1, 2} {
			dep := serverDeployment(0)
			dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = ready, ready
			dep.Status.Conditions[0].Status = status
			if status == "" {
				dep.Status.Conditions = dep.Status.Conditions[1:]
			}
			want := deploymentRolledOut(dep)
			wantApp := app.DeepCopy()
			setReplicaStatus(wantApp, dep)
			out, err := transform(dep.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			gotApp := app.DeepCopy()
			setReplicaStatus(gotApp, out.(*appsv1.Deployment))
			if got := deploymentRolledOut(out.(*appsv1.Deployment)); got != want || !equality.Semantic.DeepEqual(gotApp.Status, wantApp.Status) {
				t.Errorf("Available=%q, %d ready: rolled out %t, status %+v on the cached copy; want %t, %+v",
					status, ready, got, gotApp.Status, want, wantApp.Status)
			}
		}
	}
}

// TestCacheTransformSharesStrings: two MyApps' Deployments, decoded apart
// as an informer decodes them, share their common strings after the
// transform, and the strings of a value of their own stay theirs.
func TestCacheTransformSharesStrings(t *testing.T) {
	transform := CacheTransform()
	a, b := decodedObjects(t, 0), decodedObjects(t, 1)
	da, db := a[1].(*appsv1.Deployment), b[1].(*appsv1.Deployment)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if same(da.Labels[ManagedByLabel], db.Labels[ManagedByLabel]) {
		t.Fatal("the decoded copies already share their strings; the test proves nothing")
	}
	for _, o := range append(a, b...) {
		if _, err := transform(o); err != nil {
			t.Fatal(err)
		}
	}
	ca, cb := &da.Spec.Template.Spec.Containers[0], &db.Spec.Template.Spec.Containers[0]
	for name, pair := range map[string][2]string{
		"a label value":                {da.Labels[ManagedByLabel], db.Labels[ManagedByLabel]},
		"an owner's API version":       {da.OwnerReferences[0].APIVersion, db.OwnerReferences[0].APIVersion},
		"the image":                    {ca.Image, cb.Image},
		"the termination message path": {ca.TerminationMessagePath, cb.TerminationMessagePath},
		"the scheduler":                {da.Spec.Template.Spec.SchedulerName, db.Spec.Template.Spec.SchedulerName},
		"the namespace":                {da.Namespace, b[2].GetNamespace()},
	} {
		if !same(pair[0], pair[1]) {
			t.Errorf("%s is not shared after the transform", name)
		}
	}
	if da.Name == db.Name || same(da.Name, db.Name) {
		t.Errorf("two MyApps' names are the same string")
	}
	if !same(da.Name, a[2].GetName()) || !same(da.Name, da.Labels["app.kubernetes.io/instance"]) {
		t.Errorf("a MyApp's name is not shared between its objects")
	}
	app, ing := a[0].(*appsv1alpha1.MyApp), a[3].(*networkingv1.Ingress)
	if !same(app.Spec.Host, app.Status.DNS.Name) || !same(app.Spec.Host, ing.Spec.Rules[0].Host) {
		t.Errorf("a MyApp's host is not shared between its spec, its record's status and its Ingress")
	}
}

// TestTrimmedDeploymentUpdateWipesNothing: the suite's manager caches
// Deployments through CacheTransform, as cmd/manager does. A drifted
// replica count is reverted by an Update built from the trimmed cached
// copy, and that Update wipes nothing: an annotation someone else set and
// the Deployment controller's own stay, and so do the condition reasons
// and messages the cache dropped (status is a subresource Update ignores).
func TestTrimmedDeploymentUpdateWipesNothing(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "trimmed")
	createReadyMyApp(t, g, app)
	key := client.ObjectKeyFromObject(app)

	cached := &appsv1.Deployment{}
	g.Expect(mgrCache.Get(t.Context(), key, cached)).To(Succeed())
	g.Expect(cached.Status.Conditions).NotTo(BeEmpty())
	for _, c := range cached.Status.Conditions {
		g.Expect(c.Reason+c.Message).To(BeEmpty(), "the cache holds the trimmed copy")
	}

	dep := &appsv1.Deployment{}
	g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
	want := *app.Spec.Replicas
	dep.Spec.Replicas = ptr.To(want + 1)
	dep.Annotations["example.com/note"] = "kept"
	g.Expect(k8sClient.Update(t.Context(), dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
		g.Expect(dep.Spec.Replicas).To(HaveValue(Equal(want)))
	}, 10*time.Second, interval).Should(Succeed())
	g.Expect(dep.Annotations).To(HaveKeyWithValue("example.com/note", "kept"))
	g.Expect(dep.Annotations).To(HaveKey("deployment.kubernetes.io/revision"))
	g.Expect(dep.Spec.Template.Spec.SchedulerName).To(Equal(corev1.DefaultSchedulerName))
	available := false
	for _, c := range dep.Status.Conditions {
		g.Expect(c.Reason).NotTo(BeEmpty(), "condition %s", c.Type)
		available = available || c.Type == appsv1.DeploymentAvailable
	}
	g.Expect(available).To(BeTrue())
}

// serverDeployment is app-<i>'s Deployment as the API server returns it
// after a rollout: the operator's fields and the server's defaults.
func serverDeployment(i int) *appsv1.Deployment {
	name := fmt.Sprintf("app-%04d", i)
	app := &appsv1alpha1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench-operator-0", UID: "2b1c3f0e-7f1d-4d5e-9a65-0c3f0d1b2a3c"},
		Spec: appsv1alpha1.MyAppSpec{Replicas: ptr.To[int32](1), Image: "nginx:1.27", ContainerPort: 8080, ServicePort: 80,
			Host: name + ".bench-operator-0.bench.example.com"},
	}
	app.APIVersion, app.Kind = appsv1alpha1.GroupVersion.String(), "MyApp"
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: app.Namespace}}
	mutateDeployment(app, dep)
	dep.OwnerReferences = []metav1.OwnerReference{{APIVersion: app.APIVersion, Kind: app.Kind, Name: name, UID: app.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	now := metav1.NewTime(time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC))
	dep.UID, dep.ResourceVersion, dep.Generation, dep.CreationTimestamp = "6f0b7c1e-2a44-4f39-8f0e-3f6a2e9d8c71", "123456", 1, now
	dep.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
	dep.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxSurge: ptr.To(intstr.FromString("25%"))}}
	dep.Spec.RevisionHistoryLimit, dep.Spec.ProgressDeadlineSeconds = ptr.To[int32](10), ptr.To[int32](600)
	ps := &dep.Spec.Template.Spec
	ps.RestartPolicy, ps.DNSPolicy, ps.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, corev1.DefaultSchedulerName
	ps.TerminationGracePeriodSeconds, ps.SecurityContext = ptr.To[int64](30), &corev1.PodSecurityContext{}
	c := &ps.Containers[0]
	c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.TerminationMessagePathDefault, corev1.TerminationMessageReadFile
	c.ImagePullPolicy = corev1.PullIfNotPresent
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now,
				Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now,
				Reason: "NewReplicaSetAvailable", Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", name+"-5d8f7c9b6d")},
		}}
	return dep
}

// decodedObjects are app-<i>'s MyApp, Deployment, Service and Ingress as an
// informer holds them: decoded from the API server's bytes (protobuf for the
// built-in kinds, JSON for the MyApp), so each holds its own strings.
func decodedObjects(t testing.TB, i int) []client.Object {
	dep := serverDeployment(i)
	app := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: dep.Name, Namespace: dep.Namespace, UID: dep.OwnerReferences[0].UID,
		ResourceVersion: "123450", Generation: 1, CreationTimestamp: dep.CreationTimestamp, Finalizers: []string{"apps.myapp.dev/dns-record"}},
		Spec: appsv1alpha1.MyAppSpec{Replicas: ptr.To[int32](1), Image: "nginx:1.27", ContainerPort: 8080, ServicePort: 80,
			Host: dep.Name + ".bench-operator-0.bench.example.com"}}
	svc := &corev1.Service{ObjectMeta: *dep.ObjectMeta.DeepCopy()}
	mutateService(app, svc)
	svc.Annotations = nil
	svc.Spec.Type, svc.Spec.SessionAffinity = corev1.ServiceTypeClusterIP, corev1.ServiceAffinityNone
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = fmt.Sprintf("10.0.%d.%d", i/250, i%250), []string{fmt.Sprintf("10.0.%d.%d", i/250, i%250)}
	svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = []corev1.IPFamily{corev1.IPv4Protocol}, ptr.To(corev1.IPFamilyPolicySingleStack)
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	ing := &networkingv1.Ingress{ObjectMeta: *svc.ObjectMeta.DeepCopy()}
	ing.Labels = childLabels(app)
	ing.Spec.Rules = ingressRules(app, sets.New(app.Spec.Host))
	app.Status.Conditions = []metav1.Condition{
		{Type: appsv1alpha1.ReadyCondition, Status: metav1.ConditionTrue, Reason: appsv1alpha1.AvailableReason, ObservedGeneration: 1,
			LastTransitionTime: dep.CreationTimestamp, Message: "The app is available at " + app.Spec.Host},
		{Type: appsv1alpha1.DNSReadyCondition, Status: metav1.ConditionTrue, Reason: "RecordActive", ObservedGeneration: 1,
			LastTransitionTime: dep.CreationTimestamp, Message: "The record " + app.Spec.Host + " is active"},
	}
	app.Status.ObservedGeneration, app.Status.ReadyReplicas, app.Status.ReadyReplicasSummary = 1, 1, "1/1"
	app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: app.Spec.Host, Type: "A", Value: "192.0.2.10",
		Owner: "myapp-operator/5f1d2c3b-0a9e-4c7d-8e6f-1a2b3c4d5e6f/" + app.Namespace + "/" + app.Name,
		State: "ACTIVE", LastObservedState: "ACTIVE"}

	out := make([]client.Object, 0, 4)
	data, err := json.Marshal(app)
	if err != nil {
		t.Fatal(err)
	}
	decodedApp := &appsv1alpha1.MyApp{}
	if err := json.Unmarshal(data, decodedApp); err != nil {
		t.Fatal(err)
	}
	out = append(out, decodedApp)
	for _, o := range []interface {
		client.Object
		Marshal() ([]byte, error)
	}{dep, svc, ing} {
		data, err := o.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		decoded := reflect.New(reflect.TypeOf(o).Elem()).Interface().(interface {
			client.Object
			Unmarshal([]byte) error
		})
		if err := decoded.Unmarshal(data); err != nil {
			t.Fatal(err)
		}
		out = append(out, decoded)
	}
	return out
}

// BenchmarkCacheTransform reports the live heap one MyApp's four cached
// objects take, decoded as an informer decodes them, without and with the
// cache transform (the part of the manager's live heap per MyApp that the
// cache holds; not the informers' indexes and stores around it).
func BenchmarkCacheTransform(b *testing.B) {
	const n = 2000
	for _, tc := range []struct {
		name      string
		transform func(any) (any, error)
	}{{"decoded", func(o any) (any, error) { return o, nil }}, {"transformed", CacheTransform()}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				held := make([][]client.Object, n)
				for i := range held {
					held[i] = decodedObjects(b, i)
					for _, o := range held[i] {
						if _, err := tc.transform(o); err != nil {
							b.Fatal(err)
						}
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/MyApp")
				runtime.KeepAlive(held)
			}
		})
	}
}
