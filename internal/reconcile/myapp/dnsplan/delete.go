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

import "slices"

// planDelete deals with the records of a MyApp being deleted: under Orphan
// it marks every record of its own not marked yet, otherwise it deletes
// them. Only names it knows are read (spec.host, the held hosts, the host
// it waited for, the hosts handed to it), and none is listed unless a lost
// status write may have hidden one. A name the service refuses as invalid
// that this MyApp never held can hold no record of it: it counts as read
// and absent, so a host the backend cannot take never holds a deletion.
// The calls for the names read are made whether or not others wait.
func planDelete(o Observation) Plan {
	if o.Orphan && o.marked() {
		// Every record the status knows was written marked: nothing to
		// read, so an outage cannot hold the deletion or unmark anything.
		return Plan{Outcome: Outcome{Kind: KindReleased}}
	}
	if o.lostMayExist() {
		return Plan{Need: NeedLost}
	}
	if o.Answered&NeedRecords == 0 {
		return Plan{Need: NeedRecords}
	}
	var calls []Call
	unread := false
	for _, name := range o.Names() {
		r, read := o.Records[name]
		switch {
		case o.Refused[name] && !o.everHeld(name):
			continue
		case !read:
			unread = true
			continue
		case r.Name == "":
			// Read as absent: the read may be stale (a record created
			// moments ago answers 404 for a while). Under Delete, it is
			// deleted all the same (a Delete of what is gone succeeds),
			// under both identities this MyApp writes: a record written
			// marked moments before deletionPolicy became Delete reads
			// absent too, and a Delete under the unmarked owner alone is
			// refused as another owner's and leaves it. Under Orphan, a
			// host the status holds cannot be proved marked, so it counts
			// as not read.
			switch {
			case !o.Orphan:
				calls = append(calls,
					Call{Op: OpDelete, Name: name, Owner: o.Self.Owner(), Why: WhyDelete, SkipOnRace: true},
					Call{Op: OpDelete, Name: name, Owner: o.Self.Orphaned(), Why: WhyDelete, SkipOnRace: true, Quiet: true})
			case slices.Contains(o.Held(), name):
				unread = true
			}
			continue
		case !o.Self.Owns(r.Owner):
			continue
		case o.Orphan && r.Owner != o.Self.Orphaned():
			calls = append(calls, Call{Op: OpTransfer, Name: name, From: r.Owner, To: o.Self.Orphaned(), Why: WhyMark, SkipOnRace: true})
		case !o.Orphan:
			calls = append(calls, Call{Op: OpDelete, Name: name, Owner: r.Owner, Why: WhyDelete, SkipOnRace: true})
		}
	}
	if unread {
		if o.Orphan && !o.Now.Before(o.GiveUpAt()) {
			return Plan{Calls: calls, Outcome: Outcome{Kind: KindReleased, Unmarked: true}}
		}
		return Plan{Calls: calls, Outcome: Outcome{Kind: KindDeletionWaits}}
	}
	return Plan{Calls: calls, Outcome: Outcome{Kind: KindReleased}}
}

// everHeld reports whether this MyApp is known to have held name: its
// status or its last read says so.
func (o Observation) everHeld(name string) bool {
	if slices.Contains(o.known(), name) {
		return true
	}
	if o.Memory != nil && o.Memory.Seen.Record != nil {
		st := o.Memory.Seen.Record
		return st.Name == name || slices.Contains(st.Previous, name)
	}
	return false
}
