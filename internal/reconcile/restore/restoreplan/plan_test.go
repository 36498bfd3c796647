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
	"testing"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
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

// failureReasons are the reasons of a Failed Restore, as the API documents
// them.
var failureReasons = map[string]bool{
	backupv1alpha1.BackupConfigNotFoundReason:     true,
	backupv1alpha1.NoSucceededBackupReason:        true,
	backupv1alpha1.NoBackupFoundReason:            true,
	backupv1alpha1.BackupNotFoundReason:           true,
	backupv1alpha1.BackupNotSucceededReason:       true,
	backupv1alpha1.BackupHasNoContentReason:       true,
	backupv1alpha1.UnsupportedBackupFormatReason:  true,
	backupv1alpha1.InvalidBackupContentReason:     true,
	backupv1alpha1.ForeignBackupReason:            true,
	backupv1alpha1.BackupOfAnotherNamespaceReason: true,
	backupv1alpha1.TargetExistsReason:             true,
	backupv1alpha1.InvalidAppSpecReason:           true,
	backupv1alpha1.RestoredAppDeletedReason:       true,
}

// appStates are MyApps as the API server may show them: absent, or present
// as any incarnation, mark, deletion and stage of readiness.
func appStates() []*AppRead {
	out := make([]*AppRead, 0, 2+2*3*2*7+4)
	out = append(out, nil, &AppRead{})
	// Another Restore in progress writes the target first: with no MyApp
	// yet, or with one carrying no mark, this Restore's or another's.
	out = append(out, &AppRead{BusyWith: "earlier"})
	for _, mark := range []string{"", thisRestore, otherRestore} {
		a := readinessStates()[1]
		a.Exists, a.UID, a.MarkedBy, a.BusyWith = true, "app-1", mark, "earlier"
		out = append(out, &a)
	}
	for _, uid := range []string{"app-1", "app-2"} {
		for _, mark := range []string{"", thisRestore, otherRestore} {
			for _, deleting := range []bool{false, true} {
				for _, ready := range readinessStates() {
					a := ready
					a.Exists, a.UID, a.MarkedBy, a.Deleting = true, uid, mark, deleting
					out = append(out, &a)
				}
			}
		}
	}
	return out
}

// readinessStates are the raw readiness fields of a MyApp: restored, and
// one step short of it in each way.
func readinessStates() []AppRead {
	done := AppRead{Generation: 2, ObservedGeneration: 2, Ready: true, ReadyGeneration: 2,
		DNSState: appsv1alpha1.DNSRecordActive, DNSName: "web.example.com", Host: "web.example.com"}
	changes := []func(*AppRead){
		func(a *AppRead) { a.ObservedGeneration = 1 },
		func(a *AppRead) { a.Ready = false },
		func(a *AppRead) { a.ReadyGeneration = 1 },
		func(a *AppRead) { a.DNSState = appsv1alpha1.DNSRecordPending },
		func(a *AppRead) { a.DNSState = "" },
		func(a *AppRead) { a.DNSName = "old.example.com" },
	}
	out := make([]AppRead, 0, 1+len(changes))
	out = append(out, done)
	for _, change := range changes {
		a := done
		change(&a)
		out = append(out, a)
	}
	return out
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
		{Found: true, Phase: BackupSucceeded, Namespace: ownNamespace}}
	backups := []*BackupRead{nil, {}, {Found: true, Phase: BackupRunning},
		{Found: true, Phase: BackupSucceeded}, {Found: true, Phase: BackupFailed}}
	contents := []*ContentRead{nil, {Problem: backupv1alpha1.BackupHasNoContentReason},
		{Problem: backupv1alpha1.UnsupportedBackupFormatReason}, {OwnerID: ownOwnerID, Namespace: ownNamespace},
		{OwnerID: otherOwnerID, Namespace: ownNamespace}, {OwnerID: ownOwnerID, Namespace: otherNamespace}}
	apps := appStates()
	for _, phase := range phases {
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
											Phase: phase, Pinned: pinned, RestoredUID: restoredUID,
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

// appIsRestored is the "Ready with its DNS record active", stated on
// the raw fields: the controller has seen the current generation, Ready is
// True for it, and the record for spec.host is Active.
func appIsRestored(a *AppRead) bool {
	return a.Exists && a.Generation == a.ObservedGeneration && a.Ready && a.ReadyGeneration == a.Generation &&
		a.DNSState == appsv1alpha1.DNSRecordActive && a.DNSName == a.Host
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
		applies := o.Policy == backupv1alpha1.ExistingAppFail && !o.Phase.Finished() && o.Pinned != "" &&
			o.RestoredUID == "" && backupUsable(o) && liveTarget(o) && o.App.BusyWith == ""
		return applies && (st.Action != ActFail || st.Show.Reason != backupv1alpha1.TargetExistsReason)
	}},
	{"a Restore succeeds only once the MyApp it wrote is Ready with its DNS record active", func(o Observation, st Plan) bool {
		return st.Action == ActSucceed && (o.App == nil || o.App.UID != o.RestoredUID || !appIsRestored(o.App))
	}},
	{"a Restore whose MyApp is restored succeeds", func(o Observation, st Plan) bool {
		applies := !o.Phase.Finished() && o.Pinned != "" && o.RestoredUID != "" && o.App != nil &&
			appIsRestored(o.App) && o.App.UID == o.RestoredUID
		return applies && st.Action != ActSucceed
	}},
	{"a refusal is Failed with a reason that names the cause", func(_ Observation, st Plan) bool {
		return st.Action == ActFail && (!failureReasons[st.Show.Reason] || st.Show.Phase != backupv1alpha1.RestoreFailed)
	}},
	{"a backup of another installation is refused", func(o Observation, st Plan) bool {
		applies := foreignContentOfASucceededBackup(o) && !ofAnotherNamespace(o) && !o.Phase.Finished() &&
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
		applies := !o.Phase.Finished() && o.Pinned != "" && o.RestoredUID == "" && backupUsable(o) &&
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
	checked := 0
	failures := map[string]int{}
	eachObservation(func(o Observation) {
		checked++
		st := Make(o)
		for _, p := range promises {
			if !p.broken(o, st) {
				continue
			}
			if failures[p.rule] < 3 {
				t.Errorf("%s\nobservation: %s\nplan: %+v", p.rule, describe(o), st)
			}
			failures[p.rule]++
		}
	})
	t.Logf("%d observations checked against %d promises", checked, len(promises))
	for rule, n := range failures {
		t.Logf("%d observations break %q", n, rule)
	}
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
		Phase: w.phase, Pinned: w.pinned, RestoredUID: w.restoredUID}
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
		w.phase = st.Show.Phase
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
