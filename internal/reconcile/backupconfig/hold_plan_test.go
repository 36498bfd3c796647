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

package backupconfig

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// holdApp is the MyApp the hold plans are asked about.
const holdApp = "web"

// everyHolderView calls f with every view of one BackupConfig that
// references holdApp or another MyApp: 2^8 of them.
func everyHolderView(uid types.UID, self bool, f func(holderView)) {
	for bits := range 1 << 8 {
		bit := func(i int) bool { return bits&(1<<i) != 0 }
		h := holderView{
			uid: uid, self: self,
			optIn: bit(0), appRef: holdApp,
			deleting: bit(2), deletePolicy: bit(3), cleanupFinalizer: bit(4),
			suspended: bit(5), gaveUp: bit(6), finalRecorded: bit(7),
		}
		if bit(1) {
			h.appRef = "other"
		}
		f(h)
	}
}

// owed is what a holder still owes the MyApp before its hold may go.
type owed int

const (
	owesNothing owed = iota
	// owesHold: the hold stays, whatever the service says.
	owesHold
	// owesAnswer: only the backup service can say whether the final
	// backup SUCCEEDED.
	owesAnswer
)

// owes says what holder h still owes the MyApp app before its hold may go,
// as the docs promise (docs/spec/backupconfig.md): a BackupConfig that
// wants a final backup of the MyApp holds it while the MyApp lives; once
// the MyApp is being deleted, until its final backup SUCCEEDED or it gave
// the backup up (suspended, with FinalBackupAbandoned); and one being
// deleted itself holds it as long as its own final-backup plan says (keepOwn
// for this pass's BackupConfig; another decides in its own passes, so its
// hold stays). Whether another BackupConfig's final backup SUCCEEDED is read
// from its status only; this pass's own, not recorded yet, is the service's
// answer.
func owes(h holderView, o holdObservation) owed {
	switch {
	case h.self && h.deleting:
		if o.keepOwnHold && h.appRef == o.app {
			return owesHold
		}
		return owesNothing
	case !wantsHold(h, o.app):
		return owesNothing
	case h.deleting || !o.appDeleting:
		return owesHold
	case h.finalRecorded || h.suspended && h.gaveUp:
		return owesNothing
	case h.self:
		return owesAnswer
	}
	return owesHold
}

// confirmed is holds.go's confirmation of a release against the API
// server, here with the API server listing what the cache listed: a holder
// the plan did not account for and that wants the hold keeps it.
func confirmed(p holdPlan, o holdObservation) bool {
	for _, h := range o.holders {
		if !p.asked[h.uid] && wantsHold(h, o.app) {
			return false
		}
	}
	return true
}

// released reports whether the plan lets the hold go without a service
// question: what is left is the confirmation against the API server.
func (p holdPlan) released() bool {
	return !p.keep && len(p.askService) == 0
}

// checkHoldPlan returns the first promise planHold breaks for o, or "".
func checkHoldPlan(o holdObservation) string {
	p := planHold(o)
	var hold, answer bool
	for _, h := range o.holders {
		switch owes(h, o) {
		case owesHold:
			hold = true
		case owesAnswer:
			answer = true
		}
	}
	for _, uid := range p.askService {
		i := slices.IndexFunc(o.holders, func(h holderView) bool { return h.uid == uid })
		if i < 0 || !o.holders[i].self {
			return "the service is asked about another BackupConfig's final backup (S4)"
		}
	}
	switch {
	case hold && !p.keep:
		return "released, or asked the service, while a holder still owes a final backup"
	case !hold && answer && (p.keep || len(p.askService) != 1):
		return "this BackupConfig's own final backup is not asked of the service"
	case !hold && !answer && !p.released():
		return "a hold nobody owes a final backup is kept"
	case !hold && !p.keep && !confirmed(p, o):
		return "a released hold is kept by the API server's confirmation for good"
	}
	return ""
}

// TestPlanHoldKeepsItsPromises checks planHold over every observation of
// a MyApp (being deleted or not) with this pass's BackupConfig and one
// other, each in every state of its spec, deletion and status, and this
// pass's final-backup plan keeping its hold or not: a hold is released only
// when no BackupConfig owes the MyApp a final backup (it SUCCEEDED, or a
// suspended BackupConfig gave it up with its Warning and condition), the
// service is asked only about this pass's own final backup, and a hold
// nobody owes is released without the service.
func TestPlanHoldKeepsItsPromises(t *testing.T) {
	const app = holdApp
	n := 0
	violations := map[string]int{}
	var first []string
	for _, appDeleting := range []bool{false, true} {
		for _, keepOwn := range []bool{false, true} {
			everyHolderView("self", true, func(self holderView) {
				everyHolderView("other", false, func(other holderView) {
					o := holdObservation{app: app, appDeleting: appDeleting, keepOwnHold: keepOwn,
						holders: []holderView{self, other}}
					n++
					if v := checkHoldPlan(o); v != "" {
						violations[v]++
						if len(first) < 3 {
							first = append(first, fmt.Sprintf("%s: %+v", v, o))
						}
					}
				})
			})
		}
	}
	t.Logf("checked %d hold observations; violations by rule: %v", n, violations)
	if len(violations) > 0 {
		t.Errorf("planHold breaks its promises: %v; first: %v", violations, first)
	}
}

// TestPlanHoldWithOnlyItsOwnBackupConfig covers the commonest namespace:
// one BackupConfig per MyApp.
func TestPlanHoldWithOnlyItsOwnBackupConfig(t *testing.T) {
	n := 0
	for _, appDeleting := range []bool{false, true} {
		for _, keepOwn := range []bool{false, true} {
			everyHolderView("self", true, func(self holderView) {
				n++
				o := holdObservation{app: holdApp, appDeleting: appDeleting, keepOwnHold: keepOwn, holders: []holderView{self}}
				if v := checkHoldPlan(o); v != "" {
					t.Errorf("%s: %+v", v, o)
				}
			})
		}
	}
	t.Logf("checked %d hold observations", n)
}

// TestPlanAddHoldAndTheSafetyNet: a hold goes on only where a final backup
// can still be taken, and the safety net releases only a hold that no
// BackupConfig of the namespace wants.
func TestPlanAddHoldAndTheSafetyNet(t *testing.T) {
	for bits := range 1 << 4 {
		optIn, appDeleting, held, behind := bits&1 != 0, bits&2 != 0, bits&4 != 0, bits&8 != 0
		got := planAddHold(optIn, appDeleting, held, behind)
		want := optIn && !appDeleting && !held && !behind
		if got != want {
			t.Errorf("planAddHold(optIn %v, deleting %v, held %v, behind %v) = %v", optIn, appDeleting, held, behind, got)
		}
	}
	n := 0
	everyHolderView("a", false, func(a holderView) {
		everyHolderView("b", false, func(b holderView) {
			n++
			released := planUnwantedRelease(holdApp, []holderView{a, b})
			if released && (wantsHold(a, holdApp) || wantsHold(b, holdApp)) {
				t.Fatalf("the safety net released a hold %+v or %+v wants", a, b)
			}
			if !released && !wantsHold(a, holdApp) && !wantsHold(b, holdApp) {
				t.Fatalf("the safety net kept a hold neither %+v nor %+v wants", a, b)
			}
		})
	})
	t.Logf("checked %d safety-net observations", n)
}
