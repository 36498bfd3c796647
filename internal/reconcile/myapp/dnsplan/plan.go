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

// Package dnsplan decides everything a MyApp's DNS phase and deletion do
// with the DNS service, as data. Make turns one Observation into a Plan:
// either what must be read first (a Need), or the ordered service calls
// and the outcome; Settle and Fail turn a pass's end into what it shows
// (DNSReady, the warning, the next read, the retry). It reads nothing,
// calls nothing and has no clock (the observation carries the time), so
// every rule can be checked over every observation of a bounded space
// (plan_test.go); the myapp package observes, answers the needs, makes the
// calls and writes what the outcome says.
//
// The rules it keeps:
//   - a record another owner holds is never written, transferred or
//     deleted, except to adopt, or replace the leak of, an earlier MyApp of
//     this namespace and name in this installation once the API server
//     showed this MyApp as the live one; a record of another installation
//     (another owner ID) is another owner's, whatever MyApp it names;
//   - a MyApp a Restore created takes over, with one owner-checked
//     Transfer once the API server showed it live, the record of exactly
//     the MyApp its restored-from-uid mark names, in this installation,
//     namespace and name, and no other;
//   - a record of this MyApp written before owner IDs is taken over with
//     one Transfer to its owner with the ID;
//   - the Ingress routes only hosts this MyApp holds. During a move the old
//     host stays held and routed until spec.host is held and routed; a host
//     is then first unrouted, and released (deleted, or handed to the MyApp
//     that wants it) only once the Ingress no longer routes it;
//   - a host another live MyApp wants is handed over with one owner-checked
//     Transfer, never deleted for it to take. In a conflict, a MyApp hands
//     its host over first only when spec.host's holder starts a closed
//     chain of live, unsuspended MyApps, each holding the host the one
//     before wants, whose last member wants that host; only the member with
//     the smallest key gives first, and only to that last member. So swaps
//     and rotations of any length converge, a MyApp waiting outside the
//     cycle takes neither host, and a MyApp whose new host is held for good
//     never gives its old one;
//   - a MyApp handed a host for a host it holds passes that host on to the
//     giver, even if it no longer wants the host it was given, as long as
//     it keeps another;
//   - under deletionPolicy Orphan records are written already marked
//     orphaned, so a deletion during an outage leaves nothing the orphan
//     sweep may delete.
package dnsplan

import (
	"slices"
	"time"
)

// Op is a kind of service call.
type Op string

// The calls a plan makes.
const (
	OpUpsert   Op = "upsert"
	OpTransfer Op = "transfer"
	OpDelete   Op = "delete"
)

// Why is what a call does, which names its event.
type Why string

// What calls do.
const (
	WhyCreate Why = "create"
	WhyUpdate Why = "update"
	WhyAdopt  Why = "adopt"
	// WhyRestore takes over the record of the MyApp this one was restored
	// from, as the Restore's mark names it.
	WhyRestore     Why = "take-over-restored"
	WhyReplaceLeak Why = "replace-leak"
	WhyMark        Why = "mark-orphaned"
	WhyUnmark      Why = "unmark-orphaned"
	// WhyMigrate takes over this MyApp's record written before owner IDs.
	WhyMigrate  Why = "migrate"
	WhyHandOver Why = "hand-over"
	WhyRelease  Why = "release"
	WhyDelete   Why = "delete"
)

// Call is one service call.
type Call struct {
	Op   Op
	Name string
	// Record is what an upsert writes.
	Record Record
	// From and To are a transfer's owners; Owner is a delete's.
	From, To, Owner string
	Why             Why
	// Peer is the MyApp a hand-over gives the host to. For is the host
	// this MyApp gives it for when it gives first in a cycle ("" when it
	// holds spec.host), and Debtor the MyApp that holds that host (the
	// first of the cycle after this MyApp): it owes it to this MyApp.
	Peer   *App
	For    string
	Debtor *App
	// Return is set on a hand-over that gives a host back to the MyApp
	// that gave it: that MyApp owes it nothing any more.
	Return bool
	// SkipOnRace is set on a deletion's calls: a record that became
	// another owner's, or went, is no longer this MyApp's to delete or
	// mark, and the deletion goes on. A live pass observes again instead.
	SkipOnRace bool
	// Quiet is set on a call that says the same as the call before it on
	// the same name (the second of the two deletes of a name read as
	// absent): its event goes out only when that call's did not.
	Quiet bool
}

