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

// specHost is what becomes of spec.host: the calls that make it this
// MyApp's, or its holder when it cannot be had (HolderNone when it is held
// after the calls), and what a conflict says of the provider's class.
type specHost struct {
	calls  []Call
	holder Holder
	// class and lostRace are a conflict's (conflictClass).
	class    Class
	lostRace bool
}

// planSpecHost decides spec.host: create it, transfer it to the identity
// the policy writes, take over an earlier self's record, or leave it to its
// holder.
func planSpecHost(v *view) specHost {
	want := Record{Name: v.Host, Type: v.target.Type, Value: v.target.Value, TTL: v.TTL, Owner: v.want}
	rec, h := v.Records[v.Host], v.spec
	var calls []Call
	switch {
	case h.Kind == HolderNone:
		return specHost{calls: []Call{{Op: OpUpsert, Name: v.Host, Record: want, Why: WhyCreate}}, holder: h}
	case h.Kind == HolderSelf:
		if rec.Owner != want.Owner {
			why := WhyMark
			switch {
			case v.specLegacy:
				why = WhyMigrate
			case !v.Orphan:
				why = WhyUnmark
			}
			calls = append(calls, Call{Op: OpTransfer, Name: v.Host, From: rec.Owner, To: want.Owner, Why: why})
		}
	case v.takeOver && v.restored:
		// A transfer, never the leak's delete and create: the name the
		// restored MyApp takes over keeps resolving throughout.
		calls = append(calls, Call{Op: OpTransfer, Name: v.Host, From: rec.Owner, To: want.Owner, Why: WhyRestore})
	case v.takeOver && v.Adopt:
		calls = append(calls, Call{Op: OpTransfer, Name: v.Host, From: rec.Owner, To: want.Owner, Why: WhyAdopt})
	case v.takeOver:
		return specHost{calls: []Call{
			{Op: OpDelete, Name: v.Host, Owner: rec.Owner, Why: WhyReplaceLeak},
			{Op: OpUpsert, Name: v.Host, Record: want, Why: WhyCreate},
		}, holder: Holder{Kind: HolderNone}}
	default:
		class, lostRace := v.conflictClass()
		return specHost{holder: h, class: class, lostRace: lostRace}
	}
	if !sameValue(rec, want) {
		calls = append(calls, Call{Op: OpUpsert, Name: v.Host, Record: want, Why: WhyUpdate})
	}
	return specHost{calls: calls, holder: Holder{Kind: HolderNone}}
}

// conflictClass is what a conflict says of the provider's class: nothing
// on an atomic provider, where a conflict is another writer's record the
// provider would not let this MyApp overwrite; on a last-writer-wins one,
// the class, and whether the race was lost: the status this pass started
// from shows spec.host held by this MyApp, so another writer's write came
// after (or over) this MyApp's.
func (v *view) conflictClass() (Class, bool) {
	if v.Class != ClassLastWriterWins {
		return ClassAtomic, false
	}
	return ClassLastWriterWins, v.statusOurs && v.Status.Record.Name == v.Host
}

func sameValue(a, b Record) bool {
	return a.Type == b.Type && a.Value == b.Value && a.TTL == b.TTL
}
