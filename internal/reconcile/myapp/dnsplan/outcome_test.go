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
	"fmt"
	"reflect"
	"testing"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// The reasons DNSReady can have before a pass.
var reasons = []string{"", appsv1alpha1.RecordActiveReason, appsv1alpha1.RecordPendingReason,
	appsv1alpha1.HostConflictReason, appsv1alpha1.WaitingForAddressReason, appsv1alpha1.DNSServiceUnavailableReason,
	appsv1alpha1.DNSRequestRejectedReason, appsv1alpha1.DNSThrottledReason, appsv1alpha1.DNSUnauthorizedReason}

// TestOutcomesKeepTheirPromises checks what a pass shows, over every kind
// of end a pass can come to, the DNSReady reason it started with, the
// memory, what woke it and whether the drift pass lists its record:
//   - a warning goes out only when the reason changes;
//   - a conflict that may end by itself (a host it holds is wanted, or a
//     hand-over is under way) is not stalled and comes back by a backoff
//     that grows only while nothing changed; one that cannot is stalled
//     and waits for its drift check;
//   - an ACTIVE record is read at its drift check, or not at all where the
//     drift pass lists it, and a PENDING one soon;
//   - only a pass that read the record says so (a reconcile request is
//     taken only then).
func TestOutcomesKeepTheirPromises(t *testing.T) {
	c := proptest.New(t, "settled passes")
	for _, kind := range []Kind{KindWaitingForAddress, KindStands, KindHeld, KindConflict, KindReleased} {
		for _, prev := range reasons {
			for _, moving := range []bool{false, true} {
				for _, active := range []bool{false, true} {
					for _, lists := range []bool{false, true} {
						for mem := range 4 {
							for _, asked := range []Ask{0, AskWoken, AskRequested} {
								for _, calls := range []int{0, 1} {
									for _, trust := range []bool{false, true} {
										o := Observation{Self: self, Host: "a", Status: Seen{Reason: prev}, ListsDrift: lists, Asked: asked}
										switch mem {
										case 1:
											o.Memory = &Memory{Host: "a", Seen: Seen{Reason: appsv1alpha1.HostConflictReason}, Polls: 3}
										case 2:
											o.Memory = &Memory{Host: "z", Seen: Seen{Reason: appsv1alpha1.HostConflictReason}, Polls: 3}
										case 3:
											o.Memory = &Memory{Host: "a", Seen: Seen{Reason: appsv1alpha1.RecordActiveReason}, Polls: 3}
										}
										p := Plan{Outcome: Outcome{Kind: kind, Moving: moving, Trust: trust}}
										if calls > 0 {
											p.Calls = []Call{{Op: OpUpsert, Name: "b"}}
										}
										s := Settle(o, p, active)
										c.ObserveErr(func() string {
											return fmt.Sprintf("kind %s prev %q moving %t active %t lists %t memory %+v asked %d calls %d trust %t: %+v",
												kind, prev, moving, active, lists, o.Memory, asked, calls, trust, s)
										}, checkSettle(o, p, active, s))
									}
								}
							}
						}
					}
				}
			}
		}
	}
	c.Report()
}

func checkSettle(o Observation, p Plan, active bool, s Show) error {
	out := p.Outcome
	switch {
	case s.Warn != (s.Reason != "" && s.Reason != o.Status.Reason && out.Kind == KindConflict):
		return proptest.Broke("a warning goes out only when a conflict's reason changes", "warns %t", s.Warn)
	case s.Read != (out.Kind == KindHeld || out.Kind == KindConflict || out.Kind == KindReleased):
		return proptest.Broke("only a pass that read the record says so", "says it read the record: %t", s.Read)
	case s.Retry != "":
		return proptest.Broke("a pass whose calls succeeded is not retried", "")
	}
	switch out.Kind {
	case KindConflict:
		return checkConflictShown(o, p, s)
	case KindHeld:
		return checkHeldShown(o, out, active, s)
	case KindStands:
		if s.Reason != "" || (s.Next == NextKeep) == out.Trust {
			return proptest.Broke("a status that stands shows no reason and is kept only when trusted", "shows %q, next %s", s.Reason, s.Next)
		}
	case KindWaitingForAddress:
		if s.Reason != appsv1alpha1.WaitingForAddressReason || s.Next != NextNone {
			return proptest.Broke("waiting for an address shows WaitingForAddress and no next read", "shows %q, next %s", s.Reason, s.Next)
		}
	}
	return nil
}

