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
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// FuzzBuildChildren feeds arbitrary MyApps, and arbitrary children as the
// cache might hold them, to the functions that build the Deployment, Service
// and Ingress (the bad-input family of issue 11, family 8). Whatever the
// spec holds (the API server's rules are not assumed: a MyApp can be read
// from an older CRD, or written while validation was off), building must
// not panic, must not change the MyApp, must put the spec where it belongs,
// must keep what others added, and must be idempotent: a second build over
// the first's result changes nothing, or every pass would write the child
// again.
func FuzzBuildChildren(f *testing.F) {
	type seed struct {
		name, image, host                            string
		replicas, containerPort, servicePort         int32
		noReplicas                                   bool
		envName, envValue, fieldPath, cpuReq, memLim string
		className, sidecar, ruleHost, dnsName        string
		held, created                                bool
	}
	seeds := []seed{
		{"web", "nginx:1.27", "web.example.com", 2, 8080, 80, false, "GREETING", "hello", "", "500m", "128Mi", "", "", "", "", false, false},
		{"web", "nginx:1.27", "new.example.com", 1, 8080, 80, true, "POD", "", "metadata.name", "", "", "nginx", "istio-proxy", "new.example.com", "old.example.com", true, true},
		{"web", "nginx:1.27", "web.example.com", 3, 1, 65535, false, "", "", "", "", "", "", "app", "web.example.com", "web.example.com", true, true},
		{"", "", "", 0, 0, 0, false, "A=B", "", "metadata.bogus", "-1", "-1Gi", "", "", "", "", false, false},
		{"web", "nginx\t1.27", "WEB.example.com.", -1, -8080, 70000, false, "", "", "", "1e100", "0.0001", "x", "", "*.example.com", "web.example.com", true, false},
		{"web", "nginx:1.27", "", 1000, 8080, 80, false, "A", "1", "", "", "", "", "", "", "", true, true},
	}
	for _, s := range seeds {
		f.Add(s.name, s.image, s.host, s.replicas, s.containerPort, s.servicePort, s.noReplicas,
			s.envName, s.envValue, s.fieldPath, s.cpuReq, s.memLim, s.className, s.sidecar, s.ruleHost, s.dnsName, s.held, s.created)
	}
	f.Fuzz(func(t *testing.T, name, image, host string, replicas, containerPort, servicePort int32, noReplicas bool,
		envName, envValue, fieldPath, cpuReq, memLim, className, sidecar, ruleHost, dnsName string, held, created bool,
	) {
		app := &appsv1alpha1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "fuzz", UID: types.UID("uid-" + name)},
			Spec: appsv1alpha1.MyAppSpec{
				Replicas:      ptr.To(replicas),
				Image:         image,
				Host:          host,
				ContainerPort: containerPort,
				ServicePort:   servicePort,
			},
		}
		if noReplicas {
			app.Spec.Replicas = nil
		}
		env := corev1.EnvVar{Name: envName, Value: envValue}
		if fieldPath != "" {
			env.ValueFrom = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: fieldPath}}
		}
		app.Spec.Env = []corev1.EnvVar{env, {Name: envName + "_2"}}
		if q, err := resource.ParseQuantity(cpuReq); err == nil {
			app.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: q}
		}
		if q, err := resource.ParseQuantity(memLim); err == nil {
			app.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: q}
		}
		if dnsName != "" {
			owner := "someone-else"
			if held {
				owner = recordOwner(app)
			}
			app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: dnsName, Owner: owner}
		}
		before := app.DeepCopy()

		// Children as the cache holds them: new, or created earlier with a
		// container and a rule someone else added.
		meta := metav1.ObjectMeta{Name: name, Namespace: "fuzz", Labels: map[string]string{"team": "a"}}
		if created {
			meta.CreationTimestamp = metav1.Now()
		}
		dep := &appsv1.Deployment{ObjectMeta: *meta.DeepCopy()}
		if sidecar != "" {
			dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: sidecar, Image: "sidecar:1"}}
		}
		svc := &corev1.Service{ObjectMeta: *meta.DeepCopy()}
		ing := &networkingv1.Ingress{ObjectMeta: *meta.DeepCopy()}
		if ruleHost != "" {
			ing.Spec.Rules = []networkingv1.IngressRule{{Host: ruleHost, IngressRuleValue: networkingv1.IngressRuleValue{
				HTTP: &networkingv1.HTTPIngressRuleValue{},
			}}}
		}

		mutateDeployment(app, dep)
		mutateService(app, svc)
		mutateIngress(app, ing, className)
		setReplicaStatus(app, dep)
		app.Status.ReadyReplicas, app.Status.ReadyReplicasSummary = before.Status.ReadyReplicas, before.Status.ReadyReplicasSummary
		if !equality.Semantic.DeepEqual(before, app) {
			t.Fatalf("building the children changed the MyApp:\nbefore %+v\nafter  %+v", before, app)
		}

		checkDeployment(t, app, dep, sidecar)
		checkService(t, app, svc)
		checkIngress(t, app, ing, className)

		// A second pass over what the first built writes nothing.
		dep2, svc2, ing2 := dep.DeepCopy(), svc.DeepCopy(), ing.DeepCopy()
		mutateDeployment(app, dep2)
		mutateService(app, svc2)
		mutateIngress(app, ing2, className)
		for kind, pair := range map[string][2]any{"Deployment": {dep, dep2}, "Service": {svc, svc2}, "Ingress": {ing, ing2}} {
			if !equality.Semantic.DeepEqual(pair[0], pair[1]) {
				t.Fatalf("building the %s again changed it:\nfirst  %+v\nsecond %+v", kind, pair[0], pair[1])
			}
		}
	})
}

