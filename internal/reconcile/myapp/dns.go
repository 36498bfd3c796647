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
	"net"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// desiredTarget is what the record should point at: the Ingress's
// load-balancer address when it has one the DNS service can hold (an IPv4
// address for an A record, or a host name for a CNAME; it has no AAAA),
// otherwise the configured default. ok is false when there is neither.
func (r *Reconciler) desiredTarget(ing *networkingv1.Ingress) (recordType, value string, ok bool) {
	if ing != nil {
		for _, lb := range ing.Status.LoadBalancer.Ingress {
			if ip := ipv4(lb.IP); ip != "" {
				return dns.TypeA, ip, true
			}
			if lb.Hostname != "" {
				return dns.TypeCNAME, canonicalName(lb.Hostname), true
			}
		}
	}
	if r.DefaultTarget == "" {
		return "", "", false
	}
	if ip := ipv4(r.DefaultTarget); ip != "" {
		return dns.TypeA, ip, true
	}
	return TargetType(r.DefaultTarget), r.DefaultTarget, true
}

// canonicalName is a host name in the one spelling the DNS service takes:
// lower case, without the trailing dot of a fully qualified name. Names are
// case-insensitive (RFC 4343), and a load balancer may report either form;
// written as reported, "LB-1.Example.net." would be refused as invalid.
func canonicalName(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

// ipv4 is s in dotted IPv4 form when it is an IPv4 address, also one written
// IPv4-mapped in IPv6 (::ffff:192.0.2.1), which the DNS service refuses in
// an A record; otherwise "".
func ipv4(s string) string {
	if ip := net.ParseIP(s); ip != nil && ip.To4() != nil {
		return ip.To4().String()
	}
	return ""
}

// TargetType is the record type for a target: A for an IPv4 address, CNAME
// for anything else (a host name).
func TargetType(target string) string {
	if ipv4(target) != "" {
		return dns.TypeA
	}
	return dns.TypeCNAME
}

// reconcileDNSRecord makes the DNS service hold a record for spec.host,
// owned by this MyApp and pointing at its target, and releases the hosts it
// held before once spec.host is routed. It observes (dns_observe.go), plans
// (dnsplan, pure) and applies (dns_apply.go): a crash between a write and
// the status update that records it is repaired by the next pass instead of
// leaking or duplicating. It reads the service only when a read is due
// (dns_schedule.go) or a move is under way, and leaves in s.routes the
// hosts the Ingress may route.
func (r *Reconciler) reconcileDNSRecord(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	recordType, value, ok := r.desiredTarget(s.ingress)
	if !ok {
		// The Ingress's status update will bring this MyApp back.
		s.dnsState(false, appsv1alpha1.WaitingForAddressReason,
			fmt.Sprintf("Ingress %s has no load-balancer address yet and the operator has no --dns-default-target; "+
				"the record for %s is written once either exists", app.Name, app.Spec.Host))
		return ctrl.Result{}, nil
	}
	due, untilDue := r.dnsReadDue(ctx, app, recordType, value)
	if !due && !movingHosts(app) {
		// Nothing the record depends on changed and no check is due: the
		// status stands as the last read left it (setConditions). The
		// routes are what that read found, which the status in the cache
		// may not show yet.
		s.readiness.dnsStands = true
		s.routes = r.dnsChecks.heldAtLastRead(app)
		return ctrl.Result{RequeueAfter: untilDue}, nil
	}
	o, err := r.observeDNS(ctx, s, true)
	if err != nil {
		return r.handleDNSError(ctx, s, "read", err)
	}
	r.findLostRecords(ctx, &o)
	return r.applyDNS(ctx, s, o, dnsplan.Make(o.Observation), false)
}
