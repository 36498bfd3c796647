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

// Package httpbackup is the backup provider of the HTTP backup service
// described in docs/external-api.md: a backup.Client that starts, polls,
// lists, deletes and reads backups through the service's API.
package httpbackup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
)

// New returns a backup.Client for the backup service described by cfg.
func New(cfg external.Config) (backup.Client, error) {
	api, err := httpapi.New(backup.ServiceName, cfg)
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
	// StartToken is stored with the backup the start creates.
	StartToken string `json:"startToken,omitempty"`
	// Content is sent base64-encoded, as encoding/json writes []byte.
	Content []byte `json:"content,omitempty"`
}

func (c *client) Start(ctx context.Context, req backup.StartRequest) (backup.Backup, error) {
	switch {
	case req.IdempotencyKey == "":
		return backup.Backup{}, c.api.Invalid(opStart, "idempotency key is required")
	case req.App == "":
		return backup.Backup{}, c.api.Invalid(opStart, "app is required")
	case req.Owner == "":
		return backup.Backup{}, c.api.Invalid(opStart, "owner is required")
	case len(req.Payload) > backup.MaxPayloadBytes:
		return backup.Backup{}, c.api.Invalid(opStart, fmt.Sprintf("content is %d bytes, more than the %d a backup may hold",
			len(req.Payload), backup.MaxPayloadBytes))
	}
	if err := contract.ValidateStartToken(req.StartToken); err != nil {
		return backup.Backup{}, c.api.Invalid(opStart, "start token "+err.Error())
	}
	out := backupBody{key: req.IdempotencyKey}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: opStart,
		Method:    http.MethodPost,
		Path:      backupsPath(),
		Body: startBody{App: req.App, Owner: req.Owner, Labels: req.Labels, StartToken: req.StartToken,
			Content: req.Payload},
		IdempotencyKey: req.IdempotencyKey,
	}, &out)
	if err != nil {
		return backup.Backup{}, err
	}
	return out.Backup, nil
}

func (c *client) Get(ctx context.Context, id string) (backup.Backup, error) {
	if !mayName(id) {
		return backup.Backup{}, unknownID("get", id)
	}
	out := backupBody{id: id}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "get",
		Method:    http.MethodGet,
		Path:      backupsPath(id),
	}, &out)
	if err != nil {
		return backup.Backup{}, err
	}
	return out.Backup, nil
}

// List follows the service's pages to the end. The owner and the labels
// are sent as filters, so the service answers only those backups; the
// answer is filtered again, because a proxy or an older service that drops
// a filter would answer with every backup, and a caller waiting for its own
// to be gone would then wait forever.
func (c *client) List(ctx context.Context, owner string, opts ...backup.ListOption) ([]backup.Backup, error) {
	o := backup.ApplyListOptions(opts...)
	query := url.Values{}
	if owner != "" {
		query.Set("owner", owner)
	}
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		query.Add("label", k+"="+o.Labels[k])
	}
	var all []backup.Backup
	token := ""
	for {
		q := maps.Clone(query)
		if token != "" {
			q.Set("pageToken", token)
		}
		var out listBody
		err := c.api.Do(ctx, httpapi.Call{
			Operation: opList,
			Method:    http.MethodGet,
			Path:      backupsPath(),
			Query:     q,
		}, &out)
		if err != nil {
			return nil, err
		}
		if n := len(all); n > 0 && len(out.Backups) > 0 && !listedAfter(out.Backups[0], all[n-1]) {
			return nil, listError(fmt.Sprintf("the page after token %q does not continue the list (backup %q after %q)",
				token, out.Backups[0].ID, all[n-1].ID))
		}
		all = append(all, out.Backups...)
		if out.NextPageToken == "" {
			break
		}
		if out.NextPageToken == token {
			return nil, listError(fmt.Sprintf("the service answered page token %q with itself", token))
		}
		token = out.NextPageToken
	}
	return slices.DeleteFunc(all, func(b backup.Backup) bool {
		return owner != "" && b.Owner != owner || !o.Matches(b)
	}), nil
}

// listedAfter reports whether b comes after prev in the list's order: start
// time, then ID.
func listedAfter(b, prev backup.Backup) bool {
	if c := b.StartedAt.Compare(prev.StartedAt); c != 0 {
		return c > 0
	}
	return b.ID > prev.ID
}

// listError is a listing that cannot go on: a retry may find the service
// (or whatever stands between) answering pages in order again.
func listError(message string) error {
	return &external.Error{Kind: external.KindTransient, Service: backup.ServiceName, Operation: opList, Message: message}
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
	if !mayName(id) {
		return nil, unknownID("content", id)
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
	case len(b.Content) > backup.MaxPayloadBytes:
		return fmt.Errorf("backup %q: content is %d bytes, more than the %d a backup may hold", b.id, len(b.Content), backup.MaxPayloadBytes)
	}
	return nil
}

// mayName reports whether id could be an ID the service gave: one path
// segment of the collection (a / in it is escaped), other than the empty
// one, . and .., which would name the collection or its parent.
func mayName(id string) bool {
	return id != "" && id != "." && id != ".."
}

// unknownID answers a read of an ID no backup can have: not found, so a
// Restore naming it fails BackupNotFound rather than retrying for ever.
// Nothing is sent.
func unknownID(op, id string) error {
	return &external.Error{Kind: external.KindNotFound, Service: backup.ServiceName, Operation: op,
		Message: fmt.Sprintf("backup %q does not exist: an ID is one path segment, other than . and ..", id)}
}

// backupsPath is the path of the backup collection, or of the backup with
// the given ID when one is given.
func backupsPath(id ...string) []string {
	return append([]string{"backup", "v1", "backups"}, id...)
}

// backupBody is a backup.Backup read from a response, checked before it is trusted.
type backupBody struct {
	backup.Backup
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

// listBody is a page of the response of a list call.
type listBody struct {
	Backups []backup.Backup `json:"backups"`
	// NextPageToken asks for the next page; the last page has none.
	NextPageToken string `json:"nextPageToken,omitempty"`
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

func validateBackup(b *backup.Backup) error {
	switch {
	case b.ID == "":
		return errors.New("backup has no id")
	case b.App == "":
		return fmt.Errorf("backup %q has no app", b.ID)
	case b.Owner == "":
		return fmt.Errorf("backup %q has no owner", b.ID)
	}
	switch b.Phase {
	case backup.PhaseRunning:
	case backup.PhaseSucceeded:
		if b.Location == "" {
			return fmt.Errorf("backup %q succeeded without a location", b.ID)
		}
	case backup.PhaseFailed:
		if b.Reason == "" {
			return fmt.Errorf("backup %q failed without a reason", b.ID)
		}
	default:
		return fmt.Errorf("backup %q has unknown phase %q", b.ID, b.Phase)
	}
	return nil
}