func checkDeployment(t *testing.T, app *appsv1alpha1.MyApp, dep *appsv1.Deployment, sidecar string) {
	t.Helper()
	if dep.Labels["team"] != "a" {
		t.Fatalf("a label someone else set is gone: %v", dep.Labels)
	}
	if got, want := ptr.Deref(dep.Spec.Replicas, -1), ptr.Deref(app.Spec.Replicas, 1); got != want {
		t.Fatalf("replicas %d, want %d", got, want)
	}
	if dep.CreationTimestamp.IsZero() {
		if dep.Spec.Selector == nil {
			t.Fatal("a new Deployment has no selector")
		}
		for k, v := range dep.Spec.Selector.MatchLabels {
			if dep.Spec.Template.Labels[k] != v {
				t.Fatalf("the selector %v does not select the template's labels %v", dep.Spec.Selector.MatchLabels, dep.Spec.Template.Labels)
			}
		}
	}
	containers := dep.Spec.Template.Spec.Containers
	i := containerIndex(containers, containerName)
	if i < 0 {
		t.Fatalf("no %q container in %+v", containerName, containers)
	}
	if sidecar != "" && sidecar != containerName {
		if len(containers) != 2 || containers[containerIndex(containers, sidecar)].Image != "sidecar:1" {
			t.Fatalf("the container someone else added is not kept as it was: %+v", containers)
		}
	}
	checkAppContainer(t, app, containers[i])
}

// checkAppContainer checks that the app's container carries the spec.
func checkAppContainer(t *testing.T, app *appsv1alpha1.MyApp, c corev1.Container) {
	t.Helper()
	if c.Image != app.Spec.Image {
		t.Fatalf("image %q, want %q", c.Image, app.Spec.Image)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != app.Spec.ContainerPort || c.Ports[0].Name != portName {
		t.Fatalf("ports %+v, want one %q port %d", c.Ports, portName, app.Spec.ContainerPort)
	}
	if !equality.Semantic.DeepEqual(c.Resources, app.Spec.Resources) {
		t.Fatalf("resources %+v, want %+v", c.Resources, app.Spec.Resources)
	}
	if len(c.Env) != len(app.Spec.Env) {
		t.Fatalf("env %+v, want %+v", c.Env, app.Spec.Env)
	}
	for j, e := range c.Env {
		if e.Name != app.Spec.Env[j].Name || e.Value != app.Spec.Env[j].Value {
			t.Fatalf("env[%d] %+v, want %+v", j, e, app.Spec.Env[j])
		}
	}
}

func checkService(t *testing.T, app *appsv1alpha1.MyApp, svc *corev1.Service) {
	t.Helper()
	if svc.Labels["team"] != "a" || svc.Labels[ManagedByLabel] != ManagedByValue {
		t.Fatalf("labels %v lack the managed-by label or one someone else set", svc.Labels)
	}
	if !equality.Semantic.DeepEqual(svc.Spec.Selector, selectorLabels(app)) {
		t.Fatalf("selector %v, want %v", svc.Spec.Selector, selectorLabels(app))
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != app.Spec.ServicePort || svc.Spec.Ports[0].TargetPort.StrVal != portName {
		t.Fatalf("ports %+v, want one port %d to %q", svc.Spec.Ports, app.Spec.ServicePort, portName)
	}
}

func checkIngress(t *testing.T, app *appsv1alpha1.MyApp, ing *networkingv1.Ingress, className string) {
	t.Helper()
	if className != "" && ptr.Deref(ing.Spec.IngressClassName, "") != className {
		t.Fatalf("ingress class %v, want %q", ing.Spec.IngressClassName, className)
	}
	rules := ing.Spec.Rules
	if len(rules) == 0 {
		t.Fatal("an Ingress without rules or a default backend is invalid")
	}
	seen := map[string]bool{}
	for _, rule := range rules {
		if seen[rule.Host] {
			t.Fatalf("host %q routed twice: %+v", rule.Host, rules)
		}
		seen[rule.Host] = true
		if rule.Host == unroutedHost {
			if len(rules) != 1 || rule.HTTP != nil {
				t.Fatalf("the unrouted placeholder must be the only rule and route nothing: %+v", rules)
			}
			continue
		}
		// Only a host this MyApp holds, or spec.host already routed, is
		// routed: never one from another tenant's record.
		if rule.Host != heldHost(app) && rule.Host != app.Spec.Host {
			t.Fatalf("host %q is routed but is neither held (%q) nor spec.host (%q)", rule.Host, heldHost(app), app.Spec.Host)
		}
		if rule.HTTP == nil || len(rule.HTTP.Paths) != 1 {
			t.Fatalf("rule %+v does not route its host", rule)
		}
		backend := rule.HTTP.Paths[0].Backend.Service
		if backend == nil || backend.Name != app.Name || backend.Port.Number != app.Spec.ServicePort {
			t.Fatalf("rule for %q goes to %+v, not Service %s port %d", rule.Host, backend, app.Name, app.Spec.ServicePort)
		}
	}
	if len(rules) > 1 && app.Spec.Host != "" && seen[app.Spec.Host] && rules[0].Host != app.Spec.Host {
		t.Fatalf("spec.host %q is not the first rule: %+v", app.Spec.Host, rules)
	}
}
