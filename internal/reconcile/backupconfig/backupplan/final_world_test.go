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
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// This file checks the final-backup and hold planners together against a
// model of one namespace: a MyApp, up to three BackupConfigs referencing
// it (or another MyApp), the backup service and the namespace, deleted in
// every order (the MyApp first, a BackupConfig first within one request
// as kubectl delete -f and GitOps prunes do, a BackupConfig first and
// waited for until it is gone as kubectl delete and a prune that waits for
// each object do, a BackupConfig alone, the namespace, whose controller
// deletes what it holds in random order), with
// specs edited, BackupConfigs suspended, the service failing or down, and
// the cache behind the controller's own hold writes. A BackupConfig's pass
// is modelled on the backupconfig package's: it observes, plans, reads
// what the plan needs, applies, and releases holds through PlanHold. A
// pass is atomic: the release is a patch guarded by the MyApp's
// resourceVersion, so a MyApp that changed since it was read refuses it.
//
// The judge knows the world, not the planners. The promises, from
// docs/spec/backupconfig.md ("A final backup before the app goes",
// "Deletion"):
//   - a MyApp under backupBeforeAppDeletion that is deleted, in any order
//     and at any interval with its BackupConfig and its namespace, ends
//     with a SUCCEEDED final backup of each BackupConfig that wanted one,
//     or a FinalBackupAbandoned warning from it; and it ends (it is not
//     kept for ever);
//   - a BackupConfig under Retain deleted while it holds its live MyApp
//     takes a final backup of it first, or warns: no BackupConfig is left
//     to take one when the MyApp goes, however much later;
//   - no hold is released before that, and no hold on a live MyApp while a
//     BackupConfig in use wants it held;
//   - a hold is never kept on a MyApp nobody wants to back up, and one a
//     BackupConfig wants is on;
//   - a hold goes on only for a BackupConfig that wants it, never on a
//     MyApp being deleted (the API server refuses it) and never twice.
//
// The documented ways out, which owe nothing: turning
// backupBeforeAppDeletion off, moving spec.appRef, and deleting a
// BackupConfig with deletionPolicy Delete. Time is never one.

const (
	webApp   = "web"
	otherApp = "other"
	webUID   = "web-uid"
)

type serviceMode int

const (
	serviceUp serviceMode = iota
	serviceFailing
	serviceDown
)

type finalAttempt struct {
	n     int
	phase Phase
	until time.Time
}

type bcModel struct {
	uid                      string
	optIn, retain, suspended bool
	appRef                   string
	created                  time.Time
	deleting                 bool
	deletionStarted          time.Time
	gone                     bool
	// reason is the Ready reason the last pass wrote: "abandoned",
	// "failed" (out of attempts, held for a person) or "".
	reason        string
	finalRecorded bool
	// wantedAtGo is the judge's record that it wanted the MyApp's final
	// backup when the MyApp began to go; heldAtOwnDeletion that the MyApp
	// was held when this BackupConfig's deletion began.
	wantedAtGo, heldAtOwnDeletion bool
	// deletedBeforeGo: its deletion began before the MyApp began to go.
	deletedBeforeGo bool
	// owedLive: its deletion began under Retain, with the option on and
	// its appRef on the MyApp, while the MyApp was held and not going; it
	// owes the MyApp a final backup then, whatever comes after.
	owedLive bool
	warned   bool
	// otherUntil is when a scheduled backup running at the MyApp's
	// deletion finishes.
	otherUntil time.Time
	attempts   []finalAttempt
}

type finalWorld struct {
	t   *testing.T
	rng *rand.Rand
	now time.Time
	// The MyApp.
	appExists, held, appDeleting, appGone bool
	appDeletedAt                          time.Time
	heldAtDeletion                        bool
	// cacheMissesHold says the cache shows the MyApp as it was before the
	// controller's last hold write.
	cacheMissesHold bool
	nsTerminating   bool
	bcs             []*bcModel
	mode            serviceMode
	broken          []string
	history         []string
	// figures
	releases, givenUp, succeededFinals, personDeletions, heldForAPerson int
}

func (w *finalWorld) violate(format string, args ...any) {
	w.broken = append(w.broken, fmt.Sprintf(format, args...))
}

