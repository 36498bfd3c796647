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
	"testing"
)

// runPass plans a's pass in w with the mark and applies its calls as the
// myapp package does: each answered call's record goes into the
// observation (answered: the record the service stored, or none after a
// delete). lost, when 0 or more, is the index of the call whose answer is
// lost: it applies, and the pass ends there with the status HeldAfter
// says. It returns status.dns as the pass writes it.
func runPass(w *tworld, a *wapp, mark string, lost int) (Plan, string, error) {
	o := w.observe(a)
	o.RestoredFrom = mark
	o, p, err := w.plan(o)
	if err != nil {
		return p, "", err
	}
	for i, c := range p.Calls {
		if err := w.svc.apply(c); err != nil {
			return p, "", fmt.Errorf("call %+v: %w", c, err)
		}
		if i == lost {
			holds, previous := p.HeldAfter(o, i, true)
			st := o.StatusAfter(holds, previous)
			if st == nil {
				return p, "", nil
			}
			return p, st.TakeoverDoneFor, nil
		}
		o.Records[c.Name] = w.svc[c.Name]
	}
	st := o.StatusAfter(p.Outcome.Holds, p.Outcome.Previous)
	if st == nil {
		return p, "", nil
	}
	return p, st.TakeoverDoneFor, nil
}

// TestTheTakeoverIsRecordedDoneOnlyOnceAReadOrAnAnswerShowsTheHostHeld
// ranges over spec.host's record held by every owner of restoreOwners (or
// none), its value, every mark, the API server showing this MyApp live or
// not, each policy, and each way the pass ends: every answer came, or the
// answer of one call was lost. The promise: status.dns.takeoverDoneFor
// names the mark exactly when the MyApp carries one and the status shows
// spec.host held with the service's answer (a read, or a call's) showing
// that record this MyApp's; never on a transfer whose answer was lost,
// which the next read settles. And once recorded, it stays while the mark
// does, whatever the next pass finds.
func TestTheTakeoverIsRecordedDoneOnlyOnceAReadOrAnAnswerShowsTheHostHeld(t *testing.T) {
	n := 0
	for _, owner := range append(restoreOwners(), "") {
		for _, value := range []string{wantedIP, staleIP} {
			for _, mark := range []string{"", "uid-0", "uid-7", "uid-1"} {
				for _, live := range []bool{false, true} {
					for _, orphan := range []bool{false, true} {
						for lost := -1; lost < 2; lost++ {
							name := fmt.Sprintf("owner=%q value=%s mark=%q live=%t orphan=%t lost=%d",
								owner, value, mark, live, orphan, lost)
							if err := checkTakeoverDone(owner, value, mark, live, orphan, lost); err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							n++
						}
					}
				}
			}
		}
	}
	t.Logf("checked %d worlds", n)
}

func checkTakeoverDone(owner, value, mark string, live, orphan bool, lost int) error {
	a := &wapp{key: "ns/web", uid: "uid-1", host: "a", orphan: orphan}
	w := &tworld{id: "here", svc: service{}, faults: map[string]readFault{}, selfLive: live}
	if owner != "" {
		w.svc["a"] = Record{Name: "a", Type: "A", Value: value, TTL: 300, Owner: owner, Active: true}
	}
	w.apps = append(w.apps, a)
	p, done, err := runPass(w, a, mark, lost)
	if err != nil {
		return err
	}
	if lost >= len(p.Calls) {
		return nil // no such call: the pass of lost = -1 covers it
	}
	answeredCalls := p.Calls
	if lost >= 0 {
		answeredCalls = p.Calls[:lost]
	}
	answered := false
	for _, c := range answeredCalls {
		answered = answered || c.Name == "a"
	}
	after := w.svc["a"]
	mine := after.Name != "" && a.self("here").Owns(after.Owner)
	shown := mine && (answered || alreadyMine(owner))
	if want := mark != "" && shown; (done != "") != want || done != "" && done != mark {
		return fmt.Errorf("takeoverDoneFor is %q after the plan %+v (record now %q, answered %t); want the mark set: %t",
			done, p.Calls, after.Owner, answered, want)
	}
	if done == "" {
		return nil
	}
	return checkTakeoverDoneStays(w, a, after.Owner, mark, done)
}

// checkTakeoverDoneStays: recorded, the takeover stays done while the
// mark does: the pass after finds nothing to do, and a move to another host
// carries it along; a mark that is gone ends it.
func checkTakeoverDoneStays(w *tworld, a *wapp, owner, mark, done string) error {
	a.held, a.statusOwner, a.takeoverDoneFor = []string{"a"}, owner, done
	if _, again, err := runPass(w, a, mark, -1); err != nil || again != done {
		return fmt.Errorf("the pass after: takeoverDoneFor went from %q to %q (%v)", done, again, err)
	}
	a.host = "b"
	if _, moved, err := runPass(w, a, mark, -1); err != nil || moved != done {
		return fmt.Errorf("a move to b: takeoverDoneFor went from %q to %q (%v)", done, moved, err)
	}
	a.host = "a"
	if _, unmarked, err := runPass(w, a, "", -1); err != nil || unmarked != "" {
		return fmt.Errorf("without the mark: takeoverDoneFor is %q (%v)", unmarked, err)
	}
	return nil
}

