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

import appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"

// A Restore marks the MyApp it writes with the UID of the MyApp that was
// backed up (backup.myapp.dev/restored-from-uid). The mark lets it take
// over one record: that UID's record of spec.host, in this installation,
// namespace and name. Once a read shows the MyApp holding spec.host under
// the mark, by that takeover or afresh because there was no such record,
// status.dns.takeoverDoneFor records it, and the mark gives nothing more:
// any other record of that UID is a leak like any other. The orphan sweep
// spares exactly the record the MyApp may still take over, so it never
// deletes a name the restored MyApp is about to keep resolving, and never
// keeps a leak for the mark's sake.

// takingOver reports whether a MyApp marked as restored from mark, whose
// status.dns is st, may still take that UID's record of spec.host over:
// it carries a mark whose takeover its status does not show done.
func takingOver(mark string, st *appsv1alpha1.DNSRecordStatus) bool {
	return mark != "" && (st == nil || st.TakeoverDoneFor != mark)
}

// takeoverDone is status.dns.takeoverDoneFor once the pass ended holding
// holds: the mark, when the status already shows its takeover done or when
// a read or a call's answer in this pass showed spec.host's record this
// MyApp's; "" otherwise. A record the status shows held on an unknown
// outcome (a transfer whose answer was lost) is not proof: the next read
// settles it.
func (o Observation) takeoverDone(holds string) string {
	if o.RestoredFrom == "" {
		return ""
	}
	if old := o.Status.Record; old != nil && old.TakeoverDoneFor == o.RestoredFrom {
		return o.RestoredFrom
	}
	if rec, read := o.Records[o.Host]; read && holds == o.Host && rec.Name != "" && o.Self.Owns(rec.Owner) {
		return o.RestoredFrom
	}
	return ""
}

// Resident is the MyApp the API server holds under the namespace and name a
// record's owner names, as the orphan sweep reads it.
type Resident struct {
	UID string
	// Host is its spec.host.
	Host string
	// RestoredFrom is its restored-from-uid mark ("" for none), and Status
	// its status.dns (nil for none).
	RestoredFrom string
	Status       *appsv1alpha1.DNSRecordStatus
}

// Swept reports whether the orphan sweep deletes the record at name owned
// by ref, an owner of this installation that is not orphaned, given the
// MyApp the API server holds under ref's namespace and name (nil for none).
// It deletes the record of a MyApp that is gone: no MyApp lives under that
// namespace and name, or one of another UID does, unless that one is a
// restored MyApp that may still take this record over (its mark names
// ref's UID, the record is its spec.host's, and its takeover is not done).
func Swept(ref OwnerRef, name string, live *Resident) bool {
	switch {
	case live == nil:
		return true
	case live.UID == ref.UID:
		return false
	}
	takenOver := name == live.Host && ref.UID == live.RestoredFrom && takingOver(live.RestoredFrom, live.Status)
	return !takenOver
}
