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
	"slices"
	"testing"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// restoreOwners are the owners spec.host's record may carry in the restore
// space, written as strings: both families, this installation, another and
// none (before owner IDs), this namespace and name or another, the UID the
// mark names (uid-0), this MyApp's (uid-1) and a third (uid-7); plus
// another tool's owner.
func restoreOwners() []string {
	out := make([]string, 0, 1+2*3*3*3)
	out = append(out, foreign)
	for _, prefix := range []string{OwnerPrefix, OrphanedOwnerPrefix} {
		for _, inst := range []string{"here/", "there/", ""} {
			for _, key := range []string{"ns/web", "ns/api", "ns-q/web"} {
				for _, uid := range []string{"uid-0", "uid-1", "uid-7"} {
					out = append(out, prefix+inst+key+"/"+uid)
				}
			}
		}
	}
	return out
}

// restoredFromOwner is the test's own reading of the promise: the record a
// restored MyApp (ns/web, uid-1, installation "here") marked as restored
// from mark may take over is one of this installation, of ns/web, with
// exactly the marked UID, in either family.
func restoredFromOwner(owner, mark string) bool {
	if mark == "" || mark == "uid-1" {
		return false
	}
	for _, prefix := range []string{OwnerPrefix, OrphanedOwnerPrefix} {
		if owner == prefix+"here/ns/web/"+mark {
			return true
		}
	}
	return false
}

// alreadyMine is the test's own reading of a record this MyApp holds before
// any take-over: ns/web/uid-1 in this installation or before owner IDs.
func alreadyMine(owner string) bool {
	for _, prefix := range []string{OwnerPrefix, OrphanedOwnerPrefix} {
		if owner == prefix+"here/ns/web/uid-1" || owner == prefix+"ns/web/uid-1" {
			return true
		}
	}
	return false
}

// TestRestoreMarkTakesOverOnlyTheRestoredRecord ranges over spec.host held
// by every owner of restoreOwners, the value it points at, the mark ("" for
// a MyApp no Restore created, the earlier UID, a third UID, its own), whether
// the API server shows this MyApp live (not live: the old MyApp of this name
// still exists), the policy, and adoption and leak replacement. It states
// the hand-over's promises:
//   - without adoption or leak replacement, the record becomes this MyApp's
//     exactly when it was already, or it is the marked MyApp's record of
//     this installation, namespace and name and this MyApp is the live one:
//     never another UID's, another installation's, another namespace's or
//     name's, nor while the old MyApp is live;
//   - the marked record is never deleted, whatever else is asked: the name
//     resolves throughout;
//   - once taken over, the next pass finds nothing to do.
func TestRestoreMarkTakesOverOnlyTheRestoredRecord(t *testing.T) {
	c := proptest.New(t, "worlds")
	for _, owner := range restoreOwners() {
		for _, value := range []string{wantedIP, staleIP} {
			for _, mark := range []string{"", "uid-0", "uid-7", "uid-1"} {
				for _, live := range []bool{false, true} {
					for _, orphan := range []bool{false, true} {
						for _, ask := range []struct{ adopt, leaks bool }{{}, {adopt: true}, {leaks: true}} {
							c.ObserveErr(func() string {
								return fmt.Sprintf("owner=%s value=%s mark=%q live=%t orphan=%t adopt=%t leaks=%t",
									owner, value, mark, live, orphan, ask.adopt, ask.leaks)
							}, checkRestoreWorld(owner, value, mark, live, orphan, ask.adopt, ask.leaks))
						}
					}
				}
			}
		}
	}
	c.Report()
}

func checkRestoreWorld(owner, value, mark string, live, orphan, adopt, leaks bool) error {
	a := &wapp{key: "ns/web", uid: "uid-1", host: "a", orphan: orphan}
	w := &tworld{id: "here", svc: service{"a": {Name: "a", Type: "A", Value: value, TTL: 300, Owner: owner, Active: true}},
		faults: map[string]readFault{}, selfLive: live}
	w.apps = append(w.apps, a)
	o := w.observe(a)
	o.RestoredFrom, o.Adopt, o.ReplaceLeaks = mark, adopt, leaks
	o, p, err := w.plan(o)
	if err != nil {
		return proptest.Promise("the pass's loop of needs ends in a plan", fmt.Errorf("planning: %w", err))
	}
	marked := restoredFromOwner(owner, mark)
	for _, c := range p.Calls {
		if marked && c.Name == "a" && c.Op == OpDelete {
			return proptest.Broke("the marked record is never deleted: the name resolves throughout", "deletes it: %+v", c)
		}
	}
	if err := w.applyPlan(p); err != nil {
		return proptest.Broke("the plan's calls apply to the service it read", "applying %+v: %v", p.Calls, err)
	}
	after := w.svc["a"].Owner
	mine := after == OwnerPrefix+"here/ns/web/uid-1" || after == OrphanedOwnerPrefix+"here/ns/web/uid-1"
	if !adopt && !leaks {
		want := alreadyMine(owner) || marked && live
		if mine != want {
			return proptest.Broke("without adoption, the record becomes this MyApp's exactly when it was, or is the marked "+
				"record and this MyApp is live", "owned by %q after the plan %+v (outcome %s); want it this MyApp's: %t",
				after, p.Calls, p.Outcome.Kind, want)
		}
	}
	if marked && live && !mine {
		return proptest.Broke("a live restored MyApp takes over the marked record", "it stays %q after the plan %+v (outcome %s, holder %s)",
			after, p.Calls, p.Outcome.Kind, p.Outcome.Holder.Kind)
	}
	if !mine {
		return nil
	}
	// Idempotency: the status now shows the record held; a pass that
	// reads it again makes no call.
	a.held, a.statusOwner = []string{"a"}, after
	again := w.observe(a)
	again.RestoredFrom, again.Adopt, again.ReplaceLeaks = mark, adopt, leaks
	_, p2, err := w.plan(again)
	if err != nil {
		return proptest.Promise("once taken over, the next pass finds nothing to do", fmt.Errorf("planning again: %w", err))
	}
	if len(p2.Calls) > 0 || p2.Outcome.Kind != KindHeld {
		return proptest.Broke("once taken over, the next pass finds nothing to do", "%+v, %s", p2.Calls, p2.Outcome.Kind)
	}
	return nil
}