// takesOver reports whether p transfers the record at name to self.
func takesOver(p Plan, name string, self Self) bool {
	for _, c := range p.Calls {
		if c.Op == OpTransfer && c.Name == name && self.Owns(c.To) {
			return true
		}
	}
	return false
}

// TestTheRestoreMarkTakesNothingOverOnceItsTakeoverIsDone: a MyApp restored
// from uid-0 whose status shows the takeover done moves to host b, whose
// record the marked UID holds under either identity (a leak of the old
// incarnation). Without adoption or leak replacement it takes nothing
// over: the record is another owner's, never deleted, and the plan shows a
// conflict. The same MyApp whose takeover is not done (none recorded, or
// recorded for another mark) takes the record of b over as its spec.host's.
func TestTheRestoreMarkTakesNothingOverOnceItsTakeoverIsDone(t *testing.T) {
	for _, family := range []string{OwnerPrefix, OrphanedOwnerPrefix} {
		for _, doneFor := range []string{"uid-0", "", "uid-7"} {
			for _, orphan := range []bool{false, true} {
				name := fmt.Sprintf("family=%s doneFor=%q orphan=%t", family, doneFor, orphan)
				a := &wapp{key: "ns/web", uid: "uid-1", host: "b", orphan: orphan, held: []string{"a"}, takeoverDoneFor: doneFor}
				w := &tworld{id: "here", faults: map[string]readFault{}, selfLive: true, apps: []*wapp{a}, svc: service{
					"a": {Name: "a", Type: "A", Value: wantedIP, TTL: 300, Owner: a.owner("here"), Active: true},
					"b": {Name: "b", Type: "A", Value: staleIP, TTL: 300, Owner: family + "here/ns/web/uid-0", Active: true},
				}}
				o := w.observe(a)
				o.RestoredFrom = "uid-0"
				_, p, err := w.plan(o)
				if err != nil {
					t.Fatalf("%s: planning: %v", name, err)
				}
				took := takesOver(p, "b", a.self("here"))
				if want := doneFor != "uid-0"; took != want {
					t.Errorf("%s: takes b over: %t, want %t (calls %+v)", name, took, want, p.Calls)
				}
				if took {
					continue
				}
				for _, c := range p.Calls {
					if c.Name == "b" {
						t.Errorf("%s: a call on the record of b, another owner's: %+v", name, c)
					}
				}
				if p.Outcome.Kind != KindConflict {
					t.Errorf("%s: the outcome is %s, want %s", name, p.Outcome.Kind, KindConflict)
				}
			}
		}
	}
}

// TestTheSweepSparesExactlyTheRecordTheRestoredMyAppTakesOver ranges over
// a record of this installation under ns/web (the UID the mark names, the
// UID of the MyApp living there, a third), at that MyApp's spec.host or at
// another host, and what lives under ns/web: nothing, or a MyApp with no
// mark or a mark naming one of those UIDs, its takeover done for that mark,
// for another or not at all. The promise: the sweep keeps the record of a
// MyApp that lives, and of a gone one exactly what the MyApp living under
// its name takes over on its own, live, with neither adoption nor leak
// replacement: so the sweep never deletes the name a restored MyApp is
// about to take over, and never keeps a record that no pass will ever
// take (a leak under another host, or one left after the takeover).
func TestTheSweepSparesExactlyTheRecordTheRestoredMyAppTakesOver(t *testing.T) {
	n := 0
	for _, uid := range []string{"uid-0", "uid-1", "uid-7"} {
		ref := OwnerRef{Installation: "here", Namespace: "ns", Name: "web", UID: uid}
		for _, name := range []string{"a", "b"} {
			if !Swept(ref, name, nil) {
				t.Errorf("the record %s of %s is kept with no MyApp under its name", name, uid)
			}
			for _, mark := range []string{"", "uid-0", "uid-7"} {
				for _, doneFor := range []string{"", mark, "uid-9"} {
					a := &wapp{key: "ns/web", uid: "uid-1", host: "a", takeoverDoneFor: doneFor}
					var st *Resident
					if doneFor != "" {
						a.held = []string{"a"}
					}
					w := &tworld{id: "here", faults: map[string]readFault{}, selfLive: true, apps: []*wapp{a}, svc: service{
						name: {Name: name, Type: "A", Value: wantedIP, TTL: 300, Owner: OwnerOf("here", "ns", "web", uid, false), Active: true},
					}}
					o := w.observe(a)
					o.RestoredFrom = mark
					st = &Resident{UID: a.uid, Host: a.host, RestoredFrom: mark, Status: o.Status.Record}
					_, p, err := w.plan(o)
					if err != nil {
						t.Fatalf("planning: %v", err)
					}
					swept := Swept(ref, name, st)
					keep := uid == a.uid || takesOver(p, name, a.self("here"))
					if swept == keep {
						t.Errorf("record %s of %s, MyApp %s with mark %q done for %q: swept %t, but its own pass takes it over "+
							"or it is its own: %t (calls %+v)", name, uid, a.uid, mark, doneFor, swept, keep, p.Calls)
					}
					n++
				}
			}
		}
	}
	t.Logf("checked %d worlds", n)
}