func (w *finalWorld) log(format string, args ...any) {
	w.history = append(w.history, fmt.Sprintf("%s "+format, append([]any{w.now.Sub(planNow)}, args...)...))
}

// live lists the BackupConfigs the API server has.
func (w *finalWorld) live() []*bcModel {
	var out []*bcModel
	for _, b := range w.bcs {
		if !b.gone {
			out = append(out, b)
		}
	}
	return out
}

// goes reports whether the MyApp goes: its deletion began, or its
// namespace's.
func (w *finalWorld) goes() bool { return w.appDeleting || w.nsTerminating }

// wantsFinal is the judge's word on whether b owes the MyApp a final
// backup: the MyApp goes and was held (when its own deletion began, after
// which no hold can go on), b wanted its final backup when it began to go
// (wantedAtGo), and b took no way out since: deleted under Delete, or its
// option turned off or its appRef moved (which clear wantedAtGo for good).
func (w *finalWorld) wantsFinal(b *bcModel) bool {
	switch {
	case b.owedLive:
		return true
	case !w.goes() || !b.wantedAtGo:
		return false
	case b.deleting && !b.retain:
		return false // deleted under Delete: its backups go with it
	case b.deletedBeforeGo:
		// Deleted together with the MyApp, just before it: owed if the
		// MyApp was held when this BackupConfig's deletion began.
		return b.heldAtOwnDeletion
	case w.appDeleting && !w.heldAtDeletion, !w.appDeleting && !w.held:
		return false
	}
	return true
}

// markWantedAtGo records, when the MyApp begins to go, which
// BackupConfigs want its final backup: the option on, referencing it, and
// not gone (one being deleted under Retain owes it too; one deleted
// earlier while the MyApp lived owes it by owedLive, and may be gone
// already).
func (w *finalWorld) markWantedAtGo() {
	for _, b := range w.bcs {
		b.deletedBeforeGo = b.deleting
		b.wantedAtGo = b.optIn && b.appRef == webApp && !b.gone && (!b.deleting || b.retain)
	}
}

// wantsHeld is the judge's word on whether b, in use, wants the live MyApp
// held; one being deleted owes what wantsFinal says.
func (w *finalWorld) wantsHeld(b *bcModel) bool {
	return !b.gone && b.optIn && b.appRef == webApp && !b.deleting
}

func (w *finalWorld) finalSucceeded(b *bcModel) bool {
	return slices.ContainsFunc(b.attempts, func(a finalAttempt) bool {
		return a.phase == PhaseSucceeded && !a.until.After(w.now)
	})
}

// release takes the hold off the MyApp and judges the release.
func (w *finalWorld) release(by string) {
	w.held = false
	w.releases++
	w.log("%s releases the MyApp", by)
	for _, b := range w.bcs {
		if w.wantsFinal(b) && !w.finalSucceeded(b) && !b.warned {
			w.violate("%s released the MyApp before BackupConfig %s had a SUCCEEDED final backup or warned", by, b.uid)
		}
		if !w.goes() && w.wantsHeld(b) {
			w.violate("%s released the live MyApp while BackupConfig %s wants it held", by, b.uid)
		}
	}
}

// addHold puts the hold on, as the API server takes it.
func (w *finalWorld) addHold(b *bcModel) {
	switch {
	case w.appDeleting:
		w.violate("BackupConfig %s put a hold on a MyApp being deleted, which the API server refuses", b.uid)
		return
	case w.held:
		w.violate("BackupConfig %s wrote the hold again on a MyApp that carries it", b.uid)
	case !b.optIn || b.appRef != webApp:
		w.violate("BackupConfig %s put a hold on a MyApp it wants no final backup of", b.uid)
	}
	w.held = true
	w.cacheMissesHold = w.rng.IntN(2) == 0
	w.log("%s holds the MyApp", b.uid)
}

// view is what the hold planner knows of b; fetchedReason is the status
// its own pass read, for this pass's BackupConfig.
func (w *finalWorld) view(b, self *bcModel, fetchedReason string) HolderView {
	reason := b.reason
	if b == self {
		reason = fetchedReason
	}
	return HolderView{UID: b.uid, Self: b == self, OptIn: b.optIn, AppRef: b.appRef, Deleting: b.deleting,
		DeletePolicy: !b.retain, CleanupFinalizer: !b.gone, Suspended: b.suspended, GaveUp: reason == "abandoned",
		FinalRecorded: b.finalRecorded}
}

