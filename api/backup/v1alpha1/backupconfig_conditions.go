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

// Condition types of a BackupConfig.
const (
	// ReadyCondition is true when the referenced MyApp exists and backups
	// can be taken.
	ReadyCondition = "Ready"
	// BackupSucceededCondition reflects the outcome of the last finished
	// backup.
	BackupSucceededCondition = "BackupSucceeded"
	// ReconcilingCondition is true while work is in progress: a backup is
	// running, the MyApp is awaited, the backup service is being retried, a
	// final backup or a cleanup is under way. It is absent (abnormal-true
	// polarity, as kstatus reads it) when nothing is going on.
	ReconcilingCondition = "Reconciling"
	// StalledCondition is true when the BackupConfig will not get better
	// without a change: an unusable schedule, a final backup whose attempts
	// ran out, a MyApp too large to back up. It is absent otherwise.
	StalledCondition = "Stalled"
)

// Reasons of the Ready condition.
const (
	// ReadyReason: the MyApp exists and backups are taken as configured.
	ReadyReason = "Ready"
	// AppNotFoundReason: spec.appRef names no MyApp in the namespace.
	AppNotFoundReason = "AppNotFound"
	// InvalidScheduleReason: spec.schedule cannot be parsed or never fires.
	InvalidScheduleReason = "InvalidSchedule"
	// SuspendedReason: spec.suspend is set, so no new backups are started.
	SuspendedReason = "Suspended"
	// BackupServiceUnavailableReason: the backup service is down or throttling.
	BackupServiceUnavailableReason = "BackupServiceUnavailable"
	// BackupServiceUnauthorizedReason: the backup service refused the token.
	BackupServiceUnauthorizedReason = "BackupServiceUnauthorized"
	// BackupServiceErrorReason: the backup service refused a request for
	// another reason.
	BackupServiceErrorReason = "BackupServiceError"
	// BackupContentTooLargeReason: what a backup of the MyApp would hold
	// (the MyApp, its children, its DNS record) encodes to more than a
	// backup may hold, so no backup is started until the MyApp is smaller.
	BackupContentTooLargeReason = "BackupContentTooLarge"
	// ScheduledBackupRefusedReason: the backup service refused to start the
	// backup of a schedule slot, so the slot was skipped.
	ScheduledBackupRefusedReason = "ScheduledBackupRefused"
	// WaitingForRestoreReason: a Restore in progress writes the MyApp, so
	// no backup of it starts on any trigger until that Restore has
	// succeeded or failed (its spec.timeout bounds the wait); the message
	// names the Restore.
	WaitingForRestoreReason = "WaitingForRestore"
	// FinalBackupInProgressReason: the MyApp is being deleted and its final
	// backup is being taken.
	FinalBackupInProgressReason = "FinalBackupInProgress"
	// FinalBackupSuspendedReason: the MyApp is being deleted and spec.suspend
	// is set: a backup already running is followed to its end, no final
	// backup is started, and the MyApp is then released (suspend never
	// blocks a deletion).
	FinalBackupSuspendedReason = "FinalBackupSuspended"
	// FinalBackupFailedReason: every attempt at the final backup failed and the
	// MyApp is held until a person decides.
	FinalBackupFailedReason = "FinalBackupFailed"
	// FinalBackupAbandonedReason: the BackupConfig is being deleted with its
	// MyApp and gave the final backup up (out of attempts, or past its
	// teardown limit); the MyApp is released without one.
	FinalBackupAbandonedReason = "FinalBackupAbandoned"
	// CleanupInProgressReason: the BackupConfig is being deleted and its
	// backups are being deleted.
	CleanupInProgressReason = "CleanupInProgress"
	// CleanupBlockedReason: the BackupConfig is being deleted but the backup
	// service cannot delete its backups right now.
	CleanupBlockedReason = "CleanupBlocked"
)

// Reasons of the BackupSucceeded condition.
const (
	// NoBackupYetReason: no backup has been started yet.
	NoBackupYetReason = "NoBackupYet"
	// BackupRunningReason: the first backup is still running.
	BackupRunningReason = "BackupRunning"
	// BackupSucceededReason: the last finished backup succeeded.
	BackupSucceededReason = "BackupSucceeded"
	// BackupFailedReason: the last finished backup failed.
	BackupFailedReason = "BackupFailed"
)
