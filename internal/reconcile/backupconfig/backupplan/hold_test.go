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

package backupplan

import (
	"fmt"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// holdApp is the MyApp the hold plans are asked about.
const holdApp = "web"

// holderFromBits is one BackupConfig's view from eight raw bits and
// whether it references holdApp or another MyApp.
func holderFromBits(uid string, self bool, bits int) HolderView {
	bit := func(i int) bool { return bits&(1<<i) != 0 }
	h := HolderView{UID: uid, Self: self, OptIn: bit(0), AppRef: holdApp, Deleting: bit(2), DeletePolicy: bit(3),
		CleanupFinalizer: bit(4), Suspended: bit(5), GaveUp: bit(6), FinalRecorded: bit(7)}
	if bit(1) {
		h.AppRef = "other"
	}
	return h
}

// plainlyWants reports whether h is a BackupConfig in use with the
// option on that references holdApp: the docs' plainest case of a
// BackupConfig that wants the MyApp's final backup.
func plainlyWants(h HolderView) bool {
	return h.OptIn && h.AppRef == holdApp && !h.Deleting
}

// decidesItself reports whether h is another BackupConfig being deleted
// that may still owe the MyApp a final backup (Retain, its cleanup not
// done): its own passes decide.
func decidesItself(h HolderView) bool {
	return !h.Self && h.Deleting && h.OptIn && h.AppRef == holdApp && !h.DeletePolicy && h.CleanupFinalizer
}

// everyHoldObservation calls check with every hold observation of the
// bounded space: this pass's BackupConfig and one other in every state,
// the other as the API server shows it (as the cache does, missing from
// the cache, with its option or its appRef changed since), the MyApp being
// deleted or not, and every state of the answers.
func everyHoldObservation(check func(HoldObservation)) {
	for selfBits := range 1 << 8 {
		for otherBits := range 1 << 8 {
			self := holderFromBits("self", true, selfBits)
			other := holderFromBits("other", false, otherBits)
			for live := range 4 {
				cached, shown := other, other
				switch live {
				case 1:
					cached = HolderView{} // the cache does not list it yet
				case 2:
					cached.OptIn = !other.OptIn
				case 3:
					cached.AppRef = map[string]string{holdApp: "other", "other": holdApp}[other.AppRef]
				}
				for _, appDeleting := range []bool{false, true} {
					for answers := range 6 {
						o := HoldObservation{App: holdApp, AppDeleting: appDeleting, Holders: []HolderView{self},
							OwnAsked: answers&1 != 0, OwnSucceeded: answers&2 != 0, Confirmed: answers >= 4}
						if answers&2 != 0 && answers&1 == 0 {
							continue
						}
						if cached.UID != "" && cached.AppRef == holdApp {
							o.Holders = append(o.Holders, cached)
						}
						if o.Confirmed {
							o.Live = []HolderView{self, shown}
						}
						check(o)
					}
				}
			}
		}
	}
}

// holdPromisesBroken lists the promises p breaks for o.
func holdPromisesBroken(o HoldObservation, p HoldPlan) []string {
	broken := holdNeedsBroken(o, p)
	if !p.Release {
		return append(broken, holdKeptBroken(o)...)
	}
	return append(broken, releaseBroken(o)...)
}

// holdNeedsBroken: the service is asked only about this pass's own final
// backup, of a MyApp that goes, when its status does not answer it, and
// neither the service nor the API server is asked twice.
func holdNeedsBroken(o HoldObservation, p HoldPlan) []string {
	self := o.Holders[0]
	switch {
	case p.Need == NeedOwnFinalBackup && o.OwnAsked:
		return []string{"asked the service again"}
	case p.Need == NeedOwnFinalBackup && !o.AppDeleting:
		return []string{"asked the service about a final backup of a MyApp that does not go"}
	case p.Need == NeedOwnFinalBackup && (!plainlyWants(self) || self.FinalRecorded):
		return []string{"asked the service about another BackupConfig's final backup, or one its status answers (S4)"}
	case p.Need == NeedHoldersFromAPIServer && o.Confirmed:
		return []string{"asked the API server again"}
	}
	return nil
}

// releaseBroken: a release is confirmed with the API server, and lets no
// MyApp go that a BackupConfig in use wants held, whose final backup it
// still owes, or that another BackupConfig being deleted decides about.
func releaseBroken(o HoldObservation) []string {
	var broken []string
	if !o.Confirmed {
		broken = append(broken, "released without the API server's confirmation")
	}
	for _, h := range append(append([]HolderView{}, o.Holders...), o.Live...) {
		gaveUp := h.Suspended && h.GaveUp
		answered := h.FinalRecorded || h.Self && o.OwnAsked && o.OwnSucceeded
		switch {
		case h.Self && h.Deleting:
			// Its pass asks only once its final-backup plan let go.
		case plainlyWants(h) && !o.AppDeleting:
			broken = append(broken, "released a live MyApp a BackupConfig wants held")
		case plainlyWants(h) && !answered && !gaveUp:
			broken = append(broken, "released a MyApp before a final backup succeeded or was given up")
		case decidesItself(h):
			broken = append(broken, "released a MyApp a BackupConfig being deleted decides about")
		}
	}
	return broken
}

// holdKeptBroken: a hold nobody wants goes, once the plan's reads are
// answered (here as the observation says).
func holdKeptBroken(o HoldObservation) []string {
	for _, h := range append(append([]HolderView{}, o.Holders...), o.Live...) {
		if h.OptIn && h.AppRef == holdApp && (!h.Self || !h.Deleting) && (!h.Deleting || !h.DeletePolicy) {
			return nil // someone may want it
		}
	}
	answered := o
	answered.OwnAsked, answered.Confirmed = true, true
	if answered.Live == nil {
		answered.Live = o.Holders
	}
	if !PlanHold(answered).Release {
		return []string{"kept a hold nobody wants"}
	}
	return nil
}

func TestPlanHoldKeepsItsPromises(t *testing.T) {
	c := proptest.New(t, "hold observations")
	everyHoldObservation(func(o HoldObservation) {
		plan := PlanHold(o)
		c.Observe(func() string { return fmt.Sprintf("%+v -> %+v", o, plan) }, holdPromisesBroken(o, plan)...)
	})
	c.Report()
}

// TestTheSafetyNetReleasesOnlyWhatNobodyWants: the safety net, which runs
// when a BackupConfig is gone, releases a held MyApp that no BackupConfig
// of the namespace plainly wants or decides about, and keeps one that one
// does, over every pair of BackupConfigs.
func TestTheSafetyNetReleasesOnlyWhatNobodyWants(t *testing.T) {
	c := proptest.New(t, "safety-net observations")
	for a := range 1 << 8 {
		for b := range 1 << 8 {
			holders := []HolderView{holderFromBits("a", false, a), holderFromBits("b", false, b)}
			released := PlanUnwantedRelease(holdApp, holders)
			var broken []string
			wanted, nobody := false, true
			for _, h := range holders {
				wanted = wanted || plainlyWants(h) || decidesItself(h)
				nobody = nobody && (!h.OptIn || h.AppRef != holdApp || h.Deleting && (h.DeletePolicy || !h.CleanupFinalizer))
			}
			if released && wanted {
				broken = append(broken, "released a MyApp a BackupConfig wants held")
			}
			if !released && nobody {
				broken = append(broken, "kept a hold nobody wants")
			}
			c.Observe(describe(holders), broken...)
		}
	}
	c.Report()
}
