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

// Package backupconfig is the BackupConfig controller. It backs up a MyApp it
// does not own in the external backup service, which emits no events, so the
// controller learns everything it needs from watches and from polling the
// backups it started.
//
// # Watching a MyApp it does not own
//
// A BackupConfig names its MyApp in spec.appRef. A field index on that name
// (AppRefIndexKey) maps every MyApp event onto the BackupConfigs that
// reference it, and only changes that matter get through: a new generation,
// the start of a deletion, and the final-backup finalizer coming or going.
// MyApps are never polled and a BackupConfig never becomes their owner.
//
// # Triggers
//
// A backup is started when spec.schedule comes due (a 5-field cron expression
// evaluated in UTC, read from an injectable clock), and, with
// spec.backupOnChange, when the MyApp has a generation no backup was started
// for yet. status.observedAppUID records which MyApp the last backup was of,
// so a MyApp re-created under the same name is backed up as a new one even
// when its generation equals status.observedAppGeneration. Only one backup
// runs at a time: changes made while one runs are covered by one backup of
// the newest generation once it finished, so a burst of edits costs one
// backup, not one per edit. Status alone cannot guarantee that (a pass may
// read the BackupConfig before its own last status write lands in the
// cache), so before starting a backup the controller lists the service and
// follows a backup of this BackupConfig still RUNNING instead. After downtime
// the controller takes at most one catch-up backup for all the slots it
// missed.
//
// # Failures and timeouts
//
// A failed on-change backup is retried for the same generation with backoff
// (Reconciler.FailedBackupRetryDelay, doubled per failure up to an hour,
// counted by status.lastBackup.attempt, which is also part of the retry's
// idempotency key). A backup still RUNNING after Reconciler.BackupTimeout
// is recorded FAILED and blocks nothing any more: not new backups, not
// retention, and not a MyApp held for its final backup, whose timed-out
// attempt counts as failed. A backup the service answers 404 for is given
// up only after missingBackupPolls polls in a row over backupVisibilityGrace
// of the controller's own clock; the service's start time is not compared
// with the controller's clock. A schedule slot whose start the service
// refuses (ErrInvalid, ErrConflict) is skipped with a ScheduledBackupSkipped
// event and the ScheduledBackupRefused reason, instead of being retried for
// ever ahead of every later slot and change.
// spec.suspend stops new backups; running ones are still followed, retention
// and cleanup still apply. An unusable spec.schedule (the API accepts
// "99 * * * *") stops new backups the same way and is reported as
// InvalidSchedule, while running backups, final backups and the release of
// held MyApps go on.
//
// # Crash safety
//
// Every start carries an idempotency key derived from the BackupConfig's UID
// and from state that survives a restart: the MyApp's UID and generation (and
// the retry's attempt) for a change, the MyApp's UID and the due slot
// (status.nextScheduleTime) for a schedule, and the MyApp's UID and attempt
// number for a final backup. A restart between the start and the status
// write derives the same key again, and the backup service answers with the
// backup it already started. Such an adopted backup counts only for the
// MyApp generation it was started for, which its labels record: a scheduled
// backup started before an edit never marks the edit as backed up.
//
// # Waiting for the backup service
//
// When the backup service asks for a wait (a 429, or a 503 with a
// Retry-After longer than the client sleeps through itself), the pass ends
// there and the BackupConfig comes back after exactly that wait, capped by
// the manager's --max-retry-after. Until then the client, shared by every
// BackupConfig, fails each call at once as throttled with the time left, so
// a pass started by a watch event, for this BackupConfig or any other, does
// not call the service either. Every other failure, a 429 without a wait
// included, is returned as an error for the controller's exponential
// backoff.
//
// # Ownership in the backup service
//
// Backups are started as owner "backupconfig/<uid>". Retention and cleanup
// list backups by that owner only, so a BackupConfig never deletes a backup it
// did not start, not even one of a deleted BackupConfig of the same name.
// Retention keeps the newest spec.retention.keepLast successful backups; of
// the failed ones (a timed-out one included) it deletes every one older than
// the newest success and keeps at most keepLast newer ones, except the
// failed final-backup attempts of a MyApp that still exists, which are
// counted.
//
// # Final backup before the MyApp goes
//
// With spec.backupBeforeAppDeletion the controller puts the finalizer
// backup.myapp.dev/final-backup on the MyApp. When the MyApp is deleted it
// takes one last backup and releases the finalizer once the backup service
// reports it SUCCEEDED; the MyApp's own finalizers are left alone. A final
// backup that fails is tried again, up to Reconciler.FinalBackupAttempts
// times; after that the BackupConfig reports FinalBackupFailed and keeps
// holding the MyApp, because letting it go would lose data without anyone
// having agreed to it. The documented ways out are to set
// spec.backupBeforeAppDeletion to false or to delete the BackupConfig: both
// release the MyApp without a final backup. Turning the option off or
// pointing spec.appRef elsewhere also releases a MyApp that is not being
// deleted. Several BackupConfigs may hold the same MyApp; it is released once
// none of them needs it any more. Releasing a MyApp that no BackupConfig
// wants needs no call to the backup service, so the ways out work during an
// outage too, and a MyApp that cannot be decided keeps no other one held.
//
// A hold must never outlive every BackupConfig that could release it, so it
// does not depend on the cache where a stale read could leak it: a
// BackupConfig being deleted lists the MyApps it may hold from the API
// server (Reconciler.APIReader), and a release is confirmed against the API
// server's BackupConfigs first. As a safety net, a MyApp carrying the
// finalizer that no BackupConfig references is mapped onto a request that
// releases every hold in the namespace no BackupConfig wants, read live; the
// same runs when a BackupConfig is gone, which covers one whose cleanup
// finalizer was removed by hand.
//
// # Deleting a BackupConfig
//
// The finalizer backup.myapp.dev/backup-cleanup stays until the backups are
// dealt with: with deletionPolicy Delete every backup this BackupConfig
// started is deleted and confirmed gone first, by a listing taken at least
// Reconciler.CleanupGrace after the deletion began, since the service lists
// a backup started just before only some time later; with Retain they stay
// and an event says so. While the backup service is down the finalizer holds, the
// Ready condition says why, and the controller retries as above; switching
// deletionPolicy to Retain lets the BackupConfig go at once. The gauge
// myapp_backupconfig_backups_held_for_cleanup counts the backups still
// waited for, keeping its last count while the service cannot be listed,
// and counting the backup in status.lastBackup before the first listing.
package backupconfig
