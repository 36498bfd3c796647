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
	"time"
)

// OrphanMarkWait bounds how long a deletion under deletionPolicy Orphan
// waits for a service that cannot be read to mark records it could not
// prove marked; after it, the MyApp goes and the records stay unmarked.
// Records written while the policy was Orphan are marked already, so only
// a policy set shortly before the deletion can meet this bound.
const OrphanMarkWait = 10 * time.Minute

// GiveUpAt is when a deletion under Orphan stops waiting to mark its records.
func (o Observation) GiveUpAt() time.Time { return o.DeletingSince.Add(OrphanMarkWait) }

// planDelete deals with the records of a MyApp being deleted: under Orphan
// it marks every record of its own not marked yet, otherwise it deletes
// them. Only names it knows are read (spec.host, the held hosts, the host
// it waited for, the hosts handed to it), and none is listed unless a lost
// status write may have hidden one. A name the service refuses as invalid
// that this MyApp never held can hold no record of it: it counts as read
// and absent, so a host the backend cannot take never holds a deletion.
// The calls for the names read are made whether or not others wait.
func planDelete(v *view) Plan {
	if v.Orphan && v.marked() && v.Transfer == nil {
		// Every record the status knows was written marked: nothing to
		// read, so an outage cannot hold the deletion or unmark anything.
		// A transfer recorded and not settled is read first: it may have
		// been cut between its batches (finish.go).
		return Plan{Outcome: Outcome{Kind: KindReleased}}
	}
	if v.lost {
		return Plan{Need: NeedLost}
	}
	if v.Answered&NeedRecords == 0 {
		return Plan{Need: NeedRecords}
	}
	var calls []Call
	unread := false
	for _, name := range v.names() {
		var nameUnread bool
		calls, nameUnread = v.deleteName(calls, name)
		unread = unread || nameUnread
	}
	if unread {
		if v.Orphan && !v.Now.Before(v.GiveUpAt()) {
			return Plan{Calls: calls, Outcome: Outcome{Kind: KindReleased, Unmarked: true}}
		}
		return Plan{Calls: calls, Outcome: Outcome{Kind: KindDeletionWaits}}
	}
	return Plan{Calls: calls, Outcome: Outcome{Kind: KindReleased}}
}

// deleteName appends to calls what the deletion does at name: under Orphan
// it marks a record of its own, otherwise it deletes it. unread is set
// when name counts as not read, so the deletion waits.
func (v *view) deleteName(calls []Call, name string) (_ []Call, unread bool) {
	r, read := v.Records[name]
	switch {
	case v.Refused[name] && !v.everHeld(name):
		// It can hold no record of this MyApp: read, and absent.
	case !read:
		return calls, true
	case r.Name == "":
		return v.deleteAbsent(calls, name)
	case !v.readAsOwn(name):
		// Another's record: not this deletion's to mark or delete.
	case v.Orphan && r.Owner != v.orphaned:
		calls = append(calls, Call{Op: OpTransfer, Name: name, From: r.Owner, To: v.orphaned, Why: WhyMark, SkipOnRace: true})
	case !v.Orphan:
		calls = append(calls, Call{Op: OpDelete, Name: name, Owner: r.Owner, Why: WhyDelete, SkipOnRace: true})
	}
	return calls, false
}

// deleteAbsent appends to calls what the deletion does at a name read as
// absent. The read may be stale (a record created moments ago answers 404
// for a while). Under Delete, it is deleted all the same (a Delete of what
// is gone succeeds), under both identities this MyApp writes: a record
// written marked moments before deletionPolicy became Delete reads absent
// too, and a Delete under the unmarked owner alone is refused as another
// owner's and leaves it. Under Orphan, a host the status holds cannot be
// proved marked, so it counts as not read (unread).
func (v *view) deleteAbsent(calls []Call, name string) (_ []Call, unread bool) {
	if !v.Orphan {
		return append(calls,
			Call{Op: OpDelete, Name: name, Owner: v.owner, Why: WhyDelete, SkipOnRace: true},
			Call{Op: OpDelete, Name: name, Owner: v.orphaned, Why: WhyDelete, SkipOnRace: true, Quiet: true}), false
	}
	return calls, slices.Contains(v.held, name)
}

// readAsOwn reports whether the record at name was read as this MyApp's:
// spec.host's holder is itself, or name is one of the others read as its own.
func (v *view) readAsOwn(name string) bool {
	return name == v.Host && v.spec.Kind == HolderSelf || slices.Contains(v.ownOthers, name)
}

// everHeld reports whether this MyApp is known to have held name: its
// status or its last read says so.
func (v *view) everHeld(name string) bool {
	if slices.Contains(v.known, name) {
		return true
	}
	if v.Memory != nil && v.Memory.Seen.Record != nil {
		st := v.Memory.Seen.Record
		return st.Name == name || slices.Contains(st.Previous, name)
	}
	return false
}

// marked reports whether the status shows spec.host held under the orphaned
// identity and no other host: under Orphan, a deletion then has nothing to
// mark.
func (v *view) marked() bool {
	st := v.Status.Record
	return st != nil && st.Owner == v.orphaned && st.Name == v.Host && len(st.Previous) == 0
}
