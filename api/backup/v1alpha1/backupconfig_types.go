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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DeletionPolicy says what happens to the external backups a BackupConfig
// started when the BackupConfig is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type DeletionPolicy string

const (
	// DeletionPolicyDelete deletes every backup this BackupConfig started, and
	// the BackupConfig is gone only once the service confirms they are.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyRetain leaves the backups in the backup service.
	DeletionPolicyRetain DeletionPolicy = "Retain"
)

// BackupPhase is the phase of a backup job in the backup service.
// +kubebuilder:validation:Enum=Running;Succeeded;Failed
type BackupPhase string

const (
	// BackupRunning means the backup service is still taking the backup.
	BackupRunning BackupPhase = "Running"
	// BackupSucceeded means the backup is complete and stored.
	BackupSucceeded BackupPhase = "Succeeded"
	// BackupFailed means the backup service gave up on the backup.
	BackupFailed BackupPhase = "Failed"
)

// BackupTrigger is why a backup was started.
// +kubebuilder:validation:Enum=Schedule;AppChange;AppDeletion;Manual
type BackupTrigger string

const (
	// TriggerSchedule is a backup due by spec.schedule.
	TriggerSchedule BackupTrigger = "Schedule"
	// TriggerAppChange is a backup of a new generation of the MyApp.
	TriggerAppChange BackupTrigger = "AppChange"
	// TriggerAppDeletion is the final backup before the MyApp goes.
	TriggerAppDeletion BackupTrigger = "AppDeletion"
	// TriggerManual is an on-demand backup asked for with the
	// backup.myapp.dev/backup-now annotation.
	TriggerManual BackupTrigger = "Manual"
)

const (
	// BackupNowAnnotation asks for an on-demand backup: each new value
	// starts one (trigger Manual), whose idempotency key is derived from the
	// value, so a value is never backed up twice. Any value is accepted, a
	// timestamp is customary; status.lastHandledBackupNow acknowledges it.
	BackupNowAnnotation = "backup.myapp.dev/backup-now"
	// ReconcileRequestAnnotation asks for a reconcile now (the Flux
	// convention): each new value makes the controller reconcile the
	// BackupConfig, and status.lastHandledReconcileAt acknowledges it.
	ReconcileRequestAnnotation = "reconcile.myapp.dev/requested-at"
)

const (
	// BackupCleanupFinalizer guards the external backups of a BackupConfig
	// with deletionPolicy Delete.
	BackupCleanupFinalizer = "backup.myapp.dev/backup-cleanup"
	// FinalBackupFinalizer is put on a referenced MyApp when
	// backupBeforeAppDeletion is set, and released once the final backup
	// succeeded.
	FinalBackupFinalizer = "backup.myapp.dev/final-backup"
)

// AppReference names a MyApp in the BackupConfig's namespace.
type AppReference struct {
	// Name is the MyApp's name. A MyApp's name is a DNS label (it names the
	// app's Service), so a name that is not one could only ever read
	// AppNotFound and is refused instead.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="appRef.name must be a valid object name of a MyApp: a DNS label (lowercase letters, digits and '-', starting with a letter, at most 63 characters)"
	// +required
	Name string `json:"name"`
}

// Retention says how many backups are kept.
type Retention struct {
	// KeepLast is how many of the newest successful backups are kept; older
	// successful backups this BackupConfig started are deleted.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=7
	// +optional
	KeepLast int32 `json:"keepLast,omitempty"`
}

