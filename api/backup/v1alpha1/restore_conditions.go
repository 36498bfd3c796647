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

package v1alpha1

// A Restore's conditions are the kstatus trio the other kinds carry, of the
// same types (ReadyCondition, ReconcilingCondition, StalledCondition):
// Ready is True once the Restore succeeded; Reconciling is True, with Ready's
// reason, while it is Pending or Restoring; Stalled is True, with Ready's
// reason, once it Failed. A Restore waiting on the backup service reports
// the BackupConfig's service reasons (BackupServiceUnavailableReason,
// BackupServiceUnauthorizedReason, BackupServiceErrorReason), and one waiting
// for a running backup BackupRunningReason.

// Reasons of a Restore in progress (Pending or Restoring).
const (
	// RestorePendingReason: the Restore has not chosen its backup yet.
	RestorePendingReason = "RestorePending"
	// TargetBeingDeletedReason: a MyApp of the target's name is being
	// deleted; the Restore creates its MyApp once that one is gone.
	TargetBeingDeletedReason = "TargetBeingDeleted"
	// AppWriteFailedReason: creating the MyApp, or replacing its spec,
	// failed for a reason a retry may fix; it is retried with backoff.
	AppWriteFailedReason = "AppWriteFailed"
	// TargetBusyReason: another Restore in progress writes the same MyApp
	// (it was created first, or it wrote the MyApp already); this one waits
	// until that one has finished, so two Restores never both write it.
	TargetBusyReason = "TargetBusy"
	// WaitingForAppReason: the MyApp was written and the Restore waits for it
	// to be Ready at its generation with its DNS record active.
	WaitingForAppReason = "WaitingForApp"
)

// The reason of a Restore that succeeded.
const (
	// RestoreSucceededReason: the restored MyApp was Ready with its DNS record
	// active, or, restored as a suspended MyApp, reports Suspended.
	RestoreSucceededReason = "RestoreSucceeded"
)

// Reasons of a Restore that failed. Each names what was refused; none is
// retried, since each needs a person to choose another backup or target.
const (
	// BackupConfigNotFoundReason: spec.source.backupConfigRef names no
	// BackupConfig in the namespace.
	BackupConfigNotFoundReason = "BackupConfigNotFound"
	// NoSucceededBackupReason: the BackupConfig has no succeeded backup.
	NoSucceededBackupReason = "NoSucceededBackup"
	// NoBackupFoundReason: the backup storage holds no succeeded backup of
	// this installation of the MyApp spec.source.storage names.
	NoBackupFoundReason = "NoBackupFound"
	// BackupNotFoundReason: the backup service has no backup of that ID (it
	// never existed, or was deleted after it was chosen).
	BackupNotFoundReason = "BackupNotFound"
	// BackupNotSucceededReason: the backup failed, so it holds nothing to
	// restore.
	BackupNotSucceededReason = "BackupNotSucceeded"
	// BackupHasNoContentReason: the backup succeeded but holds no content
	// (it was taken by an operator version that stored none).
	BackupHasNoContentReason = "BackupHasNoContent"
	// UnsupportedBackupFormatReason: the backup's content is of a format
	// version this operator does not read.
	UnsupportedBackupFormatReason = "UnsupportedBackupFormat"
	// InvalidBackupContentReason: the backup's content cannot be read.
	InvalidBackupContentReason = "InvalidBackupContent"
	// ForeignBackupReason: the backup was taken by another installation
	// (another owner ID), whose DNS records and backups this one does not
	// own.
	ForeignBackupReason = "ForeignBackup"
	// BackupOfAnotherNamespaceReason: the backup was taken of a MyApp in
	// another namespace than the Restore's, or spec.source.storage.namespace
	// names another namespace. A Restore restores only backups of its own
	// namespace: anyone who may create a Restore in one namespace could
	// otherwise read another namespace's backed-up spec.
	BackupOfAnotherNamespaceReason = "BackupOfAnotherNamespace"
	// TargetExistsReason: a MyApp of the target's name exists and
	// spec.target.existingApp is Fail.
	TargetExistsReason = "TargetExists"
	// InvalidAppSpecReason: the API server refused the MyApp the backup
	// holds, such as a spec a later version's validation does not accept.
	InvalidAppSpecReason = "InvalidAppSpec"
	// RestoredAppDeletedReason: the MyApp the Restore wrote was deleted, or
	// replaced by another of the same name, before it was Ready.
	RestoredAppDeletedReason = "RestoredAppDeleted"
	// HostConflictReason: the restored MyApp reports HostConflict for its
	// spec.host at its generation: another MyApp (or owner) holds the host's
	// record, and the MyApp will not become Ready until that one lets it
	// go. The MyApp stays, waiting for its host as any other.
	HostConflictReason = "HostConflict"
	// RestoreTimedOutReason: the Restore did not finish within spec.timeout
	// of status.startTime.
	RestoreTimedOutReason = "RestoreTimedOut"
)

// RestoreFailureReasons are the reasons of a Restore that failed, in the
// order above: a Failed Restore's Ready reason is one of them.
var RestoreFailureReasons = []string{
	BackupConfigNotFoundReason,
	NoSucceededBackupReason,
	NoBackupFoundReason,
	BackupNotFoundReason,
	BackupNotSucceededReason,
	BackupHasNoContentReason,
	UnsupportedBackupFormatReason,
	InvalidBackupContentReason,
	ForeignBackupReason,
	BackupOfAnotherNamespaceReason,
	TargetExistsReason,
	InvalidAppSpecReason,
	RestoredAppDeletedReason,
	HostConflictReason,
	RestoreTimedOutReason,
}