// checkConflictShown: a conflict that may end by itself is not stalled and
// backs off, more each time nothing changed; one that cannot is stalled and
// waits for its drift check.
func checkConflictShown(o Observation, p Plan, s Show) error {
	moving := p.Outcome.Moving
	if s.Stalled == moving {
		return proptest.Broke("a conflict is stalled exactly when it cannot end by itself", "moving %t, stalled %t", moving, s.Stalled)
	}
	if moving != (s.Next == NextBackoff) || !moving && s.Next != NextDrift {
		return proptest.Broke("a conflict that may end by itself backs off; one that cannot waits for its drift check",
			"moving %t, read next %s", moving, s.Next)
	}
	same := o.Memory != nil && o.Memory.Host == o.Host && o.Memory.Seen.Reason == appsv1alpha1.HostConflictReason
	if moving && (s.Polls > 0) != (same && len(p.Calls) == 0 && o.Asked&AskWoken == 0) {
		return proptest.Broke("a conflict's backoff grows only while nothing changed", "backs off %d times", s.Polls)
	}
	if s.Polls > 0 && s.Polls != o.Memory.Polls+1 {
		return proptest.Broke("a conflict's backoff grows by one poll at a time", "backs off %d times after %d", s.Polls, o.Memory.Polls)
	}
	return nil
}

// checkHeldShown: an ACTIVE record is ready and read at its drift check (or
// never by itself where the drift pass lists it), a PENDING one or a move
// soon.
func checkHeldShown(o Observation, out Outcome, active bool, s Show) error {
	if s.Ready != active || s.Stalled {
		return proptest.Broke("an ACTIVE record is ready, a PENDING one not, and neither stalled", "an %s record is ready %t, stalled %t",
			map[bool]string{true: "ACTIVE", false: "PENDING"}[active],
			s.Ready, s.Stalled)
	}
	switch {
	case !active || out.Moving:
		if s.Next != NextPoll {
			return proptest.Broke("a PENDING record or a move is read soon", "read next %s", s.Next)
		}
	case o.ListsDrift && s.Next != NextNone, !o.ListsDrift && s.Next != NextDrift:
		return proptest.Broke("an ACTIVE record is read at its drift check, or never where the drift pass lists it",
			"read next %s (drift by list %t)", s.Next, o.ListsDrift)
	}
	return nil
}

// TestFailuresKeepTheirPromises checks what a failed pass shows: a warning
// only when the reason changes; never sooner than a Retry-After; no retry
// only for a request the service rejects as invalid outside a deletion,
// which is then stalled; the backoff for everything else.
func TestFailuresKeepTheirPromises(t *testing.T) {
	c := proptest.New(t, "failed passes")
	failed := []string{appsv1alpha1.DNSServiceUnavailableReason, appsv1alpha1.DNSRequestRejectedReason,
		appsv1alpha1.DNSThrottledReason, appsv1alpha1.DNSUnauthorizedReason}
	for _, prev := range reasons {
		for _, reason := range failed {
			for _, after := range []time.Duration{0, 3 * time.Second} {
				for _, deleting := range []bool{false, true} {
					o := Observation{Self: self, Host: "a", Status: Seen{Reason: prev}, Deleting: deleting}
					s := Fail(o, Failure{Reason: reason, RetryAfter: after})
					var err error
					switch {
					case s.Reason != reason:
						err = proptest.Broke("a failed pass shows the failure's reason", "shows %q", s.Reason)
					case s.Warn != (prev != reason):
						err = proptest.Broke("a failed pass warns only when the reason changes", "warns %t", s.Warn)
					case (s.Retry == RetryWait) != (after > 0):
						err = proptest.Broke("a failed pass is retried no sooner than a Retry-After", "retries %s", s.Retry)
					case (s.Retry == RetryNever) != (after == 0 && reason == appsv1alpha1.DNSRequestRejectedReason && !deleting):
						err = proptest.Broke("only a request rejected as invalid outside a deletion is never retried", "retries %s", s.Retry)
					case s.Stalled != (s.Retry == RetryNever):
						err = proptest.Broke("a failed pass is stalled exactly when it is never retried", "stalled %t, retry %s", s.Stalled, s.Retry)
					case s.Read:
						err = proptest.Broke("a failed pass does not say it read the record", "")
					}
					c.ObserveErr(func() string {
						return fmt.Sprintf("prev %q reason %q retry-after %s deleting %t", prev, reason, after, deleting)
					}, err)
				}
			}
		}
	}
	c.Report()
}

