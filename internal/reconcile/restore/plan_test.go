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

package restore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// The plan's promises, checked over every observation of a bounded space:
// each field of the observation takes every value that matters, the
// combinations that cannot happen included, so a promise holds whatever a
// pass read. The promises are stated from the issue, not from the plan's
// code: which backup may be written, when a MyApp may be written and which,
// when a Restore succeeds.

const (
	thisRestore  types.UID = "restore-uid"
	otherRestore types.UID = "other-restore-uid"
	ownOwnerID             = "cluster-a"
	otherOwnerID           = "cluster-b"
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
func appStates() []*appRead {
	out := make([]*appRead, 0, 2+2*3*2*7+4)
	out = append(out, nil, &appRead{})
	// Another Restore in progress writes the target first: with no MyApp
	// yet, or with one carrying no mark, this Restore's or another's.
	out = append(out, &appRead{busyWith: "earlier"})
	for _, mark := range []types.UID{"", thisRestore, otherRestore} {
		a := readinessStates()[1]
		a.exists, a.uid, a.markedBy, a.busyWith = true, "app-1", mark, "earlier"
		out = append(out, &a)
	}
	for _, uid := range []types.UID{"app-1", "app-2"} {
		for _, mark := range []types.UID{"", thisRestore, otherRestore} {
			for _, deleting := range []bool{false, true} {
				for _, ready := range readinessStates() {
					a := ready
					a.exists, a.uid, a.markedBy, a.deleting = true, uid, mark, deleting
					out = append(out, &a)
				}
			}
		}
	}
	return out
}

// readinessStates are the raw readiness fields of a MyApp: restored, and
// one step short of it in each way.
func readinessStates() []appRead {
	done := appRead{generation: 2, observedGeneration: 2, ready: true, readyGeneration: 2,
		dnsState: appsv1alpha1.DNSRecordActive, dnsName: "web.example.com", host: "web.example.com"}
	changes := []func(*appRead){
		func(a *appRead) { a.observedGeneration = 1 },
		func(a *appRead) { a.ready = false },
		func(a *appRead) { a.readyGeneration = 1 },
		func(a *appRead) { a.dnsState = appsv1alpha1.DNSRecordPending },
		func(a *appRead) { a.dnsState = "" },
		func(a *appRead) { a.dnsName = "old.example.com" },
	}
	out := make([]appRead, 0, 1+len(changes))
	out = append(out, done)
	for _, change := range changes {
		a := done
		change(&a)
		out = append(out, a)
	}
	return out
}

// eachObservation calls f with every observation of the bounded space.
func eachObservation(f func(observation)) {
	phases := []backupv1alpha1.RestorePhase{"", backupv1alpha1.RestorePending, backupv1alpha1.RestoreRestoring,
		backupv1alpha1.RestoreSucceeded, backupv1alpha1.RestoreFailed}
	sources := []*sourceRead{nil,
		{refusal: backupv1alpha1.BackupConfigNotFoundReason}, {refusal: backupv1alpha1.NoBackupFoundReason},
		{found: true, phase: backup.PhaseRunning}, {found: true, phase: backup.PhaseSucceeded},
		{found: true, phase: backup.PhaseFailed},
		{found: true, phase: backup.PhaseRunning, namespace: otherNamespace},
		{found: true, phase: backup.PhaseSucceeded, namespace: otherNamespace},
		{found: true, phase: backup.PhaseSucceeded, namespace: ownNamespace}}
	backups := []*backupRead{nil, {}, {found: true, phase: backup.PhaseRunning},
		{found: true, phase: backup.PhaseSucceeded}, {found: true, phase: backup.PhaseFailed}}
	contents := []*contentRead{nil, {problem: backupv1alpha1.BackupHasNoContentReason},
		{problem: backupv1alpha1.UnsupportedBackupFormatReason}, {ownerID: ownOwnerID, namespace: ownNamespace},
		{ownerID: otherOwnerID, namespace: ownNamespace}, {ownerID: ownOwnerID, namespace: otherNamespace}}
	apps := appStates()
	for _, phase := range phases {
		for _, pinned := range []string{"", "b1"} {
			for _, restoredUID := range []types.UID{"", "app-1"} {
				for _, policy := range []backupv1alpha1.ExistingAppPolicy{backupv1alpha1.ExistingAppFail, backupv1alpha1.ExistingAppReplace} {
					for _, srcNS := range []string{"", ownNamespace, otherNamespace} {
						for _, src := range sources {
							for _, b := range backups {
								for _, c := range contents {
									for _, a := range apps {
										f(observation{restoreUID: thisRestore, ownerID: ownOwnerID, policy: policy,
											namespace: ownNamespace, sourceNamespace: srcNS,
											phase: phase, pinned: pinned, restoredUID: restoredUID,
											source: src, backup: b, content: c, app: a})
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
func backupUsable(o observation) bool {
	var succeeded bool
	if o.pinned == "" {
		succeeded = o.source != nil && o.source.found && o.source.phase == backup.PhaseSucceeded
	} else {
		succeeded = o.backup != nil && o.backup.found && o.backup.phase == backup.PhaseSucceeded
	}
	return succeeded && o.content != nil && o.content.problem == "" && o.content.ownerID == ownOwnerID &&
		o.content.namespace == ownNamespace
}

// ofAnotherNamespace says the observation shows the Restore asked for, or
// led to, a backup of another namespace: spec.source.storage.namespace
// names one, or the backup's labels or content say it was taken in one.
// The source is only resolved before a backup is chosen, so what spec and
// labels say counts only then; the content, always.
func ofAnotherNamespace(o observation) bool {
	return o.pinned == "" && (o.sourceNamespace == otherNamespace ||
		o.source != nil && o.source.found && o.source.namespace == otherNamespace) ||
		o.content != nil && o.content.problem == "" && o.content.namespace == otherNamespace
}

// appIsRestored is the "Ready with its DNS record active", stated on
// the raw fields: the controller has seen the current generation, Ready is
// True for it, and the record for spec.host is Active.
func appIsRestored(a *appRead) bool {
	return a.exists && a.generation == a.observedGeneration && a.ready && a.readyGeneration == a.generation &&
		a.dnsState == appsv1alpha1.DNSRecordActive && a.dnsName == a.host
}

// promise is one rule every plan keeps: broken reports whether the step a
// plan took for an observation breaks it.
type promise struct {
	rule   string
	broken func(o observation, st step) bool
}

// writesApp says a step writes a MyApp.
func writesApp(st step) bool {
	return st.act == actCreate || st.act == actAdopt || st.act == actReplace
}

// liveTarget says the observation shows a MyApp of the target's name that
// lives and is not the Restore's own.
func liveTarget(o observation) bool {
	return o.app != nil && o.app.exists && !o.app.deleting && o.app.markedBy != thisRestore
}

// foreignContentOfASucceededBackup says the observation holds content of a
// succeeded backup that another installation took (content is only ever
// read of a succeeded backup).
func foreignContentOfASucceededBackup(o observation) bool {
	if o.content == nil || o.content.problem != "" || o.content.ownerID == ownOwnerID {
		return false
	}
	return o.pinned == "" && o.source != nil && o.source.found && o.source.phase == backup.PhaseSucceeded ||
		o.pinned != "" && o.backup != nil && o.backup.found && o.backup.phase == backup.PhaseSucceeded
}

var promises = []promise{
	{"a finished Restore reads and writes nothing", func(o observation, st step) bool {
		return o.phase.Finished() && (st.read != readNothing || st.act != actNothing || st.pin)
	}},
	{"a backup is chosen once: a Restore with one never chooses again", func(o observation, st step) bool {
		return st.pin && o.pinned != ""
	}},
	{"no MyApp is written before the choice of backup is in the status", func(o observation, st step) bool {
		return writesApp(st) && o.pinned == ""
	}},
	{"a MyApp is written only from a succeeded backup of this installation whose content was read", func(o observation, st step) bool {
		return writesApp(st) && !backupUsable(o)
	}},
	{"a MyApp is created only when the API server showed none", func(o observation, st step) bool {
		return st.act == actCreate && (o.app == nil || o.app.exists)
	}},
	{"only a MyApp carrying this Restore's mark is taken for its own", func(o observation, st step) bool {
		return st.act == actAdopt && (o.app == nil || !o.app.exists || o.app.markedBy != thisRestore)
	}},
	{"a MyApp's spec is replaced only with existingApp Replace, and never while it is being deleted", func(o observation, st step) bool {
		return st.act == actReplace && (o.policy != backupv1alpha1.ExistingAppReplace || o.app == nil || o.app.deleting)
	}},
	{"a Restore writes one MyApp, once", func(o observation, st step) bool {
		return writesApp(st) && o.restoredUID != ""
	}},
	{"with existingApp Fail, a live MyApp that is not the Restore's own fails it with TargetExists", func(o observation, st step) bool {
		applies := o.policy == backupv1alpha1.ExistingAppFail && !o.phase.Finished() && o.pinned != "" &&
			o.restoredUID == "" && backupUsable(o) && liveTarget(o) && o.app.busyWith == ""
		return applies && (st.act != actFail || st.reason != backupv1alpha1.TargetExistsReason)
	}},
	{"a Restore succeeds only once the MyApp it wrote is Ready with its DNS record active", func(o observation, st step) bool {
		return st.act == actSucceed && (o.app == nil || o.app.uid != o.restoredUID || !appIsRestored(o.app))
	}},
	{"a Restore whose MyApp is restored succeeds", func(o observation, st step) bool {
		applies := !o.phase.Finished() && o.pinned != "" && o.restoredUID != "" && o.app != nil &&
			appIsRestored(o.app) && o.app.uid == o.restoredUID
		return applies && st.act != actSucceed
	}},
	{"a refusal is Failed with a reason that names the cause", func(_ observation, st step) bool {
		return st.act == actFail && (!failureReasons[st.reason] || st.phase != backupv1alpha1.RestoreFailed)
	}},
	{"a backup of another installation is refused", func(o observation, st step) bool {
		applies := foreignContentOfASucceededBackup(o) && !ofAnotherNamespace(o) && !o.phase.Finished() &&
			o.restoredUID == "" && st.read == readNothing
		return applies && (st.act != actFail || st.reason != backupv1alpha1.ForeignBackupReason)
	}},
	{"a MyApp is written only from a backup of the Restore's own namespace", func(o observation, st step) bool {
		return writesApp(st) && ofAnotherNamespace(o)
	}},
	{"a backup of another namespace is never pinned", func(o observation, st step) bool {
		return st.pin && ofAnotherNamespace(o)
	}},
	{"storage.namespace naming another namespace fails with BackupOfAnotherNamespace before anything is read", func(o observation, st step) bool {
		applies := o.sourceNamespace == otherNamespace && !o.phase.Finished() && o.pinned == ""
		return applies && (st.act != actFail || st.reason != backupv1alpha1.BackupOfAnotherNamespaceReason || st.read != readNothing)
	}},
	{"a MyApp another Restore writes first is not written, unless this Restore's own mark is on it", func(o observation, st step) bool {
		return writesApp(st) && o.app != nil && o.app.busyWith != "" && st.act != actAdopt
	}},
	{"a Restore waiting for another to finish is in progress, not failed", func(o observation, st step) bool {
		applies := !o.phase.Finished() && o.pinned != "" && o.restoredUID == "" && backupUsable(o) &&
			o.app != nil && o.app.busyWith != "" && o.app.markedBy != thisRestore
		return applies && (st.act != actWait || st.reason != backupv1alpha1.TargetBusyReason)
	}},
	{"a waiting Restore is in progress and polls", func(_ observation, st step) bool {
		return st.act == actWait && (st.poll == pollNothing || st.phase.Finished())
	}},
	{"a plan never asks for a read it has, so a pass ends", func(o observation, st step) bool {
		return st.read != readNothing && alreadyRead(o, st.read)
	}},
	{"the source is resolved only before a backup is chosen", func(o observation, st step) bool {
		return st.read == readSource && o.pinned != ""
	}},
	{"every decision says the phase", func(o observation, st step) bool {
		return st.read == readNothing && !o.phase.Finished() && st.phase == ""
	}},
}

func TestPlanPromises(t *testing.T) {
	checked := 0
	failures := map[string]int{}
	eachObservation(func(o observation) {
		checked++
		st := plan(o)
		for _, p := range promises {
			if !p.broken(o, st) {
				continue
			}
			if failures[p.rule] < 3 {
				t.Errorf("%s\nobservation: %s\nstep: %+v", p.rule, describe(o), st)
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
func alreadyRead(o observation, k readKind) bool {
	switch k {
	case readSource:
		return o.source != nil
	case readBackup:
		return o.backup != nil
	case readContent:
		return o.content != nil
	case readApp:
		return o.app != nil
	}
	return false
}

func describe(o observation) string {
	s := fmt.Sprintf("phase=%q pinned=%q restored=%q policy=%s", o.phase, o.pinned, o.restoredUID, o.policy)
	if o.source != nil {
		s += fmt.Sprintf(" source=%+v", *o.source)
	}
	if o.backup != nil {
		s += fmt.Sprintf(" backup=%+v", *o.backup)
	}
	if o.content != nil {
		s += fmt.Sprintf(" content=%+v", *o.content)
	}
	if o.app != nil {
		s += fmt.Sprintf(" app=%+v", *o.app)
	}
	return s
}

// world is what the passes of one Restore act on in the sequence test: the
// Restore's status, the backups of its BackupConfig, and the MyApp.
type world struct {
	// status, as the last status write that got through left it.
	phase       backupv1alpha1.RestorePhase
	pinned      string
	restoredUID types.UID
	// backups lists the succeeded backups, oldest first; newer ones land
	// while the Restore runs.
	backups []string
	// app is the target MyApp, nil when there is none; creates counts the
	// MyApps the Restore created.
	app     *appRead
	creates int
	// created is the UID the next create gives.
	nextUID int
	// existedBefore is the UID of a MyApp that was there before the
	// Restore started (none: "").
	existedBefore types.UID
}

// pass runs one reconcile pass of the Restore over w: it plans, answers the
// reads from w, and makes the action. crashAt says where the manager dies:
// 0 never, 1 after the MyApp write (before the status write), 2 before
// anything is written.
func (w *world) pass(crashAt int) {
	o := observation{restoreUID: thisRestore, ownerID: ownOwnerID, policy: backupv1alpha1.ExistingAppFail,
		phase: w.phase, pinned: w.pinned, restoredUID: w.restoredUID}
	var chosen string
	for range maxReadsPerPass {
		st := plan(o)
		switch st.read {
		case readSource:
			chosen = w.backups[len(w.backups)-1]
			o.source = &sourceRead{found: true, phase: backup.PhaseSucceeded}
			continue
		case readBackup:
			o.backup = &backupRead{found: true, phase: backup.PhaseSucceeded}
			continue
		case readContent:
			o.content = &contentRead{ownerID: ownOwnerID}
			continue
		case readApp:
			if w.app == nil {
				o.app = &appRead{}
			} else {
				a := *w.app
				o.app = &a
			}
			continue
		}
		if crashAt == 2 {
			return
		}
		switch st.act {
		case actCreate:
			w.nextUID++
			w.app = &appRead{exists: true, uid: types.UID(fmt.Sprintf("app-%d", w.nextUID)), markedBy: thisRestore,
				generation: 1, host: "web.example.com"}
			w.creates++
			if crashAt == 1 {
				return
			}
			w.restoredUID = w.app.uid
		case actAdopt, actReplace:
			if crashAt == 1 {
				return
			}
			w.restoredUID = w.app.uid
		}
		if st.pin {
			w.pinned = chosen
		}
		w.phase = st.phase
		return
	}
	panic("the plan did not end")
}

// settle is the MyApp controller: the MyApp becomes Ready with its record
// active.
func (w *world) settle() {
	if w.app != nil {
		w.app.observedGeneration, w.app.ready, w.app.readyGeneration = w.app.generation, true, w.app.generation
		w.app.dnsState, w.app.dnsName = appsv1alpha1.DNSRecordActive, w.app.host
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
			app: &appRead{exists: true, uid: "app-0", generation: 1, host: "web.example.com"}}
		for i := 0; i < 20 && !w.phase.Finished(); i++ {
			w.pass(rng.IntN(3))
		}
		for i := 0; i < 3 && !w.phase.Finished(); i++ {
			w.pass(0)
		}
		if w.creates != 0 || w.app.uid != "app-0" || w.restoredUID != "" {
			t.Fatalf("seed %d: the MyApp that was there was written: creates %d, app %+v, restored %q", seed, w.creates, *w.app, w.restoredUID)
		}
		if w.phase != backupv1alpha1.RestoreFailed {
			t.Fatalf("seed %d: the Restore ended %q, want Failed", seed, w.phase)
		}
	}
}
