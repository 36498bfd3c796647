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

package dnsplan

import (
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// Class is the DNS provider's class: whether it refuses a write that
// would overwrite another writer's record.
type Class string

// The classes of DNS providers.
const (
	// ClassAtomic: a provider that refuses a create of a name that exists
	// and a change or a delete of a value that is not there, so of several
	// writers of one name exactly one wins and the others are told who
	// holds it (the HTTP service, RFC 2136, an atomic webhook provider).
	ClassAtomic Class = ""
	// ClassLastWriterWins: a webhook provider that applies every batch
	// unconditionally; the client reads just before each write, so a race
	// is narrowed to one round trip and a lost one is detected by the read
	// after the write, never prevented (docs/webhook.md).
	ClassLastWriterWins Class = "LastWriterWins"
)

// Next is when the record is read next, by itself.
type Next string

// When the record is read next.
const (
	// NextNone: no timed read; an event brings the MyApp back (the
	// Ingress's address, the drift pass, an edit).
	NextNone Next = "None"
	// NextKeep: the timed read the memory holds stands.
	NextKeep Next = "Keep"
	// NextPoll: soon, at the pending poll interval.
	NextPoll Next = "Poll"
	// NextBackoff: the pending poll interval doubled once per re-check in
	// a row that found nothing new (Show.Polls), up to the drift interval.
	NextBackoff Next = "Backoff"
	// NextDrift: at the MyApp's drift check.
	NextDrift Next = "Drift"
)

// Retry is how a failed pass is tried again.
type Retry string

// How a failed pass is tried again.
const (
	// RetryWait: not sooner than the service asked (Retry-After).
	RetryWait Retry = "Wait"
	// RetryNever: a request the service rejects as invalid waits for a
	// change of the spec or of the operator's configuration.
	RetryNever Retry = "Never"
	// RetryBackoff: the controller's exponential backoff.
	RetryBackoff Retry = "Backoff"
)

// Failure is a call to the DNS service that failed, as the shell read it.
type Failure struct {
	// Reason is DNSReady's reason for it (Unauthorized, Throttled,
	// Unavailable, Rejected).
	Reason string
	// RetryAfter is the wait the service asked for; zero for none.
	RetryAfter time.Duration
	// Call is the call that failed; nil for a read.
	Call *Call
}

// Show is what a pass shows once it ended: DNSReady, whether a warning goes
// out, whether the MyApp is stalled, when the record is read next or how
// the pass is retried, and whether the pass read the record (a reconcile
// request is then taken).
type Show struct {
	// Reason is DNSReady's reason, and Ready its status; "" leaves
	// DNSReady as it stands.
	Reason string
	Ready  bool
	// Warn is set when the trouble starts: DNSReady did not have Reason.
	Warn bool
	// Stalled is set when nothing will change without a change of the
	// spec, the configuration or another owner's record.
	Stalled bool
	Next    Next
	// Polls is the count of re-checks in a row the memory keeps.
	Polls int
	// Retry is set for a failure.
	Retry Retry
	// Read is set when this pass read the record (or dealt with a
	// deletion's records).
	Read bool
	// Stands is set when no read was due: DNSReady stands as the last read
	// left it, for the current generation.
	Stands bool
}

// Settle is what a pass whose calls all succeeded shows. active is whether
// the service reports spec.host's record ACTIVE once the calls were made.
func Settle(o Observation, p Plan, active bool) Show {
	out := p.Outcome
	switch out.Kind {
	case KindWaitingForAddress:
		return Show{Reason: appsv1alpha1.WaitingForAddressReason, Next: NextNone}
	case KindStands:
		if out.Trust {
			if o.Status.Reason == appsv1alpha1.HostConflictReason {
				return Show{Next: NextDrift, Stands: true}
			}
			return Show{Next: o.activeNext(), Stands: true}
		}
		return Show{Next: NextKeep, Stands: true}
	case KindReleased:
		// The records are dealt with; under Delete, DNSReady says the
		// MyApp's record goes with it while another finalizer holds it.
		if o.Orphan {
			return Show{Read: true}
		}
		return Show{Reason: appsv1alpha1.DeletingRecordReason, Read: true}
	case KindConflict:
		s := Show{Reason: appsv1alpha1.HostConflictReason, Read: true, Stalled: !out.Moving, Next: NextDrift}
		if out.TakeoverWaits {
			// Not a conflict: the record is this MyApp's to take over,
			// once the claim shows no other installation uses the ID.
			s.Reason, s.Stalled = appsv1alpha1.TakeoverWaitingReason, false
		}
		if out.Moving || out.TakeoverWaits {
			s.Next, s.Polls = NextBackoff, o.polls(p)
		}
		s.Warn = o.Status.Reason != s.Reason
		return s
	}
	s := Show{Reason: appsv1alpha1.RecordPendingReason, Read: true, Next: NextPoll}
	if active {
		s.Reason, s.Ready, s.Next = appsv1alpha1.RecordActiveReason, true, o.activeNext()
		if out.Moving {
			s.Next = NextPoll
		}
	}
	return s
}

// activeNext is when an ACTIVE record is read next: at its drift check, or
// never by itself where the drift pass lists the records.
func (o Observation) activeNext() Next {
	if o.ListsDrift {
		return NextNone
	}
	return NextDrift
}

// polls is the count of re-checks in a row a conflict's next read backs off
// by: one more than the memory's while the same conflict found nothing new
// (no call, no wake-up); none otherwise.
func (o Observation) polls(p Plan) int {
	last := o.Memory
	if last == nil || len(p.Calls) > 0 || o.Asked&AskWoken != 0 || last.Host != o.Host ||
		last.Seen.Reason != appsv1alpha1.HostConflictReason && last.Seen.Reason != appsv1alpha1.TakeoverWaitingReason {
		return 0
	}
	return last.Polls + 1
}

// Fail is what a pass whose read or call failed shows: the reason for the
// failure, a warning when that trouble starts, and the retry: never sooner
// than the service asked, never for a request the service rejects as
// invalid (outside a deletion, which must not stall silently: it backs off
// and says how to let go), the controller's backoff for the rest.
func Fail(o Observation, f Failure) Show {
	s := Show{Reason: f.Reason, Warn: o.Status.Reason != f.Reason, Retry: RetryBackoff}
	switch {
	case f.RetryAfter > 0:
		s.Retry = RetryWait
	case f.Reason == appsv1alpha1.DNSRequestRejectedReason && !o.Deleting:
		s.Retry, s.Stalled = RetryNever, true
	}
	return s
}

// StatusAfter is status.dns once the pass ended holding holds and
// previous: the record at holds as the service last answered (a read, or
// the answer of a call), or as the status showed it when this pass did not
// read it; nil when nothing is held.
func (o Observation) StatusAfter(holds string, previous []string) *appsv1alpha1.DNSRecordStatus {
	if holds == "" {
		return nil
	}
	st := &appsv1alpha1.DNSRecordStatus{Name: holds, Owner: o.Self.Want(o.Orphan), Previous: previous}
	if old := o.Status.Record; old != nil && old.Name == holds {
		st.Type, st.Value, st.Owner, st.State, st.LastObservedState = old.Type, old.Value, old.Owner, old.State, old.LastObservedState
	}
	if rec, ok := o.Records[holds]; ok && rec.Name != "" {
		st.Type, st.Value, st.Owner = rec.Type, rec.Value, rec.Owner
		st.State = appsv1alpha1.DNSRecordPending
		if rec.Active {
			st.State = appsv1alpha1.DNSRecordActive
		}
		st.LastObservedState = st.State
	}
	st.TakeoverDoneFor = o.takeoverDone(holds)
	return st
}
