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
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
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
// owned by this MyApp and pointing at its target, and removes records this
// MyApp owns under other names. It observes the service before it writes, so
// a crash between a write and the status update that records it is repaired
// by the next pass instead of leaking or duplicating. It reads the service
// only when a read is due (dns_schedule.go), and leaves in s.routes the
// hosts the Ingress may route.
func (r *Reconciler) reconcileDNSRecord(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	host := app.Spec.Host
	owner := recordOwner(app)

	recordType, value, ok := r.desiredTarget(s.ingress)
	if !ok {
		// The Ingress's status update will bring this MyApp back.
		s.dnsState(false, appsv1alpha1.WaitingForAddressReason,
			fmt.Sprintf("Ingress %s has no load-balancer address yet and the operator has no --dns-default-target; "+
				"the record for %s is written once either exists", app.Name, host))
		return ctrl.Result{}, nil
	}
	if due, untilDue := r.dnsReadDue(ctx, app, recordType, value); !due {
		// Nothing the record depends on changed and no check is due: the
		// status stands as the last read left it (setConditions). The
		// routes are what that read found, which the status in the cache
		// may not show yet.
		s.readiness.dnsStands = true
		s.routes = r.dnsChecks.heldAtLastRead(app)
		return ctrl.Result{RequeueAfter: untilDue}, nil
	}

	current, err := r.DNS.Get(ctx, host)
	if errors.Is(err, external.ErrNotFound) {
		current, err = dns.Record{}, nil
	}
	if err != nil {
		return r.handleDNSError(ctx, s, "read", err)
	}
	if current.Name != "" && current.Owner != owner {
		// Another owner holds the host; adopt.go decides whether this MyApp
		// may take the record over or is in conflict.
		var done bool
		var result ctrl.Result
		if current, done, result, err = r.adoptOrConflict(ctx, s, current); done {
			return result, err
		}
	}

	want := dns.Record{Name: host, Type: recordType, Value: value, TTL: r.RecordTTL, Owner: owner}
	current, err = r.writeRecord(ctx, app, current, want)
	if errors.Is(err, external.ErrConflict) {
		// Another owner registered the host between the read and the write.
		var ext *external.Error
		errors.As(err, &ext)
		return r.hostConflict(ctx, s, ext.Owner)
	}
	if err != nil {
		return r.handleDNSError(ctx, s, "write", err)
	}

	// spec.host is held now, so the Ingress may route it; the previous host
	// stays routed until its record is gone.
	s.routes = sets.New(host)
	if held := heldHost(app); held != "" {
		s.routes.Insert(held)
	}
	// Only now that spec.host is registered are records under earlier hosts
	// removed, so a host change never leaves the app without a name.
	if (app.Status.DNS == nil || app.Status.DNS.Name != host) && mayHoldEarlierHosts(app) {
		if err := r.deleteRecordsExcept(ctx, app, host); err != nil {
			return r.handleDNSError(ctx, s, "delete the previous", err)
		}
	}
	s.routes = sets.New(host)

	state := appsv1alpha1.DNSRecordPending
	if current.State == dns.StateActive {
		state = appsv1alpha1.DNSRecordActive
	}
	app.Status.DNS = &appsv1alpha1.DNSRecordStatus{
		Name: host, Type: current.Type, Value: current.Value, Owner: owner, State: state, LastObservedState: state,
	}
	now := r.Clock.Now()
	if state != appsv1alpha1.DNSRecordActive {
		s.dnsState(false, appsv1alpha1.RecordPendingReason,
			fmt.Sprintf("The DNS service accepted %s %s -> %s and is propagating it", current.Type, host, current.Value))
		next := now.Add(wait.Jitter(r.PendingPollInterval, pass.JitterFactor))
		return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, nil)}, nil
	}
	s.dnsState(true, appsv1alpha1.RecordActiveReason,
		fmt.Sprintf("%s %s -> %s is active in the DNS service", current.Type, host, current.Value))
	next := r.dnsChecks.driftCheck(client.ObjectKeyFromObject(app), app.UID, r.DriftCheckInterval, now)
	return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, nil)}, nil
}

// mayHoldEarlierHosts reports whether the DNS service may hold records this
// MyApp owns under hosts other than spec.host. A MyApp whose spec never
// changed (generation 1) has only ever had spec.host, so a new MyApp's
// first pass needs no list by owner. Once the spec changed, a pass that
// registered another host may have crashed before its status recorded it,
// so the list is made whenever the status does not show spec.host held.
func mayHoldEarlierHosts(app *appsv1alpha1.MyApp) bool {
	return app.Generation != 1
}

// writeRecord brings the record from current (empty when there is none) to
// want, and returns what the service stored; a record that is as wanted is
// not written.
func (r *Reconciler) writeRecord(ctx context.Context, app *appsv1alpha1.MyApp, current, want dns.Record) (dns.Record, error) {
	if current.Name != "" && current.Type == want.Type && current.Value == want.Value && current.TTL == want.TTL {
		return current, nil
	}
	log.FromContext(ctx).Info("Writing DNS record", "name", want.Name, "type", want.Type, "value", want.Value)
	stored, err := r.DNS.Upsert(ctx, want)
	if err != nil {
		return stored, err
	}
	if current.Name == "" {
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordCreated, "CreateDNSRecord",
			"Registered %s %s -> %s in the DNS service", want.Type, want.Name, want.Value)
	} else {
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordUpdated, "UpdateDNSRecord",
			"Set %s %s -> %s in the DNS service, replacing a record that differed", want.Type, want.Name, want.Value)
	}
	return stored, nil
}
