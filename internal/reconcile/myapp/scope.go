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
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// scope is what one reconcile of one MyApp works on.
type scope struct {
	app        *appsv1alpha1.MyApp
	deployment *appsv1.Deployment
	ingress    *networkingv1.Ingress
	// readiness is what the phases learned that decides the conditions;
	// the deferred status write turns it into conditions (setConditions).
	readiness readiness
	// routes are the hosts the Ingress may route, as the DNS phase found
	// them held; nil when it could not tell, so the Ingress stays as it is.
	routes sets.Set[string]
	// gone is set once this pass removed the last finalizer: the MyApp no
	// longer exists, and writing its status could only fail.
	gone bool
	// ingressDeferred is set when the Ingress does not exist yet: it is
	// created after the DNS phase, with the routes that phase found.
	ingressDeferred bool
	// created names the children this pass created, for one event.
	created []string
}
