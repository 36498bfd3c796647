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

// Package backup is the client of the external backup service described in
// docs/external-api.md. Starting a backup is keyed by an idempotency key, so a
// reconciler that repeats a start after a crash or a lost response gets the
// backup it already started, never a second one.
package backup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
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
	Phase          Phase  `json:"phase"`
	// SizeBytes and Location are set once the backup succeeded.
	SizeBytes int64  `json:"sizeBytes,omitempty"`
	Location  string `json:"location,omitempty"`
	// Reason is set once the backup failed.
	Reason      string            `json:"reason,omitempty"`
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
	// Namespace is the namespace of the BackupConfig starting the backup.
	// The s3 provider files the backup under it
	// (<prefix>/<owner-id>/<namespace>/<backupconfig-uid>/), so that a
	// restore into a rebuilt cluster finds a namespace's backups by listing
	// storage; when empty, it is read from the label LabelNamespace. The
	// HTTP service has no use for it and is not sent it.
	Namespace string
	// Payload is the backup's content, as EncodePayload writes it: at most
	// MaxPayloadBytes. The s3 provider requires it (the object is the
	// backup); the HTTP service stores it when given and serves it through
	// Content once the backup has succeeded.
	Payload []byte
}

// LabelNamespace is the label the BackupConfig controller stores the
// BackupConfig's namespace under; a provider that needs the namespace reads
// it from there when StartRequest.Namespace is empty.
const LabelNamespace = "backup.myapp.dev/namespace"

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
}

// InNamespace says in which namespace the owner's backups are filed.
func InNamespace(namespace string) ListOption {
	return func(o *ListOptions) { o.Namespace = namespace }
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
	// names, in whatever phase it has reached, without starting another. A
	// key used by another owner is external.ErrConflict carrying that owner; a
	// missing key is external.ErrInvalid and nothing is sent.
	Start(ctx context.Context, req StartRequest) (Backup, error)
	// Get returns the backup with the given ID, or an error matching
	// external.ErrNotFound. Poll it to learn when the backup finished.
	Get(ctx context.Context, id string) (Backup, error)
	// List returns the backups started by owner, or all backups when owner is
	// empty, oldest first. Options narrow where the provider looks, never
	// what it answers.
	List(ctx context.Context, owner string, opts ...ListOption) ([]Backup, error)
	// Delete removes the backup with the given ID on behalf of owner. A backup
	// that does not exist is success; one started by another owner is
	// external.ErrConflict and stays in place.
	Delete(ctx context.Context, id, owner string) error
	// Content returns the content a succeeded backup holds, as its start
	// gave it (DecodePayload reads it). A backup that does not exist, has
	// not succeeded, or was started without content is an error matching
	// external.ErrNotFound whose message says which.
	Content(ctx context.Context, id string) ([]byte, error)
}

// Explainer is implemented by a Client that can say, of a failed call, what
// is wrong and what to change, in the words of the settings a person gave
// it (a bucket, a credentials Secret, a permission), the same from one
// failure of that cause to the next, so a condition can carry it without
// churning. The HTTP service's client does not: the service's own answers
// are not worded for a condition, and the controller words them by kind.
type Explainer interface {
	// Explain returns the cause and the way out of err, an error of one of
	// this client's calls, or false when it has nothing to say beyond the
	// error's kind (external.KindOf).
	Explain(err error) (string, bool)
}

// New returns a Client for the backup service described by cfg.
func New(cfg external.Config) (Client, error) {
	api, err := httpapi.New(ServiceName, cfg)
	if err != nil {
		return nil, err
	}
	return &client{api: api}, nil
}

type client struct {
	api *httpapi.Client
}

// startBody is the request body of a start; the key travels in a header.
type startBody struct {
	App    string            `json:"app"`
	Owner  string            `json:"owner"`
	Labels map[string]string `json:"labels,omitempty"`
	// Content is sent base64-encoded, as encoding/json writes []byte.
	Content []byte `json:"content,omitempty"`
}

func (c *client) Start(ctx context.Context, req StartRequest) (Backup, error) {
	switch {
	case req.IdempotencyKey == "":
		return Backup{}, c.api.Invalid("start", "idempotency key is required")
	case req.App == "":
		return Backup{}, c.api.Invalid("start", "app is required")
	case req.Owner == "":
		return Backup{}, c.api.Invalid("start", "owner is required")
	case len(req.Payload) > MaxPayloadBytes:
		return Backup{}, c.api.Invalid("start", fmt.Sprintf("content is %d bytes, more than the %d a backup may hold",
			len(req.Payload), MaxPayloadBytes))
	}
	out := backupBody{key: req.IdempotencyKey}
	err := c.api.Do(ctx, httpapi.Call{
		Operation:      "start",
		Method:         http.MethodPost,
		Path:           backupsPath(),
		Body:           startBody{App: req.App, Owner: req.Owner, Labels: req.Labels, Content: req.Payload},
		IdempotencyKey: req.IdempotencyKey,
	}, &out)
	if err != nil {
		return Backup{}, err
	}
	return out.Backup, nil
}