var errServiceDown = fmt.Errorf("the backup service is down")

// decideHold is the holds phase for the MyApp: PlanHold, with its needs
// answered from the service and the API server.
func (w *finalWorld) decideHold(self *bcModel, fetchedReason string) error {
	if !w.held || w.appGone {
		return nil
	}
	o := HoldObservation{App: webApp, AppDeleting: w.appDeleting}
	for _, b := range w.live() {
		if b == self || b.appRef == webApp {
			o.Holders = append(o.Holders, w.view(b, self, fetchedReason))
		}
	}
	for {
		p := PlanHold(o)
		switch p.Need {
		case NeedOwnFinalBackup:
			if w.mode == serviceDown {
				return errServiceDown
			}
			o.OwnAsked, o.OwnSucceeded = true, w.finalSucceeded(self)
			continue
		case NeedHoldersFromAPIServer:
			o.Confirmed = true
			for _, b := range w.live() {
				o.Live = append(o.Live, w.view(b, self, fetchedReason))
			}
			continue
		}
		if p.Release {
			w.release("the holds of " + self.uid)
		}
		return nil
	}
}

// safetyNet is what runs when a BackupConfig is gone: a held MyApp no
// BackupConfig wants is released.
func (w *finalWorld) safetyNet() {
	if !w.held || w.appGone {
		return
	}
	var views []HolderView
	for _, b := range w.live() {
		views = append(views, w.view(b, nil, ""))
	}
	if PlanUnwantedRelease(webApp, views) {
		w.release("the safety net")
	}
}

// final runs the final-backup plan of b, its needs answered, and applies
// it; done says the hold may go.
func (w *finalWorld) final(b *bcModel, fetchedReason string) (bool, error) {
	o, p, err := w.planFinal(b, fetchedReason)
	if err != nil {
		return false, err
	}
	b.reason = ""
	switch p.Action {
	case FinalDone:
		b.finalRecorded = true
		return true, nil
	case FinalStart:
		return false, w.startFinal(b, o, p)
	case FinalFailed:
		b.reason = "failed"
		w.heldForAPerson++
	case FinalAbandon:
		// The warning counts once the pass's status write says it, at the
		// end of the pass (warn): a release in the same pass is silent.
		b.reason = "abandoned"
		return p.Release, nil
	case FinalNone:
		return p.Release, nil
	}
	return false, nil
}

// planFinal observes, and answers the plan's needs until it decides.
func (w *finalWorld) planFinal(b *bcModel, fetchedReason string) (FinalObservation, FinalPlan, error) {
	o := FinalObservation{Now: w.now, OptIn: b.optIn, Suspended: b.suspended, Retain: b.retain, Deleting: b.deleting,
		DeletionStarted: b.deletionStarted, OtherRunning: w.now.Before(b.otherUntil), Recorded: b.finalRecorded,
		MaxAttempts: planMaxAttempts, TeardownLimit: planTeardownLimit,
		AbandonReported: fetchedReason == "abandoned"}
	readApp := func() {
		o.AppExists = b.appRef == webApp && !w.appGone
		o.AppHeld = o.AppExists && w.held
		o.AppDeleting = o.AppExists && w.appDeleting
	}
	if !b.deleting {
		readApp() // the cache, here as up to date as the API server
	}
	p := PlanFinalBackup(o)
	for range 3 {
		switch p.Need {
		case NeedNothing:
			return o, p, nil
		case NeedAppFromAPIServer:
			readApp()
			o.AppFromAPIServer = true
		case NeedNamespace:
			o.NamespaceRead, o.NamespaceTerminating = true, w.nsTerminating
		case NeedAttempts:
			if w.mode == serviceDown {
				return o, p, errServiceDown
			}
			o.Listed, o.Attempts = true, w.tally(b)
		}
		p = PlanFinalBackup(o)
	}
	if p.Need != NeedNothing {
		w.violate("BackupConfig %s's plan kept asking for reads", b.uid)
	}
	return o, p, nil
}

