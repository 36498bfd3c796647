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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// Reasons of the events about handing records over and adopting them.
const (
	// eventDNSRecordAdopted: the MyApp took over the record of an earlier
	// MyApp of its namespace and name, as its annotation asked.
	eventDNSRecordAdopted eventReason = "DNSRecordAdopted"
	// eventDNSRecordHandedOver: the MyApp gave a host it held to the MyApp
	// that wants it (a swap or a rotation of hosts).
	eventDNSRecordHandedOver eventReason = "DNSRecordHandedOver"
)

// applyDNS makes the plan's calls in order, sends each one's event once it
// succeeded, and shows the outcome. A call that races another writer (a
// conflict, or a transfer whose record went) is a new observation, planned
// once more; a second race, or any other failure, records what the calls
// before it did and is handled as a failure (handleDNSError).
func (r *Reconciler) applyDNS(ctx context.Context, s *scope, o observation, p dnsplan.Plan, raced bool) (ctrl.Result, error) {
	for i, c := range p.Calls {
		rec, err := r.callDNS(ctx, s.app, c)
		if err != nil {
			if isRace(c, err) && !raced {
				log.FromContext(ctx).Info("DNS record changed under this pass; observing it again", "name", c.Name, "op", c.Op)
				again, err := r.observeDNS(ctx, s, true)
				if err != nil {
					return r.handleDNSError(ctx, s, "read", err)
				}
				return r.applyDNS(ctx, s, again, dnsplan.Make(again.Observation), true)
			}
			r.recordProgress(s.app, o, p, i)
			return r.handleDNSError(ctx, s, callAction(c), err)
		}
		if rec.Name != "" {
			o.records[c.Name] = rec
		} else if c.Op == dnsplan.OpDelete {
			delete(o.records, c.Name)
		}
		r.callEvent(s.app, c)
	}
	return r.showDNS(ctx, s, o, p)
}

// callDNS makes one call; it returns the record the service stored, when
// the call answers with one.
func (r *Reconciler) callDNS(ctx context.Context, app *appsv1alpha1.MyApp, c dnsplan.Call) (dns.Record, error) {
	logger := log.FromContext(ctx)
	switch c.Op {
	case dnsplan.OpUpsert:
		logger.Info("Writing DNS record", "name", c.Name, "type", c.Record.Type, "value", c.Record.Value)
		return r.DNS.Upsert(ctx, dns.Record{Name: c.Name, Type: c.Record.Type, Value: c.Record.Value,
			TTL: c.Record.TTL, Owner: c.Record.Owner})
	case dnsplan.OpTransfer:
		logger.Info("Transferring DNS record", "name", c.Name, "from", c.From, "to", c.To, "why", c.Why)
		return r.DNS.Transfer(ctx, c.Name, c.From, c.To)
	case dnsplan.OpDelete:
		logger.Info("Deleting DNS record", "name", c.Name, "why", c.Why)
		return dns.Record{}, r.DNS.Delete(ctx, c.Name, c.Owner)
	}
	return dns.Record{}, fmt.Errorf("unknown DNS call %q for MyApp %s", c.Op, client.ObjectKeyFromObject(app))
}

// isRace reports whether err means another writer changed the record
// between the read and the call.
func isRace(c dnsplan.Call, err error) bool {
	return errors.Is(err, external.ErrConflict) || (c.Op == dnsplan.OpTransfer && errors.Is(err, external.ErrNotFound))
}

// callAction names a call in a condition message: "Could not <action> the
// DNS record for <host>".
func callAction(c dnsplan.Call) string {
	switch c.Why {
	case dnsplan.WhyCreate, dnsplan.WhyUpdate:
		return "write"
	case dnsplan.WhyAdopt:
		return "adopt"
	case dnsplan.WhyReplaceLeak:
		return "delete the leaked"
	case dnsplan.WhyMark, dnsplan.WhyUnmark:
		return "mark"
	case dnsplan.WhyHandOver:
		return "hand over the previous"
	case dnsplan.WhyRelease:
		return "delete the previous"
	}
	return "delete"
}

