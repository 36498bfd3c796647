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
	"slices"

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
	v := see(o)
	return v.readDue()
}

// readDue is due on the view Make computed.
func (v *view) readDue() (due, trust bool) {
	switch {
	case v.Asked != 0 || v.moving() || v.Transfer != nil:
		// A transfer recorded and not settled is read at once: it may
		// have been cut between its batches (finish.go).
		return true, false
	case v.Memory == nil:
		settled := v.settled()
		return !settled, settled
	}
	return v.changedSinceLastRead(), false
}

// asWanted reports whether the status shows spec.host held alone, under
// the identity the policy writes, pointing at the target.
func (v *view) asWanted() bool {
	st, t := v.Status.Record, v.target
	return st != nil && st.Name == v.Host && st.Owner == v.want && len(st.Previous) == 0 &&
		st.Type == t.Type && st.Value == t.Value
}

// settled reports whether a restarted manager trusts the status instead of
// reading: a record ACTIVE and as wanted, or a conflict judged for the
// current generation that the MyApp does not ask to adopt out of (the
// annotation may have come after the conflict was judged).
func (v *view) settled() bool {
	conflict := v.Status.Reason == appsv1alpha1.HostConflictReason
	return v.asWanted() && v.Status.Record.State == appsv1alpha1.DNSRecordActive &&
		v.Status.Reason == appsv1alpha1.RecordActiveReason || conflict && v.ReasonGeneration == v.Generation && !v.Adopt
}

// changedSinceLastRead reports whether something the last read depends on
// changed, or its timed read came.
func (v *view) changedSinceLastRead() bool {
	last := v.Memory
	conflict := v.Status.Reason == appsv1alpha1.HostConflictReason
	switch {
	case last.Host != v.Host:
		return true
	case conflict && last.Adopt != v.Adopt:
		return true // the annotation asking to adopt the record came or went
	case !last.Seen.Equal(v.Status) && v.ResourceVersion != last.ReadFrom:
		return true // the status is not what the last read left
	case !conflict && !v.asWanted() && last.Seen.Equal(v.Status):
		return true // the target changed
	case last.Holder != nil && (v.HolderNow == nil || *v.HolderNow != *last.Holder):
		return true // the holder moved, released its record or went
	}
	return !last.Next.IsZero() && !v.Now.Before(last.Next)
}

// moving reports whether the status shows hosts held other than spec.host:
// the record is then read in every pass until the move is done.
func (v *view) moving() bool {
	return len(v.held) > 1 || len(v.held) == 1 && v.held[0] != v.Host
}

// routesAtLastRead are the hosts the last read found this MyApp holding,
// which a pass that reads nothing lets the Ingress route: what the memory
// says that read left while the status the pass started from is older than
// that read's write (routing from it would take a route away and put it
// back), the status otherwise.
func (v *view) routesAtLastRead() []string {
	st, ours := v.Status.Record, v.statusOurs
	if v.Memory != nil && v.ResourceVersion == v.Memory.ReadFrom {
		st = v.Memory.Seen.Record
		ours = st != nil && v.Self.Names(st.Owner)
	}
	if !ours {
		return []string{}
	}
	return append([]string{st.Name}, st.Previous...)
}

// need is what a live MyApp's plan must read before it decides, one step
// at a time, each only where the decision depends on it.
func (v *view) need() Need {
	if v.lost {
		return NeedLost
	}
	if v.Answered&NeedRecords == 0 {
		return NeedRecords
	}
	if v.spec.Kind == HolderFormer && v.Answered&NeedLiveSelf == 0 &&
		(v.Adopt || v.ReplaceLeaks && !v.spec.Ref.Orphaned || v.restored) {
		return NeedLiveSelf
	}
	if v.Answered&NeedWanters == 0 && len(v.givable()) > 0 {
		return NeedWanters
	}
	if v.spec.Kind == HolderNone || v.spec.Kind == HolderSelf || v.takeOver {
		return NeedNothing
	}
	// In a conflict the holder is looked up (the cache names the MyApp),
	// and the chain is followed on only while a host this MyApp holds is
	// wanted: only then can a cycle close.
	if len(v.Chain) == 0 || v.chainOpen() && v.othersWanted() {
		return NeedChain
	}
	return NeedNothing
}

// givable are the hosts besides spec.host this MyApp may hand over
// (GivableHosts).
func (v *view) givable() []string {
	out := slices.Clone(v.ownOthers)
	for _, h := range v.others {
		if r, read := v.Records[h]; read && r.Name == "" && slices.Contains(v.known, h) && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}
