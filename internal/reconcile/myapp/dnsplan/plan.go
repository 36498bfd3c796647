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
//     it keeps another; once its spec.host changes back to the host it
//     owes, the debt ends and the giver waits for it as any MyApp does;
//   - under deletionPolicy Orphan records are written already marked
//     orphaned, so a deletion during an outage leaves nothing the orphan
//     sweep may delete.
package dnsplan

import "slices"

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
	// WhyFinish finishes a transfer this MyApp started in two batches
	// that was cut between them (finish.go).
	WhyFinish  Why = "finish-transfer"
	WhyRelease Why = "release"
	WhyDelete  Why = "delete"
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
	// TakeoverWaits is set on a conflict with an earlier MyApp's record
	// that this MyApp would take over, held back by
	// Observation.TakeoverWaits: it is read again with backoff, never
	// stalled.
	TakeoverWaits bool
}

// Plan is one step of a pass: what must be read first, or the calls to make
// in order and the outcome.
type Plan struct {
	Need    Need
	Calls   []Call
	Outcome Outcome
}

// Make plans the next step of the pass, in this order: a deletion; no
// target; whether a read is due; what must be read; spec.host; who
// receives each other host; the moves. What the decisions derive from the
// observation more than once is computed once, here (see), and passed to
// each.
func Make(o Observation) Plan {
	v := see(o)
	p := makeFor(&v)
	if v.finishing != nil && p.Need == NeedNothing {
		p.Calls = append([]Call{*v.finishing}, p.Calls...)
	}
	return p
}

// makeFor is Make's decision once a transfer cut between its batches is
// taken as finished (view.finishing): Make makes that call first.
func makeFor(v *view) Plan {
	o := v.Observation
	if o.Deleting {
		return planDelete(v)
	}
	if v.target == (Target{}) {
		return Plan{Outcome: Outcome{Kind: KindWaitingForAddress}}
	}
	if o.Answered == 0 {
		if due, trust := v.readDue(); !due {
			return Plan{Outcome: Outcome{Kind: KindStands, Trust: trust, Routes: v.routesAtLastRead()}}
		}
	}
	if need := v.need(); need != NeedNothing {
		return Plan{Need: need}
	}
	spec := planSpecHost(v)
	holds := spec.holder.Kind == HolderNone
	passes := v.passes(holds)
	moves := planOthers(v, holds, passes)

	out := Outcome{Routes: moves.routes, Previous: moves.kept, Moving: moves.busy, Read: o.Host,
		LostOwed: o.LostFailed, Gifts: moves.unsettledGifts(v)}
	if holds {
		out.Kind, out.Holds = KindHeld, o.Host
	} else {
		out.Kind, out.Holder, out.Class, out.LostRace = KindConflict, spec.holder, spec.class, spec.lostRace
		out.TakeoverWaits = v.takeoverWaits
		if len(moves.kept) > 0 {
			out.Holds, out.Previous = moves.kept[0], moves.kept[1:]
		}
	}
	if out.Routes == nil {
		out.Routes = []string{}
	}
	slices.Sort(out.Routes)
	return Plan{Calls: append(spec.calls, moves.calls...), Outcome: out}
}

// HeldAfter is what the status must show held once the first done calls of
// the plan succeeded and the next one failed (or the pass ran out): the
// hosts held before, plus those the calls made ours, less those they
// released. spec.host comes first when held. A failed pass records its
// progress, so no record it wrote is forgotten. unknown is set when the
// failed call's outcome is unknown (no answer came: it may have applied):
// a name it would have made ours then counts as held too, and one it
// would have released stays held, so the next pass reads it and settles
// it, instead of a record that did apply going unknown to the status.
func (p Plan) HeldAfter(o Observation, done int, unknown bool) (holds string, previous []string) {
	v := see(o)
	held := v.heldBefore()
	for i, c := range p.Calls[:min(done+1, len(p.Calls))] {
		if i == done && !unknown {
			break
		}
		held = v.heldAfterCall(held, c, i == done)
	}
	slices.Sort(held)
	if i := slices.Index(held, v.Host); i > 0 {
		held[0], held[i] = held[i], held[0]
		slices.Sort(held[1:])
	}
	if len(held) == 0 {
		return "", nil
	}
	return held[0], held[1:]
}

// heldBefore are the hosts held before a plan's calls: those this MyApp
// knows it holds, less those read as another's, and the others read as its
// own.
func (v *view) heldBefore() []string {
	var held []string
	for _, h := range v.known {
		if r, read := v.Records[h]; !read || r.Name == "" || v.Self.Owns(r.Owner) || v.givingCut(h) {
			held = append(held, h)
		}
	}
	for _, h := range v.ownOthers {
		if !slices.Contains(held, h) {
			held = append(held, h)
		}
	}
	return held
}

// heldAfterCall is held once c succeeded, or, with unanswered, once c got no
// answer: it may have applied, so a name it would make ours counts as
// held, and one it would release stays held until read.
func (v *view) heldAfterCall(held []string, c Call, unanswered bool) []string {
	switch {
	case unanswered && (c.Op == OpDelete || c.Op == OpTransfer && !v.Self.Owns(c.To)):
		// It may not have applied: the name stays held until read.
	case c.Op == OpUpsert && v.Self.Owns(c.Record.Owner), c.Op == OpTransfer && v.Self.Owns(c.To):
		if !slices.Contains(held, c.Name) {
			held = append(held, c.Name)
		}
	case c.Op == OpDelete, c.Op == OpTransfer:
		held = slices.DeleteFunc(held, func(h string) bool { return h == c.Name })
	}
	return held
}
