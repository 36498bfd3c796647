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
	// finishing is the call that finishes a transfer this MyApp started in
	// two batches and that was cut between them, nil for none (finish.go).
	// When set, Records reads that name as the transfer's receiver's: the
	// plan decides from the state the call leaves.
	finishing *Call
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
	// takeoverWaits is set when this MyApp would take spec.host's record
	// over but Observation.TakeoverWaits holds it back.
	takeoverWaits bool
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

// see computes o's view. What it asks of the MyApp's identity (owner.go)
// it asks in one run, then it makes the host lists (hosts).
func see(o Observation) view {
	v := view{Observation: o}
	if v.finishing = o.finishing(); v.finishing != nil {
		v.Records = afterFinishing(o.Records, v.finishing)
	}
	v.target = o.Target()
	s := o.Self
	v.owner, v.orphaned, v.want = s.identities(o.Deleting, o.Orphan)
	if len(o.Chain) > 0 {
		v.key = s.Key()
	}
	v.members = s.cycleMembers(o.Chain)
	st := o.Status.Record
	v.statusOurs = st != nil && s.Names(st.Owner)
	specHeld := v.statusOurs && st.Name == o.Host
	v.lost = o.Answered&NeedLost == 0 && o.Generation > 1 && !specHeld &&
		(o.Memory == nil || o.Memory.ReadFrom == "" || o.Memory.LostOwed)
	var first *App
	if len(o.Chain) > 0 {
		first = o.Chain[0].App
	}
	specOwner := v.Records[o.Host].Owner
	v.spec, v.specLegacy = s.Classify(specOwner, first), s.IsLegacy(specOwner)
	// Only the record of exactly the MyApp the Restore's mark names (an
	// earlier MyApp of this namespace and name, in this installation: a
	// record written before owner IDs may be another cluster's) is taken
	// over, and only by a Transfer, so the name never stops resolving;
	// and only until status.dns shows that takeover done (restored.go).
	v.restored = takingOver(o.RestoredFrom, o.Status.Record) && s.restoredFrom(v.spec, o.RestoredFrom)
	wouldTakeOver := v.spec.Kind == HolderFormer && o.SelfLive &&
		(o.Adopt || o.ReplaceLeaks && !v.spec.Ref.Orphaned || v.restored)
	v.takeOver = wouldTakeOver && o.TakeoverWaits == ""
	v.takeoverWaits = wouldTakeOver && o.TakeoverWaits != ""
	v.held, v.known, v.others, v.ownOthers = v.hosts()
	return v
}

// hosts are the four host lists of the view, which share one allocation,
// none when the MyApp holds, knows and waited for nothing. An empty list
// is nil.
func (v *view) hosts() (held, known, others, ownOthers []string) {
	st := v.Status.Record
	nHeld := 0
	if v.statusOurs {
		nHeld = 1 + len(st.Previous)
	}
	waited := v.waited()
	nKnown := nHeld + len(v.Lost) + len(v.Gifts)
	if nKnown == 0 && waited == "" {
		return nil, nil, nil, nil
	}
	nOthers := nKnown + 1
	buf := make([]string, 0, nHeld+nKnown+2*nOthers)
	if nHeld > 0 {
		buf = append(append(buf, st.Name), st.Previous...)
	}
	held = buf[0:nHeld:nHeld]
	known = append(buf[nHeld:nHeld:nHeld+nKnown], held...)
	addKnown := func(h string) {
		if h != "" && !slices.Contains(known, h) {
			known = append(known, h)
		}
	}
	for _, r := range v.Lost {
		addKnown(r.Name)
	}
	for _, g := range v.Gifts {
		addKnown(g.Host)
	}
	at := nHeld + nKnown
	others = buf[at : at : at+nOthers]
	addOther := func(h string) {
		if h != "" && h != v.Host && !slices.Contains(others, h) {
			others = append(others, h)
		}
	}
	for _, h := range known {
		addOther(h)
	}
	addOther(waited) // the hosts handed over are known already
	slices.Sort(others)
	at += nOthers
	ownOthers = v.ownOf(others, buf[at:at:at+nOthers])
	// An empty list reads as none.
	if len(held) == 0 {
		held = nil
	}
	if len(known) == 0 {
		known = nil
	}
	if len(others) == 0 {
		others = nil
	}
	return held, known, others, ownOthers
}

// waited is the host this MyApp last read when it is no longer spec.host:
// a hand-over may have given it that record after it last read it.
func (v *view) waited() string {
	if v.Memory != nil && v.Memory.Host != v.Host {
		return v.Memory.Host
	}
	return ""
}

// ownOf appends to own the hosts read as this MyApp's; nil for none.
func (v *view) ownOf(hosts, own []string) []string {
	for _, h := range hosts {
		if r, ok := v.Records[h]; ok && r.Name != "" && v.Self.Owns(r.Owner) {
			own = append(own, h)
		}
	}
	if len(own) == 0 {
		return nil
	}
	return own
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

// names are spec.host and the others, and the name of a transfer this
// MyApp recorded (finish.go).
func (v *view) names() []string {
	names := append([]string{v.Host}, v.others...)
	if t := v.Transfer; t != nil && !slices.Contains(names, t.Name) {
		names = append(names, t.Name)
	}
	return names
}