// tally is what the service lists of b's final attempts.
func (w *finalWorld) tally(b *bcModel) Tally {
	var t Tally
	for _, a := range b.attempts {
		switch {
		case a.until.After(w.now):
			t.Running = true
		case a.phase == PhaseSucceeded:
			t.Succeeded = true
		default:
			t.Failed++
		}
	}
	return t
}

// startFinal starts attempt p.Attempt in the service, which the model
// makes succeed or fail by its mode.
func (w *finalWorld) startFinal(b *bcModel, o FinalObservation, p FinalPlan) error {
	if w.mode == serviceDown {
		return errServiceDown
	}
	phase := PhaseSucceeded
	if w.mode == serviceFailing {
		phase = PhaseFailed
	}
	if o.Attempts.Running || w.now.Before(b.otherUntil) {
		w.violate("BackupConfig %s started a final backup while a backup runs", b.uid)
	}
	b.attempts = append(b.attempts, finalAttempt{n: p.Attempt, phase: phase, until: w.now.Add(time.Second)})
	if phase == PhaseSucceeded {
		w.succeededFinals++
	}
	w.log("%s starts final attempt %d", b.uid, p.Attempt)
	return nil
}

// pass is one pass of BackupConfig b.
func (w *finalWorld) pass(b *bcModel) {
	if b.gone {
		return
	}
	defer w.warn(b)
	w.passOnce(b)
}

// warn is the pass's status write and Warning event: a give-up is said.
func (w *finalWorld) warn(b *bcModel) {
	if b.reason == "abandoned" && !b.warned {
		b.warned = true
		w.givenUp++
		w.log("%s says it gave the final backup up", b.uid)
	}
}

func (w *finalWorld) passOnce(b *bcModel) {
	fetched := b.reason
	if b.deleting {
		if done, err := w.final(b, fetched); err != nil || !done {
			return
		}
		if w.decideHold(b, fetched) != nil {
			return
		}
		b.gone = true
		w.log("%s is gone", b.uid)
		w.safetyNet()
		return
	}
	if b.appRef == webApp && !w.appGone {
		cached, behind := w.held, false
		if w.cacheMissesHold && w.rng.IntN(2) == 0 {
			// The cache shows the MyApp as the last hold write read it;
			// the controller knows that version as its own write's base.
			cached, behind = false, true
		}
		if PlanAddHold(b.optIn, w.appDeleting, cached, behind) {
			w.addHold(b)
		}
	}
	if w.decideHold(b, fetched) != nil {
		return
	}
	if done, err := w.final(b, fetched); err == nil && done {
		_ = w.decideHold(b, fetched)
	}
}

// deleteBC starts b's deletion; the API server keeps seconds only.
func (w *finalWorld) deleteBC(b *bcModel, why string) {
	if b.gone || b.deleting {
		return
	}
	b.deleting, b.deletionStarted, b.heldAtOwnDeletion = true, w.now.Truncate(time.Second), w.held
	b.owedLive = b.retain && b.optIn && b.appRef == webApp && w.held && !w.goes() && !w.appGone
	w.log("delete %s (%s)", b.uid, why)
}

func (w *finalWorld) deleteApp(why string) {
	if w.appGone || w.appDeleting {
		return
	}
	if !w.goes() {
		w.markWantedAtGo()
	}
	w.appDeleting, w.appDeletedAt, w.heldAtDeletion = true, w.now, w.held
	for _, b := range w.live() {
		if b.appRef == webApp && w.rng.IntN(4) == 0 {
			b.otherUntil = w.now.Add(time.Duration(w.rng.IntN(3)) * time.Second)
		}
	}
	w.log("delete the MyApp (%s)", why)
}

// tick moves time and lets the API server finish what it can: a MyApp
// being deleted without the hold goes (its other finalizers are not this
// controller's and go at once), and the namespace controller deletes.
func (w *finalWorld) tick(d time.Duration) {
	w.now = w.now.Add(d)
	if w.appDeleting && !w.held && !w.appGone {
		w.appGone = true
		w.log("the MyApp is gone")
	}
	if w.nsTerminating {
		if !w.appDeleting && !w.appGone && w.rng.IntN(2) == 0 {
			w.deleteApp("namespace controller")
		}
		for _, b := range w.live() {
			if w.rng.IntN(2) == 0 {
				w.deleteBC(b, "namespace controller")
			}
		}
	}
}

