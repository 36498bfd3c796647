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
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// callDNS makes the plan's calls in order. Each answer goes into o, each
// hand-over is noted for its receiver, and each call's event is sent once
// it succeeded: this is the one place the DNS path sends the events of its
// calls. A deletion's call that races another writer is skipped (the
// record is no longer this MyApp's to delete or mark); any other failure
// ends the calls, with how many were made. A hand-over whose outcome is
// unknown is noted as if made: the receiver's next read settles it. A
// transfer the DNS client may cut between two batches is recorded in
// status first (recordTransfer), and forgotten once it succeeded.
func (r *Reconciler) callDNS(ctx context.Context, o *observation, p dnsplan.Plan) (done int, err error) {
	told := map[string]bool{}
	for i, c := range p.Calls {
		if c.Op == dnsplan.OpTransfer && dns.TransfersInTwoBatches(r.DNS) {
			if err := r.recordTransfer(ctx, o, c); err != nil {
				return i, err
			}
		}
		rec, err := r.callService(ctx, c)
		if err != nil {
			if c.SkipOnRace && isRace(c, err) {
				continue
			}
			if outcomeUnknown(err) || o.recorded(c) {
				// It may have applied, or be cut between its two
				// batches and finished later toward its receiver
				// (recordTransfer): a receiver that got the host
				// without its notes would not know what it owes.
				r.noteHandOver(o, c)
			}
			return i, err
		}
		o.answered(c, rec)
		if o.recorded(c) {
			o.app.Status.DNSTransfer = nil
		}
		r.noteHandOver(o, c)
		if !c.Quiet || !told[c.Name] {
			reason, action, note := callNote(c)
			r.event(o.app, nil, corev1.EventTypeNormal, reason, action, "%s", note)
			told[c.Name] = true
		}
	}
	return len(p.Calls), nil
}

// callService makes one call; it returns the record the service stored,
// when the call answers with one.
func (r *Reconciler) callService(ctx context.Context, c dnsplan.Call) (dns.Record, error) {
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
	return dns.Record{}, fmt.Errorf("unknown DNS call %q", c.Op)
}

// isRace reports whether err means another writer changed the record
// between the read and the call.
func isRace(c dnsplan.Call, err error) bool {
	return errors.Is(err, external.ErrConflict) || (c.Op == dnsplan.OpTransfer && errors.Is(err, external.ErrNotFound))
}

// recordTransfer writes, in status.dnsTransfer, the transfer c is about to
// make, before its first batch: a transfer cut between its two batches (a
// failed second batch, a restart) leaves the name with its address and no
// owner, and only the status tells the next pass what to finish, and
// toward whom (dnsplan.Observation.Transfer). It is written alone, in a
// status write of its own, so that nothing the pass has not decided yet
// goes with it; the pass's status write then patches from it (o.base,
// the scope's base, takes the written object's place). A transfer
// recorded already is not written again.
func (r *Reconciler) recordTransfer(ctx context.Context, o *observation, c dnsplan.Call) error {
	want := &appsv1alpha1.DNSTransferStatus{Name: c.Name, From: c.From, To: c.To}
	if t := o.app.Status.DNSTransfer; t != nil && *t == *want {
		return nil
	}
	written := o.base.DeepCopy()
	written.Status.DNSTransfer = want
	if _, err := pass.PatchStatus(ctx, &r.Base, o.base, written, myAppStatus); err != nil {
		return fmt.Errorf("recording the transfer of %s before making it: %w", c.Name, err)
	}
	written.DeepCopyInto(o.base)
	o.app.ResourceVersion = written.ResourceVersion
	o.app.Status.DNSTransfer = want
	return nil
}

// recorded reports whether c is a transfer of the name status.dnsTransfer
// records.
func (o *observation) recorded(c dnsplan.Call) bool {
	t := o.app.Status.DNSTransfer
	return c.Op == dnsplan.OpTransfer && t != nil && t.Name == c.Name
}

// answered takes what a call that succeeded left into o.
func (o *observation) answered(c dnsplan.Call, rec dns.Record) {
	switch {
	case rec.Name != "":
		o.fold(c.Name, rec)
	case c.Op == dnsplan.OpDelete:
		delete(o.records, c.Name)
		o.Records[c.Name] = dnsplan.Record{}
	}
}

// noteHandOver keeps, in the memory, the notes of a hand-over: for the
// receiver, the host it was handed (it may not read it as its own before
// its spec.host changes again); for the MyApp that holds the host this one
// gave first in a cycle for, that it owes it.
func (r *Reconciler) noteHandOver(o *observation, c dnsplan.Call) {
	if c.Why != dnsplan.WhyHandOver || c.Peer == nil {
		return
	}
	giver := o.key.String()
	note := dnsplan.Gift{Host: c.Name, Giver: giver}
	if c.Debtor != nil && c.Debtor.Key == c.Peer.Key {
		note.For = c.For
	} else if c.Debtor != nil {
		r.dnsChecks.noteGift(keyOf(c.Debtor.Key), types.UID(c.Debtor.UID), dnsplan.Gift{Giver: giver, For: c.For})
	}
	r.dnsChecks.noteGift(keyOf(c.Peer.Key), types.UID(c.Peer.UID), note)
}