// Kind is what a pass comes to.
type Kind string

// What a pass comes to.
const (
	// KindWaitingForAddress: there is no target; nothing is read or written.
	KindWaitingForAddress Kind = "WaitingForAddress"
	// KindStands: no read is due; the status stands as the last read left
	// it, and the Ingress routes what that read found held.
	KindStands Kind = "Stands"
	// KindHeld: spec.host is held once the calls succeeded.
	KindHeld Kind = "Held"
	// KindConflict: another owner holds spec.host.
	KindConflict Kind = "Conflict"
	// KindReleased: a deletion's records are dealt with; the finalizer may go.
	KindReleased Kind = "Released"
	// KindDeletionWaits: a deletion cannot finish yet (names not read).
	KindDeletionWaits Kind = "DeletionWaits"
)

// Outcome is what the pass comes to once the calls succeeded.
type Outcome struct {
	Kind Kind
	// Holds is the host status.dns names afterwards ("" for none), and
	// Previous the other hosts still held (a move not done yet).
	Holds    string
	Previous []string
	// Routes are the hosts the Ingress may route; nil leaves it as it is.
	Routes []string
	// Holder is spec.host's holder in a conflict.
	Holder Holder
	// Moving is set while hosts other than spec.host are held and wanted
	// or being handed over, or another step of a move is under way: the
	// pass comes back soon, not at the drift check.
	Moving bool
	// Read is the spec.host this pass read, for the memory.
	Read string
	// Trust is set for a status a restarted manager trusts instead of
	// reading: the pass remembers it as if read.
	Trust bool
	// Unmarked is set when a deletion under Orphan lets records go that
	// could not be read, so not marked (the bounded wait is over).
	Unmarked bool
	// LostOwed is set when the list of this MyApp's records it needed
	// failed: the next pass that reads lists again.
	LostOwed bool
	// Gifts are the hand-overs to this MyApp still unsettled afterwards.
	Gifts []Gift
	// Class is the DNS provider's class where it bears on the outcome: a
	// conflict on a last-writer-wins provider (ClassLastWriterWins), where
	// the conflict is a read of the zone, not a write the provider
	// refused; empty otherwise. LostRace is set there when spec.host was
	// this MyApp's own at the read before: another writer overwrote it.
	Class    Class
	LostRace bool
}

// Plan is one step of a pass: what must be read first, or the calls to make
// in order and the outcome.
type Plan struct {
	Need    Need
	Calls   []Call
	Outcome Outcome
}

// OrphanMarkWait bounds how long a deletion under deletionPolicy Orphan
// waits for a service that cannot be read to mark records it could not
// prove marked; after it, the MyApp goes and the records stay unmarked.
// Records written while the policy was Orphan are marked already, so only
// a policy set shortly before the deletion can meet this bound.
const OrphanMarkWait = 10 * time.Minute

// GiveUpAt is when a deletion under Orphan stops waiting to mark its records.
func (o Observation) GiveUpAt() time.Time { return o.DeletingSince.Add(OrphanMarkWait) }

