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
	"crypto/sha256"
	"encoding/hex"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RestorePhase is where a Restore is in its life.
// +kubebuilder:validation:Enum=Pending;Restoring;Succeeded;Failed
type RestorePhase string

const (
	// RestorePending: the backup is being chosen, read and checked, or the
	// target is awaited; no MyApp has been written yet.
	RestorePending RestorePhase = "Pending"
	// RestoreRestoring: the MyApp has been created (or its spec replaced)
	// and the Restore waits for it to be Ready with its DNS record active.
	RestoreRestoring RestorePhase = "Restoring"
	// RestoreSucceeded: the restored MyApp was Ready with its DNS record
	// active, or, restored from a backup of a suspended MyApp, reported
	// itself Suspended. Final.
	RestoreSucceeded RestorePhase = "Succeeded"
	// RestoreFailed: the Restore was refused or cannot finish; the Ready
	// condition says why. Final: a Restore is never retried once failed,
	// another one is created instead.
	RestoreFailed RestorePhase = "Failed"
)

// Finished reports whether a Restore in phase p is done, one way or the
// other: it does nothing more, and needs its backup no more.
func (p RestorePhase) Finished() bool {
	return p == RestoreSucceeded || p == RestoreFailed
}

// ExistingAppPolicy says what a Restore does when a MyApp of the target's
// name already exists.
// +kubebuilder:validation:Enum=Fail;Replace
type ExistingAppPolicy string

const (
	// ExistingAppFail refuses to touch a MyApp that exists: the Restore
	// fails with TargetExists. The default.
	ExistingAppFail ExistingAppPolicy = "Fail"
	// ExistingAppReplace replaces the existing MyApp's spec with the backed
	// up one, and nothing else: its UID, labels, annotations, children and
	// DNS record stay.
	ExistingAppReplace ExistingAppPolicy = "Replace"
)

// The mark a Restore leaves on the MyApp it creates. It says which Restore
// created the MyApp from which backup, and which MyApp it brings back, so
// that a Restore that crashed after the create recognises its own MyApp,
// and so that the MyApp controller and the orphan sweep can tell a restored
// MyApp's old DNS record from an orphan.
const (
	// RestoreNameLabel names the Restore that created the MyApp, for people
	// and label selectors (`kubectl get myapps -l backup.myapp.dev/restore-name`).
	RestoreNameLabel = "backup.myapp.dev/restore-name"
	// RestoreUIDAnnotation is the UID of the Restore that created the MyApp:
	// the mark a Restore checks before it takes a MyApp that already exists
	// for its own. A name can be used again by another Restore; a UID
	// cannot.
	RestoreUIDAnnotation = "backup.myapp.dev/restore-uid"
	// BackupIDLabel names the backup the MyApp was created from, as
	// BackupIDLabelValue writes it: the ID itself when it is a valid label
	// value, a digest of it otherwise (an s3 backup's ID holds '/' and may
	// be longer than a label value may be).
	BackupIDLabel = "backup.myapp.dev/backup-id"
	// BackupIDAnnotation is the backup's ID as it is, whatever its length or
	// characters.
	BackupIDAnnotation = "backup.myapp.dev/backup-id"
	// RestoredFromUIDAnnotation is the UID of the MyApp that was backed up:
	// the old UID whose DNS record the restored MyApp takes over.
	RestoredFromUIDAnnotation = "backup.myapp.dev/restored-from-uid"
)

// BackupIDLabelValue is the value of BackupIDLabel for a backup ID: the ID
// when it is a valid label value, else "sha256-" and the first 48 hex digits
// of its SHA-256 (a valid label value of 55 characters). A label selector for
// the MyApps restored from a backup is built from its ID with this same
// function.
func BackupIDLabelValue(id string) string {
	if len(content.IsLabelValue(id)) == 0 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256-" + hex.EncodeToString(sum[:24])
}