// showDNS shows what a run came to, as dnsplan says: status.dns, DNSReady
// and a warning when trouble starts, the routes, when the record is read
// next, and what the memory keeps.
func (r *Reconciler) showDNS(ctx context.Context, s *scope, run dnsRun) (ctrl.Result, error) {
	if run.err != nil {
		return r.showDNSFailure(ctx, s, run)
	}
	o, out := run.o, run.p.Outcome
	show := dnsplan.Settle(o.Observation, run.p, o.Records[out.Holds].Active)
	if out.Routes != nil {
		s.routes = sets.New(out.Routes...)
	}
	if show.Read && !o.Deleting {
		s.app.Status.DNS = o.StatusAfter(out.Holds, out.Previous)
	}
	if o.TransferSettled() {
		// Read in this run, and not as a cut transfer leaves it: never
		// begun, done, or another's since. A transfer made in the run was
		// forgotten once it succeeded (callDNS).
		s.app.Status.DNSTransfer = nil
	}
	msg := dnsMessage(o, run.p)
	if show.Warn {
		log.FromContext(ctx).Info("Host is registered by another owner; leaving it alone", "host", o.Host, "holder", out.Holder.Owner)
		r.event(o.app, nil, corev1.EventTypeWarning, eventReason(show.Reason), "CreateDNSRecord", "%s", msg)
	}
	s.showDNSState(show, msg)
	return ctrl.Result{RequeueAfter: r.remember(o, out, show)}, nil
}

// showDNSState records DNSReady as dnsplan decided it (show), with its
// message; a show without a reason leaves DNSReady as it stands, and a
// status that stands keeps its conditions (setConditions).
func (s *scope) showDNSState(show dnsplan.Show, message string) {
	s.readiness.dnsRead = show.Read
	s.readiness.dnsStands = show.Stands
	if show.Reason == "" {
		return
	}
	s.readiness.dns = &conditionState{ok: show.Ready, reason: show.Reason, message: message, stalled: show.Stalled}
}

// showDNSFailure shows a run a failed read or call ended: the failure's
// reason and words in DNSReady (a warning when that trouble starts), what
// the calls before it did in status.dns, and the retry dnsplan chose:
// never sooner than a Retry-After the service sent (the client's gate fails
// every call until then, so any pass an event starts meanwhile ends here
// too, without calling the service), none for a request the service
// rejects as invalid, the controller's backoff for the rest. Every one of
// them is an error, so the pass is incomplete and observedGeneration stays
// (pass.Run). The next pass reads the record again, whatever brings it.
func (r *Reconciler) showDNSFailure(ctx context.Context, s *scope, run dnsRun) (ctrl.Result, error) {
	o, app := run.o, s.app
	f := dnsplan.Failure{Reason: dnsReasons.For(run.err)}
	f.RetryAfter, _ = external.RetryAfter(run.err)
	if run.done < len(run.p.Calls) {
		f.Call = &run.p.Calls[run.done]
	}
	show := dnsplan.Fail(o.Observation, f)
	if !o.Deleting && len(run.p.Calls) > 0 {
		holds, previous := run.p.HeldAfter(o.Observation, run.done, outcomeUnknown(run.err))
		app.Status.DNS = o.StatusAfter(holds, previous)
	}
	if app.Status.DNS != nil {
		app.Status.DNS.State = appsv1alpha1.DNSRecordUnknown
	}
	msg := failureMessage(o, f, run.err)
	log.FromContext(ctx).Error(run.err, "DNS service call failed", "reason", show.Reason)
	if show.Warn {
		r.event(app, nil, corev1.EventTypeWarning, eventReason(show.Reason), "DNS", "%s", msg)
	}
	s.showDNSState(show, msg)
	r.dnsChecks.forget(o.key)
	switch show.Retry {
	case dnsplan.RetryWait:
		// Never sooner than asked, and spread over a little more: every
		// MyApp the gate held would otherwise call again at the instant
		// it opens, and a service still throttling would close it again.
		d := wait.Jitter(f.RetryAfter, retryAfterJitter)
		s.dnsFailed(&d)
		return ctrl.Result{}, pass.Wait(d, run.err)
	case dnsplan.RetryNever:
		s.dnsFailed(nil)
		return ctrl.Result{}, reconcile.TerminalError(run.err)
	}
	var failures int32
	if app.Status.DNSFailures != nil {
		failures = app.Status.DNSFailures.Count
	}
	d := pass.BackoffDelay(failures, r.MaxRetryDelay)
	s.dnsFailed(&d)
	return ctrl.Result{}, run.err
}

// outcomeUnknown reports whether a failed call may have applied, so that
// dnsplan counts what it would have made this MyApp's as held until the
// next read: no answer came once the request may have been sent (a
// timeout, a reset connection), an answer of success could not be read,
// or the call ended for a reason not the service's (the pass's context).
// A connection refused sent nothing, and an error the service answered
// with (a 4xx or 5xx status) is taken as applying nothing.
func outcomeUnknown(err error) bool {
	var e *external.Error
	if !errors.As(err, &e) {
		return true
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	return e.Kind == external.KindTransient && e.StatusCode < 300
}

// retryAfterJitter spreads the MyApps that wait out one Retry-After over a
// tenth of it after the time the service asked for.
const retryAfterJitter = 0.1

// dnsReasons are the DNSReady reasons for the DNS service's failures.
var dnsReasons = external.Reasons{
	Unauthorized: appsv1alpha1.DNSUnauthorizedReason,
	Throttled:    appsv1alpha1.DNSThrottledReason,
	Unavailable:  appsv1alpha1.DNSServiceUnavailableReason,
	Rejected:     appsv1alpha1.DNSRequestRejectedReason,
	TooLarge:     appsv1alpha1.DNSZoneTooLargeReason,
	Other:        appsv1alpha1.DNSServiceUnavailableReason,
}

// dnsRun is what one run of the DNS loop came to: the observation, with
// every answer and call result folded in; the last plan; how many of its
// calls were made; and the error that ended the run, if one did.
type dnsRun struct {
	o    observation
	p    dnsplan.Plan
	done int
	err  error
}
