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

// Condition types of a MyApp.
const (
	// ReadyCondition is true when the Deployment is available and the DNS
	// record is active.
	ReadyCondition = "Ready"
	// DNSReadyCondition is true when the DNS record for spec.host is active
	// and owned by this MyApp.
	DNSReadyCondition = "DNSReady"
	// ReconcilingCondition is true while work is in progress: a rollout, a
	// PENDING record, a DNS service being retried, a cleanup. It is absent
	// (abnormal-true polarity, as kstatus reads it) when nothing is going on.
	ReconcilingCondition = "Reconciling"
	// StalledCondition is true when the MyApp will not get better without a
	// change: a spec the Deployment API refuses, an object in the way of a
	// child, a host held by another owner, a DNS request the service
	// rejects. It is absent otherwise.
	StalledCondition = "Stalled"
)

// Reasons of the Ready condition.
const (
	// AvailableReason: the Deployment is available and the record active.
	AvailableReason = "Available"
	// DeploymentUnavailableReason: the Deployment has not become available.
	DeploymentUnavailableReason = "DeploymentUnavailable"
	// DNSNotReadyReason: the app runs but its DNS record is not active.
	DNSNotReadyReason = "DNSNotReady"
	// ChildConflictReason: an object in the way of a child is not the MyApp's.
	ChildConflictReason = "ChildConflict"
	// ChildWriteFailedReason: the API server refused or failed a child's
	// create or update.
	ChildWriteFailedReason = "ChildWriteFailed"
	// DeletingReason: the MyApp is being deleted.
	DeletingReason = "Deleting"
	// SuspendedReason: spec.suspend is set; the operator writes nothing.
	SuspendedReason = "Suspended"
)

// Reasons of the DNSReady condition.
const (
	// RecordActiveReason: the record for spec.host is active and this
	// MyApp's.
	RecordActiveReason = "RecordActive"
	// RecordPendingReason: the DNS service accepted the record but has not
	// made it active yet.
	RecordPendingReason = "RecordPending"
	// WaitingForAddressReason: the record's target is not known yet.
	WaitingForAddressReason = "WaitingForAddress"
	// HostConflictReason: spec.host's record belongs to someone else.
	HostConflictReason = "HostConflict"
	// TakeoverWaitingReason: spec.host's record belongs to an earlier MyApp
	// of this name that this one takes over (adopts, replaces as a leak,
	// takes over as restored), and the takeover waits until this
	// installation is known to be its owner ID's only user.
	TakeoverWaitingReason = "TakeoverWaiting"
	// DNSServiceUnavailableReason: the DNS service is unreachable or failing.
	DNSServiceUnavailableReason = "DNSServiceUnavailable"
	// DNSUnauthorizedReason: the DNS service refused the operator's token.
	DNSUnauthorizedReason = "DNSUnauthorized"
	// DNSThrottledReason: the DNS service is rate-limiting the operator.
	DNSThrottledReason = "DNSThrottled"
	// DNSRequestRejectedReason: the DNS service rejected a request as
	// invalid.
	DNSRequestRejectedReason = "DNSRequestRejected"
	// DNSZoneTooLargeReason: the DNS zone, which the webhook protocol reads
	// whole, is larger than the operator may read
	// (--dns-webhook-max-body-size): a configuration problem; the zone is
	// read again after six read intervals (a minute by default).
	DNSZoneTooLargeReason = "DNSZoneTooLarge"
	// DeletingRecordReason: the MyApp is being deleted and its record is
	// being deleted.
	DeletingRecordReason = "DeletingRecord"
)
