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
	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// A MyApp is reconciled for many reasons that have nothing to do with its
// DNS record: each child it creates, each Deployment status change during
// a rollout, each of its own status writes. Reading the record on every one
// of those passes would cost the DNS service several calls per MyApp while
// it converges, and after a manager restart one call per MyApp within a
// second. So a live MyApp's record is read only when a read is due:
//
//   - something asks for it (Ask): a resume, a reconcile request, the drift
//     pass, or a change of a MyApp holding or wanting a host it cares about;
//   - it holds hosts other than spec.host (a move under way);
//   - the host or the target changed, or the status does not show what the
//     last read left (nothing read yet, a status edited or not yet in the
//     cache), or the last call failed (which dropped the memory);
//   - the timed read the last one set came (a PENDING record's poll, a
//     drift check, a conflict's re-check);
//   - the MyApp holding the contested host changed, or the adoption
//     annotation came or went during a conflict.
//
// A restarted manager remembers nothing, and trusts a status that shows a
// settled record (ACTIVE and as wanted, or a conflict judged for the
// current generation): it waits for that MyApp's next drift check instead
// of reading every record at once.

// due says whether this pass reads the record; when it does not, trust is
// set for a status trusted after a restart, which the pass remembers.
func (o Observation) due() (due, trust bool) {
	switch {
	case o.Asked != 0 || o.moving():
		return true, false
	case o.Memory == nil:
		settled := o.settled()
		return !settled, settled
	}
	return o.changedSinceLastRead(), false
}

// asWanted reports whether the status shows spec.host held alone, under
// the identity the policy writes, pointing at the target.
func (o Observation) asWanted() bool {
	st, t := o.Status.Record, o.Target()
	return st != nil && st.Name == o.Host && st.Owner == o.Self.Want(o.Orphan) && len(st.Previous) == 0 &&
		st.Type == t.Type && st.Value == t.Value
}

// settled reports whether a restarted manager trusts the status instead of
// reading: a record ACTIVE and as wanted, or a conflict judged for the
// current generation that the MyApp does not ask to adopt out of (the
// annotation may have come after the conflict was judged).
func (o Observation) settled() bool {
	conflict := o.Status.Reason == appsv1alpha1.HostConflictReason
	return o.asWanted() && o.Status.Record.State == appsv1alpha1.DNSRecordActive &&
		o.Status.Reason == appsv1alpha1.RecordActiveReason || conflict && o.ReasonGeneration == o.Generation && !o.Adopt
}

// changedSinceLastRead reports whether something the last read depends on
// changed, or its timed read came.
func (o Observation) changedSinceLastRead() bool {
	last := o.Memory
	conflict := o.Status.Reason == appsv1alpha1.HostConflictReason
	switch {
	case last.Host != o.Host:
		return true
	case conflict && last.Adopt != o.Adopt:
		return true // the annotation asking to adopt the record came or went
	case !last.Seen.Equal(o.Status) && o.ResourceVersion != last.ReadFrom:
		return true // the status is not what the last read left
	case !conflict && !o.asWanted() && last.Seen.Equal(o.Status):
		return true // the target changed
	case last.Holder != nil && (o.HolderNow == nil || *o.HolderNow != *last.Holder):
		return true // the holder moved, released its record or went
	}
	return !last.Next.IsZero() && !o.Now.Before(last.Next)
}

// moving reports whether the status shows hosts held other than spec.host:
// the record is then read in every pass until the move is done.
func (o Observation) moving() bool {
	held := o.Held()
	return len(held) > 1 || len(held) == 1 && held[0] != o.Host
}

// lostMayExist reports whether this MyApp may hold records under names it
// does not know, which only a list finds: a pass that wrote a record, then
// lost its status write and its memory (a crash, or a failed status
// write), followed by a change of spec.host; or a host handed to it whose
// hand-over note went with a restart. The list is made only then: nothing
// this manager read is remembered (a status trusted after a restart is no
// read), or the list it called for has not succeeded yet; the spec changed
// since creation; and the status does not show spec.host held.
func (o Observation) lostMayExist() bool {
	if o.Answered&NeedLost != 0 || o.Generation <= 1 {
		return false
	}
	if st := o.Status.Record; st != nil && o.Self.Names(st.Owner) && st.Name == o.Host {
		return false
	}
	return o.Memory == nil || o.Memory.ReadFrom == "" || o.Memory.LostOwed
}
