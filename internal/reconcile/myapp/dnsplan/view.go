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

// view is one plan's observation with what its decisions derive from it
// more than once: computed once at the top of Make (see) and passed to
// each decision, which reads these fields and calls nothing back here. The
// Observation itself stays a plain value.
type view struct {
	Observation
	// target is what spec.host's record must point at (Target).
	target Target
	// owner and orphaned are this MyApp's identities under Delete and
	// Orphan (made for a deletion only); want the one its policy writes
	// (Self.Want); key its "<namespace>/<name>" (made when a chain was
	// read).
	owner, orphaned, want, key string
	// statusOurs is set when the status names one of this MyApp's
	// identities (Self.Names).
	statusOurs bool
	// lost is set when this MyApp may hold records under names it does not
	// know, which only a list finds: a pass that wrote a record, then lost
	// its status write and its memory (a crash, or a failed status write),
	// followed by a change of spec.host; or a host handed to it whose
	// hand-over note went with a restart. The list is made only then:
	// nothing this manager read is remembered (a status trusted after a
	// restart is no read), or the list it called for has not succeeded
	// yet; the spec changed since creation; and the status does not show
	// spec.host held.
	lost bool
	// spec is spec.host's holder as read (HolderNone before a read),
	// classified with the first link of the chain; specLegacy is set when
	// it is this MyApp's record written before owner IDs. restored is set
	// when it is the MyApp this one was restored from, as the Restore's
	// mark names it; takeOver when this MyApp adopts its record, replaces
	// it as a leak, or takes it over as restored.
	spec                           Holder
	specLegacy, restored, takeOver bool
	// members are, link by link, the MyApp each link of the chain names
	// when it may take part in a cycle (member); nil for none.
	members []*App
	// held are the hosts the status shows this MyApp holding:
	// status.dns.name and, during a move, the previous hosts.
	held []string
	// known are the hosts this MyApp holds as far as it knows: those its
	// status shows, those a list found it holding under names it did not
	// know, and those handed to it. A read that answers absent for one of
	// them may be stale, so it is not forgotten on that answer.
	known []string
	// others are the names this MyApp may hold besides spec.host, sorted:
	// the hosts it knows, the host it waited for and the hosts handed to it.
	others []string
	// ownOthers are the others read as this MyApp's, sorted.
	ownOthers []string
}

// see computes o's view. The four host lists share one allocation, none
// when the MyApp holds, knows and waited for nothing.
func see(o Observation) view {
	v := view{Observation: o}
	if len(o.Chain) > 0 {
		v.members = make([]*App, len(o.Chain))
		for i, l := range o.Chain {
			if l.App.eligible() {
				v.members[i] = l.App
			}
		}
	}
	v.target = o.Target()
	s := o.Self
	// Each identity is a new string: only those the plan may use are made.
	if o.Deleting {
		v.owner, v.orphaned = s.Owner(), s.Orphaned()
		v.want = v.owner
		if o.Orphan {
			v.want = v.orphaned
		}
	} else {
		v.want = s.Want(o.Orphan)
	}
	if len(o.Chain) > 0 {
		v.key = s.Key()
	}
	st := o.Status.Record
	v.statusOurs = st != nil && s.Names(st.Owner)
	v.lost = o.Answered&NeedLost == 0 && o.Generation > 1 && !(v.statusOurs && st.Name == o.Host) &&
		(o.Memory == nil || o.Memory.ReadFrom == "" || o.Memory.LostOwed)
	for i, l := range o.Chain {
		if h := s.Classify(l.Owner, l.App); h.Kind != HolderMyApp || h.App.UID == s.UID {
			v.members[i] = nil
		}
	}
	var first *App
	if len(o.Chain) > 0 {
		first = o.Chain[0].App
	}
	specOwner := o.Records[o.Host].Owner
	v.spec, v.specLegacy = s.Classify(specOwner, first), s.IsLegacy(specOwner)
	// Only the record of exactly the MyApp the Restore's mark names (an
	// earlier MyApp of this namespace and name, in this installation: a
	// record written before owner IDs may be another cluster's) is taken
	// over, and only by a Transfer, so the name never stops resolving;
	// and only until status.dns shows that takeover done (restored.go).
	v.restored = takingOver(o.RestoredFrom, o.Status.Record) && v.spec.Kind == HolderFormer && !v.spec.Ref.Legacy() &&
		v.spec.Ref.Installation == s.Installation && v.spec.Ref.UID == o.RestoredFrom
	v.takeOver = v.spec.Kind == HolderFormer && o.SelfLive &&
		(o.Adopt || o.ReplaceLeaks && !v.spec.Ref.Orphaned || v.restored)

	nHeld := 0
	if v.statusOurs {
		nHeld = 1 + len(st.Previous)
	}
	waited := ""
	if o.Memory != nil && o.Memory.Host != o.Host {
		// A hand-over may have given it that record after it last read it.
		waited = o.Memory.Host
	}
	nKnown := nHeld + len(o.Lost) + len(o.Gifts)
	if nKnown == 0 && waited == "" {
		return v
	}
	nOthers := nKnown + 1
	buf := make([]string, 0, nHeld+nKnown+2*nOthers)
	if nHeld > 0 {
		buf = append(append(buf, st.Name), st.Previous...)
	}
	v.held = buf[0:nHeld:nHeld]
	v.known = append(buf[nHeld:nHeld:nHeld+nKnown], v.held...)
	addKnown := func(h string) {
		if h != "" && !slices.Contains(v.known, h) {
			v.known = append(v.known, h)
		}
	}
	for _, r := range o.Lost {
		addKnown(r.Name)
	}
	for _, g := range o.Gifts {
		addKnown(g.Host)
	}
	at := nHeld + nKnown
	v.others = buf[at : at : at+nOthers]
	addOther := func(h string) {
		if h != "" && h != o.Host && !slices.Contains(v.others, h) {
			v.others = append(v.others, h)
		}
	}
	for _, h := range v.known {
		addOther(h)
	}
	addOther(waited) // the hosts handed over are known already
	slices.Sort(v.others)
	at += nOthers
	v.ownOthers = buf[at : at : at+nOthers]
	for _, h := range v.others {
		if r, ok := o.Records[h]; ok && r.Name != "" && s.Owns(r.Owner) {
			v.ownOthers = append(v.ownOthers, h)
		}
	}
	// An empty list reads as none.
	if len(v.held) == 0 {
		v.held = nil
	}
	if len(v.known) == 0 {
		v.known = nil
	}
	if len(v.others) == 0 {
		v.others = nil
	}
	if len(v.ownOthers) == 0 {
		v.ownOthers = nil
	}
	return v
}

// Held are the hosts the status shows this MyApp holding: status.dns.name
// and, during a move, the previous hosts.
func (o Observation) Held() []string { return see(o).held }

// Names are the names a pass reads: spec.host and the others.
func (o Observation) Names() []string {
	v := see(o)
	return v.names()
}

// GivableHosts are the hosts besides spec.host this MyApp may hand over:
// those read as its own, and those it knows it holds that read as absent
// (the read may be stale). NeedWanters asks who wants each.
func (o Observation) GivableHosts() []string {
	v := see(o)
	return v.givable()
}

func (v *view) names() []string { return append([]string{v.Host}, v.others...) }
