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
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// recordState is one state of one name in a world: who holds it, and what
// a read of it answers.
type recordState struct {
	owner, value string
	fault        readFault
	// staleOther: the read answers absent, and the service holds this
	// MyApp's record under its identity for the other policy (written
	// moments before deletionPolicy changed).
	staleOther bool
}

func (s recordState) String() string {
	switch s.fault {
	case faultUnread:
		return "unread"
	case faultRefused:
		return "refused"
	case faultStale:
		if s.staleOther {
			return "stale-absent-other-policy"
		}
		return "stale-absent"
	}
	if s.owner == "" {
		return "none"
	}
	return s.owner + "=" + s.value
}

// The peers of the records worlds: p holds spec.host or a held host and
// wants b; it is live, suspended or being deleted.
const (
	peerKey = "ns-p/peer"
	peerUID = "uid-9"
)

var peerOwner = OwnerOf("here", "ns-p", "peer", peerUID, false)

// specStates are the states of spec.host's record; heldStates those of the
// other names.
var (
	specStates = func() []recordState {
		out := make([]recordState, 0, 22)
		out = append(out, recordState{fault: faultUnread}, recordState{fault: faultRefused}, recordState{})
		// The value matters for the records this MyApp may write: its own
		// and those it may take over.
		for _, owner := range []string{me, meOrphaned, meLegacy, meLegacyOrphaned, former, formerOrphaned, formerLegacyOrph} {
			for _, v := range []string{wantedIP, staleIP} {
				out = append(out, recordState{owner: owner, value: v})
			}
		}
		for _, owner := range []string{foreign, peerOwner, gone, otherInst, legacyOther} {
			out = append(out, recordState{owner: owner, value: staleIP})
		}
		return out
	}()
	heldStates = []recordState{{fault: faultUnread}, {fault: faultRefused}, {}, {fault: faultStale},
		{fault: faultStale, staleOther: true}, {owner: me, value: wantedIP}, {owner: meOrphaned, value: wantedIP},
		{owner: foreign, value: staleIP}, {owner: peerOwner, value: staleIP}, {owner: otherInst, value: wantedIP},
		{owner: meLegacy, value: wantedIP}}
	// thirdStates are those of the third name, c, fewer: b already takes
	// every state a held host can be in.
	thirdStates = []recordState{{fault: faultUnread}, {}, {fault: faultStale}, {owner: me, value: wantedIP},
		{owner: foreign, value: staleIP}}
)

// status is what this MyApp's status shows held, under which identity.
type status struct {
	held   []string
	marked bool
}

// recordsWorld builds the world of one observation of the records space.
func recordsWorld(sa, sb, sc recordState, st status, routed []string, orphan bool, deleting int,
	live, adopt, leaks bool, peer int) (*tworld, Observation) {
	now := time.Unix(1_800_000_000, 0)
	a := &wapp{key: "ns/web", uid: "uid-1", host: "a", orphan: orphan, held: st.held, routed: routed}
	w := &tworld{id: "here", svc: service{}, faults: map[string]readFault{}, selfLive: live, now: now}
	w.apps = append(w.apps, a)
	if peer > 0 {
		p := &wapp{key: peerKey, uid: peerUID, host: "b", suspended: peer == 2}
		w.apps = append(w.apps, p)
	}
	for name, s := range map[string]recordState{"a": sa, "b": sb, "c": sc} {
		w.faults[name] = s.fault
		switch {
		case s.fault == faultStale:
			owner := a.owner("here")
			if s.staleOther {
				owner = a.self("here").Want(!orphan)
			}
			w.svc[name] = Record{Name: name, Type: "A", Value: wantedIP, TTL: 300, Owner: owner, Active: true}
		case s.owner != "":
			w.svc[name] = Record{Name: name, Type: "A", Value: s.value, TTL: 300, Owner: s.owner, Active: true}
		}
	}
	o := w.observe(a)
	if len(st.held) > 0 {
		// A status shows the owner the record carried when it was read:
		// the one the service holds when it is this MyApp's, else the one
		// the policy writes, or the orphaned one for a status read marked.
		switch r := w.svc[st.held[0]]; {
		case isMine(o, r.Owner) && w.faults[st.held[0]] == faultNone:
			o.Status.Record.Owner = r.Owner
		case st.marked:
			o.Status.Record.Owner = meOrphaned
		}
	}
	o.Adopt, o.ReplaceLeaks = adopt, leaks
	switch deleting {
	case 1:
		o.Deleting, o.DeletingSince = true, now.Add(-time.Minute)
	case 2:
		o.Deleting, o.DeletingSince = true, now.Add(-OrphanMarkWait)
	}
	return w, o
}

