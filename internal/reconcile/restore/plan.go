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
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// This file decides a Restore's next step from an observation alone: which
// read the pass makes next, or, once it has read enough, what it writes and
// what the status says. It calls nothing, reads no clock and knows no
// client. restore.go runs the loop: it plans, makes the read the plan asks
// for, and plans again, until the plan names an action, which apply.go
// makes. So every choice a pass makes (pin this backup, create, take a MyApp
// for its own, replace, refuse, wait, succeed) is made here, and
// plan_test.go checks the promises over every observation of a bounded
// space.

// readKind names the read a plan asks for.
type readKind int

const (
	// readNothing: the plan has decided.
	readNothing readKind = iota
	// readSource resolves spec.source to a backup; only before one is
	// chosen (status.backup).
	readSource
	// readBackup reads the chosen backup from the backup service.
	readBackup
	// readContent reads and decodes the chosen backup's content.
	readContent
	// readApp reads the target MyApp from the API server.
	readApp
)

// action names what a pass does once its plan needs no further read.
type action int

const (
	// actNothing: the Restore is finished; the pass changes nothing.
	actNothing action = iota
	// actPin writes the chosen backup to status.backup, and nothing else:
	// the status write is the pass's only write. The next pass goes on from
	// there.
	actPin
	// actWait writes nothing but the status and comes back after a poll.
	actWait
	// actCreate creates the MyApp from the backup, marked with the restore.
	actCreate
	// actAdopt takes the MyApp that exists, marked by this Restore, for the
	// one this Restore created before its status could say so.
	actAdopt
	// actReplace replaces the existing MyApp's spec with the backed-up one.
	actReplace
	// actSucceed and actFail finish the Restore.
	actSucceed
	actFail
)

// pollKind says what a waiting Restore polls.
type pollKind int

const (
	pollNothing pollKind = iota
	// pollBackup: a backup that is still running.
	pollBackup
	// pollApp: a MyApp, until it is Ready or gone.
	pollApp
)

// observation is what one pass knows of a Restore. The fields up to reads
// come from the Restore and the Reconciler; each read the plan asks for
// fills one of the rest, nil until it is made.
type observation struct {
	// restoreUID is the Restore's UID, the mark on a MyApp it created.
	restoreUID types.UID
	// ownerID is this installation's owner ID.
	ownerID string
	// namespace is the Restore's namespace, the only one whose backups it
	// restores; sourceNamespace is spec.source.storage.namespace ("" when
	// not set).
	namespace, sourceNamespace string
	// policy is spec.target.existingApp.
	policy backupv1alpha1.ExistingAppPolicy
	// phase, pinned and restoredUID are status.phase, status.backup.id
	// ("" while none is chosen) and status.restoredAppUID, as the pass read
	// them.
	phase       backupv1alpha1.RestorePhase
	pinned      string
	restoredUID types.UID

	source  *sourceRead
	backup  *backupRead
	content *contentRead
	app     *appRead
}

// sourceRead is what resolving spec.source found: a backup (found), or the
// reason none can be restored (refusal).
type sourceRead struct {
	found bool
	// phase is the phase of the backup found.
	phase backup.Phase
	// refusal is the Failed reason when nothing was found:
	// BackupConfigNotFound, NoSucceededBackup, NoBackupFound or
	// BackupNotFound.
	refusal string
	// namespace is the namespace the backup's labels say it was taken in,
	// "" when they do not say (its content will).
	namespace string
}

// backupRead is the chosen backup as the backup service reports it now.
type backupRead struct {
	found bool
	phase backup.Phase
}

// contentRead is the chosen backup's content: problem is the Failed
// reason of content that cannot be restored (BackupHasNoContent,
// UnsupportedBackupFormat, InvalidBackupContent), "" for content that was
// read, in which case ownerID is the owner ID it was taken under.
type contentRead struct {
	problem string
	ownerID string
	// namespace is the backed-up MyApp's namespace, as the content says.
	namespace string
}

// appRead is the target MyApp as the API server has it.
type appRead struct {
	exists bool
	uid    types.UID
	// markedBy is its backup.myapp.dev/restore-uid annotation: the Restore
	// that created it, "" for a MyApp no Restore created.
	markedBy types.UID
	deleting bool
	// generation and observedGeneration are the MyApp's metadata.generation
	// and status.observedGeneration.
	generation, observedGeneration int64
	// ready is the Ready condition's status being True, at readyGeneration.
	ready           bool
	readyGeneration int64
	// dnsState and dnsName are status.dns.state and status.dns.name ("" for
	// no status.dns); host is spec.host.
	dnsState      appsv1alpha1.DNSRecordState
	dnsName, host string
	// busyWith names another Restore in progress that writes this MyApp
	// before this one: one that wrote it already (its mark is on it, or its
	// status says so), or one created earlier. "" when none.
	busyWith string
}

// step is a plan's answer: a read to make, or an action with the status it
// leaves (phase, and the Ready reason the conditions derive from).
type step struct {
	read readKind
	act  action
	// pin says status.backup is written from the backup the source
	// resolved to, in this pass's status write; only ever before any
	// backup was chosen.
	pin    bool
	phase  backupv1alpha1.RestorePhase
	reason string
	poll   pollKind
}

