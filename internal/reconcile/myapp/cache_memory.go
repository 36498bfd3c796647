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
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// CacheTransform is the manager's cache transform (cache.Options'
// DefaultTransform): every object loses its managedFields, which nothing
// reads, and the objects a MyApp has in the cache (the MyApp, its
// Deployment, Service and Ingress) are made smaller without changing what
// any reconcile reads or writes back:
//
//   - Their strings are interned: a decoded object holds its own copy of
//     every label key and value, of its owner's API version and kind, of
//     its name and namespace and of every defaulted field of a pod template
//     (the image, "IfNotPresent", "/dev/termination-log", "ClusterFirst",
//     "default-scheduler"...), the same in every MyApp's objects; interned,
//     all the objects share one copy (unique.Make, which frees a string no
//     object holds any more). Values stay equal, so nothing compares or
//     writes differently.
//   - A Deployment's status conditions keep only their type and status:
//     deploymentRolledOut reads Available's status and nothing reads their
//     reason, message or times. The status is safe to trim because
//     createOrUpdateChild writes a Deployment with Update, which the API
//     server applies to the spec and metadata only (status is a
//     subresource): a trimmed status is never written back.
//
// Nothing else is dropped: createOrUpdateChild updates a child from its
// cached copy, so a field missing there would be wiped in the API server.
// TestCacheTransformKeepsWhatReconcilesUse fails if a field other than the
// ones above changes.
func CacheTransform() toolscache.TransformFunc {
	strip := cache.TransformStripManagedFields()
	return func(in any) (any, error) {
		obj, err := strip(in)
		if err != nil {
			return obj, err
		}
		switch o := obj.(type) {
		case *appsv1alpha1.MyApp:
			internMeta(&o.ObjectMeta)
			internMyApp(o)
		case *appsv1.Deployment:
			internMeta(&o.ObjectMeta)
			internDeployment(o)
		case *corev1.Service:
			internMeta(&o.ObjectMeta)
			internService(o)
		case *networkingv1.Ingress:
			internMeta(&o.ObjectMeta)
			internIngress(o)
		}
		return obj, nil
	}
}

// intern returns the one shared copy of s.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func internPtr(p *string) {
	if p != nil {
		*p = intern(*p)
	}
}

func internSlice(s []string) {
	for i := range s {
		s[i] = intern(s[i])
	}
}

// internMap returns m with its keys and values interned. The keys of a map
// cannot be replaced in place, so a new map is built.
func internMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

// maxInternedAnnotation bounds the annotation values interned: a long
// value (kubectl's last-applied configuration) is one object's own and
// would only be copied.
const maxInternedAnnotation = 64

func internMeta(m *metav1.ObjectMeta) {
	m.Name = intern(m.Name)
	m.Namespace = intern(m.Namespace)
	m.Labels = internMap(m.Labels)
	if m.Annotations != nil {
		out := make(map[string]string, len(m.Annotations))
		for k, v := range m.Annotations {
			if len(v) <= maxInternedAnnotation {
				v = intern(v)
			}
			out[intern(k)] = v
		}
		m.Annotations = out
	}
	internSlice(m.Finalizers)
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		r.APIVersion, r.Kind, r.Name = intern(r.APIVersion), intern(r.Kind), intern(r.Name)
	}
}

// internMyApp interns what a MyApp's spec and status share with its own
// objects (spec.host is the record's name and the Ingress's host) and with
// other MyApps (the image, the record's type, target and states).
func internMyApp(app *appsv1alpha1.MyApp) {
	app.Spec.Image, app.Spec.Host = intern(app.Spec.Image), intern(app.Spec.Host)
	app.Status.ReadyReplicasSummary = intern(app.Status.ReadyReplicasSummary)
	internConditions(app.Status.Conditions)
	if d := app.Status.DNS; d != nil {
		d.Name, d.Type, d.Value = intern(d.Name), intern(d.Type), intern(d.Value)
		d.State, d.LastObservedState = appsv1alpha1.DNSRecordState(intern(string(d.State))),
			appsv1alpha1.DNSRecordState(intern(string(d.LastObservedState)))
	}
}

func internConditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		c.Type, c.Reason = intern(c.Type), intern(c.Reason)
		c.Status = metav1.ConditionStatus(intern(string(c.Status)))
	}
}

func internDeployment(d *appsv1.Deployment) {
	if d.Spec.Selector != nil {
		d.Spec.Selector.MatchLabels = internMap(d.Spec.Selector.MatchLabels)
	}
	d.Spec.Strategy.Type = appsv1.DeploymentStrategyType(intern(string(d.Spec.Strategy.Type)))
	internPodTemplate(&d.Spec.Template)
	for i := range d.Status.Conditions {
		c := &d.Status.Conditions[i]
		*c = appsv1.DeploymentCondition{
			Type:   appsv1.DeploymentConditionType(intern(string(c.Type))),
			Status: corev1.ConditionStatus(intern(string(c.Status))),
		}
	}
}

func internPodTemplate(t *corev1.PodTemplateSpec) {
	t.Labels = internMap(t.Labels)
	t.Annotations = internMap(t.Annotations)
	s := &t.Spec
	s.RestartPolicy = corev1.RestartPolicy(intern(string(s.RestartPolicy)))
	s.DNSPolicy = corev1.DNSPolicy(intern(string(s.DNSPolicy)))
	s.SchedulerName = intern(s.SchedulerName)
	s.ServiceAccountName = intern(s.ServiceAccountName)
	s.DeprecatedServiceAccount = intern(s.DeprecatedServiceAccount)
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Name, c.Image = intern(c.Name), intern(c.Image)
			c.TerminationMessagePath = intern(c.TerminationMessagePath)
			c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(intern(string(c.TerminationMessagePolicy)))
			c.ImagePullPolicy = corev1.PullPolicy(intern(string(c.ImagePullPolicy)))
			for j := range c.Ports {
				p := &c.Ports[j]
				p.Name, p.Protocol = intern(p.Name), corev1.Protocol(intern(string(p.Protocol)))
			}
			for j := range c.Env {
				c.Env[j].Name = intern(c.Env[j].Name)
			}
		}
	}
}

func internService(s *corev1.Service) {
	s.Spec.Selector = internMap(s.Spec.Selector)
	s.Spec.Type = corev1.ServiceType(intern(string(s.Spec.Type)))
	s.Spec.SessionAffinity = corev1.ServiceAffinity(intern(string(s.Spec.SessionAffinity)))
	s.Spec.ClusterIP = intern(s.Spec.ClusterIP)
	internSlice(s.Spec.ClusterIPs)
	for i := range s.Spec.IPFamilies {
		s.Spec.IPFamilies[i] = corev1.IPFamily(intern(string(s.Spec.IPFamilies[i])))
	}
	if p := s.Spec.IPFamilyPolicy; p != nil {
		*p = corev1.IPFamilyPolicy(intern(string(*p)))
	}
	if p := s.Spec.InternalTrafficPolicy; p != nil {
		*p = corev1.ServiceInternalTrafficPolicy(intern(string(*p)))
	}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		p.Name, p.Protocol = intern(p.Name), corev1.Protocol(intern(string(p.Protocol)))
		p.TargetPort.StrVal = intern(p.TargetPort.StrVal)
	}
}

func internIngress(ing *networkingv1.Ingress) {
	internPtr(ing.Spec.IngressClassName)
	for i := range ing.Spec.Rules {
		r := &ing.Spec.Rules[i]
		r.Host = intern(r.Host)
		if r.HTTP == nil {
			continue
		}
		for j := range r.HTTP.Paths {
			p := &r.HTTP.Paths[j]
			p.Path = intern(p.Path)
			if p.PathType != nil {
				*p.PathType = networkingv1.PathType(intern(string(*p.PathType)))
			}
			if svc := p.Backend.Service; svc != nil {
				svc.Name, svc.Port.Name = intern(svc.Name), intern(svc.Port.Name)
			}
		}
	}
}
