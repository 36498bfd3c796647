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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// scope is what one reconcile of one MyApp works on.
type scope struct {
	app *appsv1alpha1.MyApp
	// base is the MyApp as the pass read it, or as its last status write
	// in the pass left it (recordTransfer writes it in place): the
	// deferred status write patches from it.
	base       *appsv1alpha1.MyApp
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

// observation is what the DNS phase knows: the planner's input, and what
// the apply side needs to show it.
type observation struct {
	dnsplan.Observation
	app *appsv1alpha1.MyApp
	// base is the scope's base, which a status write made during the calls
	// (recordTransfer) updates in place.
	base *appsv1alpha1.MyApp
	key  types.NamespacedName
	// records are the service's answers, by name (dnsplan.Record drops the
	// fields the status does not need).
	records map[string]dns.Record
	// readErr is the first failed read of a deletion, which waits on it.
	readErr error
}

// readiness is what one pass learned that decides the MyApp's conditions.
// The phases fill it in; setConditions turns it into conditions once the
// pass is over, so what Ready and DNSReady mean is decided in this file
// alone, and the conditions the phases read are the ones the pass started
// with (a warning goes out when trouble starts: pass.TroubleStarts).
type readiness struct {
	// dns is DNSReady as the DNS phase decided it; nil when it decided
	// nothing (a child write failed first).
	dns *conditionState
	// dnsStands is set when the DNS phase decided, for the current spec,
	// that no read was due: DNSReady stands as the last read left it.
	dnsStands bool
	// child is the failed child write Ready reports; nil when none failed.
	child *conditionState
	// childrenWritten is set once every child is as the spec wants, so
	// Ready follows the Deployment (scope.deployment) and DNSReady.
	childrenWritten bool
	// deleting is set while the MyApp's cleanup runs.
	deleting bool
	// suspended is set when spec.suspend kept the pass from writing
	// anything.
	suspended bool
	// dnsFailure is set when a call to the DNS service failed in this
	// pass; its retryIn is nil when no retry is scheduled.
	dnsFailure *dnsFailure
	// dnsRead is set when the DNS phase read the record (or dealt with a
	// deletion's records): only such a pass takes a reconcile request.
	dnsRead bool
}

// dnsFailure is a failed call to the DNS service: how long until the retry,
// or nil for none.
type dnsFailure struct {
	retryIn *time.Duration
}

// conditionState is a condition as a phase decided it.
type conditionState struct {
	ok              bool
	reason, message string
	// stalled marks what no retry fixes (a spec the API server refuses, a
	// host another owner holds for good, a DNS request rejected as
	// invalid): the MyApp reports Stalled until something changes.
	stalled bool
}