// recordsWorldShard calls check for every world of one of shards parts of
// the records space, cut by the states of a and b so the parts can run
// side by side. The space:
// spec.host "a" and two other hosts "b", "c"; each name's record and read
// fault; the held hosts and whether the status shows them marked; the
// routed hosts; the policy; the deletion state (live, deleting just now,
// deleting past the Orphan wait); whether the API server shows this MyApp
// live, the adoption annotation and leak replacement; and peer, a MyApp
// that wants b (none, live, suspended). It returns how many it checked.
func recordsWorldShard(shard, shards int, check func(w *tworld, o Observation)) int {
	statuses := []status{{}, {held: []string{"a"}}, {held: []string{"a"}, marked: true}, {held: []string{"b"}},
		{held: []string{"a", "b"}}, {held: []string{"b", "c"}}, {held: []string{"a", "b"}, marked: true}}
	// c alone, or with a but not b, routes nothing b alone does not show.
	routeds := [][]string{nil, {"a"}, {"b"}, {"a", "b"}, {"b", "c"}, {"a", "b", "c"}}
	type adoption struct{ live, adopt, leaks bool }
	adoptions := []adoption{{false, false, false}, {true, false, false}, {true, true, false}, {true, false, true}}
	n := 0
	for i, sa := range specStates {
		for j, sb := range heldStates {
			if (i*len(heldStates)+j)%shards != shard {
				continue
			}
			for _, sc := range thirdStates {
				for _, st := range statuses {
					for _, routed := range routeds {
						for _, orphan := range []bool{false, true} {
							for deleting := range 3 {
								for _, ad := range adoptions {
									for peer := range 3 {
										if deleting > 0 && peer > 0 {
											continue // a deletion asks nobody what they want
										}
										w, o := recordsWorld(sa, sb, sc, st, routed, orphan, deleting, ad.live, ad.adopt, ad.leaks, peer)
										check(w, o)
										n++
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return n
}

// checkPlan asserts the properties of one plan against the world it was
// made in, whose service a stale read may not show; it returns the first
// broken.
func checkPlan(w *tworld, o Observation, p Plan) error {
	svc := maps.Clone(w.svc)
	for _, c := range p.Calls {
		if err := checkCall(w, o, p, svc, c); err != nil {
			return err
		}
		if err := svc.apply(c); err != nil {
			if r, ok := w.svc[c.Name]; ok && o.Records[c.Name].Name == "" && r.Name != "" {
				if c.SkipOnRace {
					continue // a deletion goes on past a record not its own
				}
				return nil // a call on a stale read raced what it did not see: the next pass observes it
			}
			return proptest.Broke("every call applies to the service as the pass read it", "%s %s: %v", c.Op, c.Name, err)
		}
	}
	if o.Deleting {
		return checkDeletion(o, p, svc)
	}
	if err := checkKept(o, p, svc); err != nil {
		return err
	}
	if p.Outcome.Routes == nil {
		if len(p.Calls) != 0 {
			return proptest.Broke("a plan that makes calls decides the routes", "calls without routes")
		}
		return nil
	}
	if err := checkRoutes(o, p, svc); err != nil {
		return err
	}
	// Under Orphan, spec.host's record is written marked; under Delete not.
	if p.Outcome.Kind == KindHeld && svc[o.Host].Owner != o.Self.Want(o.Orphan) {
		return proptest.Broke("under Orphan spec.host's record is written marked, under Delete not",
			"holds spec.host as %q under orphan=%t", svc[o.Host].Owner, o.Orphan)
	}
	return nil
}

// checkCall checks one call against the service as the calls before it
// left it.
func checkCall(w *tworld, o Observation, p Plan, svc service, c Call) error {
	cur, read := o.Records[c.Name]
	// Nothing is called on a name that was not read.
	if !read {
		return proptest.Broke("nothing is called on a name not read", "%s %s", c.Op, c.Name)
	}
	// A record of another installation is never deleted, transferred or
	// overwritten, whatever MyApp its owner names.
	if cur.Name != "" && strings.HasPrefix(cur.Owner, "myapp-operator/there/") && svc[c.Name].Owner == cur.Owner {
		return proptest.Broke("a record of another installation is never deleted, transferred or overwritten",
			"%s %s (%s) touches %s", c.Op, c.Name, c.Why, cur.Owner)
	}
	// This MyApp's record written before owner IDs is taken over by one
	// Transfer to its owner with the ID, never deleted and written again.
	if cur.Name != "" && slices.Contains(o.Self.Legacy(), cur.Owner) && svc[c.Name].Owner == cur.Owner &&
		!o.Deleting && c.Name == o.Host && (c.Op != OpTransfer || c.Why != WhyMigrate) {
		return proptest.Broke("a record of this MyApp written before owner IDs is taken over by one migrating Transfer",
			"%s %s (%s)", c.Op, c.Name, c.Why)
	}
	if cur.Unowned && svc[c.Name].Unowned {
		return checkUnownedCall(o, c)
	}
	// Another owner's record is touched only to adopt, or replace the leak
	// of, an earlier MyApp of this namespace and name, once the API server
	// showed this one live.
	if cur.Name != "" && !isMine(o, cur.Owner) && svc[c.Name].Owner == cur.Owner && !mayTakeOver(w, o, c, cur.Owner) {
		return proptest.Broke("another owner's record is touched only to adopt or replace the leak of an earlier self",
			"%s %s (%s) touches %s's record", c.Op, c.Name, c.Why, cur.Owner)
	}
	if c.Why == WhyHandOver {
		if err := checkHandOver(w, o, p, c); err != nil {
			return err
		}
	}
	return checkRelease(o, p, c)
}

// checkUnownedCall: a name held by no owner is touched only by the transfer
// this MyApp recorded in its status before the first batch cut it: that
// transfer, from and to as recorded.
func checkUnownedCall(o Observation, c Call) error {
	if t := o.Transfer; t == nil || c.Op != OpTransfer || *t != (Transfer{Name: c.Name, From: c.From, To: c.To}) {
		return proptest.Broke("a name held by no owner is touched only by the transfer recorded for it",
			"%s %s (%s) with status.dnsTransfer %v", c.Op, c.Name, c.Why, t)
	}
	return nil
}

// isMine is the test's own reading of the identities of the MyApp o
// plans for: the four it may write, built from its parts.
func isMine(o Observation, owner string) bool {
	return owner != "" && (owner == o.Self.Owner() || owner == o.Self.Orphaned() || slices.Contains(o.Self.Legacy(), owner))
}

// mayTakeOver: the records of an earlier MyApp of this namespace and name
// in this installation (or written before owner IDs and orphaned on
// purpose, for an adoption), at spec.host, once this MyApp is live.
func mayTakeOver(w *tworld, o Observation, c Call, owner string) bool {
	if !w.selfLive || c.Name != o.Host {
		return false
	}
	switch owner {
	case former:
		return c.Why == WhyAdopt && o.Adopt || c.Why == WhyReplaceLeak && o.ReplaceLeaks
	case formerOrphaned, formerLegacyOrph:
		return c.Why == WhyAdopt && o.Adopt
	}
	return false
}

// checkHandOver states the promise of a hand-over, over the world: the
// host goes to a live, unsuspended MyApp that wants it and is not being
// deleted. A MyApp in a conflict gives it only to the last member of a
// closed chain of such MyApps that starts at spec.host's holder, each
// holding the host the one before wants, when its own key is the smallest
// of the chain; or to a MyApp that gave it a host for this one; or, when it
// remembers no such debt, to a MyApp holding no host, keeping another host
// itself. Never to anyone else waiting for the host.
func checkHandOver(w *tworld, o Observation, p Plan, c Call) error {
	to := w.ownerOf(c.To)
	returned := to != nil && len(to.held) == 0 && to.host == o.Host && slices.ContainsFunc(o.Gifts, func(g Gift) bool {
		return g.Host == c.Name && g.Giver == to.key
	})
	if to == nil || to.suspended || to.delete || to.host != c.Name && !returned {
		return proptest.Broke("a host is handed only to a live MyApp that wants it, or that gave it and holds nothing",
			"hands %s to %s", c.Name, c.To)
	}
	if p.Outcome.Kind != KindConflict {
		return nil
	}
	if closesCycle(w, o, to, c.Name) {
		return nil
	}
	owed := false
	for _, g := range o.Gifts {
		owed = owed || g.Giver == to.key && g.For == c.Name
	}
	if owed {
		return nil
	}
	debts := slices.ContainsFunc(o.Gifts, func(g Gift) bool { return g.For != "" })
	if !debts && len(to.held) == 0 && p.Outcome.Holds != "" {
		return nil
	}
	return proptest.Broke("in a conflict, a host is handed only to close a cycle it gives first in, or to a giver it owes",
		"hands %s to %s", c.Name, to.key)
}

// closesCycle reports whether to is the last member of a closed chain that
// starts at spec.host's holder in the world, every member live and
// unsuspended, with this MyApp's key the smallest.
func closesCycle(w *tworld, o Observation, to *wapp, host string) bool {
	at := o.Host
	for range MaxChain {
		holder := w.ownerOf(w.svc[at].Owner)
		if holder == nil || holder.suspended || holder.delete || holder.key < o.Self.Key() {
			return false
		}
		if holder.host == host {
			return holder == to
		}
		at = holder.host
	}
	return false
}

// checkRelease checks the calls that give a host up.
func checkRelease(o Observation, p Plan, c Call) error {
	routed := setOf(o.Routed)
	// A host is released only once the Ingress does not route it, and
	// never while deleting under Orphan.
	if !o.Deleting && c.Name != o.Host && (c.Op == OpDelete || c.Why == WhyHandOver) && routed[c.Name] {
		return proptest.Broke("a host is released only once the Ingress does not route it", "%s %s", c.Op, c.Name)
	}
	if c.Op == OpDelete && o.Orphan && o.Deleting {
		return proptest.Broke("a MyApp deleted with Orphan deletes no record", "deletes %s", c.Name)
	}
	// A release by delete only once spec.host is held and routed.
	if c.Why == WhyRelease && (!routed[o.Host] || p.Outcome.Kind != KindHeld) {
		return proptest.Broke("a host is released by delete only once spec.host is held and routed", "releases %s", c.Name)
	}
	return nil
}

// checkDeletion checks a deletion's outcome.
func checkDeletion(o Observation, p Plan, svc service) error {
	for _, check := range []func(Observation, Plan, service) error{checkLetGo, checkWaits, checkCallsMade} {
		if err := check(o, p, svc); err != nil {
			return err
		}
	}
	return nil
}

// checkLetGo: under Orphan, every record of this MyApp is marked when it
// goes; under Delete, none is left at a name it knows, whatever the reads
// answered; the marking is given up only after the wait.
func checkLetGo(o Observation, p Plan, svc service) error {
	if p.Outcome.Unmarked && o.Now.Before(o.DeletingSince.Add(OrphanMarkWait)) {
		return proptest.Broke("marking is given up only after the wait", "")
	}
	if p.Outcome.Kind != KindReleased {
		return nil
	}
	for _, name := range o.Names() {
		r, ok := svc[name]
		known := name == o.Host || slices.Contains(o.Held(), name)
		switch {
		case !ok || !known:
		case o.Orphan && !p.Outcome.Unmarked && r.Owner == o.Self.Owner():
			return proptest.Broke("under Orphan, every record of the MyApp is marked when it goes", "%s unmarked", name)
		case !o.Orphan && isMine(o, r.Owner):
			return proptest.Broke("under Delete, no record of the MyApp is left at a name it knows", "%s still held by %s", name, r.Owner)
		}
	}
	return nil
}

// checkWaits: a deletion waits only on a name not read, or held and
// refused, or (under Orphan) held and read as absent; a name the service
// refuses that this MyApp never held holds no deletion, since it can hold
// no record of it (audit G2).
func checkWaits(o Observation, p Plan, _ service) error {
	if p.Outcome.Kind != KindDeletionWaits {
		return nil
	}
	for _, name := range o.Names() {
		_, read := o.Records[name]
		held := slices.Contains(o.Held(), name)
		if o.Unread[name] || o.Refused[name] && held || !read && !o.Refused[name] ||
			o.Orphan && held && o.Records[name].Name == "" && read {
			return nil
		}
	}
	return proptest.Broke("a deletion waits only on a name not read, held and refused, or held and absent under Orphan",
		"every name read, or refused and never held")
}

// checkCallsMade: the calls for the names read are made even while others
// wait.
func checkCallsMade(o Observation, p Plan, _ service) error {
	for _, name := range o.Names() {
		r, read := o.Records[name]
		if !read || r.Name == "" || !isMine(o, r.Owner) || o.Orphan && r.Owner == o.Self.Orphaned() {
			continue
		}
		if !slices.ContainsFunc(p.Calls, func(c Call) bool { return c.Name == name }) {
			return proptest.Broke("a deletion makes the calls for the names read while others wait", "leaves %s (%s) alone", name, r.Owner)
		}
	}
	return nil
}

// checkKept: a record this MyApp holds at a host its status knows is never
// forgotten. Once the calls succeeded, every such host whose record is
// still this MyApp's is still in the status, whatever the read answered.
func checkKept(o Observation, p Plan, svc service) error {
	if p.Outcome.Routes == nil {
		return nil // nothing decided: the status stands
	}
	for _, h := range o.Held() {
		if r, ok := svc[h]; ok && isMine(o, r.Owner) && p.Outcome.Holds != h && !slices.Contains(p.Outcome.Previous, h) {
			return proptest.Broke("a record this MyApp holds at a host its status knows is never forgotten",
				"forgets %s, still held by %s in the service (read %+v)", h, r.Owner, o.Records[h])
		}
	}
	return nil
}

// checkRoutes checks the routes of a live MyApp's outcome.
func checkRoutes(o Observation, p Plan, svc service) error {
	routed := setOf(o.Routed)
	// The Ingress routes only hosts held once the calls succeeded.
	for _, h := range p.Outcome.Routes {
		if _, read := o.Records[h]; !read {
			if !routed[h] || !slices.Contains(o.Held(), h) {
				return proptest.Broke("the Ingress routes only hosts held once the calls succeeded", "routes %s, not read and not routed", h)
			}
			continue
		}
		if !isMine(o, svc[h].Owner) {
			return proptest.Broke("the Ingress routes only hosts held once the calls succeeded", "routes %s, held by %q", h, svc[h].Owner)
		}
	}
	// The move order: a held old host the Ingress routes stays routed
	// until spec.host is held and routed, except the one a MyApp gives
	// first in a closed cycle.
	if p.Outcome.Kind == KindHeld && routed[o.Host] {
		return nil
	}
	for _, h := range o.Held() {
		r, read := o.Records[h]
		if h == o.Host || !routed[h] || !read || !isMine(o, r.Owner) {
			continue
		}
		if !slices.Contains(p.Outcome.Routes, h) && p.Outcome.Kind == KindHeld {
			return proptest.Broke("a routed old host stays routed until spec.host is held and routed", "unroutes %s", h)
		}
		if !slices.Contains(p.Outcome.Routes, h) && p.Outcome.Holds == "" && !p.Outcome.Moving {
			return proptest.Broke("a conflict unroutes nothing without a hand-over under way", "unroutes %s", h)
		}
	}
	return nil
}

// converge applies the plan of a's pass and observes again, up to steps
// times, in a world where every call and route write succeeds and nobody
// else moves, until a plan with no calls whose routes the Ingress already
// has; it returns an error when none comes, or one is followed by calls.
func converge(w *tworld, a *wapp, o Observation, steps int) error {
	w.faults = map[string]readFault{}
	for range steps {
		var p Plan
		var err error
		o, p, err = w.plan(o)
		if err != nil {
			return err
		}
		if len(p.Calls) == 0 && slices.Equal(p.Outcome.Routes, sorted(o.Routed)) {
			// Once empty, it stays empty.
			if _, again, _ := w.plan(w.observe(a)); len(again.Calls) != 0 {
				return fmt.Errorf("an empty plan is followed by %v", again.Calls)
			}
			return nil
		}
		if err := w.applyPlan(p); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		a.held = nil
		if p.Outcome.Holds != "" {
			a.held = append(a.held, p.Outcome.Holds)
		}
		a.held = append(a.held, p.Outcome.Previous...)
		a.routed = p.Outcome.Routes
		a.memory = &Memory{Host: o.Host, ReadFrom: "7"}
		next := w.observe(a)
		next.Adopt, next.ReplaceLeaks = o.Adopt, o.ReplaceLeaks
		o = next
	}
	return fmt.Errorf("no fixpoint within %d steps", steps)
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// TestPlanKeepsItsPromisesForEveryObservation checks the properties of
// every plan over the whole records space, run through the loop of needs
// against each world, and that applying a live MyApp's plan and observing
// again reaches a plan with no calls.
func TestPlanKeepsItsPromisesForEveryObservation(t *testing.T) {
	t.Parallel()
	// The space is checked in parts side by side: it is most of make
	// test-unit's time.
	const shards = 4
	c := proptest.New(t, "planned worlds of the records space")
	var worlds, lost atomic.Int64
	t.Run("shards", func(t *testing.T) {
		for shard := range shards {
			t.Run(fmt.Sprintf("%d-of-%d", shard+1, shards), func(t *testing.T) {
				t.Parallel()
				n, l := checkRecordsWorlds(c, shard, shards)
				worlds.Add(int64(n))
				lost.Add(int64(l))
			})
		}
	})
	t.Logf("checked %d worlds of the records space, %d of them planned to the end", worlds.Load(), c.Checked())
	t.Logf("converged %d times from a call of a live plan that applied and lost its answer (then spec.host the same, or a host the status showed)", lost.Load())
	c.Report()
}

// checkRecordsWorlds checks one shard of the records space: each plan
// keeps its promises (checkPlan) and a live MyApp converges from it. A
// world whose read failed decides nothing and is not observed.
func checkRecordsWorlds(c *proptest.Collector, shard, shards int) (worlds, lost int) {
	worlds = recordsWorldShard(shard, shards, func(w *tworld, o Observation) {
		svc := maps.Clone(w.svc)
		o, p, err := w.plan(o)
		if errors.Is(err, errFailed) {
			return // a live pass whose read failed decides nothing (Fail)
		}
		var broken []error
		defer func() {
			c.ObserveErr(func() string {
				return fmt.Sprintf("world: service %v status %+v\n    observation: held %v routed %v records %v refused %v unread %v "+
					"orphan %t deleting %t live %t adopt %t leaks %t wanters %v chain %v\n    plan: %+v",
					svc, o.Status.Record, o.Held(), o.Routed, o.Records, o.Refused, o.Unread, o.Orphan, o.Deleting, o.SelfLive,
					o.Adopt, o.ReplaceLeaks, o.Wanters, o.Chain, p)
			}, broken...)
		}()
		if err == nil {
			err = checkPlan(w, o, p)
		}
		if err != nil {
			broken = append(broken, proptest.Promise("the pass's loop of needs ends in a plan", err))
			return
		}
		if o.Deleting {
			return
		}
		before, mine, faults := maps.Clone(w.svc), *w.apps[0], w.faults
		err = converge(w, w.apps[0], w.observe(w.apps[0]), 5)
		broken = append(broken, proptest.Promise("idempotency: a live MyApp's plans, applied, reach a plan with no calls", err))
		if slices.ContainsFunc(slices.Collect(maps.Values(faults)), func(f readFault) bool { return f != faultNone }) {
			return // a lost answer after a faulty read adds nothing a clean one does not, at twice the time
		}
		hosts := []string{o.Host}
		if held := o.Held(); len(held) > 0 && held[0] != o.Host {
			hosts = append(hosts, held[0])
		}
		for i := range p.Calls {
			for _, host := range hosts {
				lost++
				if err := convergeAfterLostAnswer(w, before, mine, o, p, i, host); err != nil {
					broken = append(broken, proptest.Promise(
						"after a call applied and its answer was lost, the MyApp converges, its status knowing every record it holds",
						fmt.Errorf("call %d of %v applied and its answer lost, then spec.host %s: %w", i, p.Calls, host, err)))
				}
			}
		}
	})
	return worlds, lost
}