// BackupConfigSpec is the desired state of a BackupConfig.
type BackupConfigSpec struct {
	// AppRef names the MyApp to back up, in the same namespace. The
	// BackupConfig watches it but never owns it.
	// +required
	AppRef AppReference `json:"appRef"`

	// Schedule is a 5-field cron expression (minute hour day-of-month month
	// day-of-week), or a descriptor such as @daily, evaluated in UTC. Without
	// it, backups are taken only on change.
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:XValidation:rule="self.matches('^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[^ ]+( +[^ ]+){4})$')",message="schedule must be a 5-field cron expression such as \"0 3 * * *\" (minute hour day-of-month month day-of-week), or a descriptor such as @daily"
	// +optional
	Schedule string `json:"schedule,omitempty"`

	// BackupOnChange takes a backup when the MyApp's spec changes (a new
	// generation), once per settled change.
	// +kubebuilder:default=true
	// +optional
	BackupOnChange *bool `json:"backupOnChange,omitempty"`

	// Retention says how many backups are kept.
	// +kubebuilder:default={keepLast: 7}
	// +optional
	Retention Retention `json:"retention,omitempty"`

	// DeletionPolicy says what happens to this BackupConfig's backups when it
	// is deleted. The default, Retain, keeps them: a deleted backup cannot be
	// brought back, a retained one can still be deleted by hand.
	// +kubebuilder:default=Retain
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// BackupBeforeAppDeletion takes one last backup when the MyApp is
	// deleted, holding the MyApp with a finalizer until it succeeded.
	// Turning it off, or deleting the BackupConfig, releases the MyApp.
	// +optional
	BackupBeforeAppDeletion bool `json:"backupBeforeAppDeletion,omitempty"`

	// Suspend stops every write to the backup service (the Flux
	// convention): no new backup is started, a schedule slot that passes is
	// skipped with an event and not caught up on resume, and retention
	// prunes nothing. A running backup is still followed. Deleting the
	// BackupConfig is never blocked by it: its cleanup (deletionPolicy)
	// still runs. Ready says Suspended, and a Normal event marks suspend and
	// resume.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// BackupStatus describes one backup job.
type BackupStatus struct {
	// ID is the backup's ID in the backup service.
	ID string `json:"id"`

	// Phase is the backup's phase as last observed.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`

	// Trigger is why the backup was started.
	// +optional
	Trigger BackupTrigger `json:"trigger,omitempty"`

	// Attempt counts the attempts at an AppChange backup of one generation:
	// 1 for the first, more for the retries that follow a failure.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`

	// StartTime is when the backup was started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the backup finished, successfully or not.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Location is where the backup service stored a successful backup.
	// +optional
	Location string `json:"location,omitempty"`

	// SizeBytes is the size of a successful backup.
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`

	// Reason is why a failed backup failed, as the service said, or why the
	// controller gave up on it (it did not finish in time, or disappeared).
	// +optional
	Reason string `json:"reason,omitempty"`
}

// FailureStatus says why no backup seems to happen: how many backups or
// calls to the backup service failed in a row, when the last one failed,
// and when the operator tries again (cert-manager's failedIssuanceAttempts
// and lastFailureTime). It changes only when another attempt fails, never
// with the error's text, which goes to the events and the log.
type FailureStatus struct {
	// Count is the number of attempts that failed in a row.
	Count int32 `json:"count"`

	// LastFailureTime is when the last attempt failed.
	LastFailureTime metav1.Time `json:"lastFailureTime"`

	// NextRetryTime is when the operator tries again: the time the service
	// asked for with Retry-After or the end of the controller's backoff for
	// a failed call; the retry of a failed on-change backup; the next
	// schedule slot for a failed scheduled backup. Absent when nothing is
	// scheduled (a failed on-demand backup waits for a new backup-now
	// value).
	// +optional
	NextRetryTime *metav1.Time `json:"nextRetryTime,omitempty"`
}

// BackupConfigStatus is the observed state of a BackupConfig.
type BackupConfigStatus struct {
	// ObservedGeneration is the generation last reconciled successfully,
	// or found stalled (the Stalled condition says why).
	// A new object reads 0 until the controller has looked at it, so that
	// kstatus (Helm 4's --wait, Flux) sees a generation not observed yet,
	// never an object without status, which it would take for Current.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LastBackup is the most recently started backup.
	// +optional
	LastBackup *BackupStatus `json:"lastBackup,omitempty"`

	// LastSuccessfulBackupTime is when the last successful backup finished.
	// +optional
	LastSuccessfulBackupTime *metav1.Time `json:"lastSuccessfulBackupTime,omitempty"`

	// NextScheduleTime is when the next scheduled backup is due.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// ObservedAppGeneration is the MyApp generation the last backup was
	// started for. A backup adopted by its idempotency key (started by a pass
	// that could not record it) counts for the generation it was started
	// for, never for a newer one.
	// +optional
	ObservedAppGeneration int64 `json:"observedAppGeneration,omitempty"`

	// ObservedAppUID is the UID of the MyApp the last backup was started
	// for, set together with observedAppGeneration. A MyApp deleted and
	// created again under the same name has a new UID, so its generation is
	// never mistaken for one already backed up; with backupOnChange it gets
	// a baseline backup like any new MyApp.
	// +optional
	ObservedAppUID types.UID `json:"observedAppUID,omitempty"`

	// BackupFailures, while backups or calls to the backup service fail,
	// counts them and says when the next attempt is due. The next
	// successful backup clears it.
	// +optional
	BackupFailures *FailureStatus `json:"backupFailures,omitempty"`

	// LastHandledReconcileAt is the value of the
	// reconcile.myapp.dev/requested-at annotation the last pass handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// LastHandledBackupNow is the value of the backup.myapp.dev/backup-now
	// annotation whose on-demand backup was started: status.lastBackup
	// follows it.
	// +optional
	LastHandledBackupNow string `json:"lastHandledBackupNow,omitempty"`

	// Conditions are Ready and BackupSucceeded, plus Reconciling and
	// Stalled, present (True) only while they apply, as kstatus expects.
	// Each carries the generation it was set for.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// BackupConfig takes backups of a MyApp in the external backup service, on a
// schedule and when the MyApp changes, and keeps a retention.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mabc
// +kubebuilder:printcolumn:name="App",type=string,JSONPath=`.spec.appRef.name`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Last Backup",type=string,JSONPath=`.status.lastBackup.phase`
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=`.status.lastSuccessfulBackupTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BackupConfig struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec BackupConfigSpec `json:"spec"`

	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status BackupConfigStatus `json:"status,omitempty"`
}

// BackupConfigList contains a list of BackupConfig.
// +kubebuilder:object:root=true
type BackupConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BackupConfig `json:"items"`
}