// Make plans the next step of the pass, in this order: a deletion; no
// target; whether a read is due; what must be read; the calls.
func Make(o Observation) Plan {
	o.memo = &memo{}
	if o.Deleting {
		return planDelete(o)
	}
	target := o.Target()
	if target == (Target{}) {
		return Plan{Outcome: Outcome{Kind: KindWaitingForAddress}}
	}
	if o.Answered == 0 {
		if due, trust := o.due(); !due {
			return Plan{Outcome: Outcome{Kind: KindStands, Trust: trust, Routes: o.routesAtLastRead()}}
		}
	}
	if need := o.needLive(); need != NeedNothing {
		return Plan{Need: need}
	}
	calls, holder := planSpecHost(o, target)
	holds := holder.Kind == HolderNone
	moves := planOthers(o, holds)

	out := Outcome{Routes: moves.routes, Previous: moves.kept, Moving: moves.busy, Read: o.Host,
		LostOwed: o.LostFailed, Gifts: o.unsettledGifts(moves)}
	if holds {
		out.Kind, out.Holds = KindHeld, o.Host
	} else {
		out.Kind, out.Holder = KindConflict, holder
		out.Class, out.LostRace = o.conflictClass()
		if len(moves.kept) > 0 {
			out.Holds, out.Previous = moves.kept[0], moves.kept[1:]
		}
	}
	if out.Routes == nil {
		out.Routes = []string{}
	}
	slices.Sort(out.Routes)
	return Plan{Calls: append(calls, moves.calls...), Outcome: out}
}

// needLive is what a live MyApp's plan must read before it decides, one
// step at a time, each only where the decision depends on it.
func (o Observation) needLive() Need {
	if o.lostMayExist() {
		return NeedLost
	}
	if o.Answered&NeedRecords == 0 {
		return NeedRecords
	}
	rec := o.Records[o.Host]
	holder := o.Self.Classify(rec.Owner, nil)
	if holder.Kind == HolderFormer && o.Answered&NeedLiveSelf == 0 &&
		(o.Adopt || o.ReplaceLeaks && !holder.Ref.Orphaned || o.restores(holder)) {
		return NeedLiveSelf
	}
	if o.Answered&NeedWanters == 0 && len(o.GivableHosts()) > 0 {
		return NeedWanters
	}
	if holder.Kind == HolderNone || holder.Kind == HolderSelf || o.takesOver(holder) {
		return NeedNothing
	}
	// In a conflict the holder is looked up (the cache names the MyApp),
	// and the chain is followed on only while a host this MyApp holds is
	// wanted: only then can a cycle close.
	if len(o.Chain) == 0 || o.chainOpen() && o.othersWanted() {
		return NeedChain
	}
	return NeedNothing
}

// takesOver reports whether spec.host's record, held by an earlier MyApp of
// this name, is adopted or replaced as a leak.
func (o Observation) takesOver(h Holder) bool {
	return h.Kind == HolderFormer && o.SelfLive && (o.Adopt || o.ReplaceLeaks && !h.Ref.Orphaned || o.restores(h))
}

// restores reports whether h is the MyApp this one was restored from, as
// the Restore's mark names it: an earlier MyApp of this namespace and name,
// in this installation (a record written before owner IDs may be another
// cluster's), with exactly the marked UID, live-policy or orphaned. Only
// that record is taken over, and only by a Transfer, so the name never
// stops resolving.
func (o Observation) restores(h Holder) bool {
	return o.RestoredFrom != "" && h.Kind == HolderFormer && !h.Ref.Legacy() &&
		h.Ref.Installation == o.Self.Installation && h.Ref.UID == o.RestoredFrom
}

