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

// Package pass holds what the project's controllers share about one
// reconcile pass: the skeleton of Reconcile (skeleton.go: the fields and
// defaults every Reconciler embeds as Base, Begin, which reads the object,
// forgets one that is gone, holds back a pass on a stale copy and adds the
// finalizer, and PatchStatus, the one status write), running the phases in
// order over a per-pass scope and turning what they return into the
// pass's result (Run), the one typed way for a phase to say "stop here and
// come back at T" (Wait), the finalizer patch with an optimistic lock, the
// event policy, and the status rules every kind keeps (status.go: the
// backoff a status announces, failures in a row, the kstatus conditions,
// what a suspended pass reports, the condition setter and the backup
// service's reasons). Each controller keeps its phases, its scope and its
// conditions; this package decides nothing about a kind.
//
// The shape follows cluster-api's doReconcile and Flux's serror.Waiting: a
// phase returns a result and an error, and one loop reads them, so no phase
// leaves a side channel ("the pass is incomplete") for its caller to check.
//
// One stale-cache rule holds for every controller: a pass that reads an
// object older than the controller's own last write to it (the
// resourceVersion the write started from, or one before the version it
// made: OwnWrites.Behind) does nothing at all, and comes back after
// CacheLagRetryDelay, or runs once the write is MaxCacheLag old. A
// controller's status is its memory of what it did outside the cluster
// (the backup it started, the backup a Restore chose, the DNS record it
// wrote), so a pass from a copy without the last write would not only
// write an older status (a merge patch from such a copy once dropped a
// MyApp's DNSReady) but act on the older memory: start a backup again,
// choose a second backup, add a finalizer again and be refused. The MyApp
// controller used to skip only its status write; the BackupConfig and
// Restore tests need the whole pass held back and brought back soon (no
// backup started twice, no finalizer patch repeated, a requeue within a
// second), and the whole pass held back also keeps the MyApp test's promise
// (no status from a stale copy), so the whole pass is the rule, with the
// bound it needs. A write counts only when it moved the resourceVersion
// (PatchStatus): one that changed nothing gives the cache no newer version
// to show, and would hold passes back until MaxCacheLag.
package pass

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Phase is one step of a pass over the scope S. It leaves what it learned
// in the scope and returns when it wants the object back (a zero result
// when nothing is due) and an error: nil, a Waiting from Wait, a
// reconcile.TerminalError for what no retry can fix, or any other error for
// the controller's backoff.
type Phase[S any] func(ctx context.Context, s S) (ctrl.Result, error)

// JitterFactor spreads the requeues the controllers compute themselves, so
// objects that started together do not stay in lockstep.
const JitterFactor = 0.2

// ConflictRetryDelay is how soon a pass that lost a write race to another
// writer runs again. The other write may be one the controller's predicates
// filter out, so it cannot count on that write's event.
const ConflictRetryDelay = time.Second

// Waiting says the pass stopped because something it depends on asked it
// to wait (a service's Retry-After, a child the API server does not show
// yet, an object in the way): the pass is not complete, and the object
// comes back after After rather than with the controller's backoff.
type Waiting struct {
	// After is how long to wait; always positive.
	After time.Duration
	// Cause is what the pass waits out, for the log.
	Cause error
}

func (w *Waiting) Error() string {
	return fmt.Sprintf("waiting %s: %v", w.After, w.Cause)
}

func (w *Waiting) Unwrap() error { return w.Cause }

// Wait returns the error that stops a pass and brings the object back after
// d. A d that is not positive gives no time to wait for, so cause is
// returned as it is and the controller's backoff applies.
func Wait(d time.Duration, cause error) error {
	if d <= 0 {
		if cause == nil {
			return errors.New("a phase asked to wait without saying how long")
		}
		return cause
	}
	return &Waiting{After: d, Cause: cause}
}

// RequeueAfter is a result that brings the object back after d with jitter.
func RequeueAfter(d time.Duration) ctrl.Result {
	return ctrl.Result{RequeueAfter: wait.Jitter(d, JitterFactor)}
}

// Soonest combines two phases' results: the earliest requeue wins, and a
// zero result asks for nothing.
func Soonest(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0 || a.RequeueAfter <= b.RequeueAfter:
		return a
	default:
		return b
	}
}

