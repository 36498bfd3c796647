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
	"context"
	"errors"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

const (
	// containerName is the name of the app's container in its Deployment.
	containerName = "app"
	// portName names the container port; the Service targets it by name so a
	// containerPort change needs no Service update.
	portName = "http"
)

// childConflictError names an object with a child's name that the MyApp
// does not control. The operator never adopts or overwrites an object it did
// not create.
type childConflictError struct {
	kind, name string
}

func (e *childConflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this MyApp", e.kind, e.name)
}

// selectorLabels select the app's pods. They are immutable in a Deployment,
// so they hold only what never changes for a MyApp.
func selectorLabels(app *appsv1alpha1.MyApp) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "myapp",
		"app.kubernetes.io/instance": app.Name,
	}
}

// childLabels go on every child, so `kubectl get all -l` finds them.
func childLabels(app *appsv1alpha1.MyApp) map[string]string {
	labels := selectorLabels(app)
	labels["app.kubernetes.io/managed-by"] = "myapp-operator"
	return labels
}

// reconcileChildren creates or updates the Deployment, Service and Ingress.
func (r *Reconciler) reconcileChildren(ctx context.Context, s *scope) error {
	app := s.app
	meta := metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}

	s.deployment = &appsv1.Deployment{ObjectMeta: meta}
	if err := r.reconcileChild(ctx, app, s.deployment, "Deployment", func() {
		mutateDeployment(app, s.deployment)
	}); err != nil {
		return err
	}
	app.Status.Replicas = s.deployment.Status.Replicas
	app.Status.ReadyReplicas = s.deployment.Status.ReadyReplicas

	svc := &corev1.Service{ObjectMeta: *meta.DeepCopy()}
	if err := r.reconcileChild(ctx, app, svc, "Service", func() { mutateService(app, svc) }); err != nil {
		return err
	}

	s.ingress = &networkingv1.Ingress{ObjectMeta: *meta.DeepCopy()}
	return r.reconcileChild(ctx, app, s.ingress, "Ingress", func() {
		mutateIngress(app, s.ingress, r.IngressClassName)
	})
}

// reconcileChild creates obj, or updates it when the fields the MyApp
// manages differ from the spec. controllerutil.CreateOrUpdate compares the
// object before and after mutate and writes only on a difference; mutate sets
// only the fields the operator owns, so defaults the API server filled in
// never look like drift.
func (r *Reconciler) reconcileChild(ctx context.Context, app *appsv1alpha1.MyApp, obj client.Object, kind string, mutate func()) error {
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, obj, func() error {
		if obj.GetUID() != "" && !metav1.IsControlledBy(obj, app) {
			return &childConflictError{kind: kind, name: obj.GetName()}
		}
		mutate()
		return controllerutil.SetControllerReference(app, obj, r.Client.Scheme())
	})
	if err != nil {
		var conflict *childConflictError
		if errors.As(err, &conflict) {
			return err
		}
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, ReasonChildWriteFailed, "Reconcile"+kind,
			"Could not write %s %s: %v", kind, obj.GetName(), err)
		return fmt.Errorf("reconciling %s %s: %w", kind, obj.GetName(), err)
	}
	switch op {
	case controllerutil.OperationResultCreated:
		log.FromContext(ctx).Info("Created child", "kind", kind, "name", obj.GetName())
		r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, ReasonChildCreated, "Create"+kind, "Created %s %s", kind, obj.GetName())
	case controllerutil.OperationResultUpdated:
		log.FromContext(ctx).Info("Updated child to match the spec", "kind", kind, "name", obj.GetName())
		r.Recorder.Eventf(app, obj, corev1.EventTypeNormal, ReasonChildUpdated, "Update"+kind,
			"Updated %s %s to match the MyApp's spec", kind, obj.GetName())
	}
	return nil
}

func mutateDeployment(app *appsv1alpha1.MyApp, dep *appsv1.Deployment) {
	dep.Labels = withLabels(dep.Labels, childLabels(app))
	if dep.CreationTimestamp.IsZero() {
		// The selector is immutable; set it only on create.
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: selectorLabels(app)}
	}
	dep.Spec.Replicas = ptr.To(ptr.Deref(app.Spec.Replicas, 1))
	dep.Spec.Template.Labels = withLabels(dep.Spec.Template.Labels, childLabels(app))

	// Only the app's own container is managed; a container someone else
	// added (a mesh sidecar injected into the template, say) is left alone.
	containers := dep.Spec.Template.Spec.Containers
	i := containerIndex(containers, containerName)
	if i < 0 {
		containers = append(containers, corev1.Container{Name: containerName})
		i = len(containers) - 1
	}
	c := &containers[i]
	c.Image = app.Spec.Image
	c.Ports = []corev1.ContainerPort{{Name: portName, ContainerPort: app.Spec.ContainerPort, Protocol: corev1.ProtocolTCP}}
	c.Resources = *app.Spec.Resources.DeepCopy()
	c.Env = defaultedEnv(app.Spec.Env)
	dep.Spec.Template.Spec.Containers = containers
}

func mutateService(app *appsv1alpha1.MyApp, svc *corev1.Service) {
	svc.Labels = withLabels(svc.Labels, childLabels(app))
	svc.Spec.Selector = selectorLabels(app)
	svc.Spec.Ports = []corev1.ServicePort{{
		Name:       portName,
		Port:       app.Spec.ServicePort,
		TargetPort: intstr.FromString(portName),
		Protocol:   corev1.ProtocolTCP,
	}}
}

func mutateIngress(app *appsv1alpha1.MyApp, ing *networkingv1.Ingress, className string) {
	ing.Labels = withLabels(ing.Labels, childLabels(app))
	if className != "" {
		ing.Spec.IngressClassName = ptr.To(className)
	}
	// Only hosts this MyApp holds in DNS are routed (myapp_routing.go).
	ing.Spec.Rules = ingressRules(app, routedHostsBeforeDNS(app, ing))
}

// httpRuleValue sends every path of a routed host to the app's Service.
func httpRuleValue(app *appsv1alpha1.MyApp) *networkingv1.HTTPIngressRuleValue {
	return &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{{
			Path:     "/",
			PathType: ptr.To(networkingv1.PathTypePrefix),
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: app.Name,
				Port: networkingv1.ServiceBackendPort{Number: app.Spec.ServicePort},
			}},
		}},
	}
}

// withLabels returns existing with want added, keeping labels others set.
func withLabels(existing, want map[string]string) map[string]string {
	out := make(map[string]string, len(existing)+len(want))
	maps.Copy(out, existing)
	maps.Copy(out, want)
	return out
}

func containerIndex(containers []corev1.Container, name string) int {
	for i := range containers {
		if containers[i].Name == name {
			return i
		}
	}
	return -1
}

// defaultedEnv copies env with the one default the API server applies to an
// env var inside a pod template (a field reference's apiVersion), so a
// Deployment read back compares equal to what was written.
func defaultedEnv(env []corev1.EnvVar) []corev1.EnvVar {
	if len(env) == 0 {
		return nil
	}
	out := make([]corev1.EnvVar, len(env))
	for i := range env {
		env[i].DeepCopyInto(&out[i])
		if ref := out[i].ValueFrom; ref != nil && ref.FieldRef != nil && ref.FieldRef.APIVersion == "" {
			ref.FieldRef.APIVersion = "v1"
		}
	}
	return out
}