// planSpecHost is what makes spec.host this MyApp's: the calls, or the
// holder of spec.host when it cannot be had (HolderNone when it is held
// after them).
func planSpecHost(o Observation, target Target) (calls []Call, holder Holder) {
	want := o.want(target)
	rec := o.Records[o.Host]
	h := o.Self.Classify(rec.Owner, o.chainApp(0))
	switch {
	case h.Kind == HolderNone:
		return []Call{{Op: OpUpsert, Name: o.Host, Record: want, Why: WhyCreate}}, Holder{Kind: HolderNone}
	case h.Kind == HolderSelf:
		if rec.Owner != want.Owner {
			why := WhyMark
			switch {
			case o.Self.IsLegacy(rec.Owner):
				why = WhyMigrate
			case !o.Orphan:
				why = WhyUnmark
			}
			calls = append(calls, Call{Op: OpTransfer, Name: o.Host, From: rec.Owner, To: want.Owner, Why: why})
		}
	case o.takesOver(h) && o.restores(h):
		// A transfer, never the leak's delete and create: the name the
		// restored MyApp takes over keeps resolving throughout.
		calls = append(calls, Call{Op: OpTransfer, Name: o.Host, From: rec.Owner, To: want.Owner, Why: WhyRestore})
	case o.takesOver(h) && o.Adopt:
		calls = append(calls, Call{Op: OpTransfer, Name: o.Host, From: rec.Owner, To: want.Owner, Why: WhyAdopt})
	case o.takesOver(h):
		return []Call{
			{Op: OpDelete, Name: o.Host, Owner: rec.Owner, Why: WhyReplaceLeak},
			{Op: OpUpsert, Name: o.Host, Record: want, Why: WhyCreate},
		}, Holder{Kind: HolderNone}
	default:
		return nil, h
	}
	if !sameValue(rec, want) {
		calls = append(calls, Call{Op: OpUpsert, Name: o.Host, Record: want, Why: WhyUpdate})
	}
	return calls, Holder{Kind: HolderNone}
}

// chainApp is the MyApp of the i-th link of the chain, or nil.
func (o Observation) chainApp(i int) *App {
	if i < len(o.Chain) {
		return o.Chain[i].App
	}
	return nil
}

// ownOthers are the hosts besides spec.host read as this MyApp's, sorted.
func (o Observation) ownOthers() []string {
	return o.remember(memoOwnOthers, func(m *memo) *[]string { return &m.ownOthers }, o.computeOwnOthers)
}

func (o Observation) computeOwnOthers() []string {
	var out []string
	for _, h := range o.others() {
		if r, ok := o.Records[h]; ok && r.Name != "" && o.Self.Owns(r.Owner) {
			out = append(out, h)
		}
	}
	return out
}