// BackupConfigReference names a BackupConfig in the Restore's namespace.
type BackupConfigReference struct {
	// Name is the BackupConfig's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="backupConfigRef.name must be the name of a BackupConfig: lowercase letters, digits, '-' and '.'"
	// +required
	Name string `json:"name"`
}

// StorageSource finds a backup by what it is of, in the backup storage of
// this installation (its owner ID), for a cluster where the BackupConfig
// that took the backups is gone, such as one rebuilt from nothing.
type StorageSource struct {
	// Namespace is the namespace the backed-up MyApp was in, which must be
	// the Restore's own: a Restore restores only backups of its namespace,
	// and one naming another fails with BackupOfAnotherNamespace. It may be
	// left empty (the Restore's namespace) or written out, as a record of
	// where the backups were.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="storage.namespace must be a namespace name: a DNS label (lowercase letters, digits and '-', at most 63 characters)"
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// AppName is the backed-up MyApp's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="storage.appName must be a MyApp's name: a DNS label (lowercase letters, digits and '-', starting with a letter, at most 63 characters)"
	// +required
	AppName string `json:"appName"`
}

// RestoreSource says which backup a Restore restores. Exactly one of its
// fields is set.
// +kubebuilder:validation:XValidation:rule="(has(self.backupConfigRef) ? 1 : 0) + (has(self.backupID) ? 1 : 0) + (has(self.storage) ? 1 : 0) == 1",message="source must set exactly one of backupConfigRef, backupID and storage"
type RestoreSource struct {
	// BackupConfigRef restores the newest succeeded backup of a
	// BackupConfig in the Restore's namespace, as it is when the Restore
	// starts: the backup is chosen once and written to status.backup, and
	// backups taken afterwards do not change it.
	// +optional
	BackupConfigRef *BackupConfigReference `json:"backupConfigRef,omitempty"`

	// BackupID restores the backup with this ID in the backup service (in
	// the s3 provider, the object's key below <prefix>/<owner-id>/). A
	// backup still running is waited for.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:space:][:cntrl:]]')",message="backupID must not contain spaces or control characters"
	// +optional
	BackupID string `json:"backupID,omitempty"`

	// Storage restores the newest succeeded backup of a MyApp that this
	// installation (its owner ID) holds in the backup storage, found by the
	// MyApp's namespace and name: the source for a cluster rebuilt with the
	// same owner ID, where the BackupConfig is gone.
	// +optional
	Storage *StorageSource `json:"storage,omitempty"`
}

// RestoreTarget says which MyApp a Restore writes, always in the Restore's
// namespace.
type RestoreTarget struct {
	// Name is the name of the MyApp to restore into. Empty means the name
	// of the backed-up MyApp.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="target.name must be a MyApp's name: a DNS label (lowercase letters, digits and '-', starting with a letter, at most 63 characters)"
	// +optional
	Name string `json:"name,omitempty"`

	// ExistingApp says what happens when a MyApp of that name exists: Fail
	// (the default) refuses, with the Failed phase and the TargetExists
	// reason; Replace replaces its spec, and only its spec. A MyApp being
	// deleted is waited for either way.
	// +kubebuilder:default=Fail
	// +optional
	ExistingApp ExistingAppPolicy `json:"existingApp,omitempty"`
}

