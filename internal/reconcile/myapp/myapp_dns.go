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
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
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
	parts := strings.Split(strings.TrimPrefix(owner, ownerPrefix), "/")
	if strings.HasPrefix(owner, ownerPrefix) && len(parts) == 3 {
		return fmt.Sprintf("MyApp %s/%s (uid %s)", parts[0], parts[1], parts[2])
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
			if ip := net.ParseIP(lb.IP); ip != nil && ip.To4() != nil {
				return dns.TypeA, lb.IP, true
			}
			if lb.Hostname != "" {
				return dns.TypeCNAME, lb.Hostname, true
			}
		}
	}
	if r.DefaultTarget == "" {
		return "", "", false
	}
	return TargetType(r.DefaultTarget), r.DefaultTarget, true
}

// TargetType is the record type for a target: A for an IPv4 address, CNAME
// for anything else (a host name).
func TargetType(target string) string {
	if ip := net.ParseIP(target); ip != nil && ip.To4() != nil {
		return dns.TypeA
	}
	return dns.TypeCNAME
}

// reconcileDNSRecord makes the DNS service hold a record for spec.host,
// owned by this MyApp and pointing at its target, and removes records this
// MyApp owns under other names. It observes the service before it writes, so
// a crash between a write and the status update that records it is repaired
// by the next pass instead of leaking or duplicating.
func (r *Reconciler) reconcileDNSRecord(ctx context.Context, s *scope) (reconcile.Result, error) {
	app := s.app
	host := app.Spec.Host
	owner := recordOwner(app)

	recordType, value, ok := r.desiredTarget(s.ingress)
	if !ok {
		// The Ingress's status update will bring this MyApp back.
		setDNSCondition(app, false, ReasonWaitingForAddress,
			fmt.Sprintf("Ingress %s has no load-balancer address yet and the operator has no --dns-default-target; "+
				"the record for %s is written once either exists", app.Name, host))
		return reconcile.Result{}, nil
	}

	current, err := r.DNS.Get(ctx, host)
	if errors.Is(err, external.ErrNotFound) {
		current, err = dns.Record{}, nil
	}
	if err != nil {
		return r.handleDNSError(ctx, s, "read", err)
	}
	if current.Name != "" && current.Owner != owner {
		return r.hostConflict(ctx, app, current.Owner)
	}

	want := dns.Record{Name: host, Type: recordType, Value: value, TTL: r.RecordTTL, Owner: owner}
	if current.Name == "" || current.Type != want.Type || current.Value != want.Value || current.TTL != want.TTL {
		created := current.Name == ""
		log.FromContext(ctx).Info("Writing DNS record", "name", host, "type", recordType, "value", value)
		current, err = r.DNS.Upsert(ctx, want)
		if errors.Is(err, external.ErrConflict) {
			// Another owner registered the host between the read and the write.
			var ext *external.Error
			errors.As(err, &ext)
			return r.hostConflict(ctx, app, ext.Owner)
		}
		if err != nil {
			return r.handleDNSError(ctx, s, "write", err)
		}
		if created {
			r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, ReasonDNSRecordCreated, "CreateDNSRecord",
				"Registered %s %s -> %s in the DNS service", recordType, host, value)
		} else {
			r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, ReasonDNSRecordUpdated, "UpdateDNSRecord",
				"Set %s %s -> %s in the DNS service, replacing a record that differed", recordType, host, value)
		}
	}

	// Only now that spec.host is registered are records under earlier hosts
	// removed, so a host change never leaves the app without a name.
	if app.Status.DNS == nil || app.Status.DNS.Name != host {
		if err := r.deleteRecordsExcept(ctx, app, host); err != nil {
			return r.handleDNSError(ctx, s, "delete the previous", err)
		}
	}

	state := appsv1alpha1.DNSRecordPending
	if current.State == dns.StateActive {
		state = appsv1alpha1.DNSRecordActive
	}
	app.Status.DNS = &appsv1alpha1.DNSRecordStatus{
		Name: host, Type: current.Type, Value: current.Value, Owner: owner, State: state,
	}
	if state != appsv1alpha1.DNSRecordActive {
		setDNSCondition(app, false, ReasonRecordPending,
			fmt.Sprintf("The DNS service accepted %s %s -> %s and is propagating it", current.Type, host, current.Value))
		return reconcile.Result{RequeueAfter: wait.Jitter(r.PendingPollInterval, dnsJitterFactor)}, nil
	}
	setDNSCondition(app, true, ReasonRecordActive,
		fmt.Sprintf("%s %s -> %s is active in the DNS service", current.Type, host, current.Value))
	return reconcile.Result{RequeueAfter: wait.Jitter(r.DriftCheckInterval, dnsJitterFactor)}, nil
}