func (c *client) Get(ctx context.Context, id string) (Backup, error) {
	if id == "" {
		return Backup{}, c.api.Invalid("get", "backup ID is required")
	}
	out := backupBody{id: id}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "get",
		Method:    http.MethodGet,
		Path:      backupsPath(id),
	}, &out)
	if err != nil {
		return Backup{}, err
	}
	return out.Backup, nil
}

// List ignores the options: the service finds an owner's backups by owner.
func (c *client) List(ctx context.Context, owner string, _ ...ListOption) ([]Backup, error) {
	var query url.Values
	if owner != "" {
		query = url.Values{"owner": {owner}}
	}
	var out listBody
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "list",
		Method:    http.MethodGet,
		Path:      backupsPath(),
		Query:     query,
	}, &out)
	if err != nil {
		return nil, err
	}
	if owner != "" {
		// The query is only a request: a proxy or an older service that drops
		// it answers with every owner's backups, and a caller waiting for its
		// own to be gone would then wait forever.
		out.Backups = slices.DeleteFunc(out.Backups, func(b Backup) bool { return b.Owner != owner })
	}
	return out.Backups, nil
}

func (c *client) Delete(ctx context.Context, id, owner string) error {
	switch {
	case id == "":
		return c.api.Invalid("delete", "backup ID is required")
	case owner == "":
		return c.api.Invalid("delete", "owner is required")
	}
	return c.api.Do(ctx, httpapi.Call{
		Operation:  "delete",
		Method:     http.MethodDelete,
		Path:       backupsPath(id),
		Query:      url.Values{"owner": {owner}},
		NotFoundOK: true,
	}, nil)
}

func (c *client) Content(ctx context.Context, id string) ([]byte, error) {
	if id == "" {
		return nil, c.api.Invalid("content", "backup ID is required")
	}
	out := contentBody{id: id}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "content",
		Method:    http.MethodGet,
		Path:      backupsPath(id, "content"),
	}, &out)
	if err != nil {
		return nil, err
	}
	return out.Content, nil
}

// contentBody is the response of a content call.
type contentBody struct {
	ID      string `json:"id"`
	Content []byte `json:"content"`
	// id is the backup asked about.
	id string
}

func (b *contentBody) Validate() error {
	switch {
	case b.ID != b.id:
		return fmt.Errorf("asked for the content of backup %q, got that of %q", b.id, b.ID)
	case len(b.Content) == 0:
		return fmt.Errorf("backup %q: the answer holds no content", b.id)
	case len(b.Content) > MaxPayloadBytes:
		return fmt.Errorf("backup %q: content is %d bytes, more than the %d a backup may hold", b.id, len(b.Content), MaxPayloadBytes)
	}
	return nil
}

// backupsPath is the path of the backup collection, or of the backup with
// the given ID when one is given.
func backupsPath(id ...string) []string {
	return append([]string{"backup", "v1", "backups"}, id...)
}

// backupBody is a Backup read from a response, checked before it is trusted.
type backupBody struct {
	Backup
	// id and key are what the call asked about; a response about another
	// backup means something between the client and the service is broken.
	id, key string
}

func (b *backupBody) Validate() error {
	if err := validateBackup(&b.Backup); err != nil {
		return err
	}
	if b.id != "" && b.ID != b.id {
		return fmt.Errorf("asked for backup %q, got %q", b.id, b.ID)
	}
	if b.key != "" && b.IdempotencyKey != b.key {
		return fmt.Errorf("started with idempotency key %q, got backup %q with key %q", b.key, b.ID, b.IdempotencyKey)
	}
	return nil
}

// listBody is the response of a list call.
type listBody struct {
	Backups []Backup `json:"backups"`
}

func (l *listBody) Validate() error {
	if l.Backups == nil {
		return errors.New(`missing "backups"`)
	}
	for i := range l.Backups {
		if err := validateBackup(&l.Backups[i]); err != nil {
			return fmt.Errorf("backups[%d]: %w", i, err)
		}
	}
	return nil
}

func validateBackup(b *Backup) error {
	switch {
	case b.ID == "":
		return errors.New("backup has no id")
	case b.App == "":
		return fmt.Errorf("backup %q has no app", b.ID)
	case b.Owner == "":
		return fmt.Errorf("backup %q has no owner", b.ID)
	}
	switch b.Phase {
	case PhaseRunning:
	case PhaseSucceeded:
		if b.Location == "" {
			return fmt.Errorf("backup %q succeeded without a location", b.ID)
		}
	case PhaseFailed:
		if b.Reason == "" {
			return fmt.Errorf("backup %q failed without a reason", b.ID)
		}
	default:
		return fmt.Errorf("backup %q has unknown phase %q", b.ID, b.Phase)
	}
	return nil
}