// callEvent sends the event of a call that succeeded.
func (r *Reconciler) callEvent(app *appsv1alpha1.MyApp, c dnsplan.Call) {
	switch c.Why {
	case dnsplan.WhyCreate:
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordCreated, "CreateDNSRecord",
			"Registered %s %s -> %s in the DNS service", c.Record.Type, c.Name, c.Record.Value)
	case dnsplan.WhyUpdate:
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordUpdated, "UpdateDNSRecord",
			"Set %s %s -> %s in the DNS service, replacing a record that differed", c.Record.Type, c.Name, c.Record.Value)
	case dnsplan.WhyAdopt:
		ref, _ := parseRecordOwner(c.From)
		what := "an earlier MyApp"
		if ref.orphaned {
			what = "an earlier MyApp deleted with deletionPolicy Orphan"
		}
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordAdopted, "AdoptDNSRecord",
			"Adopted DNS record %s from %s of this name (uid %s), as the annotation %s asks",
			c.Name, what, ref.uid, appsv1alpha1.AdoptDNSRecordAnnotation)
	case dnsplan.WhyReplaceLeak:
		ref, _ := parseRecordOwner(c.Owner)
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordDeleted, "DeleteDNSRecord",
			"Deleted DNS record %s, left behind by an earlier MyApp of this name (uid %s) that no longer exists",
			c.Name, ref.uid)
	case dnsplan.WhyMark:
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordOrphaned, "MarkDNSRecord",
			"Marked DNS record %s as orphaned (deletionPolicy is Orphan): it is now owned by %q, which the "+
				"orphan-record sweep never deletes; a MyApp of this name annotated %s=true can adopt it",
			c.Name, c.To, appsv1alpha1.AdoptDNSRecordAnnotation)
	case dnsplan.WhyMigrate:
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordUpdated, "MigrateDNSRecord",
			"Took over DNS record %s, written before owner IDs (owner %q): it is now owned by %q, with this "+
				"installation's owner ID", c.Name, c.From, c.To)
	case dnsplan.WhyUnmark:
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordUpdated, "MarkDNSRecord",
			"DNS record %s is owned by %q again (deletionPolicy is Delete): it is deleted with the MyApp", c.Name, c.To)
	case dnsplan.WhyHandOver:
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordHandedOver, "TransferDNSRecord",
			"Handed DNS record %s over to MyApp %s, which wants that host", c.Name, c.Peer.Key)
	case dnsplan.WhyRelease, dnsplan.WhyDelete:
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordDeleted, "DeleteDNSRecord", "Deleted DNS record %s", c.Name)
	}
}

// recordProgress puts into the status what the calls before a failed one
// did, so no record a failed pass wrote or released is forgotten.
func (r *Reconciler) recordProgress(app *appsv1alpha1.MyApp, o observation, p dnsplan.Plan, done int) {
	if o.Deleting {
		return
	}
	holds, previous := p.HeldAfter(o.Observation, done)
	app.Status.DNS = r.recordStatus(app, o, holds, previous)
}

// recordStatus is status.dns for the hosts held: the record at holds as the
// service last answered, and the previous hosts.
func (r *Reconciler) recordStatus(app *appsv1alpha1.MyApp, o observation, holds string, previous []string) *appsv1alpha1.DNSRecordStatus {
	if holds == "" {
		return nil
	}
	st := &appsv1alpha1.DNSRecordStatus{Name: holds, Owner: wantedOwner(r.OwnerID, app), Previous: previous}
	if old := app.Status.DNS; old != nil && old.Name == holds {
		st.Type, st.Value, st.Owner, st.State, st.LastObservedState = old.Type, old.Value, old.Owner, old.State, old.LastObservedState
	}
	if rec, ok := o.records[holds]; ok && rec.Name != "" {
		st.Type, st.Value, st.Owner = rec.Type, rec.Value, rec.Owner
		st.State = appsv1alpha1.DNSRecordPending
		if rec.State == dns.StateActive {
			st.State = appsv1alpha1.DNSRecordActive
		}
		st.LastObservedState = st.State
	}
	return st
}