// RestoreSpec is the desired state of a Restore. It cannot be changed once
// the Restore exists.
type RestoreSpec struct {
	// Source says which backup to restore.
	// +required
	Source RestoreSource `json:"source"`

	// Target says which MyApp to restore into.
	// +kubebuilder:default={existingApp: Fail}
	// +optional
	Target RestoreTarget `json:"target,omitempty"`

	// Timeout bounds how long the Restore may take, counted from
	// status.startTime, which this controller writes at its first look at
	// the Restore on its own clock: a Restore that has neither succeeded nor
	// failed by then fails with RestoreTimedOut (a MyApp it wrote stays).
	// 15 minutes when not set.
	// +kubebuilder:default="15m"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// DefaultRestoreTimeout is spec.timeout when not set.
const DefaultRestoreTimeout = 15 * time.Minute

// RestoredObject names an object the backup was taken from, and which
// incarnation of it (its UID).
type RestoredObject struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// RestoreBackupStatus is the backup a Restore chose. It is written before the
// Restore writes anything else, and its ID never changes afterwards.
type RestoreBackupStatus struct {
	// ID is the backup's ID in the backup service.
	ID string `json:"id"`

	// StartTime and CompletionTime are when the backup service started and
	// finished the backup.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// TakenAt is when the backed-up MyApp was read, as the backup's content
	// says.
	// +optional
	TakenAt *metav1.Time `json:"takenAt,omitempty"`

	// Trigger is why the backup was taken.
	// +optional
	Trigger string `json:"trigger,omitempty"`

	// MyApp is the MyApp that was backed up: its namespace, name and UID.
	// +optional
	MyApp *RestoredObject `json:"myApp,omitempty"`

	// BackupConfig is the BackupConfig that took the backup.
	// +optional
	BackupConfig *RestoredObject `json:"backupConfig,omitempty"`
}

// RestoreStatus is the observed state of a Restore.
type RestoreStatus struct {
	// ObservedGeneration is the generation last reconciled successfully, or
	// found failed. A new object reads 0 until the controller has looked at
	// it, so that kstatus sees a generation not observed yet.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is Pending, Restoring, Succeeded or Failed.
	// +optional
	Phase RestorePhase `json:"phase,omitempty"`

	// Backup is the backup chosen, written before anything else is.
	// +optional
	Backup *RestoreBackupStatus `json:"backup,omitempty"`

	// TargetName is the name of the MyApp the Restore writes, in its
	// namespace: spec.target.name, or the backed-up MyApp's name.
	// +optional
	TargetName string `json:"targetName,omitempty"`

	// RestoredAppUID is the UID of the MyApp the Restore created, or whose
	// spec it replaced.
	// +optional
	RestoredAppUID types.UID `json:"restoredAppUID,omitempty"`

	// StartTime is when this controller first looked at the Restore, on its
	// own clock: spec.timeout counts from it. CompletionTime is when the
	// Restore succeeded or failed.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Conditions are Ready, plus Reconciling and Stalled, present (True)
	// only while they apply, as kstatus expects: Reconciling while the
	// Restore is Pending or Restoring, Stalled once it Failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Restore brings a MyApp back from a backup: it creates the MyApp from the
// backed-up spec, marked with the restore, and follows it until it is Ready
// with its DNS record active. Deleting a Restore never deletes what it
// restored.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mar
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="Why the Restore is where it is: WaitingForApp, TargetExists, BackupNotFound, ..."
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.targetName`,description="The MyApp the Restore writes, in its namespace"
// +kubebuilder:printcolumn:name="Backup",type=string,JSONPath=`.status.backup.id`,description="The backup chosen"
// +kubebuilder:printcolumn:name="From",type=string,JSONPath=`.status.backup.myApp.name`,priority=1,description="The name of the MyApp that was backed up"
// +kubebuilder:printcolumn:name="Taken",type=date,JSONPath=`.status.backup.takenAt`,priority=1,description="When the backed-up MyApp was read"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a Restore's name must be at most 63 characters: it is the value of the backup.myapp.dev/restore-name label on the MyApp it creates"
type Restore struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// A Restore is a record of one restore: its spec cannot change, since
	// the backup it chose and the MyApp it wrote follow from it. Delete it
	// and create another to restore something else.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a Restore's spec cannot be changed: delete the Restore and create another"
	// +required
	Spec RestoreSpec `json:"spec"`

	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status RestoreStatus `json:"status,omitempty"`
}

// RestoreList contains a list of Restore.
// +kubebuilder:object:root=true
type RestoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Restore `json:"items"`
}