// notBlocking carries the error of a phase that does not block the phases
// after it; Run holds it until they ran.
type notBlocking struct{ err error }

func (n *notBlocking) Error() string { return n.err.Error() }
func (n *notBlocking) Unwrap() error { return n.err }

// NotBlocking marks a phase whose failure does not stop the phases after
// it, because they do not depend on its work: its error (or its wait) is
// held and ends the pass once they ran. An unusable schedule must not stop
// a running backup from being followed; an unreachable DNS service must not
// stop an Ingress from being created.
func NotBlocking[S any](phase Phase[S]) Phase[S] {
	return func(ctx context.Context, s S) (ctrl.Result, error) {
		result, err := phase(ctx, s)
		if err != nil {
			err = &notBlocking{err: err}
		}
		return result, err
	}
}

// Outcome is what a pass came to.
type Outcome struct {
	// Result and Err are what Reconcile returns.
	Result ctrl.Result
	Err    error
	// Complete is set when every phase ran and none failed or waited: only
	// then has the pass acted on the object's generation, and only then may
	// the status say so (observedGeneration).
	Complete bool
}

// Run runs the phases in order over s and interprets what they return, in
// one place:
//   - no error: the soonest requeue of all phases wins;
//   - an error from a NotBlocking phase: held, and the next phase runs;
//   - any other error ends the pass here, so no later phase calls a
//     service that just failed or asked to wait.
//
// What ends the pass becomes its result: a Waiting comes back after its
// wait (the longest one, when several phases waited), with no other requeue,
// since whatever asked to wait would be asked again sooner; a conflict
// (a lost write race) comes back after ConflictRetryDelay, since it says
// nothing about the health of anything; a terminal error is returned only
// when no phase wants the object back, since controller-runtime drops the
// requeue of a terminal error; any other error is returned for the
// controller's backoff.
func Run[S any](ctx context.Context, s S, phases ...Phase[S]) Outcome {
	var result ctrl.Result
	var held []error
	for _, phase := range phases {
		phaseResult, err := phase(ctx, s)
		var nb *notBlocking
		if errors.As(err, &nb) {
			held = append(held, nb.err)
			result = Soonest(result, phaseResult)
			continue
		}
		if err != nil {
			held = append(held, err)
			break
		}
		result = Soonest(result, phaseResult)
	}
	return Conclude(result, errors.Join(held...))
}

// Conclude turns what a pass came to, its combined result and error, into
// what Reconcile returns, as Run describes. Code that writes outside a phase
// list (adding the finalizer before there is a scope) concludes with it
// too, so a conflict means the same everywhere.
func Conclude(result ctrl.Result, err error) Outcome {
	if err == nil {
		return Outcome{Result: result, Complete: true}
	}
	var waitFor time.Duration
	var conflict, terminal, other bool
	var plain []error
	for _, leaf := range leaves(err) {
		var w *Waiting
		switch {
		case errors.As(leaf, &w):
			waitFor = max(waitFor, w.After)
		case apierrors.IsConflict(leaf):
			conflict = true
		case errors.Is(leaf, reconcile.TerminalError(nil)):
			terminal = true
		default:
			other = true
			plain = append(plain, leaf)
		}
	}
	switch {
	case other:
		// Only the errors that want the backoff: a terminal one joined to
		// them would make controller-runtime drop the retry.
		return Outcome{Err: errors.Join(plain...)}
	case waitFor > 0:
		return Outcome{Result: ctrl.Result{RequeueAfter: waitFor}}
	case conflict:
		return Outcome{Result: Soonest(result, RequeueAfter(ConflictRetryDelay))}
	case terminal && result.IsZero():
		return Outcome{Err: err}
	case terminal:
		return Outcome{Result: result}
	}
	return Outcome{Err: err}
}

// Return is the outcome as Reconcile returns it.
func (o Outcome) Return() (ctrl.Result, error) {
	return o.Result, o.Err
}

// leaves flattens joined errors into the errors they join.
func leaves(err error) []error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		if e != nil {
			out = append(out, leaves(e)...)
		}
	}
	return out
}
