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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// ownerPrefix starts every owner identity this operator writes.
const ownerPrefix = "myapp-operator/"

// recordOwner is the owner identity of a MyApp's records in the DNS service.
// It ends in the UID, so a MyApp deleted and created again under the same
// name is a different owner, and the old one's cleanup can never remove the
// new one's record. Namespace and name are there for people reading it.
func recordOwner(app *appsv1alpha1.MyApp) string {
	return ownerPrefix + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// describeOwner turns an owner identity into words for a condition message.
func describeOwner(owner string) string {
	ref, ok := parseRecordOwner(owner)
	switch {
	case ok && ref.orphaned:
		return fmt.Sprintf("MyApp %s (uid %s), deleted with deletionPolicy Orphan", ref.key, ref.uid)
	case ok:
		return fmt.Sprintf("MyApp %s (uid %s)", ref.key, ref.uid)
	}
	return fmt.Sprintf("owner %q", owner)
}

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
				return dns.TypeCNAME, lb.Hostname, true
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
// only when a read is due (myapp_dns_schedule.go), and leaves in s.routes the
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

// hostConflict reports that another owner holds spec.host. The other record
// is never touched, and the Ingress does not route the host. The host is
// read again at this MyApp's drift check, or sooner when the MyApp holding
// it changes.
//
// Two MyApps swapping hosts would wait for each other for ever, each keeping
// its old record until it holds the new one. So when the holder is a live
// MyApp whose spec.host is now the host this MyApp holds, this MyApp
// releases its record first; in every other case it keeps its old host, so
// a host change never leaves the app without a name.
func (r *Reconciler) hostConflict(ctx context.Context, s *scope, holder string) (ctrl.Result, error) {
	app := s.app
	held := heldHost(app)
	if held == app.Spec.Host {
		// The status says this MyApp holds spec.host, but the service says
		// otherwise: the record was deleted and taken outside the operator.
		app.Status.DNS, held = nil, ""
	}
	s.routes = sets.New[string]()
	if held != "" {
		s.routes.Insert(held)
	}

	var snapshot *holderSnapshot
	if holderApp := r.holderMyApp(ctx, holder); holderApp != nil {
		snapshot = snapshotOf(holderApp)
		if held != "" && holderApp.Spec.Host == held {
			// Confirm with the API server, not the cache, before giving up
			// a name.
			live := &appsv1alpha1.MyApp{}
			err := r.APIReader.Get(ctx, snapshot.key, live)
			if err == nil && live.UID == holderApp.UID && live.Spec.Host == held && live.DeletionTimestamp.IsZero() {
				return r.releaseForSwap(ctx, s, live)
			}
		}
	}

	who := describeOwner(holder)
	log.FromContext(ctx).Info("Host is registered by another owner; leaving it alone", "host", app.Spec.Host, "holder", holder)
	msg := fmt.Sprintf("Host %s is already registered in the DNS service by %s; %s",
		app.Spec.Host, who, hostConflictAdvice(app, holder))
	if held != "" {
		msg += fmt.Sprintf("; %s stays registered and routed meanwhile", held)
	}
	if pass.TroubleStarts(app.Status.Conditions, appsv1alpha1.DNSReadyCondition, appsv1alpha1.HostConflictReason) {
		r.event(app, nil, corev1.EventTypeWarning, eventHostConflict, "CreateDNSRecord", "%s", msg)
	}
	s.dnsState(false, appsv1alpha1.HostConflictReason, msg)
	next := r.dnsChecks.driftCheck(client.ObjectKeyFromObject(app), app.UID, r.DriftCheckInterval, r.Clock.Now())
	return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, snapshot)}, nil
}

// holderMyApp is the live MyApp (from the cache) that the owner identity
// holder names, or nil when holder is not a MyApp's or that MyApp is gone.
func (r *Reconciler) holderMyApp(ctx context.Context, holder string) *appsv1alpha1.MyApp {
	parts := strings.Split(strings.TrimPrefix(holder, ownerPrefix), "/")
	if !strings.HasPrefix(holder, ownerPrefix) || len(parts) != 3 {
		return nil
	}
	app := &appsv1alpha1.MyApp{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: parts[0], Name: parts[1]}, app); err != nil ||
		string(app.UID) != parts[2] {
		return nil
	}
	return app
}

// releaseForSwap deletes this MyApp's records so the holder of spec.host,
// which is moving to the host this MyApp held, can take it and release
// spec.host in turn. This MyApp reads spec.host again soon after.
func (r *Reconciler) releaseForSwap(ctx context.Context, s *scope, holder *appsv1alpha1.MyApp) (ctrl.Result, error) {
	app := s.app
	released := heldHost(app)
	log.FromContext(ctx).Info("Releasing the previous host to the MyApp moving to it, which holds this MyApp's new host",
		"host", app.Spec.Host, "released", released, "holder", klog.KObj(holder))
	if err := r.deleteRecordsExcept(ctx, app, app.Spec.Host); err != nil {
		return r.handleDNSError(ctx, s, "release the previous", err)
	}
	app.Status.DNS = nil
	s.routes = sets.New[string]()
	msg := fmt.Sprintf("Host %s is held by MyApp %s/%s, which is moving to %s, the host this MyApp held; "+
		"%s was released so the two can swap, and %s is registered once it is free",
		app.Spec.Host, holder.Namespace, holder.Name, released, released, app.Spec.Host)
	r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordReleased, "DeleteDNSRecord", "%s", msg)
	s.dnsState(false, appsv1alpha1.HostConflictReason, msg)
	next := r.Clock.Now().Add(wait.Jitter(r.PendingPollInterval, pass.JitterFactor))
	return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, snapshotOf(holder))}, nil
}