// TestNoTakeoverWhileTheOwnerIDIsNotKnownToBeThisInstallationsAlone ranges
// over the restore space above with Observation.TakeoverWaits set (issue
// 39 item 8: another installation's claim of the owner ID was seen, or
// this one's has not stood long enough). It states the promises:
//   - a record that was not this MyApp's stays as it was: no call touches
//     it, whatever the mark, adoption or leak replacement ask;
//   - a record this MyApp would take over with the guard open is a wait,
//     not a conflict: TakeoverWaiting, read again with backoff, never
//     stalled;
//   - a record already this MyApp's is held as before.
func TestNoTakeoverWhileTheOwnerIDIsNotKnownToBeThisInstallationsAlone(t *testing.T) {
	c := proptest.New(t, "worlds")
	for _, owner := range restoreOwners() {
		for _, mark := range []string{"", "uid-0", "uid-7", "uid-1"} {
			for _, live := range []bool{false, true} {
				for _, orphan := range []bool{false, true} {
					for _, ask := range []struct{ adopt, leaks bool }{{}, {adopt: true}, {leaks: true}} {
						c.ObserveErr(func() string {
							return fmt.Sprintf("owner=%s mark=%q live=%t orphan=%t adopt=%t leaks=%t",
								owner, mark, live, orphan, ask.adopt, ask.leaks)
						}, checkTakeoverWaits(owner, mark, live, orphan, ask.adopt, ask.leaks))
					}
				}
			}
		}
	}
	c.Report()
}

func checkTakeoverWaits(owner, mark string, live, orphan, adopt, leaks bool) error {
	world := func() (*tworld, *wapp) {
		a := &wapp{key: "ns/web", uid: "uid-1", host: "a", orphan: orphan}
		w := &tworld{id: "here", svc: service{"a": {Name: "a", Type: "A", Value: wantedIP, TTL: 300, Owner: owner, Active: true}},
			faults: map[string]readFault{}, selfLive: live}
		w.apps = append(w.apps, a)
		return w, a
	}
	plan := func(waits string) (*tworld, Observation, Plan, error) {
		w, a := world()
		o := w.observe(a)
		o.RestoredFrom, o.Adopt, o.ReplaceLeaks, o.TakeoverWaits = mark, adopt, leaks, waits
		o, p, err := w.plan(o)
		return w, o, p, err
	}
	_, _, open, err := plan("")
	if err != nil {
		return proptest.Promise("the pass's loop of needs ends in a plan", fmt.Errorf("planning: %w", err))
	}
	w, o, p, err := plan("another installation uses owner ID here")
	if err != nil {
		return proptest.Promise("the pass's loop of needs ends in a plan", fmt.Errorf("planning: %w", err))
	}
	if err := w.applyPlan(p); err != nil {
		return proptest.Broke("the plan's calls apply to the service it read", "applying %+v: %v", p.Calls, err)
	}
	if !alreadyMine(owner) {
		if after := w.svc["a"]; after.Owner != owner {
			return proptest.Broke("a record that was not this MyApp's stays as it was while takeovers wait",
				"owned by %q after %+v", after.Owner, p.Calls)
		}
	}
	wouldTake := !alreadyMine(owner) && slices.ContainsFunc(open.Calls, func(c Call) bool { return c.Name == "a" })
	if wouldTake {
		show := Settle(o, p, false)
		if !p.Outcome.TakeoverWaits || show.Reason != appsv1alpha1.TakeoverWaitingReason || show.Stalled ||
			show.Next != NextBackoff {
			return proptest.Broke("a takeover held back is a wait, read again with backoff, never stalled",
				"outcome %+v, show %+v", p.Outcome, show)
		}
	}
	if alreadyMine(owner) && p.Outcome.TakeoverWaits {
		return proptest.Broke("a record already this MyApp's is held as before", "outcome %+v", p.Outcome)
	}
	return nil
}