func (w *finalWorld) newBC() {
	b := &bcModel{uid: fmt.Sprintf("bc-%d", len(w.bcs)), optIn: w.rng.IntN(4) != 0, retain: w.rng.IntN(3) != 0,
		suspended: w.rng.IntN(6) == 0, appRef: webApp, created: w.now}
	if w.rng.IntN(6) == 0 {
		b.appRef = otherApp
	}
	w.bcs = append(w.bcs, b)
	w.log("create %s %+v", b.uid, *b)
}

// act changes the world at random, or runs passes.
func (w *finalWorld) act() {
	switch k := w.rng.IntN(40); {
	case k < 14:
		if b := w.pick(); b != nil {
			w.pass(b)
		}
	case k < 16:
		w.safetyNet()
	case k < 22:
		w.tick([]time.Duration{10 * time.Millisecond, 300 * time.Millisecond, time.Second, 3 * time.Second,
			7 * time.Second, time.Minute, 11 * time.Minute}[w.rng.IntN(7)])
	case k < 28:
		w.deleteSome(k - 22)
	case k < 37:
		w.edit(k - 28)
	default:
		for _, b := range w.live() {
			w.pass(b)
		}
	}
}

// pick is a BackupConfig the API server has, at random, or nil.
func (w *finalWorld) pick() *bcModel {
	live := w.live()
	if len(live) == 0 {
		return nil
	}
	return live[w.rng.IntN(len(live))]
}

// deleteSome deletes, by k (0 to 5): the MyApp alone, a BackupConfig and
// its MyApp in one go, a BackupConfig and then, once it is gone (or after
// a minute, as a prune's wait times out), its MyApp, a BackupConfig alone,
// or the namespace.
func (w *finalWorld) deleteSome(k int) {
	switch {
	case k < 1:
		w.deleteApp("alone")
	case k < 2:
		if b := w.pick(); b != nil {
			w.deleteBC(b, "first, waited for")
			for range 60 {
				w.tick(time.Second)
				if w.pass(b); b.gone {
					break
				}
			}
			w.deleteApp("after its BackupConfig was waited for")
		}
	case k < 4:
		if b := w.pick(); b != nil {
			// kubectl delete -f with the BackupConfig listed first, or a
			// GitOps prune: two requests a few milliseconds apart.
			w.deleteBC(b, "with its MyApp")
			w.tick(time.Duration(w.rng.IntN(50)) * time.Millisecond)
			if w.rng.IntN(2) == 0 {
				// The BackupConfig's deletion event is handled before the
				// MyApp's deletion arrives (audit 3, T1).
				w.pass(b)
			}
			w.deleteApp("after its BackupConfig")
		}
	case k < 5:
		if b := w.pick(); b != nil {
			w.deleteBC(b, "alone")
		}
	case !w.nsTerminating:
		if !w.goes() {
			w.markWantedAtGo()
		}
		w.nsTerminating = true
		w.log("delete the namespace")
	}
}

// edit changes, by k (0 to 8): a BackupConfig's option, its appRef, its
// suspend, the service's mode, or adds a BackupConfig.
func (w *finalWorld) edit(k int) {
	b := w.pick()
	switch {
	case k < 2 && b != nil && !b.deleting:
		b.optIn = !b.optIn
		b.wantedAtGo = b.wantedAtGo && b.optIn
		w.log("%s option %v", b.uid, b.optIn)
	case k < 3 && b != nil && !b.deleting:
		b.appRef = map[string]string{webApp: otherApp, otherApp: webApp}[b.appRef]
		b.wantedAtGo = b.wantedAtGo && b.appRef == webApp
		w.log("%s references %s", b.uid, b.appRef)
	case k < 5 && b != nil:
		b.suspended = !b.suspended
		w.log("%s suspended %v", b.uid, b.suspended)
	case k < 8:
		w.mode = serviceMode(w.rng.IntN(3))
		w.log("service %d", w.mode)
	case len(w.bcs) < 3 && !w.nsTerminating:
		w.newBC()
	}
}

