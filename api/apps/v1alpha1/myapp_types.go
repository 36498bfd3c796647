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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeletionPolicy says what happens to the external DNS record when its MyApp
// is deleted.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletionPolicy string

const (
	// DeletionPolicyDelete removes the DNS record before the MyApp is gone.
	DeletionPolicyDelete DeletionPolicy = "Delete"
	// DeletionPolicyOrphan leaves the DNS record in place and releases the
	// MyApp without waiting for the DNS service. The record is handed to the
	// owner myapp-operator-orphaned/<namespace>/<name>/<uid> when the service
	// answers, so the orphan sweep leaves it alone. It is the documented way
	// out when the DNS service is gone for good, instead of editing
	// finalizers by hand.
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// DNSRecordState is the state of the DNS record: as observed in the DNS
// service, or Unknown while the service cannot be asked.
// +kubebuilder:validation:Enum=Pending;Active;Unknown
type DNSRecordState string

const (
	// DNSRecordPending means the service accepted the record but has not
	// propagated it yet.
	DNSRecordPending DNSRecordState = "Pending"
	// DNSRecordActive means the record resolves.
	DNSRecordActive DNSRecordState = "Active"
	// DNSRecordUnknown means the last call to the DNS service failed, so the
	// operator cannot tell what resolvers see; lastObservedState keeps what
	// it saw before.
	DNSRecordUnknown DNSRecordState = "Unknown"
)

// DNSCleanupFinalizer guards the external DNS record: it is removed only once
// the DNS service confirms the record is gone (or the deletion policy is
// Orphan).
const DNSCleanupFinalizer = "apps.myapp.dev/dns-cleanup"

// AdoptDNSRecordAnnotation, set to "true" on a MyApp, lets it take over the
// record for its spec.host when that record is held by an earlier MyApp of
// the same namespace and name that no longer exists (one deleted with
// deletionPolicy Orphan, or the original of a restored MyApp). Without it
// such a record is never taken over: the MyApp reports HostConflict.
const AdoptDNSRecordAnnotation = "apps.myapp.dev/adopt-dns-record"

// ReconcileRequestAnnotation asks for a reconcile now (the Flux
// convention, as `kubectl annotate --overwrite myapp web
// reconcile.myapp.dev/requested-at="$(date +%s)"`): each new value makes the
// next pass read the DNS record and repair drift at once, instead of at the
// next drift check. status.lastHandledReconcileAt acknowledges the value.
// Any value is accepted.
const ReconcileRequestAnnotation = "reconcile.myapp.dev/requested-at"

// MyAppSpec is the desired state of a MyApp.
type MyAppSpec struct {
	// Replicas is the number of pods of the app.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Image is the container image of the app, such as nginx:1.27. It must
	// not contain whitespace of any kind: the Deployment API would accept a
	// tab or a newline, and every pod would then fail to be created.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:space:]]')",message="image must not contain spaces or other whitespace (tabs, newlines)"
	// +required
	Image string `json:"image"`

	// ContainerPort is the port the app's container listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=8080
	// +optional
	ContainerPort int32 `json:"containerPort,omitempty"`

	// ServicePort is the port the app's Service exposes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=80
	// +optional
	ServicePort int32 `json:"servicePort,omitempty"`

	// Host is the fully qualified DNS name the app is served on. The operator
	// routes it to the app through an Ingress and registers it in the DNS
	// service. A host registered by another MyApp is never taken over.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?[.])+[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$')",message="host must be a lowercase fully qualified DNS name such as app.example.com, with labels of at most 63 characters"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[0-9.]+$')",message="host must be a DNS name, not an IP address"
	// +required
	Host string `json:"host"`

	// Resources are the compute resources of the app's container. The
	// request of cpu, memory or ephemeral-storage must not exceed its limit.
	// (Other resource names are checked only by the Deployment API: an
	// unbounded map of quantities is too costly for a CRD rule to walk.)
	// +kubebuilder:validation:XValidation:rule="['cpu', 'memory', 'ephemeral-storage'].all(k, !has(self.requests) || !has(self.limits) || !(k in self.requests) || !(k in self.limits) || quantity(string(self.requests[k])).compareTo(quantity(string(self.limits[k]))) <= 0)",message="resources.requests must not exceed resources.limits for cpu, memory or ephemeral-storage",messageExpression="['cpu', 'memory', 'ephemeral-storage'].filter(k, !(!has(self.requests) || !has(self.limits) || !(k in self.requests) || !(k in self.limits) || quantity(string(self.requests[k])).compareTo(quantity(string(self.limits[k]))) <= 0)).map(k, 'resources.requests.' + k + ' must not exceed resources.limits.' + k)[0]"
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Env are environment variables of the app's container. Each sets value
	// or valueFrom, not both, as the Deployment API requires.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(e, !(has(e.value) && has(e.valueFrom)))",message="env entries must set value or valueFrom, not both"
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// DeletionPolicy says what happens to the DNS record when the MyApp is
	// deleted: Delete removes it first, Orphan leaves it in the DNS service,
	// handed to the owner myapp-operator-orphaned/<namespace>/<name>/<uid> so
	// that the orphan sweep never deletes it.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Suspend freezes the MyApp (the Flux convention): while it is true the
	// operator writes nothing, neither to the Deployment, Service and
	// Ingress nor to the DNS service, and Ready says Suspended. A Normal
	// event marks suspend and resume; the first pass after a resume reads
	// the DNS record at once. Deleting a suspended MyApp is never blocked:
	// its DNS cleanup runs as usual.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// DNSRecordStatus is the DNS record this MyApp registered.
type DNSRecordStatus struct {
	// Name is the record's name in the DNS service. It can lag spec.host
	// while a host change moves the record.
	Name string `json:"name"`

	// Type is the record type, A or CNAME.
	// +optional
	Type string `json:"type,omitempty"`

	// Value is what the record points at.
	// +optional
	Value string `json:"value,omitempty"`

	// Owner is the owner identity the record carries in the DNS service,
	// derived from this MyApp's UID.
	// +optional
	Owner string `json:"owner,omitempty"`

	// State is what is known of the record now: Pending or Active as the
	// DNS service last reported it, or Unknown while the last call to the
	// service failed. The DNS STATE column of `kubectl get myapps -o wide`
	// shows it. It is the state of the record for Name, which can differ
	// from spec.host during a move; the DNS column shows DNSReady's reason.
	// +optional
	State DNSRecordState `json:"state,omitempty"`

	// LastObservedState is the state the DNS service reported when it was
	// last asked, Pending or Active. It stays as it was while State is
	// Unknown.
	// +optional
	LastObservedState DNSRecordState `json:"lastObservedState,omitempty"`

	// Previous are other hosts this MyApp still holds during a move: each
	// stays registered and routed until spec.host is registered and routed,
	// and is then unrouted and released (deleted, or handed to the MyApp
	// that wants it).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	Previous []string `json:"previous,omitempty"`

	// TakeoverDoneFor is the UID the backup.myapp.dev/restored-from-uid
	// mark named when a read of the DNS service first showed this MyApp
	// holding spec.host's record under that mark: it took the restored
	// MyApp's record over, or found none and registered its host afresh.
	// The mark's authority ends there: the MyApp takes no record of that
	// UID over on the mark any more, and the orphan sweep, which spares
	// only that UID's record of spec.host until then, spares none. Empty
	// for a MyApp no Restore marked, or one whose takeover is not done
	// yet; a new mark (a Restore that replaced the spec) starts again.
	// +optional
	TakeoverDoneFor string `json:"takeoverDoneFor,omitempty"`
}

// DNSTransferStatus is a transfer of a DNS record from one owner to
// another that this MyApp started on a provider that makes it in two
// batches: the old owner TXT deleted, then the new one created.
type DNSTransferStatus struct {
	// Name is the record's name.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// From is the owner the record had before the transfer.
	// +kubebuilder:validation:MaxLength=253
	From string `json:"from"`

	// To is the owner the transfer gives the record to.
	// +kubebuilder:validation:MaxLength=253
	To string `json:"to"`
}

// FailureStatus says why nothing seems to happen: how many calls to an
// external service failed in a row, when the last one failed, and when the
// operator tries again (cert-manager's failedIssuanceAttempts and
// lastFailureTime). It changes only when another attempt fails, never with
// the error's text, which goes to the events and the log.
type FailureStatus struct {
	// Count is the number of attempts that failed in a row.
	Count int32 `json:"count"`

	// LastFailureTime is when the last attempt failed.
	LastFailureTime metav1.Time `json:"lastFailureTime"`

	// NextRetryTime is when the operator tries again: the time the service
	// asked for with Retry-After, or the end of the controller's backoff (an
	// event, such as an edit, can bring the retry sooner). Absent when no
	// retry is scheduled: a request the service rejects waits for a change.
	// +optional
	NextRetryTime *metav1.Time `json:"nextRetryTime,omitempty"`
}

// MyAppStatus is the observed state of a MyApp.
type MyAppStatus struct {
	// ObservedGeneration is the generation last reconciled successfully,
	// or found stalled (the Stalled condition says why): either way the
	// operator has looked at that spec and concluded.
	// A new object reads 0 until the controller has looked at it, so that
	// kstatus (Helm 4's --wait, Flux) sees a generation not observed yet,
	// never an object without status, which it would take for Current.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ReadyReplicas is the number of ready pods of the app's Deployment.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// ReadyReplicasSummary is readyReplicas of the replicas the spec wants,
	// such as 2/2, for the READY REPLICAS column.
	// +optional
	ReadyReplicasSummary string `json:"readyReplicasSummary,omitempty"`

	// DNS is the record registered for the app, if any.
	// +optional
	DNS *DNSRecordStatus `json:"dns,omitempty"`

	// DNSTransfer is written before the first batch of a transfer made in
	// two batches (a hand-over, an Orphan mark or unmark, an adoption, a
	// restore takeover, a migration, on a webhook provider that cannot
	// replace a record set in one batch) and cleared once the transfer is
	// done or the name reads otherwise. A transfer cut between its batches
	// (a failed second batch, a restart) leaves the name resolving, with
	// its address and no owner, which no other writer takes; the next pass
	// finds this and finishes the transfer toward To, whatever else has
	// changed since.
	// +optional
	DNSTransfer *DNSTransferStatus `json:"dnsTransfer,omitempty"`

	// DNSFailures, while calls to the DNS service for this MyApp's record
	// fail, counts them and says when the next one is due. It is cleared by
	// the first call that succeeds.
	// +optional
	DNSFailures *FailureStatus `json:"dnsFailures,omitempty"`

	// LastHandledReconcileAt is the value of the
	// reconcile.myapp.dev/requested-at annotation the last pass handled:
	// that pass read the DNS record.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// Conditions are Ready and DNSReady, each True or False, plus
	// Reconciling and Stalled, present (True) only while they apply, as
	// kstatus expects. Each carries the generation it was set for.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MyApp is a web app: a Deployment, a Service and an Ingress owned by the
// MyApp, and a DNS record for its host in the external DNS service.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ma
// +kubebuilder:printcolumn:name="Ready Replicas",type=string,JSONPath=`.status.readyReplicasSummary`
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=`.spec.host`,description="The host the MyApp asks for (spec.host)"
// +kubebuilder:printcolumn:name="DNS Host",type=string,JSONPath=`.status.dns.name`,description="The host whose record the MyApp holds now: during a move or a HostConflict, still the old one"
// +kubebuilder:printcolumn:name="DNS",type=string,JSONPath=`.status.conditions[?(@.type=="DNSReady")].reason`,description="Why DNSReady is what it is, for spec.host: RecordActive, RecordPending, HostConflict, ..."
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="DNS State",type=string,JSONPath=`.status.dns.state`,priority=1,description="The state of the held record (DNS Host's), as the DNS service last reported it"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63",message="a MyApp's name must be a DNS label (lowercase letters, digits and '-', starting with a letter, at most 63 characters): it names the app's Service"
type MyApp struct {
	metav1.TypeMeta `json:",inline"`

	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MyAppSpec `json:"spec"`

	// +kubebuilder:default={observedGeneration: 0}
	// +optional
	Status MyAppStatus `json:"status,omitempty"`
}

// MyAppList contains a list of MyApp.
// +kubebuilder:object:root=true
type MyAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MyApp `json:"items"`
}