// plan decides a pass's next step.
func plan(o observation) step {
	switch {
	case o.phase.Finished():
		// A finished Restore is a record: it reads and writes nothing more.
		return step{act: actNothing, phase: o.phase}
	case o.pinned == "" && o.sourceNamespace != "" && o.sourceNamespace != o.namespace:
		// Refused before anything is read: nothing of another namespace's
		// backups is listed, let alone written to status.
		return refuse(backupv1alpha1.BackupOfAnotherNamespaceReason)
	case o.pinned == "":
		return planChoice(o)
	case o.restoredUID == "":
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
func planChoice(o observation) step {
	switch {
	case o.source == nil:
		return step{read: readSource}
	case !o.source.found:
		// Nothing was chosen, so nothing is pinned: the condition says what
		// the source named.
		return refuse(o.source.refusal)
	case o.source.namespace != "" && o.source.namespace != o.namespace,
		o.content != nil && o.content.problem == "" && o.content.namespace != o.namespace:
		// Not pinned either: status.backup would describe another
		// namespace's backup to whoever reads this one.
		return refuse(backupv1alpha1.BackupOfAnotherNamespaceReason)
	case o.source.phase == backup.PhaseFailed:
		return pinned(refuse(backupv1alpha1.BackupNotSucceededReason))
	case o.source.phase != backup.PhaseSucceeded:
		return step{act: actPin, pin: true, phase: backupv1alpha1.RestorePending,
			reason: backupv1alpha1.BackupRunningReason, poll: pollBackup}
	case o.content == nil:
		return step{read: readContent}
	case o.content.problem != "":
		return pinned(refuse(o.content.problem))
	case o.content.ownerID != o.ownerID:
		return pinned(refuse(backupv1alpha1.ForeignBackupReason))
	}
	return step{act: actPin, pin: true, phase: backupv1alpha1.RestorePending, reason: backupv1alpha1.RestorePendingReason}
}

// planWrite decides a Restore whose backup is chosen and that has written
// no MyApp yet, as far as its status says: it checks the backup again
// (it may have been deleted or be still running), then the target.
func planWrite(o observation) step {
	switch {
	case o.backup == nil:
		return step{read: readBackup}
	case !o.backup.found:
		return refuse(backupv1alpha1.BackupNotFoundReason)
	case o.backup.phase == backup.PhaseFailed:
		return refuse(backupv1alpha1.BackupNotSucceededReason)
	case o.backup.phase != backup.PhaseSucceeded:
		return wait(backupv1alpha1.RestorePending, backupv1alpha1.BackupRunningReason, pollBackup)
	case o.content == nil:
		return step{read: readContent}
	case o.content.problem != "":
		return refuse(o.content.problem)
	case o.content.ownerID != o.ownerID:
		return refuse(backupv1alpha1.ForeignBackupReason)
	case o.content.namespace != o.namespace:
		return refuse(backupv1alpha1.BackupOfAnotherNamespaceReason)
	case o.app == nil:
		return step{read: readApp}
	case o.app.exists && o.restoreUID != "" && o.app.markedBy == o.restoreUID:
		// Created by this Restore in a pass that could not record it.
		return written(actAdopt)
	case o.app.busyWith != "":
		// Another Restore writes this MyApp first: this one waits until it
		// has finished, then finds the MyApp it left.
		return wait(backupv1alpha1.RestorePending, backupv1alpha1.TargetBusyReason, pollApp)
	case !o.app.exists:
		return written(actCreate)
	case o.app.deleting:
		// Neither a create nor a replace would last: wait until it is gone.
		return wait(backupv1alpha1.RestorePending, backupv1alpha1.TargetBeingDeletedReason, pollApp)
	case o.policy == backupv1alpha1.ExistingAppReplace:
		return written(actReplace)
	}
	return refuse(backupv1alpha1.TargetExistsReason)
}

// planFollow decides a Restore that wrote its MyApp: it succeeds once that
// MyApp, the same incarnation, is restored.
func planFollow(o observation) step {
	switch {
	case o.app == nil:
		return step{read: readApp}
	case !o.app.exists || o.app.uid != o.restoredUID:
		return refuse(backupv1alpha1.RestoredAppDeletedReason)
	case restored(*o.app):
		return step{act: actSucceed, phase: backupv1alpha1.RestoreSucceeded, reason: backupv1alpha1.RestoreSucceededReason}
	}
	return wait(backupv1alpha1.RestoreRestoring, backupv1alpha1.WaitingForAppReason, pollApp)
}

// restored reports whether a MyApp is what a Restore waits for: its
// controller has looked at its current spec and found it Ready, and its
// DNS record for spec.host is active. Ready alone says the record is
// active too, but the record is what a restore is for, so it is checked
// on its own.
func restored(a appRead) bool {
	return a.observedGeneration == a.generation && a.ready && a.readyGeneration == a.generation &&
		a.dnsState == appsv1alpha1.DNSRecordActive && a.dnsName == a.host
}

func refuse(reason string) step {
	return step{act: actFail, phase: backupv1alpha1.RestoreFailed, reason: reason}
}

func pinned(s step) step {
	s.pin = true
	return s
}

func wait(phase backupv1alpha1.RestorePhase, reason string, poll pollKind) step {
	return step{act: actWait, phase: phase, reason: reason, poll: poll}
}

// written is the step of a pass that writes the MyApp: the Restore is then
// Restoring, waiting for it.
func written(act action) step {
	return step{act: act, phase: backupv1alpha1.RestoreRestoring, reason: backupv1alpha1.WaitingForAppReason, poll: pollApp}
}
