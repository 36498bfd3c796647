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
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// The Ingress routes a host only while this MyApp holds its DNS record. On a
// shared ingress controller a rule for a host another tenant holds could
// take that tenant's traffic, and during a move the old host must keep
// working until the new record is held.
//
// The record points at the Ingress's load-balancer address, so the Ingress
// must exist before the record does. An Ingress needs a rule or a default
// backend, and a default backend would catch every host; so while the MyApp
// holds no host, its Ingress has one rule without paths for unroutedHost, a
// name under the reserved .invalid domain (RFC 6761) that never resolves.
const unroutedHost = "unrouted.myapp-operator.invalid"

// hostIndex indexes MyApps by spec.host, to find the MyApps waiting for a
// host when its holder changes.
const hostIndex = "spec.host"

// heldIndex indexes MyApps by the hosts their status shows held, to find
// the MyApp that may hand a host over when another starts to want it.
const heldIndex = "status.dns.held"

// heldHost is the host whose record this MyApp holds according to its
// status (status.dns.name), or "".
func heldHost(app *appsv1alpha1.MyApp) string {
	return heldIn(app.Status.DNS, app)
}

// heldIn is the host whose record st says app holds, or "".
func heldIn(st *appsv1alpha1.DNSRecordStatus, app *appsv1alpha1.MyApp) string {
	// Only this cluster's operator writes app's status, so an identity
	// naming app in any installation or none is one it held.
	if st != nil && selfOf("", app).Names(st.Owner) {
		return st.Name
	}
	return ""
}

// heldHostsIn are every host st says app holds: status.dns.name and, during
// a move, the previous hosts.
func heldHostsIn(st *appsv1alpha1.DNSRecordStatus, app *appsv1alpha1.MyApp) []string {
	held := heldIn(st, app)
	if held == "" {
		return nil
	}
	return append([]string{held}, st.Previous...)
}

// heldHosts are every host app's status shows it holding.
func heldHosts(app *appsv1alpha1.MyApp) []string {
	return heldHostsIn(app.Status.DNS, app)
}

// routedHostsBeforeDNS is what the Ingress routes before this pass has asked
// the DNS service anything: of what it routes now, the hosts the status
// shows held, and spec.host. It never adds a host: only the DNS phase's routes do
// (reconcileIngressRoutes), so a route write that is refused for good (an
// admission policy) cannot keep the DNS phase from running, and a host
// released or being handed over is never routed again from a stale status.
func routedHostsBeforeDNS(app *appsv1alpha1.MyApp, ing *networkingv1.Ingress) sets.Set[string] {
	// spec.host counts as held when the Ingress routes it: only a DNS phase
	// that found it held routed it, and the status in the cache may not
	// show that pass's write yet.
	held := sets.New(heldHosts(app)...).Insert(app.Spec.Host)
	hosts := sets.New[string]()
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP != nil && held.Has(rule.Host) {
			hosts.Insert(rule.Host)
		}
	}
	return hosts
}

// heldIndexValues are the values of heldIndex for a MyApp.
func heldIndexValues(obj client.Object) []string {
	return heldHosts(obj.(*appsv1alpha1.MyApp))
}

// ingressRules routes each host to the app's Service; with no host, the one
// unroutedHost rule without paths keeps the Ingress valid and routes nothing.
func ingressRules(app *appsv1alpha1.MyApp, hosts sets.Set[string]) []networkingv1.IngressRule {
	if hosts.Len() == 0 {
		return []networkingv1.IngressRule{{Host: unroutedHost}}
	}
	rules := make([]networkingv1.IngressRule, 0, hosts.Len())
	// The spec's host first, then the one being moved away from.
	for _, host := range append([]string{app.Spec.Host}, sets.List(hosts.Clone().Delete(app.Spec.Host))...) {
		if !hosts.Has(host) {
			continue
		}
		rule := networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: httpRuleValue(app)}}
		rules = append(rules, rule)
	}
	return rules
}

