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

package restoreplan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// The plan's promises, checked over every observation of a bounded space:
// each field of the observation takes every value that matters, the
// combinations that cannot happen included, so a promise holds whatever a
// pass read. The promises are stated from the issue, not from the plan's
// code: which backup may be written, when a MyApp may be written and which,
// when a Restore succeeds.

const (
	thisRestore  = "restore-uid"
	otherRestore = "other-restore-uid"
	ownOwnerID   = "cluster-a"
	otherOwnerID = "cluster-b"
	// ownNamespace is the Restore's namespace; otherNamespace another.
	ownNamespace   = "shop"
	otherNamespace = "bank"
)

// appStates are MyApps as the API server may show them: absent, or present
// as any incarnation, mark, deletion and stage of readiness.
func appStates() []*AppRead {
	out := make([]*AppRead, 0, 2+2*3*2*len(readinessStates())+4)
	out = append(out, nil, &AppRead{})
	// Another Restore in progress writes the target first: with no MyApp
	// yet, or with one carrying no mark, this Restore's or another's.
	out = append(out, &AppRead{BusyWith: "earlier"})
	for _, mark := range []string{"", thisRestore, otherRestore} {
		a := readinessStates()[1].app
		a.Exists, a.UID, a.MarkedBy, a.BusyWith = true, "app-1", mark, "earlier"
		out = append(out, &a)
	}
	for _, uid := range []string{"app-1", "app-2"} {
		for _, mark := range []string{"", thisRestore, otherRestore} {
			for _, deleting := range []bool{false, true} {
				for _, ready := range readinessStates() {
					a := ready.app
					a.Exists, a.UID, a.MarkedBy, a.Deleting = true, uid, mark, deleting
					out = append(out, &a)
				}
			}
		}
	}
	return out
}

// outlook is what docs/spec/restore.md says a Restore makes of a MyApp in
// a readiness state, stated by hand for each state below rather than
// computed by a rule: restored (Ready at its generation with its record for
// spec.host active), suspended as backed up (it reports Suspended: it is
// never Ready, and is what a backup of a suspended MyApp restores), its
// host held by another (HostConflict: it cannot become Ready while the
// holder lives), or on its way (it may yet become Ready: wait).
type outlook int

const (
	onItsWay outlook = iota
	restoredAndReady
	restoredSuspended
	hostHeldByAnother
)

// readinessState is a MyApp's readiness fields and what the spec makes of
// them.
type readinessState struct {
	app     AppRead
	outlook outlook
}

// readinessStates are the raw readiness fields of a MyApp: restored, one
// step short of it in each way, and the states it never leaves by itself.
func readinessStates() []readinessState {
	done := AppRead{Generation: 2, ObservedGeneration: 2, Ready: true, ReadyGeneration: 2,
		DNSState: appsv1alpha1.DNSRecordActive, DNSName: "web.example.com", Host: "web.example.com"}
	with := func(change func(*AppRead), o outlook) readinessState {
		a := done
		change(&a)
		return readinessState{app: a, outlook: o}
	}
	return []readinessState{
		{app: done, outlook: restoredAndReady},
		with(func(a *AppRead) { a.ObservedGeneration = 1 }, onItsWay),
		with(func(a *AppRead) { a.Ready = false }, onItsWay),
		with(func(a *AppRead) { a.ReadyGeneration = 1 }, onItsWay),
		with(func(a *AppRead) { a.DNSState = appsv1alpha1.DNSRecordPending }, onItsWay),
		with(func(a *AppRead) { a.DNSState = "" }, onItsWay),
		with(func(a *AppRead) { a.DNSName = "old.example.com" }, onItsWay),
		// Suspended: Ready False Suspended at the generation a pass last
		// acted on, no DNS record written for spec.host.
		with(func(a *AppRead) {
			a.Ready, a.ReadyGeneration, a.ObservedGeneration, a.Suspended = false, 0, 0, true
			a.DNSState, a.DNSName = "", ""
		}, restoredSuspended),
		// Another MyApp holds spec.host: DNSReady HostConflict at the
		// generation, Ready False, the record for the host not this one's.
		with(func(a *AppRead) {
			a.Ready, a.HostConflict = false, true
			a.DNSState, a.DNSName = "", ""
		}, hostHeldByAnother),
		// The same conflict on a MyApp this Restore's replace marked and
		// asked to read its record again (its requested-at annotation),
		// before that read was made: the conflict was judged without the
		// mark, which may make the record the MyApp's own. Once the read
		// is made (status.lastHandledReconcileAt), the conflict stands.
		with(func(a *AppRead) {
			a.Ready, a.HostConflict, a.RequestedAt = false, true, ReadRequest(thisRestore)
			a.DNSState, a.DNSName = "", ""
		}, onItsWay),
		with(func(a *AppRead) {
			a.Ready, a.HostConflict, a.RequestedAt, a.HandledAt = false, true, ReadRequest(thisRestore), ReadRequest(thisRestore)
			a.DNSState, a.DNSName = "", ""
		}, hostHeldByAnother),
	}
}

