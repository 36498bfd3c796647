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

// Package restoreplan decides a Restore's next step from an Observation
// alone: which read the pass makes next (a Need), or, once it has read
// enough, what it does (an Action), what the status shows (Show) and when
// the Restore comes back (Wake). It calls nothing, reads no clock and knows
// no client: it imports the standard library and the API's types only
// (TestThePlannerImportsNoClientAndNoClock). The restore package runs the
// loop: it plans, makes the read the plan needs, and plans again, until the
// plan names an action, which it makes. So every choice a pass makes (pin
// this backup, create, take a MyApp for its own, replace, refuse, wait,
// succeed) is made here, and plan_test.go checks the promises over every
// observation of a bounded space and over seeded sequences of passes with
// crashes, without a control plane (make test-unit).
package restoreplan

import (
	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// Need is what a plan must have read before it decides.
type Need int

const (
	// NeedNothing: the plan has decided.
	NeedNothing Need = iota
	// NeedSource resolves spec.source to a backup; only before one is
	// chosen (status.backup).
	NeedSource
	// NeedBackup reads the chosen backup from the backup service.
	NeedBackup
	// NeedContent reads and decodes the chosen backup's content.
	NeedContent
	// NeedApp reads the target MyApp from the API server.
	NeedApp
	// NeedCandidate reads and decodes the content of one candidate of the
	// storage source, the one Plan.Candidate names.
	NeedCandidate
)

// Action is what a pass does once its plan needs no further read.
type Action int

const (
	// ActNothing: the Restore is finished; the pass changes nothing.
	ActNothing Action = iota
	// ActPin writes the chosen backup to status.backup, and nothing else:
	// the status write is the pass's only write. The next pass goes on from
	// there.
	ActPin
	// ActWait writes nothing but the status and comes back at the Wake.
	ActWait
	// ActCreate creates the MyApp from the backup, marked with the restore.
	ActCreate
	// ActAdopt takes the MyApp that exists, marked by this Restore, for the
	// one this Restore created before its status could say so.
	ActAdopt
	// ActReplace replaces the existing MyApp's spec with the backed-up one.
	ActReplace
	// ActSucceed and ActFail finish the Restore.
	ActSucceed
	ActFail
)

// Wake says what a Restore that is not finished polls: when it comes back.
type Wake int

const (
	// WakeNone: no poll; the Restore is finished, or an event brings it
	// back.
	WakeNone Wake = iota
	// WakeBackupPoll: a backup that is still running, after the backup
	// poll interval.
	WakeBackupPoll
	// WakeAppPoll: a MyApp, until it is Ready or gone, after the MyApp poll
	// interval.
	WakeAppPoll
)

// BackupPhase is a backup's phase as the backup service reports it.
type BackupPhase int

const (
	// BackupRunning: not finished yet, or a phase this operator does not
	// know, which it treats as not finished.
	BackupRunning BackupPhase = iota
	// BackupSucceeded: the backup holds content to restore.
	BackupSucceeded
	// BackupFailed: the backup will never hold content.
	BackupFailed
)

// Observation is what one pass knows of a Restore. The fields up to Source
// come from the Restore and the Reconciler; each read the plan needs fills
// one of the rest, nil until it is made.
type Observation struct {
	// RestoreUID is the Restore's UID, the mark on a MyApp it created.
	RestoreUID string
	// OwnerID is this installation's owner ID.
	OwnerID string
	// Namespace is the Restore's namespace, the only one whose backups it
	// restores; SourceNamespace is spec.source.storage.namespace ("" when
	// not set), SourceApp spec.source.storage.appName.
	Namespace, SourceNamespace, SourceApp string
	// IDNamespace is the namespace spec.source.backupID names by its form
	// alone, as the backup provider reads it (s3: <namespace>/<uid>/<name>);
	// "" when the provider's IDs do not say.
	IDNamespace string
	// Policy is spec.target.existingApp.
	Policy backupv1alpha1.ExistingAppPolicy
	// Phase, Pinned and RestoredUID are status.phase, status.backup.id
	// ("" while none is chosen) and status.restoredAppUID, as the pass read
	// them.
	Phase       backupv1alpha1.RestorePhase
	Pinned      string
	RestoredUID string
	// PastDeadline says spec.timeout has passed since status.startTime, as
	// the restore package measures it on the manager's clock.
	PastDeadline bool

	Source  *SourceRead
	Backup  *BackupRead
	Content *ContentRead
	App     *AppRead
}

// SourceRead is what resolving spec.source found: a backup (Found), or the
// reason none can be restored (Refusal).
type SourceRead struct {
	Found bool
	// Phase is the phase of the backup found.
	Phase BackupPhase
	// Refusal is the Failed reason when nothing was found:
	// BackupConfigNotFound, NoSucceededBackup, NoBackupFound or
	// BackupNotFound.
	Refusal string
	// Namespace is the namespace the backup's labels say it was taken in,
	// "" when they do not say (its content will).
	Namespace string
	// Storage says the source is spec.source.storage: Candidates are the
	// succeeded backups whose labels may be of its MyApp, newest first, and
	// the plan chooses among them (Found and Phase are not used).
	Storage    bool
	Candidates []Candidate
}

// Candidate is one backup the storage source may restore, as the backup
// service lists it, and its content once read.
type Candidate struct {
	ID string
	// OwnerID and Namespace are the owner ID and the namespace the backup
	// service shows for it without its content (its labels
	// backup.myapp.dev/owner-id and backup.myapp.dev/namespace; with the
	// s3 provider, the key it is filed under), "" where it shows none.
	OwnerID, Namespace string
	// Content is what reading its content found, nil until read.
	Content *ContentRead
}

// BackupRead is the chosen backup as the backup service reports it now.
type BackupRead struct {
	Found bool
	Phase BackupPhase
}

// ContentRead is the chosen backup's content: Problem is the Failed
// reason of content that cannot be restored (BackupHasNoContent,
// UnsupportedBackupFormat, InvalidBackupContent), "" for content that was
// read, in which case OwnerID is the owner ID it was taken under.
type ContentRead struct {
	Problem string
	OwnerID string
	// Namespace and Name are the backed-up MyApp's, as the content says.
	Namespace, Name string
}

// AppRead is the target MyApp as the API server has it.
type AppRead struct {
	Exists bool
	UID    string
	// MarkedBy is its backup.myapp.dev/restore-uid annotation: the Restore
	// that created it, "" for a MyApp no Restore created.
	MarkedBy string
	Deleting bool
	// Generation and ObservedGeneration are the MyApp's metadata.generation
	// and status.observedGeneration.
	Generation, ObservedGeneration int64
	// Ready is the Ready condition's status being True, at ReadyGeneration.
	Ready           bool
	ReadyGeneration int64
	// DNSState and DNSName are status.dns.state and status.dns.name ("" for
	// no status.dns); Host is spec.host.
	DNSState      appsv1alpha1.DNSRecordState
	DNSName, Host string
	// Suspended says spec.suspend is set and the Ready condition's reason
	// is Suspended: the MyApp reports itself suspended, which it stays
	// until someone resumes it, never Ready.
	Suspended bool
	// HostConflict says the DNSReady condition's reason is HostConflict at
	// the MyApp's generation: another owner holds spec.host's record.
	HostConflict bool
	// RequestedAt and HandledAt are its reconcile.myapp.dev/requested-at
	// annotation and status.lastHandledReconcileAt. A replace that marks
	// the MyApp as restored asks with ReadRequest for a read of its DNS
	// record: a conflict judged before that read was made was judged
	// without the mark, which may make the record the MyApp's own.
	RequestedAt, HandledAt string
	// BusyWith names another Restore in progress that writes this MyApp
	// before this one: one that wrote it already (its mark is on it, or its
	// status says so), or one created earlier. "" when none.
	BusyWith string
}

// Show is what the status shows once the pass ends: the phase, and the
// Ready reason the conditions and their message derive from.
type Show struct {
	Phase  backupv1alpha1.RestorePhase
	Reason string
}

// Plan is a plan's decision: a read to make (Need), or an action with what
// it shows and when the Restore comes back.
type Plan struct {
	Need   Need
	Action Action
	// Pin says status.backup is written from the backup the source
	// resolved to, in this pass's status write; only ever before any
	// backup was chosen.
	Pin  bool
	Show Show
	Wake Wake
	// Candidate names, for NeedCandidate, the storage candidate whose
	// content to read; for a plan that chose among the candidates, the one
	// chosen.
	Candidate string
	// Foreign counts the storage candidates passed over as another
	// installation's; Unchecked names, newest first, those passed over
	// because whose they are cannot be checked.
	Foreign   int
	Unchecked []string
}

// Make decides a pass's next step.
func Make(o Observation) Plan {
	switch {
	case o.Phase.Finished():
		// A finished Restore is a record: it reads and writes nothing more.
		return Plan{Action: ActNothing, Show: Show{Phase: o.Phase}}
	case o.Pinned == "" && (o.SourceNamespace != "" && o.SourceNamespace != o.Namespace ||
		o.IDNamespace != "" && o.IDNamespace != o.Namespace):
		// Refused before anything is read: nothing of another namespace's
		// backups is listed or read, let alone written to status.
		return Refuse(backupv1alpha1.BackupOfAnotherNamespaceReason)
	case o.PastDeadline && (o.Pinned == "" || o.RestoredUID == ""):
		// Nothing written yet, and nothing will be: the deadline is the
		// end whatever a read would find.
		return Refuse(backupv1alpha1.RestoreTimedOutReason)
	case o.Pinned == "" && o.Source != nil && o.Source.Storage:
		return planStorage(o)
	case o.Pinned == "":
		return planChoice(o)
	case o.RestoredUID == "":
		return planWrite(o)
	default:
		return planFollow(o)
	}
}

// planChoice decides a Restore that has chosen no backup yet. Its only
// write is the choice itself (with a refusal, when the backup chosen
// cannot be restored): nothing is written to a MyApp in the pass that
// chooses, so the choice is stored before anything it leads to, and a
// crash after it never leads a later pass to choose again, differently.
//
// A backup is pinned only once its labels or its content show it was taken
// in the Restore's namespace: status.backup never describes a backup of
// another namespace, nor one that might be. A running backup whose labels
// say nothing (its content cannot be read until it has succeeded) is waited
// for without being pinned.
func planChoice(o Observation) Plan {
	contentRead := o.Content != nil && o.Content.Problem == ""
	ownNamespace := o.Source != nil && o.Source.Namespace != "" && o.Source.Namespace == o.Namespace ||
		contentRead && o.Content.Namespace == o.Namespace
	pinIfOwn := func(p Plan) Plan {
		p.Pin = ownNamespace
		return p
	}
	switch {
	case o.Source == nil:
		return Plan{Need: NeedSource}
	case !o.Source.Found:
		// Nothing was chosen, so nothing is pinned: the condition says what
		// the source named.
		return Refuse(o.Source.Refusal)
	case o.Source.Namespace != "" && o.Source.Namespace != o.Namespace,
		o.Content != nil && o.Content.Problem == "" && o.Content.Namespace != o.Namespace:
		// Not pinned either: status.backup would describe another
		// namespace's backup to whoever reads this one.
		return Refuse(backupv1alpha1.BackupOfAnotherNamespaceReason)
	case o.Source.Phase == BackupFailed:
		return pinIfOwn(Refuse(backupv1alpha1.BackupNotSucceededReason))
	case o.Source.Phase != BackupSucceeded && !ownNamespace:
		return wait(backupv1alpha1.RestorePending, backupv1alpha1.BackupRunningReason, WakeBackupPoll)
	case o.Source.Phase != BackupSucceeded:
		return Plan{Action: ActPin, Pin: true,
			Show: Show{Phase: backupv1alpha1.RestorePending, Reason: backupv1alpha1.BackupRunningReason}, Wake: WakeBackupPoll}
	case o.Content == nil:
		return Plan{Need: NeedContent}
	case o.Content.Problem != "":
		return pinIfOwn(Refuse(o.Content.Problem))
	case o.Content.OwnerID != o.OwnerID:
		return pinned(Refuse(backupv1alpha1.ForeignBackupReason))
	}
	return Plan{Action: ActPin, Pin: true,
		Show: Show{Phase: backupv1alpha1.RestorePending, Reason: backupv1alpha1.RestorePendingReason}}
}

// planStorage decides a storage source's choice among its candidates: the
// newest one of the backed-up MyApp this installation can be shown to have
// taken, as chooseAmong finds it. The choice is pinned, with the refusal of
// content that cannot be restored; none found fails the Restore with
// NoBackupFound. Either way the plan names the candidates passed over
// because whose they are cannot be checked, and counts those of other
// installations.
func planStorage(o Observation) Plan {
	c := chooseAmong(o)
	note := func(p Plan) Plan {
		p.Foreign, p.Unchecked = c.foreign, c.unchecked
		if c.chosen != nil {
			p.Candidate = c.chosen.ID
		}
		return p
	}
	switch {
	case c.read != "":
		return Plan{Need: NeedCandidate, Candidate: c.read}
	case c.chosen == nil:
		return note(Refuse(backupv1alpha1.NoBackupFoundReason))
	case c.chosen.Content.Problem != "":
		return note(pinned(Refuse(c.chosen.Content.Problem)))
	}
	return note(Plan{Action: ActPin, Pin: true,
		Show: Show{Phase: backupv1alpha1.RestorePending, Reason: backupv1alpha1.RestorePendingReason}})
}

// storageChoice is where chooseAmong got to: a candidate whose content it
// must read first, or the one it chose (nil for none), with the candidates
// it passed over because their owner cannot be checked and how many it
// passed over as another installation's.
type storageChoice struct {
	read      string
	chosen    *Candidate
	unchecked []string
	foreign   int
}

// chooseAmong goes through the storage candidates newest first. What the
// backup service shows without the content is believed first: a candidate
// it shows as another installation's is passed over unread. A candidate's
// content, once read, decides the rest: another MyApp's is passed over
// (labels that said nothing, or lied), and so is another installation's. A
// candidate whose content cannot be read is chosen only when the service
// shows it is this installation's, of this namespace, so the Restore fails
// naming it rather than silently restore an older state; otherwise whose
// it is cannot be checked (another installation sharing the service, on an
// operator version that writes no owner ID label, could have taken it), and
// it is passed over and named.
func chooseAmong(o Observation) storageChoice {
	var c storageChoice
	for i := range o.Source.Candidates {
		cand := &o.Source.Candidates[i]
		switch {
		case cand.OwnerID != "" && cand.OwnerID != o.OwnerID:
			c.foreign++
			continue
		case cand.Content == nil:
			c.read = cand.ID
			return c
		case cand.Content.Problem != "" && cand.OwnerID == o.OwnerID && cand.Namespace == o.Namespace:
			c.chosen = cand
			return c
		case cand.Content.Problem != "":
			c.unchecked = append(c.unchecked, cand.ID)
			continue
		case cand.Content.Namespace != o.Namespace || cand.Content.Name != o.SourceApp:
			continue
		case cand.Content.OwnerID != o.OwnerID:
			c.foreign++
			continue
		}
		c.chosen = cand
		return c
	}
	return c
}

// planWrite decides a Restore whose backup is chosen and that has written
// no MyApp yet, as far as its status says: it checks the backup again
// (it may have been deleted or be still running), then the target.
func planWrite(o Observation) Plan {
	switch {
	case o.Backup == nil:
		return Plan{Need: NeedBackup}
	case !o.Backup.Found:
		return Refuse(backupv1alpha1.BackupNotFoundReason)
	case o.Backup.Phase == BackupFailed:
		return Refuse(backupv1alpha1.BackupNotSucceededReason)
	case o.Backup.Phase != BackupSucceeded:
		return wait(backupv1alpha1.RestorePending, backupv1alpha1.BackupRunningReason, WakeBackupPoll)
	case o.Content == nil:
		return Plan{Need: NeedContent}
	case o.Content.Problem != "":
		return Refuse(o.Content.Problem)
	case o.Content.OwnerID != o.OwnerID:
		return Refuse(backupv1alpha1.ForeignBackupReason)
	case o.Content.Namespace != o.Namespace:
		return Refuse(backupv1alpha1.BackupOfAnotherNamespaceReason)
	case o.App == nil:
		return Plan{Need: NeedApp}
	case o.App.Exists && o.RestoreUID != "" && o.App.MarkedBy == o.RestoreUID:
		// Created by this Restore in a pass that could not record it.
		return written(ActAdopt)
	case o.App.BusyWith != "":
		// Another Restore writes this MyApp first: this one waits until it
		// has finished, then finds the MyApp it left.
		return wait(backupv1alpha1.RestorePending, backupv1alpha1.TargetBusyReason, WakeAppPoll)
	case !o.App.Exists:
		return written(ActCreate)
	case o.App.Deleting:
		// Neither a create nor a replace would last: wait until it is gone.
		return wait(backupv1alpha1.RestorePending, backupv1alpha1.TargetBeingDeletedReason, WakeAppPoll)
	case o.Policy == backupv1alpha1.ExistingAppReplace:
		return written(ActReplace)
	}
	return Refuse(backupv1alpha1.TargetExistsReason)
}

// planFollow decides a Restore that wrote its MyApp: it succeeds once that
// MyApp, the same incarnation, is restored as backed up (Ready, or
// suspended), fails when it cannot become Ready while another holds its
// host, and fails at its deadline otherwise.
func planFollow(o Observation) Plan {
	switch {
	case o.App == nil:
		return Plan{Need: NeedApp}
	case !o.App.Exists || o.App.UID != o.RestoredUID:
		return Refuse(backupv1alpha1.RestoredAppDeletedReason)
	case restored(*o.App) || o.App.Suspended:
		// A suspended MyApp is never Ready: reporting itself Suspended is
		// how it is restored as a backup of a suspended MyApp holds it.
		return Plan{Action: ActSucceed,
			Show: Show{Phase: backupv1alpha1.RestoreSucceeded, Reason: backupv1alpha1.RestoreSucceededReason}}
	case o.App.HostConflict && !o.readPending():
		// A conflict judged before the MyApp read its record with this
		// Restore's mark may be over once it has: the replace asked for
		// that read, which comes at once.
		return Refuse(backupv1alpha1.HostConflictReason)
	case o.PastDeadline:
		return Refuse(backupv1alpha1.RestoreTimedOutReason)
	}
	return wait(backupv1alpha1.RestoreRestoring, backupv1alpha1.WaitingForAppReason, WakeAppPoll)
}

// readPending reports whether the MyApp has not yet made the read of its
// DNS record this Restore's replace asked for with its mark.
func (o Observation) readPending() bool {
	request := ReadRequest(o.RestoreUID)
	return o.App.RequestedAt == request && o.App.HandledAt != request
}

// restored reports whether a MyApp is what a Restore waits for: its
// controller has looked at its current spec and found it Ready, and its
// DNS record for spec.host is active. Ready alone says the record is
// active too, but the record is what a restore is for, so it is checked
// on its own.
func restored(a AppRead) bool {
	return a.ObservedGeneration == a.Generation && a.Ready && a.ReadyGeneration == a.Generation &&
		a.DNSState == appsv1alpha1.DNSRecordActive && a.DNSName == a.Host
}

// Refuse is the plan of a Restore that fails with reason: nothing is
// written but the status, and the Restore is not retried. The restore
// package uses it too, for a MyApp the API server refuses as invalid.
func Refuse(reason string) Plan {
	return Plan{Action: ActFail, Show: Show{Phase: backupv1alpha1.RestoreFailed, Reason: reason}}
}

func pinned(p Plan) Plan {
	p.Pin = true
	return p
}

func wait(phase backupv1alpha1.RestorePhase, reason string, wake Wake) Plan {
	return Plan{Action: ActWait, Show: Show{Phase: phase, Reason: reason}, Wake: wake}
}

// written is the plan of a pass that writes the MyApp: the Restore is then
// Restoring, waiting for it.
func written(act Action) Plan {
	return Plan{Action: act, Show: Show{Phase: backupv1alpha1.RestoreRestoring, Reason: backupv1alpha1.WaitingForAppReason},
		Wake: WakeAppPoll}
}

// ReadRequest is the reconcile.myapp.dev/requested-at value the replace of
// the Restore with restoreUID writes with its restored-from-uid mark: the
// MyApp's controller reads its DNS record on its next pass, with the mark,
// and shows the value in status.lastHandledReconcileAt once it has.
func ReadRequest(restoreUID string) string { return "restore-" + restoreUID }