// syncIngressRoutes brings the Ingress's rules to what the DNS phase found
// held, with one merge patch on the object this pass already wrote or read,
// so a stale cache cannot turn it into a conflict.
func (r *Reconciler) syncIngressRoutes(ctx context.Context, s *scope) error {
	if s.routes == nil || s.ingress == nil || s.ingress.UID == "" {
		return nil
	}
	want := ingressRules(s.app, s.routes)
	if equality.Semantic.DeepEqual(s.ingress.Spec.Rules, want) {
		return nil
	}
	before := s.ingress.DeepCopy()
	s.ingress.Spec.Rules = want
	log.FromContext(ctx).Info("Routing the hosts this MyApp holds", "hosts", sets.List(s.routes))
	if err := r.Client.Patch(ctx, s.ingress, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("routing the held hosts in Ingress %s: %w", s.ingress.Name, err)
	}
	return nil
}

// hostWaiters wakes the MyApps waiting for a host when a MyApp that may hold
// or want it comes, changes its host, its record or its suspend, or goes
// away: the waiter's next pass reads the host again instead of waiting for
// its drift check, or for a conflict's backed-off re-check.
func (r *Reconciler) hostWaiters() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[ctrl.Request]
	enqueue := func(ctx context.Context, self client.Object, hosts sets.Set[string], q queue) {
		for _, host := range sets.List(hosts) {
			var waiting appsv1alpha1.MyAppList
			if err := r.Client.List(ctx, &waiting, client.MatchingFields{hostIndex: host}); err != nil {
				log.FromContext(ctx).Error(err, "Listing the MyApps waiting for a host", "host", host)
				continue
			}
			// The MyApps holding it too: one may hand it over (a swap or a
			// rotation) now that a MyApp wants it.
			var holding appsv1alpha1.MyAppList
			if err := r.Client.List(ctx, &holding, client.MatchingFields{heldIndex: host}); err != nil {
				log.FromContext(ctx).Error(err, "Listing the MyApps holding a host", "host", host)
			}
			for _, items := range [][]appsv1alpha1.MyApp{waiting.Items, holding.Items} {
				for i := range items {
					if items[i].UID != self.GetUID() {
						// Its next pass reads the record, and a conflict's
						// re-checks start again from the shortest wait.
						key := client.ObjectKeyFromObject(&items[i])
						r.dnsChecks.wake(key)
						q.Add(ctrl.Request{NamespacedName: key})
					}
				}
			}
		}
	}
	hostsOf := func(app *appsv1alpha1.MyApp) sets.Set[string] {
		return sets.New(app.Spec.Host).Insert(heldHosts(app)...)
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			old, okOld := e.ObjectOld.(*appsv1alpha1.MyApp)
			app, okNew := e.ObjectNew.(*appsv1alpha1.MyApp)
			if !okOld || !okNew {
				return
			}
			// A suspend or a resume counts: a suspended MyApp takes no part
			// in a cycle of moves, so a resume may close one.
			if old.Spec.Host == app.Spec.Host && sets.New(heldHosts(old)...).Equal(sets.New(heldHosts(app)...)) &&
				old.DeletionTimestamp.IsZero() == app.DeletionTimestamp.IsZero() && old.Spec.Suspend == app.Spec.Suspend {
				return // nothing a waiter cares about
			}
			enqueue(ctx, app, hostsOf(old).Union(hostsOf(app)), q)
		},
		// A new MyApp may close a cycle of moves whose member that gives
		// first waits, backed off, for something to change.
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			if app, ok := e.Object.(*appsv1alpha1.MyApp); ok {
				enqueue(ctx, app, hostsOf(app), q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if app, ok := e.Object.(*appsv1alpha1.MyApp); ok {
				enqueue(ctx, app, hostsOf(app), q)
			}
		},
	}
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