// outlookOf is the outlook stated for a's readiness fields.
func outlookOf(a *AppRead) outlook {
	r := AppRead{Generation: a.Generation, ObservedGeneration: a.ObservedGeneration, Ready: a.Ready,
		ReadyGeneration: a.ReadyGeneration, DNSState: a.DNSState, DNSName: a.DNSName, Host: a.Host,
		Suspended: a.Suspended, HostConflict: a.HostConflict, RequestedAt: a.RequestedAt, HandledAt: a.HandledAt}
	for _, st := range readinessStates() {
		if st.app == r {
			return st.outlook
		}
	}
	return onItsWay
}

// eachObservation calls f with every observation of the bounded space.
func eachObservation(f func(Observation)) {
	phases := []backupv1alpha1.RestorePhase{"", backupv1alpha1.RestorePending, backupv1alpha1.RestoreRestoring,
		backupv1alpha1.RestoreSucceeded, backupv1alpha1.RestoreFailed}
	sources := []*SourceRead{nil,
		{Refusal: backupv1alpha1.BackupConfigNotFoundReason}, {Refusal: backupv1alpha1.NoBackupFoundReason},
		{Found: true, Phase: BackupRunning}, {Found: true, Phase: BackupSucceeded},
		{Found: true, Phase: BackupFailed},
		{Found: true, Phase: BackupRunning, Namespace: otherNamespace},
		{Found: true, Phase: BackupSucceeded, Namespace: otherNamespace},
		{Found: true, Phase: BackupSucceeded, Namespace: ownNamespace},
		{Found: true, Phase: BackupRunning, Namespace: ownNamespace},
		{Found: true, Phase: BackupFailed, Namespace: ownNamespace}}
	backups := []*BackupRead{nil, {}, {Found: true, Phase: BackupRunning},
		{Found: true, Phase: BackupSucceeded}, {Found: true, Phase: BackupFailed}}
	contents := []*ContentRead{nil, {Problem: backupv1alpha1.BackupHasNoContentReason},
		{Problem: backupv1alpha1.UnsupportedBackupFormatReason}, {OwnerID: ownOwnerID, Namespace: ownNamespace},
		{OwnerID: otherOwnerID, Namespace: ownNamespace}, {OwnerID: ownOwnerID, Namespace: otherNamespace}}
	apps := appStates()
	for _, phase := range phases {
		for _, pastDeadline := range []bool{false, true} {
			for _, pinned := range []string{"", "b1"} {
				for _, restoredUID := range []string{"", "app-1"} {
					for _, policy := range []backupv1alpha1.ExistingAppPolicy{backupv1alpha1.ExistingAppFail, backupv1alpha1.ExistingAppReplace} {
						for _, srcNS := range []string{"", ownNamespace, otherNamespace} {
							for _, src := range sources {
								for _, b := range backups {
									for _, c := range contents {
										for _, a := range apps {
											f(Observation{RestoreUID: thisRestore, OwnerID: ownOwnerID, Policy: policy,
												Namespace: ownNamespace, SourceNamespace: srcNS,
												Phase: phase, Pinned: pinned, RestoredUID: restoredUID, PastDeadline: pastDeadline,
												Source: src, Backup: b, Content: c, App: a})
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// backupUsable says the observation shows the backup to restore checked:
// it succeeded, and its content was read, is of a format this operator
// reads, and was taken by this installation.
func backupUsable(o Observation) bool {
	var succeeded bool
	if o.Pinned == "" {
		succeeded = o.Source != nil && o.Source.Found && o.Source.Phase == BackupSucceeded
	} else {
		succeeded = o.Backup != nil && o.Backup.Found && o.Backup.Phase == BackupSucceeded
	}
	return succeeded && o.Content != nil && o.Content.Problem == "" && o.Content.OwnerID == ownOwnerID &&
		o.Content.Namespace == ownNamespace
}

// ofAnotherNamespace says the observation shows the Restore asked for, or
// led to, a backup of another namespace: spec.source.storage.namespace
// names one, or the backup's labels or content say it was taken in one.
// The source is only resolved before a backup is chosen, so what spec and
// labels say counts only then; the content, always.
func ofAnotherNamespace(o Observation) bool {
	return o.Pinned == "" && (o.SourceNamespace == otherNamespace ||
		o.Source != nil && o.Source.Found && o.Source.Namespace == otherNamespace) ||
		o.Content != nil && o.Content.Problem == "" && o.Content.Namespace == otherNamespace
}

// followsItsApp says the observation shows a Restore in progress that
// wrote its MyApp, and that MyApp, the same incarnation.
func followsItsApp(o Observation) bool {
	return !o.Phase.Finished() && o.Pinned != "" && o.RestoredUID != "" && o.App != nil && o.App.Exists &&
		o.App.UID == o.RestoredUID
}

// namespaceKnownOwn says the observation shows the backup the source
// resolved to was taken in the Restore's namespace, by its labels or its
// content.
func namespaceKnownOwn(o Observation) bool {
	return o.Source != nil && o.Source.Namespace == ownNamespace ||
		o.Content != nil && o.Content.Problem == "" && o.Content.Namespace == ownNamespace
}

// promise is one rule every plan keeps: broken reports whether the plan made
// for an observation breaks it.
type promise struct {
	rule   string
	broken func(o Observation, st Plan) bool
}

// writesApp says a plan writes a MyApp.
func writesApp(st Plan) bool {
	return st.Action == ActCreate || st.Action == ActAdopt || st.Action == ActReplace
}

// liveTarget says the observation shows a MyApp of the target's name that
// lives and is not the Restore's own.
func liveTarget(o Observation) bool {
	return o.App != nil && o.App.Exists && !o.App.Deleting && o.App.MarkedBy != thisRestore
}

// foreignContentOfASucceededBackup says the observation holds content of a
// succeeded backup that another installation took (content is only ever
// read of a succeeded backup).
func foreignContentOfASucceededBackup(o Observation) bool {
	if o.Content == nil || o.Content.Problem != "" || o.Content.OwnerID == ownOwnerID {
		return false
	}
	return o.Pinned == "" && o.Source != nil && o.Source.Found && o.Source.Phase == BackupSucceeded ||
		o.Pinned != "" && o.Backup != nil && o.Backup.Found && o.Backup.Phase == BackupSucceeded
}

var promises = []promise{
	{"a finished Restore reads and writes nothing", func(o Observation, st Plan) bool {
		return o.Phase.Finished() && (st.Need != NeedNothing || st.Action != ActNothing || st.Pin)
	}},
	{"a backup is chosen once: a Restore with one never chooses again", func(o Observation, st Plan) bool {
		return st.Pin && o.Pinned != ""
	}},
	{"no MyApp is written before the choice of backup is in the status", func(o Observation, st Plan) bool {
		return writesApp(st) && o.Pinned == ""
	}},
	{"a MyApp is written only from a succeeded backup of this installation whose content was read", func(o Observation, st Plan) bool {
		return writesApp(st) && !backupUsable(o)
	}},
	{"a MyApp is created only when the API server showed none", func(o Observation, st Plan) bool {
		return st.Action == ActCreate && (o.App == nil || o.App.Exists)
	}},
	{"only a MyApp carrying this Restore's mark is taken for its own", func(o Observation, st Plan) bool {
		return st.Action == ActAdopt && (o.App == nil || !o.App.Exists || o.App.MarkedBy != thisRestore)
	}},
	{"a MyApp's spec is replaced only with existingApp Replace, and never while it is being deleted", func(o Observation, st Plan) bool {
		return st.Action == ActReplace && (o.Policy != backupv1alpha1.ExistingAppReplace || o.App == nil || o.App.Deleting)
	}},
	{"a Restore writes one MyApp, once", func(o Observation, st Plan) bool {
		return writesApp(st) && o.RestoredUID != ""
	}},
	{"with existingApp Fail, a live MyApp that is not the Restore's own fails it with TargetExists", func(o Observation, st Plan) bool {
		applies := o.Policy == backupv1alpha1.ExistingAppFail && !o.Phase.Finished() && !o.PastDeadline && o.Pinned != "" &&
			o.RestoredUID == "" && backupUsable(o) && liveTarget(o) && o.App.BusyWith == ""
		return applies && (st.Action != ActFail || st.Show.Reason != backupv1alpha1.TargetExistsReason)
	}},
	{"a Restore succeeds only once the MyApp it wrote is restored as backed up: Ready with its DNS record active, or suspended", func(o Observation, st Plan) bool {
		return st.Action == ActSucceed && (!followsItsApp(o) ||
			outlookOf(o.App) != restoredAndReady && outlookOf(o.App) != restoredSuspended)
	}},
	{"a Restore whose MyApp is restored as backed up succeeds, its deadline passed or not", func(o Observation, st Plan) bool {
		applies := followsItsApp(o) && (outlookOf(o.App) == restoredAndReady || outlookOf(o.App) == restoredSuspended)
		return applies && st.Action != ActSucceed
	}},
	{"a Restore whose MyApp's host another holds fails with HostConflict", func(o Observation, st Plan) bool {
		applies := followsItsApp(o) && outlookOf(o.App) == hostHeldByAnother
		return applies && (st.Action != ActFail || st.Show.Reason != backupv1alpha1.HostConflictReason)
	}},
	{"a Restore fails with HostConflict only over a conflict its MyApp judged after the Restore's replace asked it to read with the mark", func(o Observation, st Plan) bool {
		return st.Action == ActFail && st.Show.Reason == backupv1alpha1.HostConflictReason &&
			(!followsItsApp(o) || outlookOf(o.App) != hostHeldByAnother)
	}},
	{"every Restore ends: past its deadline, a pass that decides finishes it, Succeeded or Failed", func(o Observation, st Plan) bool {
		applies := !o.Phase.Finished() && o.PastDeadline && st.Need == NeedNothing
		return applies && !st.Show.Phase.Finished()
	}},
	{"past its deadline, a Restore writes no MyApp", func(o Observation, st Plan) bool {
		return o.PastDeadline && writesApp(st)
	}},
	{"status.backup is written only for a backup its labels or content show of the Restore's namespace", func(o Observation, st Plan) bool {
		return st.Pin && !namespaceKnownOwn(o)
	}},
	{"a refusal is Failed with a reason that names the cause", func(_ Observation, st Plan) bool {
		return st.Action == ActFail &&
			(!slices.Contains(backupv1alpha1.RestoreFailureReasons, st.Show.Reason) || st.Show.Phase != backupv1alpha1.RestoreFailed)
	}},
	{"a backup of another installation is refused", func(o Observation, st Plan) bool {
		applies := foreignContentOfASucceededBackup(o) && !ofAnotherNamespace(o) && !o.Phase.Finished() && !o.PastDeadline &&
			o.RestoredUID == "" && st.Need == NeedNothing
		return applies && (st.Action != ActFail || st.Show.Reason != backupv1alpha1.ForeignBackupReason)
	}},
	{"a MyApp is written only from a backup of the Restore's own namespace", func(o Observation, st Plan) bool {
		return writesApp(st) && ofAnotherNamespace(o)
	}},
	{"a backup of another namespace is never pinned", func(o Observation, st Plan) bool {
		return st.Pin && ofAnotherNamespace(o)
	}},
	{"storage.namespace naming another namespace fails with BackupOfAnotherNamespace before anything is read", func(o Observation, st Plan) bool {
		applies := o.SourceNamespace == otherNamespace && !o.Phase.Finished() && o.Pinned == ""
		return applies && (st.Action != ActFail || st.Show.Reason != backupv1alpha1.BackupOfAnotherNamespaceReason || st.Need != NeedNothing)
	}},
	{"a MyApp another Restore writes first is not written, unless this Restore's own mark is on it", func(o Observation, st Plan) bool {
		return writesApp(st) && o.App != nil && o.App.BusyWith != "" && st.Action != ActAdopt
	}},
	{"a Restore waiting for another to finish is in progress, not failed", func(o Observation, st Plan) bool {
		applies := !o.Phase.Finished() && !o.PastDeadline && o.Pinned != "" && o.RestoredUID == "" && backupUsable(o) &&
			o.App != nil && o.App.BusyWith != "" && o.App.MarkedBy != thisRestore
		return applies && (st.Action != ActWait || st.Show.Reason != backupv1alpha1.TargetBusyReason)
	}},
	{"a waiting Restore is in progress and polls", func(_ Observation, st Plan) bool {
		return st.Action == ActWait && (st.Wake == WakeNone || st.Show.Phase.Finished())
	}},
	{"a plan never asks for a read it has, so a pass ends", func(o Observation, st Plan) bool {
		return st.Need != NeedNothing && alreadyRead(o, st.Need)
	}},
	{"the source is resolved only before a backup is chosen", func(o Observation, st Plan) bool {
		return st.Need == NeedSource && o.Pinned != ""
	}},
	{"every decision says the phase", func(o Observation, st Plan) bool {
		return st.Need == NeedNothing && !o.Phase.Finished() && st.Show.Phase == ""
	}},
}

func TestPlanPromises(t *testing.T) {
	c := proptest.New(t, "observations")
	eachObservation(func(o Observation) {
		st := Make(o)
		var broken []string
		for _, p := range promises {
			if p.broken(o, st) {
				broken = append(broken, p.rule)
			}
		}
		c.Observe(func() string { return fmt.Sprintf("observation: %s\n    plan: %+v", describe(o), st) }, broken...)
	})
	t.Logf("%d promises stated", len(promises))
	c.Report()
}

// alreadyRead reports whether o holds what read k reads.
func alreadyRead(o Observation, k Need) bool {
	switch k {
	case NeedSource:
		return o.Source != nil
	case NeedBackup:
		return o.Backup != nil
	case NeedContent:
		return o.Content != nil
	case NeedApp:
		return o.App != nil
	}
	return false
}

func describe(o Observation) string {
	s := fmt.Sprintf("phase=%q pinned=%q restored=%q policy=%s", o.Phase, o.Pinned, o.RestoredUID, o.Policy)
	if o.Source != nil {
		s += fmt.Sprintf(" source=%+v", *o.Source)
	}
	if o.Backup != nil {
		s += fmt.Sprintf(" backup=%+v", *o.Backup)
	}
	if o.Content != nil {
		s += fmt.Sprintf(" content=%+v", *o.Content)
	}
	if o.App != nil {
		s += fmt.Sprintf(" app=%+v", *o.App)
	}
	return s
}

// world is what the passes of one Restore act on in the sequence test: the
// Restore's status, the backups of its BackupConfig, and the MyApp.
type world struct {
	// status, as the last status write that got through left it.
	phase       backupv1alpha1.RestorePhase
	reason      string
	pinned      string
	restoredUID string
	// backups lists the succeeded backups, oldest first; newer ones land
	// while the Restore runs.
	backups []string
	// app is the target MyApp, nil when there is none; creates counts the
	// MyApps the Restore created.
	app     *AppRead
	creates int
	// created is the UID the next create gives.
	nextUID int
	// existedBefore is the UID of a MyApp that was there before the
	// Restore started (none: "").
	existedBefore string
	// now is the manager's clock; started is status.startTime, set by the
	// first pass; timeout is spec.timeout (0: the clock is not watched).
	now, started, timeout time.Duration
	startedSet            bool
}

// pastDeadline is what the restore package tells the plan: spec.timeout has
// passed since status.startTime.
func (w *world) pastDeadline() bool {
	return w.timeout > 0 && w.startedSet && w.now-w.started >= w.timeout
}

// readsPerPass bounds the reads of one pass in the sequences, as the
// restore package's own bound does a real pass's: a plan that asked for
// reads without end would panic here rather than loop.
const readsPerPass = 8

// pass runs one reconcile pass of the Restore over w: it plans, makes the
// reads the plan needs from w, and makes the action. crashAt says where the
// manager dies: 0 never, 1 after the MyApp write (before the status write),
// 2 before anything is written.
func (w *world) pass(crashAt int) {
	o := Observation{RestoreUID: thisRestore, OwnerID: ownOwnerID, Policy: backupv1alpha1.ExistingAppFail,
		Phase: w.phase, Pinned: w.pinned, RestoredUID: w.restoredUID, PastDeadline: w.pastDeadline()}
	if !w.startedSet {
		w.started, w.startedSet = w.now, true
	}
	var chosen string
	for range readsPerPass {
		st := Make(o)
		switch st.Need {
		case NeedSource:
			chosen = w.backups[len(w.backups)-1]
			o.Source = &SourceRead{Found: true, Phase: BackupSucceeded}
			continue
		case NeedBackup:
			o.Backup = &BackupRead{Found: true, Phase: BackupSucceeded}
			continue
		case NeedContent:
			o.Content = &ContentRead{OwnerID: ownOwnerID}
			continue
		case NeedApp:
			if w.app == nil {
				o.App = &AppRead{}
			} else {
				a := *w.app
				o.App = &a
			}
			continue
		}
		if crashAt == 2 {
			return
		}
		switch st.Action {
		case ActCreate:
			w.nextUID++
			w.app = &AppRead{Exists: true, UID: fmt.Sprintf("app-%d", w.nextUID), MarkedBy: thisRestore,
				Generation: 1, Host: "web.example.com"}
			w.creates++
			if crashAt == 1 {
				return
			}
			w.restoredUID = w.app.UID
		case ActAdopt, ActReplace:
			if crashAt == 1 {
				return
			}
			w.restoredUID = w.app.UID
		}
		if st.Pin {
			w.pinned = chosen
		}
		w.phase, w.reason = st.Show.Phase, st.Show.Reason
		return
	}
	panic("the plan did not end")
}

// settle is the MyApp controller: the MyApp becomes Ready with its record
// active.
func (w *world) settle() {
	if w.app != nil {
		w.app.ObservedGeneration, w.app.Ready, w.app.ReadyGeneration = w.app.Generation, true, w.app.Generation
		w.app.DNSState, w.app.DNSName = appsv1alpha1.DNSRecordActive, w.app.Host
	}
}

// TestPlanSequencesWithCrashes runs seeded sequences of passes of one
// Restore of a BackupConfig's latest backup, with backups landing, the
// manager dying before or between its writes, and the MyApp turning Ready
// at random points. Whatever the sequence: the Restore creates one MyApp,
// pins one backup (the newest when it first chose), never takes its own
// MyApp for another's, and ends Succeeded once its MyApp is restored.
func TestPlanSequencesWithCrashes(t *testing.T) {
	for seed := range uint64(2000) {
		rng := rand.New(rand.NewPCG(seed, 34))
		w := &world{backups: []string{"b1"}}
		var pinnedWhenChosen string
		for i := 0; i < 40 && !w.phase.Finished(); i++ {
			if rng.IntN(3) == 0 {
				w.backups = append(w.backups, fmt.Sprintf("b%d", len(w.backups)+1))
			}
			if rng.IntN(4) == 0 {
				w.settle()
			}
			newestBefore := w.backups[len(w.backups)-1]
			wasPinned := w.pinned
			w.pass(rng.IntN(3))
			if wasPinned == "" && w.pinned != "" {
				pinnedWhenChosen = newestBefore
				if w.pinned != newestBefore {
					t.Fatalf("seed %d: pinned %s, the newest backup when it chose was %s", seed, w.pinned, newestBefore)
				}
			}
			if wasPinned != "" && w.pinned != wasPinned {
				t.Fatalf("seed %d: the pinned backup changed from %s to %s", seed, wasPinned, w.pinned)
			}
		}
		// The MyApp controller catches up and the manager stops dying.
		for i := 0; i < 5 && !w.phase.Finished(); i++ {
			w.settle()
			w.pass(0)
		}
		switch {
		case w.creates != 1:
			t.Fatalf("seed %d: %d MyApps created, want 1", seed, w.creates)
		case w.phase != backupv1alpha1.RestoreSucceeded:
			t.Fatalf("seed %d: the Restore ended %s, want Succeeded", seed, w.phase)
		case w.pinned != pinnedWhenChosen:
			t.Fatalf("seed %d: pinned %s, chose %s", seed, w.pinned, pinnedWhenChosen)
		}
	}
}

// TestPlanLeavesAMyAppThatWasThereAlone: with existingApp Fail, a MyApp of
// the target's name that the Restore did not create makes it fail, and is
// never written, whatever crashes happen.
func TestPlanLeavesAMyAppThatWasThereAlone(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 35))
		w := &world{backups: []string{"b1"}, existedBefore: "app-0",
			app: &AppRead{Exists: true, UID: "app-0", Generation: 1, Host: "web.example.com"}}
		for i := 0; i < 20 && !w.phase.Finished(); i++ {
			w.pass(rng.IntN(3))
		}
		for i := 0; i < 3 && !w.phase.Finished(); i++ {
			w.pass(0)
		}
		if w.creates != 0 || w.app.UID != "app-0" || w.restoredUID != "" {
			t.Fatalf("seed %d: the MyApp that was there was written: creates %d, app %+v, restored %q", seed, w.creates, *w.app, w.restoredUID)
		}
		if w.phase != backupv1alpha1.RestoreFailed {
			t.Fatalf("seed %d: the Restore ended %q, want Failed", seed, w.phase)
		}
	}
}

// settleAs is the MyApp controller reporting on the MyApp the way o says:
// Ready with its record active, Suspended, HostConflict, or nothing yet
// (an image that no longer pulls: it stays on its way for ever).
func (w *world) settleAs(o outlook) {
	if w.app == nil {
		return
	}
	switch o {
	case restoredAndReady:
		w.settle()
	case restoredSuspended:
		w.app.Suspended = true
	case hostHeldByAnother:
		w.app.ObservedGeneration, w.app.HostConflict = w.app.Generation, true
	}
}

// TestEveryRestoreEndsWithinItsDeadline runs seeded sequences of passes of
// one Restore whose MyApp, once written, becomes Ready, reports Suspended,
// reports HostConflict, or never becomes anything, with the manager's
// clock moving on between passes and the manager dying at random. The
// promise of docs/spec/restore.md: every Restore ends, Succeeded or Failed,
// at the first pass at or after spec.timeout from status.startTime at the
// latest; Succeeded when the MyApp is restored as backed up (Ready, or
// Suspended), Failed HostConflict when another holds its host, Failed
// RestoreTimedOut when nothing happens.
func TestEveryRestoreEndsWithinItsDeadline(t *testing.T) {
	const timeout = 15 * time.Minute
	want := map[outlook]string{
		restoredAndReady:  backupv1alpha1.RestoreSucceededReason,
		restoredSuspended: backupv1alpha1.RestoreSucceededReason,
		hostHeldByAnother: backupv1alpha1.HostConflictReason,
		onItsWay:          backupv1alpha1.RestoreTimedOutReason,
	}
	for seed := range uint64(2000) {
		rng := rand.New(rand.NewPCG(seed, 36))
		fate := outlook(rng.IntN(4))
		settleAfter := time.Duration(rng.IntN(20)) * time.Minute
		w := &world{backups: []string{"b1"}, timeout: timeout}
		for !w.phase.Finished() {
			if w.startedSet && w.now-w.started > 2*timeout {
				t.Fatalf("seed %d (%v): still %s/%s %v after the Restore started", seed, fate, w.phase, w.reason,
					w.now-w.started)
			}
			if w.now >= settleAfter {
				w.settleAs(fate)
			}
			crash := 0
			if rng.IntN(5) == 0 {
				crash = 1 + rng.IntN(2)
			}
			pastBefore := w.pastDeadline()
			w.pass(crash)
			if pastBefore && crash == 0 && !w.phase.Finished() {
				t.Fatalf("seed %d (%v): a pass past the deadline left the Restore %s/%s", seed, fate, w.phase, w.reason)
			}
			w.now += time.Duration(1+rng.IntN(60)) * time.Second
		}
		// The MyApp's report decides when it comes well before the
		// deadline; from near the deadline on, either may come first (the
		// passes that crashed did not decide: a pass past the deadline that
		// decides ends the Restore, as checked above).
		ok := w.reason == want[fate] ||
			settleAfter+2*time.Minute >= timeout && w.reason == backupv1alpha1.RestoreTimedOutReason
		if !ok {
			t.Fatalf("seed %d (%v, after %v): the Restore ended %s/%s, want %s", seed, fate, settleAfter, w.phase,
				w.reason, want[fate])
		}
	}
}
