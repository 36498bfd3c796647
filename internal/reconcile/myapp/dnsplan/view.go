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

// see computes o's view, one part per decision it serves: the chain's
// members, the identities, whether the status and a list may be trusted,
// spec.host's holder, and the host lists.
func see(o Observation) view {
	v := view{Observation: o}
	v.target = o.Target()
	v.seeMembers()
	v.seeIdentities()
	v.seeStatus()
	v.seeSpecHolder()
	v.seeHosts()
	return v
}

// seeMembers finds, link by link, the MyApp each link of the chain names
// when it may take part in a cycle: one neither deleting nor suspended,
// named by a link whose owner is that MyApp of this installation, and not
// this MyApp itself.
func (v *view) seeMembers() {
	if len(v.Chain) == 0 {
		return
	}
	v.members = make([]*App, len(v.Chain))
	for i, l := range v.Chain {
		if !l.App.eligible() {
			continue
		}
		if h := v.Self.Classify(l.Owner, l.App); h.Kind == HolderMyApp && h.App.UID != v.Self.UID {
			v.members[i] = l.App
		}
	}
}

// seeIdentities makes the identities the plan may use, and only those:
// each is a new string.
func (v *view) seeIdentities() {
	s := v.Self
	if v.Deleting {
		v.owner, v.orphaned = s.Owner(), s.Orphaned()
		v.want = v.owner
		if v.Orphan {
			v.want = v.orphaned
		}
	} else {
		v.want = s.Want(v.Orphan)
	}
	if len(v.Chain) > 0 {
		v.key = s.Key()
	}
}

// seeStatus says whether the status names this MyApp, and whether it may
// hold records under names it does not know (lost).
func (v *view) seeStatus() {
	st := v.Status.Record
	v.statusOurs = st != nil && v.Self.Names(st.Owner)
	specHeld := v.statusOurs && st.Name == v.Host
	v.lost = v.Answered&NeedLost == 0 && v.Generation > 1 && !specHeld &&
		(v.Memory == nil || v.Memory.ReadFrom == "" || v.Memory.LostOwed)
}

// seeSpecHolder classifies spec.host's holder as read, with the first link
// of the chain, and says whether this MyApp takes its record over.
func (v *view) seeSpecHolder() {
	s := v.Self
	var first *App
	if len(v.Chain) > 0 {
		first = v.Chain[0].App
	}
	specOwner := v.Records[v.Host].Owner
	v.spec, v.specLegacy = s.Classify(specOwner, first), s.IsLegacy(specOwner)
	// Only the record of exactly the MyApp the Restore's mark names (an
	// earlier MyApp of this namespace and name, in this installation: a
	// record written before owner IDs may be another cluster's) is taken
	// over, and only by a Transfer, so the name never stops resolving.
	former := v.spec.Kind == HolderFormer
	v.restored = v.RestoredFrom != "" && former && !v.spec.Ref.Legacy() &&
		v.spec.Ref.Installation == s.Installation && v.spec.Ref.UID == v.RestoredFrom
	v.takeOver = former && v.SelfLive && (v.Adopt || v.ReplaceLeaks && !v.spec.Ref.Orphaned || v.restored)
}

// seeHosts makes the four host lists, which share one allocation, none
// when the MyApp holds, knows and waited for nothing. An empty list is nil.
func (v *view) seeHosts() {
	st := v.Status.Record
	nHeld := 0
	if v.statusOurs {
		nHeld = 1 + len(st.Previous)
	}
	waited := v.waited()
	nKnown := nHeld + len(v.Lost) + len(v.Gifts)
	if nKnown == 0 && waited == "" {
		return
	}
	nOthers := nKnown + 1
	buf := make([]string, 0, nHeld+nKnown+2*nOthers)
	if nHeld > 0 {
		buf = append(append(buf, st.Name), st.Previous...)
	}
	v.held = buf[0:nHeld:nHeld]
	at := nHeld
	v.known = v.seeKnown(buf[at : at : at+nKnown])
	at += nKnown
	v.others = v.seeOthers(buf[at:at:at+nOthers], waited)
	at += nOthers
	v.ownOthers = v.seeOwnOthers(buf[at : at : at+nOthers])
	v.held, v.known, v.others, v.ownOthers = none(v.held), none(v.known), none(v.others), none(v.ownOthers)
}

// waited is the host this MyApp last read when it is no longer spec.host:
// a hand-over may have given it that record after it last read it.
func (v *view) waited() string {
	if v.Memory != nil && v.Memory.Host != v.Host {
		return v.Memory.Host
	}
	return ""
}

// seeKnown appends to known the held hosts, then each other host a list
// found this MyApp holding or one handed to it, once.
func (v *view) seeKnown(known []string) []string {
	known = append(known, v.held...)
	for _, r := range v.Lost {
		known = appendNew(known, r.Name)
	}
	for _, g := range v.Gifts {
		known = appendNew(known, g.Host)
	}
	return known
}

// seeOthers appends to others, sorted, each known host and the host it
// waited for, once and besides spec.host. The hosts handed over are known
// already.
func (v *view) seeOthers(others []string, waited string) []string {
	for _, h := range v.known {
		if h != v.Host {
			others = appendNew(others, h)
		}
	}
	if waited != v.Host {
		others = appendNew(others, waited)
	}
	slices.Sort(others)
	return others
}

// seeOwnOthers appends to own the others read as this MyApp's.
func (v *view) seeOwnOthers(own []string) []string {
	for _, h := range v.others {
		if r, ok := v.Records[h]; ok && r.Name != "" && v.Self.Owns(r.Owner) {
			own = append(own, h)
		}
	}
	return own
}

// appendNew appends h to hosts unless it is empty or there already.
func appendNew(hosts []string, h string) []string {
	if h == "" || slices.Contains(hosts, h) {
		return hosts
	}
	return append(hosts, h)
}

// none is hosts, or nil when it is empty: an empty list reads as none.
func none(hosts []string) []string {
	if len(hosts) == 0 {
		return nil
	}
	return hosts
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