// settle heals the service and runs every pass until nothing changes; a
// person deletes a BackupConfig that holds its MyApp for a decision (out
// of final attempts), one of the documented ways. It reports whether the
// world came to rest.
func (w *finalWorld) settle() bool {
	w.mode = serviceUp
	for range 200 {
		before := fmt.Sprint(w.held, w.appGone, len(w.live()), w.releases, w.givenUp)
		w.tick(time.Second + time.Duration(w.rng.IntN(3000))*time.Millisecond)
		for _, b := range w.live() {
			if b.reason == "failed" && !b.deleting {
				w.personDeletions++
				w.deleteBC(b, "by a person, out of final attempts")
			}
			w.pass(b)
		}
		w.safetyNet()
		deleting := slices.ContainsFunc(w.live(), func(b *bcModel) bool { return b.deleting })
		if !deleting && (!w.appDeleting || w.appGone) && before == fmt.Sprint(w.held, w.appGone, len(w.live()), w.releases, w.givenUp) {
			return true
		}
	}
	return false
}

// judgeEnd checks the end state.
func (w *finalWorld) judgeEnd(rested bool) {
	if !rested {
		w.violate("the world did not come to rest")
	}
	if w.appDeleting && !w.appGone {
		w.violate("the MyApp being deleted is kept for ever")
	}
	for _, b := range w.bcs {
		if b.deleting && !b.gone {
			w.violate("BackupConfig %s being deleted is kept for ever", b.uid)
		}
		if w.wantsFinal(b) && !w.finalSucceeded(b) && !b.warned {
			w.violate("the MyApp went without a SUCCEEDED final backup of %s or its warning", b.uid)
		}
	}
	if w.appGone {
		return
	}
	wanted := slices.ContainsFunc(w.live(), func(b *bcModel) bool { return b.optIn && b.appRef == webApp && !b.deleting })
	switch {
	case w.held && !wanted:
		w.violate("a hold is kept on a MyApp nobody wants to back up")
	case !w.held && wanted && !w.appDeleting:
		w.violate("a MyApp a BackupConfig wants a final backup of is not held")
	}
}

// TestFinalBackupsAndHoldsKeepTheirPromises runs the world model over
// seeded sequences and judges every release and every end.
func TestFinalBackupsAndHoldsKeepTheirPromises(t *testing.T) {
	const seeds, steps = 3000, 60
	c := proptest.New(t, "seeded worlds")
	var releases, givenUp, finals, persons, heldForAPerson, together, waited int
	for seed := range uint64(seeds) {
		w := &finalWorld{t: t, rng: rand.New(rand.NewPCG(seed, 31)), now: planNow, appExists: true}
		for range 1 + w.rng.IntN(3) {
			w.newBC()
		}
		for range steps {
			w.act()
		}
		w.judgeEnd(w.settle())
		releases += w.releases
		givenUp += w.givenUp
		finals += w.succeededFinals
		persons += w.personDeletions
		heldForAPerson += w.heldForAPerson
		if slices.ContainsFunc(w.history, func(h string) bool { return strings.HasSuffix(h, "(after its BackupConfig)") }) {
			together++
		}
		if slices.ContainsFunc(w.history, func(h string) bool { return strings.Contains(h, "was waited for)") }) {
			waited++
		}
		broken := make([]error, 0, len(w.broken))
		for _, v := range w.broken {
			broken = append(broken, proptest.Broke(ruleOf(v), "%s", v))
		}
		c.ObserveErr(func() string { return fmt.Sprintf("seed %d, history: %v", seed, w.history) }, broken...)
	}
	t.Logf("%d seeded worlds of %d steps: %d releases judged, %d SUCCEEDED final backups, %d give-ups, "+
		"%d worlds with a BackupConfig-first deletion in one go, %d with a BackupConfig deleted and waited for "+
		"before its MyApp, %d passes holding a MyApp for a person, %d BackupConfigs deleted by that person",
		seeds, steps, releases, finals, givenUp, together, waited, heldForAPerson, persons)
	c.Report()
}

// ruleOf is a violation without the names in it, to count by rule.
func ruleOf(v string) string {
	out := []rune{}
	skip := false
	for _, r := range v {
		if r == ' ' {
			skip = false
		}
		if r >= '0' && r <= '9' && len(out) > 2 && out[len(out)-1] == '-' {
			skip = true
		}
		if !skip {
			out = append(out, r)
		}
	}
	return string(out)
}
