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

// Package dnsplan decides what a MyApp's DNS phase and deletion do with the
// DNS service, as data: Plan turns one Observation (what the pass read)
// into the ordered service calls and the outcome. It reads nothing, calls
// nothing and has no clock (the observation carries the time), so every
// decision can be checked over every observation (plan_test.go); the
// myapp package observes, and applies the plan.
//
// The rules it keeps:
//   - a record another owner holds is never written, transferred or
//     deleted, except to adopt, or replace the leak of, an earlier MyApp of
//     this namespace and name in this installation once the API server
//     showed this MyApp as the live one; a record of another installation
//     (another owner ID) is another owner's, whatever MyApp it names;
//   - a record of this MyApp written before owner IDs is taken over with
//     one Transfer to its owner with the ID;
//   - the Ingress routes only hosts this MyApp holds. During a move the old
//     host stays held and routed until spec.host is held and routed; a host
//     is then first unrouted, and released (deleted, or handed to the MyApp
//     that wants it) only once the Ingress no longer routes it;
//   - a host another live MyApp wants is handed over with one owner-checked
//     Transfer, never deleted for it to take, so swaps and rotations of any
//     length converge and no third MyApp can take the host between;
//   - under deletionPolicy Orphan records are written already marked
//     orphaned, so a deletion during an outage leaves nothing the orphan
//     sweep may delete.
package dnsplan

import (
	"slices"
	"time"
)

// Record is a record as the DNS service answered a read of its name; the
// zero Record means the name holds none.
type Record struct {
	Name, Type, Value string
	TTL               int32
	Owner             string
	Active            bool
}

// Target is what spec.host's record must point at; zero when there is
// nothing to point at yet.
type Target struct{ Type, Value string }

// Self is this MyApp's owner identities in this installation: the one its
// records carry while it lives, the one marking them orphaned on purpose,
// and those its records carried before owner IDs existed.
type Self struct {
	Owner, Orphaned string
	// Legacy are this MyApp's identities written before owner IDs (the same
	// namespace, name and UID, no installation part): its own records, to
	// take over once (WhyMigrate).
	Legacy []string
}

// Owns reports whether owner is one of this MyApp's identities. It is the
// one place that tells this MyApp's records from another owner's: the
// identities carry this installation's owner ID, so a record of another
// installation, even of a MyApp of the same namespace, name and UID, is
// never this MyApp's.
func (s Self) Owns(owner string) bool {
	return owner != "" && (owner == s.Owner || owner == s.Orphaned || s.IsLegacy(owner))
}

// IsLegacy reports whether owner is one of this MyApp's identities written
// before owner IDs existed.
func (s Self) IsLegacy(owner string) bool {
	return owner != "" && slices.Contains(s.Legacy, owner)
}

// Peer is another MyApp, live in the API server and not being deleted,
// whose spec.host is a host this MyApp holds: the receiver of a hand-over.
type Peer struct {
	// Key is "<namespace>/<name>", for messages.
	Key   string
	Owner string
}

// Former describes the holder of spec.host when it is an earlier MyApp of
// this namespace and name (another UID).
type Former struct {
	// Orphaned is whether it was deleted with deletionPolicy Orphan.
	Orphaned bool
}

// Observation is everything a plan depends on.
type Observation struct {
	Now  time.Time
	Self Self
	// Host is spec.host.
	Host string
	// Orphan is whether deletionPolicy is Orphan.
	Orphan bool
	// Deleting is whether the MyApp is being deleted, since DeletingSince.
	Deleting      bool
	DeletingSince time.Time
	Target        Target
	TTL           int32
	// Due is whether the record must be read in this pass (a live MyApp);
	// a plan of a pass that is not due changes nothing.
	Due bool
	// Held are the hosts the status shows this MyApp holding.
	Held []string
	// Routed are the hosts the Ingress routes now.
	Routed []string
	// Records are the records read, by name: spec.host and every held host
	// when Due or Deleting. A name that is missing was not read.
	Records map[string]Record
	// Receivers are, for a held host other than spec.host, the live MyApp
	// that wants it.
	Receivers map[string]Peer
	// Former is set when spec.host's holder is an earlier MyApp of this
	// name; SelfLive when the API server shows this MyApp as the live one.
	Former       *Former
	SelfLive     bool
	Adopt        bool
	ReplaceLeaks bool
	// GiveFirst is set when spec.host's holder starts a chain of live
	// MyApps, each holding the host the one before wants, that closes on
	// a host this MyApp holds (a swap or a rotation), and this MyApp's key
	// is the smallest in it: in a conflict, only it hands a host over
	// first, so a cycle moves on with one MyApp briefly without a host,
	// and a MyApp whose new host is held for good never gives its old one.
	GiveFirst bool
	// Waited is the spec.host of this MyApp's last read, when not spec.host
	// any more: a hand-over may have given it that record after it last
	// read it, and only this read can find it.
	Waited string
	// Marked is set when the status shows spec.host held under the
	// orphaned identity and no other host: under Orphan, a deletion then
	// has nothing to mark.
	Marked bool
}

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
	WhyCreate      Why = "create"
	WhyUpdate      Why = "update"
	WhyAdopt       Why = "adopt"
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
	// To is handed to Peer, for a hand-over.
	Peer Peer
}

