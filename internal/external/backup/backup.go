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

// Package backup is the contract between the controllers and a backup
// provider: the Client interface every provider implements, the Backup it
// answers with, and the options of its calls. The providers are sibling
// packages (httpbackup, the HTTP backup service of docs/external-api.md;
// s3, an S3 bucket); what a backup holds is written and read by
// internal/backupcontent, which no provider imports. Starting a backup is
// keyed by an idempotency key, so a reconciler that repeats a start after a
// crash or a lost response gets the backup it already started, never a
// second one.
package backup

import (
	"context"
	"time"
)

// ServiceName names the service in errors, logs and metrics.
const ServiceName = "backup"

// Phase is where a backup is in its life.
type Phase string

const (
	// PhaseRunning means the backup has started and not finished.
	PhaseRunning Phase = "RUNNING"
	// PhaseSucceeded means the backup is stored; SizeBytes and Location say
	// where and how big.
	PhaseSucceeded Phase = "SUCCEEDED"
	// PhaseFailed means the backup ended without a result; Reason says why.
	PhaseFailed Phase = "FAILED"
)

// Backup is one backup as the service stores it. The JSON tags are the wire
// format.
type Backup struct {
	// ID is chosen by the service and opaque to clients.
	ID string `json:"id"`
	// App is the application that was backed up.
	App string `json:"app"`
	// Owner identifies who started the backup; only that owner may delete it.
	Owner string `json:"owner"`
	// IdempotencyKey is the key the backup was started with.
	IdempotencyKey string `json:"idempotencyKey"`
	// StartToken is the token of the start that created the backup
	// (StartRequest.StartToken), as the provider stored it; empty when that
	// start sent none. A caller that compares it with the token it sent
	// knows whether its own start created the backup or found one an
	// earlier start had created, without comparing two clocks.
	StartToken string `json:"startToken,omitempty"`
	Phase      Phase  `json:"phase"`
	// SizeBytes and Location are set once the backup succeeded.
	SizeBytes int64  `json:"sizeBytes,omitempty"`
	Location  string `json:"location,omitempty"`
	// Reason is set once the backup failed.
	Reason string `json:"reason,omitempty"`
	// StartedAt is when the provider stored the start, by the provider's
	// own clock (the service's, or the S3 server's LastModified), never a
	// client's: List orders by it, and "newest" means latest by it.
	StartedAt   time.Time         `json:"startedAt"`
	CompletedAt *time.Time        `json:"completedAt,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// StartRequest asks for a new backup.
type StartRequest struct {
	// App is the application to back up.
	App string
	// Owner is recorded on the backup and checked on delete.
	Owner string
	// IdempotencyKey identifies this start. Required: the same key always
	// names the same backup, which is what makes Start safe to repeat.
	IdempotencyKey string
	// Labels are stored with the backup for people and tools to read.
	Labels map[string]string
	// StartToken, when set, is stored with the backup this start creates
	// and answered in its StartToken from then on. Unlike the idempotency
	// key, which stays the same across retries and restarts, it is chosen
	// afresh by each caller (the BackupConfig controller: each pass), so a
	// start whose answer carries its own token created the backup, and one
	// whose answer carries another found a backup an earlier start created.
	// A repeat of one start after a lost answer sends the same token and
	// gets it back. Up to 64 letters, digits and -._
	// (contract.ValidateStartToken).
	StartToken string
	// Namespace is the namespace of the BackupConfig starting the backup.
	// The s3 provider files the backup under it
	// (<prefix>/<owner-id>/<namespace>/<backupconfig-uid>/), so that a
	// restore into a rebuilt cluster finds a namespace's backups by listing
	// storage; when empty, it is read from the label LabelNamespace. The
	// HTTP service has no use for it and is not sent it.
	Namespace string
	// Payload is the backup's content, as internal/backupcontent encodes it: at most
	// MaxPayloadBytes. The s3 provider requires it (the object is the
	// backup); the HTTP service stores it when given and serves it through
	// Content once the backup has succeeded.
	Payload []byte
}

// LabelNamespace is the label the BackupConfig controller stores the
// BackupConfig's namespace under; a provider that needs the namespace reads
// it from there when StartRequest.Namespace is empty.
const LabelNamespace = "backup.myapp.dev/namespace"

// LabelOwnerID is the label the BackupConfig controller stores the
// installation's owner ID (--owner-id) under: whose backup it is, readable
// without its content, so a Restore from storage on a service several
// installations share passes over another's without reading it. The s3
// provider answers it for every backup from the key the backup is filed
// under (<prefix>/<owner-id>/...), whatever the object's metadata holds, so
// a backup written before the label was has it too; on the HTTP service a
// backup started before it has none.
const LabelOwnerID = "backup.myapp.dev/owner-id"

// IDNamespacer is implemented by a Client whose backup IDs name the
// namespace a backup was taken in, so that a caller can tell it from the ID
// alone, before any call (s3: <namespace>/<backupconfig-uid>/<name>).
type IDNamespacer interface {
	// NamespaceOfID returns the namespace id names, or false when id is
	// not of the provider's form (no backup has it).
	NamespaceOfID(id string) (string, bool)
}

// NamespaceOf returns the namespace a start files its backup under: the
// request's Namespace, else its LabelNamespace label.
func (r StartRequest) NamespaceOf() string {
	if r.Namespace != "" {
		return r.Namespace
	}
	return r.Labels[LabelNamespace]
}

// ListOption narrows a List call.
type ListOption func(*ListOptions)

// ListOptions are what the ListOptions given to List set.
type ListOptions struct {
	// Namespace, when set, is the namespace of the owner's BackupConfig.
	// An owner's backups are all in one namespace, so the answer is the
	// same with or without it; a provider that files backups by namespace
	// (s3) lists one prefix instead of looking for the owner in every
	// namespace.
	Namespace string
	// Labels, when set, keeps in the answer only the backups whose labels
	// hold every one of these keys with that value. A provider whose
	// service filters by label asks it to, so a listing of one MyApp's
	// backups does not read every backup of the service.
	Labels map[string]string
}

// InNamespace says in which namespace the owner's backups are filed.
func InNamespace(namespace string) ListOption {
	return func(o *ListOptions) { o.Namespace = namespace }
}

// WithLabels keeps in the answer only the backups labelled with every one of
// labels.
func WithLabels(labels map[string]string) ListOption {
	return func(o *ListOptions) { o.Labels = labels }
}

// Matches reports whether b is one the options keep in an answer.
func (o ListOptions) Matches(b Backup) bool {
	for k, v := range o.Labels {
		if got, ok := b.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// ApplyListOptions returns the options opts set.
func ApplyListOptions(opts ...ListOption) ListOptions {
	var o ListOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Client manages backups in the backup service.
type Client interface {
	// Start begins a backup and returns it, usually PhaseRunning. Repeating a
	// start with the same idempotency key returns the backup that key already
	// names, in whatever phase it has reached, without starting another; its
	// StartToken is then the first start's, not the repeat's. A
	// key used by another owner is external.ErrConflict carrying that owner; a
	// missing key is external.ErrInvalid and nothing is sent.
	Start(ctx context.Context, req StartRequest) (Backup, error)
	// Get returns the backup with the given ID, or an error matching
	// external.ErrNotFound. Poll it to learn when the backup finished.
	Get(ctx context.Context, id string) (Backup, error)
	// List returns the backups started by owner, or all backups when owner is
	// empty, oldest first by the provider's clock (StartedAt: the order in
	// which the provider stored them, never a client's clock), however many there are (a provider whose service
	// answers in pages follows them to the end). InNamespace narrows where
	// the provider looks, never what it answers; WithLabels narrows the
	// answer to the backups with those labels.
	List(ctx context.Context, owner string, opts ...ListOption) ([]Backup, error)
	// Delete removes the backup with the given ID on behalf of owner. A backup
	// that does not exist is success; one started by another owner is
	// external.ErrConflict and stays in place.
	Delete(ctx context.Context, id, owner string) error
	// Content returns the content a succeeded backup holds, as its start
	// gave it (internal/backupcontent decodes it). A backup that does not exist, has
	// not succeeded, or was started without content is an error matching
	// external.ErrNotFound whose message says which.
	Content(ctx context.Context, id string) ([]byte, error)
}

// Explainer is implemented by a Client that can say, of a failed call, what
// is wrong and what to change, in the words of the settings a person gave
// it (a URL, a bucket, a credentials Secret, a permission), the same from
// one failure of that cause to the next, so a condition can carry it
// without churning. Both providers implement it: every failure's words name
// the cause (no answer and why: refused, timed out, TLS; refused
// credentials; a missing bucket or a wrong URL; a failing or throttling
// server; an answer it cannot read; a refused request) and the endpoint,
// and never a credential.
type Explainer interface {
	// Explain returns the cause and the way out of err, an error of one of
	// this client's calls, or false when it has nothing to say beyond the
	// error's kind (external.KindOf), such as a backup that does not exist.
	Explain(err error) (string, bool)
}

// MaxPayloadBytes bounds the content a backup may hold: what a client
// sends with a start and a provider stores. The content's format
// (internal/backupcontent) encodes a MyApp with its three children to a few
// KiB, so the limit only stops a mistake.
const MaxPayloadBytes = 1 << 20

// ContentIdentity is what a backup's content says of itself: whose backup it
// is and which start wrote it. A provider that files a backup by these (s3)
// checks them against the start before it stores the content.
type ContentIdentity struct {
	// Owner and IdempotencyKey are those of the start that wrote it.
	Owner          string
	IdempotencyKey string
	// BackupConfigNamespace, BackupConfigName and BackupConfigUID name the
	// BackupConfig that took it.
	BackupConfigNamespace string
	BackupConfigName      string
	BackupConfigUID       string
	// OwnerID is the installation's owner ID (--owner-id).
	OwnerID string
}

// ContentReader returns the identity a backup's content states, or an error
// for content a restore could not read. internal/backupcontent provides
// the one the controllers write; a provider is given it, so it stores
// nothing a restore would refuse without importing the content's format.
type ContentReader func(content []byte) (ContentIdentity, error)