// TestTheProviderClassShowsOnlyWhereItMatters checks, over the worlds of
// the records space with the third name c empty and spec.host routed or
// not (what c holds and the other routes decide no conflict's class; the
// whole space takes minutes planned twice), planned once on an atomic
// provider and once on a last-writer-wins one:
//   - the class never changes what a pass does: the same needs, the same
//     calls, the same outcome but for the class's own fields;
//   - the outcome names the class only for a conflict on a last-writer-wins
//     provider, where the conflict is a read of the zone rather than a
//     write the provider refused;
//   - a conflict there is a lost race exactly when the status the pass
//     started from showed spec.host held by this MyApp: its own write was
//     overwritten.
func TestTheProviderClassShowsOnlyWhereItMatters(t *testing.T) {
	t.Parallel()
	c := proptest.New(t, "worlds on both classes")
	conflicts, lost := 0, 0
	classWorlds(func(w *tworld, o Observation) {
		_, atomic, errAtomic := w.plan(o)
		o.Class = ClassLastWriterWins
		_, lww, errLWW := w.plan(o)
		var broken []error
		defer func() {
			c.ObserveErr(func() string { return fmt.Sprintf("status %+v service %v", o.Status.Record, w.svc) }, broken...)
		}()
		if (errAtomic == nil) != (errLWW == nil) {
			broken = append(broken, proptest.Broke("the class never changes what a pass does",
				"the plan ends with %v on an atomic provider, %v on a last-writer-wins one", errAtomic, errLWW))
			return
		}
		if errLWW != nil {
			return
		}
		if atomic.Outcome.Class != ClassAtomic || atomic.Outcome.LostRace {
			broken = append(broken, proptest.Broke("on an atomic provider the outcome names its class and no lost race",
				"says %q, lost race %t", atomic.Outcome.Class, atomic.Outcome.LostRace))
		}
		stripped := lww
		stripped.Outcome.Class, stripped.Outcome.LostRace = ClassAtomic, false
		if !reflect.DeepEqual(stripped, atomic) {
			broken = append(broken, proptest.Broke("the class never changes what a pass does",
				"the class changed the plan:\natomic %+v\nlww    %+v", atomic, lww))
		}
		conflict := lww.Outcome.Kind == KindConflict
		if (lww.Outcome.Class == ClassLastWriterWins) != conflict {
			broken = append(broken, proptest.Broke("the outcome names a last-writer-wins class only for a conflict",
				"a %s outcome says class %q", lww.Outcome.Kind, lww.Outcome.Class))
		}
		heldSpecHost := len(w.apps[0].held) > 0 && w.apps[0].held[0] == w.apps[0].host
		if lww.Outcome.LostRace != (conflict && heldSpecHost) {
			broken = append(broken, proptest.Broke("a conflict is a lost race exactly when the status showed spec.host held",
				"a %s outcome, spec.host held before %t: lost race %t", lww.Outcome.Kind, heldSpecHost, lww.Outcome.LostRace))
		}
		if conflict {
			conflicts++
			if lww.Outcome.LostRace {
				lost++
			}
		}
	})
	t.Logf("%d conflicts, %d of them lost races", conflicts, lost)
	c.Report()
	if lost == 0 || lost == conflicts {
		t.Fatalf("the space holds %d conflicts of which %d lost races: both kinds must occur", conflicts, lost)
	}
}

// classWorlds calls check for the worlds of the records space (see
// recordsWorldShard) whose third name is empty and whose Ingress routes
// nothing or spec.host alone.
func classWorlds(check func(w *tworld, o Observation)) {
	statuses := []status{{}, {held: []string{"a"}}, {held: []string{"a"}, marked: true}, {held: []string{"b"}},
		{held: []string{"a", "b"}}, {held: []string{"b", "c"}}, {held: []string{"a", "b"}, marked: true}}
	type adoption struct{ live, adopt, leaks bool }
	adoptions := []adoption{{false, false, false}, {true, false, false}, {true, true, false}, {true, false, true}}
	for _, sa := range specStates {
		for _, sb := range heldStates {
			for _, st := range statuses {
				for _, routed := range [][]string{nil, {"a"}} {
					for _, orphan := range []bool{false, true} {
						for deleting := range 3 {
							for _, ad := range adoptions {
								for peer := range 3 {
									if deleting > 0 && peer > 0 {
										continue
									}
									w, o := recordsWorld(sa, sb, recordState{}, st, routed, orphan, deleting, ad.live, ad.adopt, ad.leaks, peer)
									check(w, o)
								}
							}
						}
					}
				}
			}
		}
	}
}