// deleteRecordsExcept deletes every record this MyApp owns except keep (none
// when keep is empty). The names come from the service's list by owner and
// from the status, so a record survives neither a host change nor a crash
// before the status recorded it. A record another owner holds is skipped.
func (r *Reconciler) deleteRecordsExcept(ctx context.Context, app *appsv1alpha1.MyApp, keep string) error {
	owner := recordOwner(app)
	owned, err := r.DNS.List(ctx, owner)
	if err != nil {
		return err
	}
	listed := sets.New[string]()
	for _, rec := range owned {
		listed.Insert(rec.Name)
	}
	names := listed.Clone()
	if held := heldHost(app); held != "" {
		names.Insert(held)
	}
	if keep == "" {
		// On deletion the current host is a candidate even if neither the
		// list nor the status shows it yet (an eventually consistent list
		// right after a create). Deleting a missing record is a no-op.
		names.Insert(app.Spec.Host)
	}
	names.Delete(keep)
	return r.deleteRecordNames(ctx, app, names, listed)
}

// deleteRecordNames deletes the records called names on behalf of this
// MyApp; a record another owner holds is skipped. Of the candidates, only
// those known to exist are worth an event: the others were most likely
// never there.
func (r *Reconciler) deleteRecordNames(ctx context.Context, app *appsv1alpha1.MyApp, names, known sets.Set[string]) error {
	owner := recordOwner(app)
	for _, name := range sets.List(names) {
		log.FromContext(ctx).Info("Deleting DNS record", "name", name)
		err := r.DNS.Delete(ctx, name, owner)
		if errors.Is(err, external.ErrConflict) {
			continue // someone else's record: never ours to delete
		}
		if err != nil {
			return err
		}
		if known.Has(name) {
			r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordDeleted, "DeleteDNSRecord",
				"Deleted DNS record %s", name)
		}
	}
	return nil
}

// handleDNSError turns a DNS service error into a condition, a warning when
// that trouble starts, and the right kind of retry: never sooner than a
// Retry-After the service sent (with a 429, or a 503 asking for longer than
// the client waits; the client's gate fails every call until then, so any
// pass an event starts meanwhile ends here too, without calling the
// service), no retry for a request the service rejects as invalid (the spec
// or the operator's configuration must change), and the controller's
// exponential backoff for the rest. Every one of them is an error, so the
// pass is incomplete and observedGeneration stays (pass.Run).
func (r *Reconciler) handleDNSError(ctx context.Context, s *scope, action string, err error) (ctrl.Result, error) {
	app := s.app
	// The next pass reads the record again, whatever brings it.
	r.dnsChecks.forget(client.ObjectKeyFromObject(app))
	if app.Status.DNS != nil {
		app.Status.DNS.State = appsv1alpha1.DNSRecordUnknown
	}
	deleting := !app.DeletionTimestamp.IsZero()
	reason, advice := dnsErrorReason(err)
	if reason == appsv1alpha1.DNSRequestRejectedReason && deleting {
		advice = deleteRejectedAdvice
	}
	msg := fmt.Sprintf("Could not %s the DNS record for %s: %s", action, app.Spec.Host, advice)
	log.FromContext(ctx).Error(err, "DNS service call failed", "action", action, "reason", reason)
	if pass.TroubleStarts(app.Status.Conditions, appsv1alpha1.DNSReadyCondition, reason) {
		r.event(app, nil, corev1.EventTypeWarning, eventReason(reason), "DNS", "%s", msg)
	}
	s.dnsState(false, reason, msg)

	if retryAfter, ok := external.RetryAfter(err); ok && retryAfter > 0 {
		return ctrl.Result{}, pass.Wait(retryAfter, err)
	}
	if reason == appsv1alpha1.DNSRequestRejectedReason && !deleting {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return ctrl.Result{}, err
}

// deleteRejectedAdvice is the advice when a delete is refused as invalid. The
// request cannot be wrong unless something between the operator and the
// service refuses it, and a deletion must not stall silently: it is retried
// with backoff, and the way out is documented.
const deleteRejectedAdvice = "the DNS service, or a proxy in front of it, rejected the request as invalid " +
	"(see the operator's log for the answer); the operator retries with backoff. To let the MyApp go and leave " +
	"the record in place, set deletionPolicy: Orphan"

// dnsReasons are the DNSReady reasons for the DNS service's failures.
var dnsReasons = external.Reasons{
	Unauthorized: appsv1alpha1.DNSUnauthorizedReason,
	Throttled:    appsv1alpha1.DNSThrottledReason,
	Unavailable:  appsv1alpha1.DNSServiceUnavailableReason,
	Rejected:     appsv1alpha1.DNSRequestRejectedReason,
	Other:        appsv1alpha1.DNSServiceUnavailableReason,
}

// dnsErrorReason maps an error to a condition reason and advice that does
// not change from one failure to the next, so the status does not churn.
func dnsErrorReason(err error) (reason, advice string) {
	reason = dnsReasons.For(err)
	switch reason {
	case appsv1alpha1.DNSThrottledReason:
		return reason, "the DNS service is rate-limiting the operator; it retries no sooner than the service asks"
	case appsv1alpha1.DNSUnauthorizedReason:
		return reason, "the DNS service refused the operator's token; check the token configured with " +
			"--dns-token-file or --dns-token-secret"
	case appsv1alpha1.DNSRequestRejectedReason:
		return reason, "the DNS service rejected the request as invalid; check spec.host and the " +
			"operator's --dns-default-target (see the operator's log for the service's answer)"
	default:
		return reason, "the DNS service is unreachable or failing; the operator retries with backoff"
	}
}