// hostConflict reports that another owner holds spec.host. The other record
// is never touched; the check is repeated on the drift interval in case its
// owner releases the host.
func (r *Reconciler) hostConflict(ctx context.Context, app *appsv1alpha1.MyApp, holder string) (reconcile.Result, error) {
	who := describeOwner(holder)
	log.FromContext(ctx).Info("Host is registered by another owner; leaving it alone", "host", app.Spec.Host, "holder", holder)
	msg := fmt.Sprintf("Host %s is already registered in the DNS service by %s; choose another host, "+
		"or delete that MyApp or record first", app.Spec.Host, who)
	if !isDNSConditionReason(app, ReasonHostConflict) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, ReasonHostConflict, "CreateDNSRecord", "%s", msg)
	}
	setDNSCondition(app, false, ReasonHostConflict, msg)
	return reconcile.Result{RequeueAfter: wait.Jitter(r.DriftCheckInterval, dnsJitterFactor)}, nil
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
	if app.Status.DNS != nil && app.Status.DNS.Owner == owner {
		names.Insert(app.Status.DNS.Name)
	}
	if keep == "" {
		// On deletion the current host is a candidate even if neither the
		// list nor the status shows it yet (an eventually consistent list
		// right after a create). Deleting a missing record is a no-op.
		names.Insert(app.Spec.Host)
	}
	names.Delete(keep)
	for _, name := range sets.List(names) {
		log.FromContext(ctx).Info("Deleting DNS record", "name", name)
		err := r.DNS.Delete(ctx, name, owner)
		if errors.Is(err, external.ErrConflict) {
			continue // someone else's record: never ours to delete
		}
		if err != nil {
			return err
		}
		// Candidates the service did not list were most likely never there;
		// only a record known to exist is worth an event.
		if listed.Has(name) {
			r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, ReasonDNSRecordDeleted, "DeleteDNSRecord",
				"Deleted DNS record %s", name)
		}
	}
	return nil
}

// handleDNSError turns a DNS service error into a condition, an event and
// the right kind of retry: never sooner than a Retry-After the service sent
// (with a 429, or a 503 asking for longer than the client waits; the
// client's gate fails every call until then, so any pass an event starts
// meanwhile ends here too, without calling the service), no retry
// for a request the service rejects as invalid (the spec or the operator's
// configuration must change), and the controller's exponential backoff for
// the rest. The pass is marked incomplete, so observedGeneration stays.
func (r *Reconciler) handleDNSError(ctx context.Context, s *scope, action string, err error) (reconcile.Result, error) {
	app := s.app
	s.incomplete = true
	reason, advice := dnsErrorReason(err)
	msg := fmt.Sprintf("Could not %s the DNS record for %s: %s", action, app.Spec.Host, advice)
	log.FromContext(ctx).Error(err, "DNS service call failed", "action", action, "reason", reason)
	r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, reason, "DNS", "%s", msg)
	setDNSCondition(app, false, reason, msg)

	if retryAfter, ok := external.RetryAfter(err); ok && retryAfter > 0 {
		return reconcile.Result{RequeueAfter: retryAfter}, nil
	}
	if reason == ReasonDNSRequestRejected {
		return reconcile.Result{}, reconcile.TerminalError(err)
	}
	return reconcile.Result{}, err
}

// dnsErrorReason maps an error to a condition reason and advice that does
// not change from one failure to the next, so the status does not churn.
func dnsErrorReason(err error) (reason, advice string) {
	switch {
	case errors.Is(err, external.ErrThrottled):
		return ReasonDNSThrottled, "the DNS service is rate-limiting the operator; it retries no sooner than the service asks"
	case errors.Is(err, external.ErrUnauthorized):
		return ReasonDNSUnauthorized, "the DNS service refused the operator's token; check the token configured with " +
			"--dns-token-file or --dns-token-secret"
	case errors.Is(err, external.ErrInvalid):
		return ReasonDNSRequestRejected, "the DNS service rejected the request as invalid; check spec.host and the " +
			"operator's --dns-default-target (see the operator's log for the service's answer)"
	default:
		return ReasonDNSServiceUnavailable, "the DNS service is unreachable or failing; the operator retries with backoff"
	}
}
