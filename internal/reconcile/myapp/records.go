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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

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