// showDNS shows the outcome of a plan whose calls succeeded: the status,
// DNSReady, the routes, and when to come back.
func (r *Reconciler) showDNS(ctx context.Context, s *scope, o observation, p dnsplan.Plan) (ctrl.Result, error) {
	app := s.app
	out := p.Outcome
	now := r.Clock.Now()
	s.routes = sets.New(out.Routes...)
	app.Status.DNS = r.recordStatus(app, o, out.Holds, out.Previous)
	soon := func() time.Time { return now.Add(wait.Jitter(r.PendingPollInterval, pass.JitterFactor)) }

	if out.Kind == dnsplan.KindConflict {
		msg := fmt.Sprintf("Host %s is already registered in the DNS service by %s; %s",
			app.Spec.Host, describeOwner(r.OwnerID, out.Holder), r.hostConflictAdvice(app, out.Holder))
		if held := heldHosts(app); len(held) > 0 {
			msg += fmt.Sprintf("; %s stays registered and routed meanwhile", held[0])
		}
		for _, c := range p.Calls {
			if c.Why == dnsplan.WhyHandOver {
				msg += fmt.Sprintf("; %s was handed over to MyApp %s, which wants it", c.Name, c.Peer.Key)
			}
		}
		log.FromContext(ctx).Info("Host is registered by another owner; leaving it alone", "host", app.Spec.Host, "holder", out.Holder)
		if pass.TroubleStarts(app.Status.Conditions, appsv1alpha1.DNSReadyCondition, appsv1alpha1.HostConflictReason) {
			r.event(app, nil, corev1.EventTypeWarning, eventHostConflict, "CreateDNSRecord", "%s", msg)
		}
		s.dnsState(false, appsv1alpha1.HostConflictReason, msg)
		next := soon()
		if !out.Moving {
			next = r.dnsChecks.driftCheck(client.ObjectKeyFromObject(app), app.UID, r.DriftCheckInterval, now)
		}
		return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, o.holder)}, nil
	}

	st := app.Status.DNS
	if st.State != appsv1alpha1.DNSRecordActive {
		s.dnsState(false, appsv1alpha1.RecordPendingReason,
			fmt.Sprintf("The DNS service accepted %s %s -> %s and is propagating it", st.Type, st.Name, st.Value))
		return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, soon(), nil)}, nil
	}
	s.dnsState(true, appsv1alpha1.RecordActiveReason,
		fmt.Sprintf("%s %s -> %s is active in the DNS service", st.Type, st.Name, st.Value))
	next := r.activeDriftCheck(app, now)
	if out.Moving {
		next = soon()
	}
	return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, nil)}, nil
}

// hostConflictAdvice is what a HostConflict message tells the user to do.
// When the holder is an earlier MyApp of the same name, the way out is the
// adoption annotation, which the message names.
func (r *Reconciler) hostConflictAdvice(app *appsv1alpha1.MyApp, holder string) string {
	if _, ok := formerSelf(r.OwnerID, app, holder); ok {
		if wantsAdoption(app) {
			return "that MyApp still exists, so the record is not adopted; delete it or choose another host"
		}
		return fmt.Sprintf("if that MyApp no longer exists (deleted with deletionPolicy Orphan, or this MyApp was "+
			"restored), annotate this MyApp with %s=true to adopt the record", appsv1alpha1.AdoptDNSRecordAnnotation)
	}
	if ref, ok := parseRecordOwner(holder); ok && !ref.legacy() && ref.installation != r.OwnerID {
		return "another installation sharing this DNS service holds it: choose another host, or free it in that " +
			"cluster first"
	}
	return "choose another host, or delete that MyApp or record first"
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
		// Never sooner than asked, and spread over a little more: every
		// MyApp the gate held would otherwise call again at the instant
		// it opens, and a service still throttling would close it again.
		d := wait.Jitter(retryAfter, retryAfterJitter)
		s.dnsFailed(&d)
		return ctrl.Result{}, pass.Wait(d, err)
	}
	if reason == appsv1alpha1.DNSRequestRejectedReason && !deleting {
		s.dnsFailed(nil)
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	d := backoffDelay(app.Status.DNSFailures, r.MaxRetryDelay)
	s.dnsFailed(&d)
	return ctrl.Result{}, err
}

// backoffDelay is when the controller's backoff (pass.RateLimiter) brings
// a MyApp back after one more failure in a row: 5ms doubled per failure,
// at most maxDelay.
func backoffDelay(failures *appsv1alpha1.FailureStatus, maxDelay time.Duration) time.Duration {
	n := int32(0)
	if failures != nil {
		n = failures.Count
	}
	d := 5 * time.Millisecond
	for i := int32(0); i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}

// retryAfterJitter spreads the MyApps that wait out one Retry-After over a
// tenth of it after the time the service asked for.
const retryAfterJitter = 0.1

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
		return reason, "the DNS service rejected the request as invalid; check spec.host, the " +
			"operator's --dns-default-target and the Ingress's load-balancer address (see the operator's log " +
			"for the service's answer)"
	default:
		return reason, "the DNS service is unreachable or failing; the operator retries with backoff"
	}
}

// dnsErrorAdvice is the advice part of dnsErrorReason.
func dnsErrorAdvice(err error) string {
	_, advice := dnsErrorReason(err)
	return advice
}