// Kind is what the pass comes to.
type Kind string

// What a pass comes to.
const (
	// KindWaitingForAddress: there is no target; nothing is read or written.
	KindWaitingForAddress Kind = "WaitingForAddress"
	// KindStands: no read is due; the status stands as the last read left it.
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

// Outcome is what the pass shows once the calls succeeded.
type Outcome struct {
	Kind Kind
	// Holds is the host status.dns names afterwards ("" for none), and
	// Previous the other hosts still held (a move not done yet).
	Holds    string
	Previous []string
	// Routes are the hosts the Ingress may route; nil leaves it as it is.
	Routes []string
	// Holder is the owner of spec.host's record in a conflict.
	Holder string
	// Moving is set while hosts other than spec.host are held or being
	// handed over: the pass comes back soon, not at the drift check.
	Moving bool
	// Read is the spec.host this pass read, for the next observation's
	// Waited.
	Read string
	// Unmarked is set when a deletion under Orphan lets records go that
	// could not be read, so not marked (the bounded wait is over).
	Unmarked bool
}

// Plan is the calls to make, in order, and the outcome.
type Plan struct {
	Calls   []Call
	Outcome Outcome
}

// OrphanMarkWait bounds how long a deletion under deletionPolicy Orphan
// waits for a service that cannot be read to mark records it could not
// prove marked; after it, the MyApp goes and the records stay unmarked.
// Records written while the policy was Orphan are marked already, so only
// a policy set shortly before the deletion can meet this bound.
const OrphanMarkWait = 10 * time.Minute

// Want is the record spec.host must hold.
func (o Observation) Want() Record {
	owner := o.Self.Owner
	if o.Orphan {
		owner = o.Self.Orphaned
	}
	return Record{Name: o.Host, Type: o.Target.Type, Value: o.Target.Value, TTL: o.TTL, Owner: owner}
}

// Make plans the pass.
func Make(o Observation) Plan {
	if o.Deleting {
		return planDelete(o)
	}
	if o.Target == (Target{}) {
		return Plan{Outcome: Outcome{Kind: KindWaitingForAddress}}
	}
	if _, read := o.Records[o.Host]; !o.Due || !read {
		// Nothing read, nothing decided: the status and the routes stand.
		return Plan{Outcome: Outcome{Kind: KindStands}}
	}
	calls, holder := planSpecHost(o)
	holds := holder == ""
	moves := planOthers(o, holds)

	out := Outcome{Routes: moves.routes, Previous: moves.kept, Moving: moves.busy, Read: o.Host}
	if holds {
		out.Kind, out.Holds = KindHeld, o.Host
	} else {
		out.Kind, out.Holder = KindConflict, holder
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

// planSpecHost is what makes spec.host this MyApp's: the calls, or the
// owner holding it when it cannot be had ("" when it is held after them).
func planSpecHost(o Observation) (calls []Call, holder string) {
	want := o.Want()
	rec := o.Records[o.Host]
	switch {
	case rec.Name == "":
		return []Call{{Op: OpUpsert, Name: o.Host, Record: want, Why: WhyCreate}}, ""
	case o.Self.Owns(rec.Owner):
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
	case o.Former != nil && o.SelfLive && o.Adopt:
		calls = append(calls, Call{Op: OpTransfer, Name: o.Host, From: rec.Owner, To: want.Owner, Why: WhyAdopt})
	case o.Former != nil && o.SelfLive && o.ReplaceLeaks && !o.Former.Orphaned:
		return []Call{
			{Op: OpDelete, Name: o.Host, Owner: rec.Owner, Why: WhyReplaceLeak},
			{Op: OpUpsert, Name: o.Host, Record: want, Why: WhyCreate},
		}, ""
	default:
		return nil, rec.Owner
	}
	if !sameValue(rec, want) {
		calls = append(calls, Call{Op: OpUpsert, Name: o.Host, Record: want, Why: WhyUpdate})
	}
	return calls, ""
}

// moves is what becomes of the hosts held other than spec.host.
type moves struct {
	calls        []Call
	routes, kept []string
	// busy is set while a step of a move is under way.
	busy bool
}

// heldReadAbsent decides a host the status holds that read as absent: the
// read may be stale (a record created moments ago answers 404 for a
// while), so the host is not forgotten on this answer. It is not routed
// (it may be gone, and another MyApp may take it), and it leaves the
// status only through an owner-checked Delete: a Delete of what is gone
// succeeds, and one of a record another owner holds is a conflict,
// observed again.
func (m *moves) heldReadAbsent(o Observation, h string, routed, holds, specRouted bool) {
	if routed || !holds || !specRouted {
		m.kept = append(m.kept, h)
		m.busy = m.busy || holds
		return
	}
	m.calls = append(m.calls, Call{Op: OpDelete, Name: h, Owner: o.Want().Owner, Why: WhyRelease})
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
	keep := func(h string, route bool) {
		m.kept = append(m.kept, h)
		if route {
			m.routes = append(m.routes, h)
		}
	}
	for _, h := range o.others() {
		r, read := o.Records[h]
		if read && r.Name == "" && slices.Contains(o.Held, h) {
			m.heldReadAbsent(o, h, routed[h], holds, specRouted)
			continue
		}
		if !read || !o.Self.Owns(r.Owner) {
			// Not ours any more: nothing to keep, route or release. A held
			// host not read is kept as it is.
			if !read && slices.Contains(o.Held, h) {
				keep(h, routed[h])
			}
			continue
		}
		peer, wanted := o.Receivers[h]
		switch {
		case holds && !specRouted:
			// The old host stays held and routed until spec.host is routed.
			keep(h, true)
			m.busy = true
		case !holds && (!wanted || !o.GiveFirst):
			// In conflict: the old name is kept, unless this MyApp is the
			// one of a closed cycle of moves that gives first. While
			// another MyApp wants it, this one may be in a cycle whose
			// last edit only woke another member: it comes back soon to
			// follow the chain again, rather than at its drift check.
			keep(h, true)
			m.busy = m.busy || wanted
		case routed[h]:
			// Unrouted now; released once the Ingress no longer routes it.
			keep(h, false)
			m.busy = true
		case wanted:
			m.calls = append(m.calls, Call{Op: OpTransfer, Name: h, From: r.Owner, To: peer.Owner, Why: WhyHandOver, Peer: peer})
			m.busy = true
		default:
			m.calls = append(m.calls, Call{Op: OpDelete, Name: h, Owner: r.Owner, Why: WhyRelease})
		}
	}
	return m
}

// planDelete deals with the records of a MyApp being deleted: under Orphan
// it marks every record of its own not marked yet, otherwise it deletes
// them. Only names it knows are read (spec.host and the held hosts); none
// is listed.
func planDelete(o Observation) Plan {
	if o.Orphan && o.Marked {
		// Every record the status knows was written marked: nothing to
		// read, so an outage cannot hold the deletion or unmark anything.
		return Plan{Outcome: Outcome{Kind: KindReleased}}
	}
	var calls []Call
	unread := false
	for _, name := range o.names() {
		r, read := o.Records[name]
		if !read {
			unread = true
			continue
		}
		if r.Name == "" {
			// Read as absent: the read may be stale (a record created
			// moments ago answers 404 for a while). Under Delete, it is
			// deleted all the same (a Delete of what is gone succeeds),
			// under both identities this MyApp writes: a record written
			// marked moments before deletionPolicy became Delete reads
			// absent too, and a Delete under the unmarked owner alone is
			// refused as another owner's and leaves it. Under Orphan, a
			// host the status holds cannot be proved marked, so it
			// counts as not read.
			switch {
			case !o.Orphan:
				calls = append(calls, Call{Op: OpDelete, Name: name, Owner: o.Self.Owner, Why: WhyDelete},
					Call{Op: OpDelete, Name: name, Owner: o.Self.Orphaned, Why: WhyDelete})
			case slices.Contains(o.Held, name):
				unread = true
			}
			continue
		}
		if !o.Self.Owns(r.Owner) {
			continue
		}
		if o.Orphan {
			if r.Owner != o.Self.Orphaned {
				calls = append(calls, Call{Op: OpTransfer, Name: name, From: r.Owner, To: o.Self.Orphaned, Why: WhyMark})
			}
			continue
		}
		calls = append(calls, Call{Op: OpDelete, Name: name, Owner: r.Owner, Why: WhyDelete})
	}
	if unread {
		if o.Orphan && !o.Now.Before(o.DeletingSince.Add(OrphanMarkWait)) {
			return Plan{Calls: calls, Outcome: Outcome{Kind: KindReleased, Unmarked: true}}
		}
		return Plan{Calls: calls, Outcome: Outcome{Kind: KindDeletionWaits}}
	}
	return Plan{Calls: calls, Outcome: Outcome{Kind: KindReleased}}
}

// others are the held hosts other than spec.host, and the host waited for,
// sorted.
func (o Observation) others() []string {
	var out []string
	for _, h := range append(slices.Clone(o.Held), o.Waited) {
		if h == "" {
			continue
		}
		if h != o.Host && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// names are spec.host and the held hosts, the names a pass reads.
func (o Observation) names() []string {
	return append([]string{o.Host}, o.others()...)
}

// Names are the names a pass must read: spec.host and the held hosts.
func (o Observation) Names() []string { return o.names() }

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
	held := slices.Clone(o.Held)
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