// GivableHosts are the hosts besides spec.host this MyApp may hand over:
// those read as its own, and those it knows it holds that read as absent
// (the read may be stale). NeedWanters asks who wants each.
func (o Observation) GivableHosts() []string {
	out := slices.Clone(o.ownOthers())
	known := o.known()
	for _, h := range o.others() {
		if r, read := o.Records[h]; read && r.Name == "" && slices.Contains(known, h) && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// eligibleWanters are the MyApps that may receive h: live, not deleting,
// not suspended, wanting h, not this MyApp.
func (o Observation) eligibleWanters(h string) []*App {
	var out []*App
	for i := range o.Wanters[h] {
		a := &o.Wanters[h][i]
		if a.eligible() && a.Host == h && a.UID != o.Self.UID {
			out = append(out, a)
		}
	}
	return out
}

// othersWanted reports whether a host this MyApp holds besides spec.host is
// wanted by a MyApp that may receive it.
func (o Observation) othersWanted() bool {
	for _, h := range o.ownOthers() {
		if len(o.eligibleWanters(h)) > 0 {
			return true
		}
	}
	return false
}

// chainOpen reports whether the chain read so far may go on: its last
// link's MyApp is eligible, is not this MyApp, and wants a host that is not
// one this MyApp holds (which would close it), within MaxChain links.
func (o Observation) chainOpen() bool {
	if len(o.Chain) == 0 {
		return true
	}
	if len(o.Chain) >= MaxChain {
		return false
	}
	last := o.Chain[len(o.Chain)-1]
	app := o.member(last)
	if app == nil || slices.Contains(o.ownOthers(), app.Host) || app.Host == o.Host {
		return false
	}
	for _, l := range o.Chain[:len(o.Chain)-1] {
		if l.Host == app.Host {
			return false // a loop that does not pass through this MyApp
		}
	}
	return true
}

// member is the MyApp a link names when it may take part in a cycle: the
// live, eligible MyApp of this installation that owns the link's record.
func (o Observation) member(l Link) *App {
	h := o.Self.Classify(l.Owner, l.App)
	if h.Kind != HolderMyApp || !h.App.eligible() || h.App.UID == o.Self.UID {
		return nil
	}
	return h.App
}

// cycle is the closed chain spec.host's holder starts, if any: the member
// that closes it (the last, which wants the host this MyApp holds, here
// and eligible to receive it as the API server shows it) and whether this
// MyApp gives first (its key is the smallest of the cycle).
func (o Observation) cycle() (closer *App, host string, givesFirst bool) {
	givesFirst = true
	own, key := o.ownOthers(), o.Self.Key()
	for _, l := range o.Chain {
		app := o.member(l)
		if app == nil {
			return nil, "", false
		}
		if app.Key < key {
			givesFirst = false
		}
		if !slices.Contains(own, app.Host) {
			continue
		}
		for _, w := range o.eligibleWanters(app.Host) {
			if w.UID == app.UID && w.Key == app.Key {
				return w, app.Host, givesFirst
			}
		}
		return nil, "", false
	}
	return nil, "", false
}

// receiver is who a host h this MyApp holds is handed to, if anyone: the
// MyApp that gave this one a host for it, while it wants it; otherwise a
// MyApp that wants it and holds no host, then any that wants it, the
// smallest key first. holding is set when this MyApp holds spec.host (a
// MyApp in a conflict passes on only what it owes, or, when it remembers
// no debt, what a MyApp holding nothing wants). wait is set when h is owed
// to a giver that wants it but cannot receive it now (it is suspended):
// nobody else gets it meanwhile.
func (o Observation) receiver(h string, holding bool) (peer *App, wait bool) {
	wanters := o.eligibleWanters(h)
	slices.SortFunc(wanters, func(a, b *App) int { return compare(a.Key, b.Key) })
	for _, g := range o.Gifts {
		if g.For != h {
			continue
		}
		for _, w := range wanters {
			if g.Giver == w.Key {
				return w, false
			}
		}
		for _, w := range o.Wanters[h] {
			if g.Giver == w.Key && w.Host == h && !w.Deleting {
				return nil, true
			}
		}
	}
	if !holding && o.owes() {
		return nil, false
	}
	for _, w := range wanters {
		if len(w.Holds) == 0 {
			return w, false
		}
	}
	if holding && len(wanters) > 0 {
		return wanters[0], false
	}
	return nil, false
}

// returnTo is the MyApp h goes back to, if any: one that handed h to this
// MyApp, wants the host this MyApp holds as spec.host, may receive a host
// and holds none. A swap whose partner took its own host back ends so with
// each MyApp on its own host.
func (o Observation) returnTo(h string) *App {
	for _, g := range o.Gifts {
		giver, ok := o.Givers[g.Giver]
		if g.Host == h && ok && giver.eligible() && giver.Host == o.Host && len(giver.Holds) == 0 && giver.UID != o.Self.UID {
			return &giver
		}
	}
	return nil
}

// owes reports whether this MyApp remembers owing a host to a giver.
func (o Observation) owes() bool {
	for _, g := range o.Gifts {
		if g.For != "" {
			return true
		}
	}
	return false
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unsettledGifts are the notes still open once the plan's calls succeeded:
// a host handed over not read yet, and a debt whose host this MyApp still
// holds.
func (o Observation) unsettledGifts(m moves) []Gift {
	var out []Gift
	for _, g := range o.Gifts {
		if slices.ContainsFunc(m.calls, func(c Call) bool { return c.Return && c.Peer.Key == g.Giver }) {
			continue // its own host went back to the giver
		}
		if _, read := o.Records[g.Host]; g.Host != "" && !read {
			out = append(out, g)
			continue
		}
		if g.For != "" && (slices.Contains(m.kept, g.For) || g.For == o.Host) {
			out = append(out, Gift{Giver: g.Giver, For: g.For})
		}
	}
	return out
}

// moves is what becomes of the hosts held other than spec.host.
type moves struct {
	calls        []Call
	routes, kept []string
	// busy is set while a step of a move is under way.
	busy bool
}

func (m *moves) keep(h string, route bool) {
	m.kept = append(m.kept, h)
	if route {
		m.routes = append(m.routes, h)
	}
}

// handOver gives h to peer: first unrouted, then, once the Ingress no
// longer routes it, transferred with one owner-checked call. debtor, when
// this MyApp gives first in a cycle, owes it the host it gives h for.
func (m *moves) handOver(o Observation, h string, r Record, peer *App, routed bool, debtor *App) {
	m.busy = true
	if routed {
		m.keep(h, false)
		return
	}
	c := Call{Op: OpTransfer, Name: h, From: r.Owner, To: peer.owner(o.Self.Installation), Why: WhyHandOver, Peer: peer}
	if debtor != nil {
		c.For, c.Debtor = o.Host, debtor
	}
	m.calls = append(m.calls, c)
}

// heldReadAbsent decides a host this MyApp holds that read as absent: the
// read may be stale (a record created moments ago answers 404 for a
// while), so the host is not forgotten on this answer. It is not routed
// (it may be gone, and another MyApp may take it). A host another MyApp
// wants (or is owed) stays held until a read shows the record, to be
// handed over then; if it is truly gone, the MyApp that wants it takes it
// as a free host. One nobody wants leaves the status only through an
// owner-checked Delete: a Delete of what is gone succeeds, and one of a
// record another owner holds is a conflict, observed again.
func (m *moves) heldReadAbsent(o Observation, h string, routed, holds, specRouted bool) {
	if routed || !holds || !specRouted {
		m.kept = append(m.kept, h)
		m.busy = m.busy || holds
		return
	}
	if peer, wait := o.receiver(h, true); peer != nil || wait {
		m.kept = append(m.kept, h)
		m.busy = true
		return
	}
	m.calls = append(m.calls, Call{Op: OpDelete, Name: h, Owner: o.Self.Want(o.Orphan), Why: WhyRelease})
}

// planOthers decides each host held other than spec.host, given whether
// spec.host is held once the calls succeeded.
func planOthers(o Observation, holds bool) moves {
	routed := setOf(o.Routed)
	specRouted := holds && routed[o.Host]
	var m moves
	if holds {
		m.routes = append(m.routes, o.Host)
	}
	known := o.known()
	for _, h := range o.others() {
		r, read := o.Records[h]
		switch {
		case read && r.Name == "" && slices.Contains(known, h):
			m.heldReadAbsent(o, h, routed[h], holds, specRouted)
		case !read && slices.Contains(known, h):
			m.keep(h, routed[h]) // not read: kept as it is
		case !read || r.Name == "" || !o.Self.Owns(r.Owner):
			// Not ours: nothing to keep, route or release.
		case holds:
			m.release(o, h, r, routed[h], specRouted)
		}
	}
	if !holds {
		m.conflicted(o, routed)
	}
	return m
}

// release decides a host held besides spec.host while spec.host is held:
// it stays held and routed until spec.host is routed, then is unrouted,
// then handed to the MyApp that wants it, or deleted.
func (m *moves) release(o Observation, h string, r Record, routed, specRouted bool) {
	peer, wait := o.receiver(h, true)
	giver := o.returnTo(h)
	switch {
	case !specRouted:
		m.keep(h, true)
		m.busy = true
	case giver != nil:
		// This MyApp keeps the host the giver gave h for (its spec.host
		// changed back to it), and the giver holds nothing: it gets its
		// own host back.
		m.handOver(o, h, r, giver, routed, nil)
		if n := len(m.calls); n > 0 && m.calls[n-1].Name == h {
			m.calls[n-1].Return = true
		}
	case wait:
		// Owed to a suspended giver: kept, unrouted, until it resumes.
		m.keep(h, false)
	case peer != nil:
		m.handOver(o, h, r, peer, routed, nil)
	case routed:
		m.keep(h, false)
		m.busy = true
	default:
		m.calls = append(m.calls, Call{Op: OpDelete, Name: h, Owner: r.Owner, Why: WhyRelease})
	}
}

// conflicted decides the hosts held besides spec.host while another owner
// holds it. They are kept and routed, so the MyApp keeps a working name,
// except: the host a closed cycle's last member wants, which this MyApp
// hands over when it gives first; a host it owes a giver; and (when it
// remembers no debt) one a MyApp holding nothing wants, handed over as
// long as it keeps another host.
func (m *moves) conflicted(o Observation, routed map[string]bool) {
	own := o.ownOthers()
	closer, cycleHost, givesFirst := o.cycle()
	var passOn, keep []string
	for _, h := range own {
		switch {
		case givesFirst && h == cycleHost:
		case o.passesOn(h):
			passOn = append(passOn, h)
		default:
			keep = append(keep, h)
		}
	}
	if i := slices.IndexFunc(passOn, func(h string) bool { return !o.isOwed(h) }); len(keep) == 0 && i >= 0 {
		// One name is kept, one no giver is owed. A debt is paid even
		// when it leaves this MyApp without a name: the giver gave its own
		// host for it, first in a cycle this MyApp was part of, before
		// this MyApp's spec.host changed to a host it cannot have.
		passOn = slices.Delete(passOn, i, i+1)
	}
	for _, h := range own {
		r := o.Records[h]
		switch {
		case givesFirst && closer != nil && h == cycleHost:
			m.handOver(o, h, r, closer, routed[h], o.member(o.Chain[0]))
		case slices.Contains(passOn, h):
			peer, _ := o.receiver(h, false)
			m.handOver(o, h, r, peer, routed[h], nil)
		default:
			m.keep(h, true)
			// While another MyApp wants it, this one may be in a cycle
			// whose last edit only woke another member: it comes back to
			// follow the chain again, rather than at its drift check.
			m.busy = m.busy || len(o.eligibleWanters(h)) > 0
		}
	}
	slices.Sort(m.kept)
}

// passesOn reports whether a MyApp in a conflict hands h over.
func (o Observation) passesOn(h string) bool {
	peer, _ := o.receiver(h, false)
	return peer != nil
}

// isOwed reports whether this MyApp owes h to a giver that still wants it.
func (o Observation) isOwed(h string) bool {
	for _, g := range o.Gifts {
		if g.For == h {
			for _, w := range o.eligibleWanters(h) {
				if w.Key == g.Giver {
					return true
				}
			}
		}
	}
	return false
}

func sameValue(a, b Record) bool {
	return a.Type == b.Type && a.Value == b.Value && a.TTL == b.TTL
}

func setOf(hosts []string) map[string]bool {
	m := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		m[h] = true
	}
	return m
}

// HeldAfter is what the status must show held once the first done calls of
// the plan succeeded and the next one failed (or the pass ran out): the
// hosts held before, plus those the calls made ours, less those they
// released. spec.host comes first when held. A failed pass records its
// progress, so no record it wrote is forgotten.
func (p Plan) HeldAfter(o Observation, done int) (holds string, previous []string) {
	var held []string
	for _, h := range o.known() {
		if r, read := o.Records[h]; !read || r.Name == "" || o.Self.Owns(r.Owner) {
			held = append(held, h)
		}
	}
	for _, h := range o.ownOthers() {
		if !slices.Contains(held, h) {
			held = append(held, h)
		}
	}
	for _, c := range p.Calls[:done] {
		switch {
		case c.Op == OpUpsert && o.Self.Owns(c.Record.Owner), c.Op == OpTransfer && o.Self.Owns(c.To):
			if !slices.Contains(held, c.Name) {
				held = append(held, c.Name)
			}
		case c.Op == OpDelete, c.Op == OpTransfer:
			held = slices.DeleteFunc(held, func(h string) bool { return h == c.Name })
		}
	}
	slices.Sort(held)
	if i := slices.Index(held, o.Host); i > 0 {
		held[0], held[i] = held[i], held[0]
		slices.Sort(held[1:])
	}
	if len(held) == 0 {
		return "", nil
	}
	return held[0], held[1:]
}
