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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// RenderChildren returns the Deployment, Service and Ingress the MyApp
// controller writes for app, in that order, built by the same functions it
// writes them with (children.go), from app alone: it reads nothing and
// changes nothing, so another controller (the BackupConfig controller, which
// keeps them in each backup) can call it for the price of building three
// objects. ingressClassName is the manager's --ingress-class-name.
//
// The objects carry only what the operator sets: names, labels and the
// fields it manages, no owner reference (a UID means nothing outside this
// cluster), no status and nothing the API server defaults. The Ingress
// routes the hosts app's status shows it holding in DNS, as the controller's
// DNS phase leaves it; while it holds none, it routes nothing (the one
// unrouted rule).
func RenderChildren(app *appsv1alpha1.MyApp, ingressClassName string) []client.Object {
	// The mutate functions only ever read the MyApp; a copy keeps the
	// promise that nothing here changes it even if one of them did not.
	app = app.DeepCopy()
	meta := func() metav1.ObjectMeta { return metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace} }

	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta()}
	mutateDeployment(app, dep)

	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta()}
	mutateService(app, svc)

	ing := &networkingv1.Ingress{TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: meta()}
	mutateIngress(app, ing, ingressClassName)
	// What the DNS phase routes once it has run (reconcileIngressRoutes):
	// the hosts held. The status is the record of them a backup has.
	ing.Spec.Rules = ingressRules(app, sets.New(heldHosts(app)...))

	return []client.Object{dep, svc, ing}
}
