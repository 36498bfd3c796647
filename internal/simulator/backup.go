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

package simulator

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// startRequest is the body of POST /backup/v1/backups.
type startRequest struct {
	App    string            `json:"app"`
	Owner  string            `json:"owner"`
	Labels map[string]string `json:"labels,omitempty"`
	// StartToken is stored with the backup this start creates and answered
	// from then on, so a client learns whether its start created the backup
	// or found one an earlier start of the key created.
	StartToken string `json:"startToken,omitempty"`
	// Content is the backup's content, base64 in JSON; the simulator stores
	// it without reading it, as a real service would.
	Content []byte `json:"content,omitempty"`
}

func (s *Server) startBackup(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	if err := validateIdempotencyKey(key); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error(), "")
		return
	}
	var req startRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if err := validateAppName(req.App); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "app: "+err.Error(), "")
		return
	}
	if err := contract.ValidateOwner(req.Owner); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "owner: "+err.Error(), "")
		return
	}
	if err := validateLabels(req.Labels); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "labels: "+err.Error(), "")
		return
	}
	if err := contract.ValidateStartToken(req.StartToken); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "startToken: "+err.Error(), "")
		return
	}
	if req.Content != nil && len(req.Content) == 0 || len(req.Content) > maxContentBytes {
		writeError(w, http.StatusBadRequest, "invalid",
			fmt.Sprintf("content must be 1 to %d bytes when given, got %d", maxContentBytes, len(req.Content)), "")
		return
	}

	s.mu.Lock()
	now := s.now()
	if id, ok := s.backupKeys[key]; ok {
		// A repeated start is answered with the backup the key already names,
		// so a client that lost the first answer never starts a second one.
		b := s.backups[id]
		switch {
		case b.Owner != req.Owner:
			owner := b.Owner
			s.mu.Unlock()
			writeError(w, http.StatusConflict, "conflict",
				fmt.Sprintf("idempotency key %q belongs to backup %s of another owner", key, id), owner)
		case b.App != req.App:
			app := b.App
			s.mu.Unlock()
			writeError(w, http.StatusUnprocessableEntity, "invalid",
				fmt.Sprintf("idempotency key %q was used to back up app %q, not %q", key, app, req.App), "")
		default:
			view := b.view(now)
			s.mu.Unlock()
			writeJSON(w, http.StatusOK, view)
		}
		return
	}

	b := &storedBackup{
		ID:             fmt.Sprintf("bk-%06d", s.nextBackupID),
		App:            req.App,
		Owner:          req.Owner,
		IdempotencyKey: key,
		StartToken:     req.StartToken,
		Labels:         maps.Clone(req.Labels),
		Content:        req.Content,
		StartedAt:      now,
		CompletesAt:    now.Add(s.backupDuration),
	}
	s.nextBackupID++
	if s.backupFailReason != "" {
		b.FailReason = s.backupFailReason
		if s.backupFailRemaining > 0 {
			s.backupFailRemaining--
			if s.backupFailRemaining == 0 {
				s.backupFailReason = ""
			}
		}
	}
	s.backups[b.ID] = b
	s.backupKeys[key] = b.ID
	// A start always answers RUNNING: completion is only ever observed by
	// polling, even when the duration is zero.
	view := b.view(b.StartedAt.Add(-1))
	snapshot := s.snapshotLocked()
	s.mu.Unlock()

	s.save(snapshot)
	writeJSON(w, http.StatusCreated, view)
}

func (s *Server) getBackup(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	now := s.now()
	b, ok := s.backups[id]
	if !ok || !s.visibleLocked(ServiceBackup, b.StartedAt, now) {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("backup %q does not exist", id), "")
		return
	}
	view := b.view(now)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, view)
}

// getBackupContent serves what a succeeded backup holds. Every other case
// is a 404 whose message says why there is nothing to read, so a restore can
// tell "wait" (RUNNING) from "never" (FAILED, started without content).
func (s *Server) getBackupContent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	now := s.now()
	b, ok := s.backups[id]
	if !ok || !s.visibleLocked(ServiceBackup, b.StartedAt, now) {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("backup %q does not exist", id), "")
		return
	}
	view, content := b.view(now), b.Content
	s.mu.Unlock()
	switch {
	case view.Phase == PhaseRunning:
		writeError(w, http.StatusNotFound, "no_content",
			fmt.Sprintf("backup %q is still RUNNING; its content is served once it has succeeded", id), "")
	case view.Phase == PhaseFailed:
		writeError(w, http.StatusNotFound, "no_content", fmt.Sprintf("backup %q FAILED (%s) and holds no content", id, view.Reason), "")
	case content == nil:
		writeError(w, http.StatusNotFound, "no_content", fmt.Sprintf("backup %q was started without content", id), "")
	default:
		writeJSON(w, http.StatusOK, contentResponse{ID: id, Content: content})
	}
}

// contentResponse is the body of GET /backup/v1/backups/{id}/content.
type contentResponse struct {
	ID      string `json:"id"`
	Content []byte `json:"content"`
}

func (s *Server) deleteBackup(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	owner := r.URL.Query().Get("owner")
	if err := contract.ValidateOwner(owner); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "owner query parameter: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	b, ok := s.backups[id]
	switch {
	case !ok:
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("backup %q does not exist", id), "")
		return
	case b.Owner != owner:
		current := b.Owner
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("backup %q is owned by %q", id, current), current)
		return
	}
	// Deleting frees the idempotency key: the backup it named is gone, so a
	// later start with the key begins a new one.
	delete(s.backups, id)
	delete(s.backupKeys, b.IdempotencyKey)
	snapshot := s.snapshotLocked()
	s.mu.Unlock()

	s.save(snapshot)
	w.WriteHeader(http.StatusNoContent)
}

// Backup list pages: a list answers at most DefaultBackupPageSize backups
// unless ?limit= asks for fewer (or up to MaxBackupPageSize).
const (
	DefaultBackupPageSize = 1000
	MaxBackupPageSize     = 1000
)

// backupPage is the body of GET /backup/v1/backups.
type backupPage struct {
	Backups []Backup `json:"backups"`
	// NextPageToken, when set, asks for the next page; the last page has none.
	NextPageToken string `json:"nextPageToken,omitempty"`
}

func (s *Server) listBackups(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := DefaultBackupPageSize
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxBackupPageSize {
			writeError(w, http.StatusBadRequest, "invalid",
				fmt.Sprintf("limit must be a number from 1 to %d, not %q", MaxBackupPageSize, v), "")
			return
		}
		limit = n
	}
	labels, err := labelFilter(q["label"])
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error(), "")
		return
	}
	after, ok := decodeBackupPageToken(q.Get("pageToken"))
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("pageToken: %q is not a token this service issued", q.Get("pageToken")), "")
		return
	}
	s.mu.Lock()
	backups := s.listBackupsLocked(q.Get("owner"), q.Get("app"), true)
	s.mu.Unlock()
	backups = slices.DeleteFunc(backups, func(b Backup) bool {
		for k, v := range labels {
			if got, ok := b.Labels[k]; !ok || got != v {
				return true
			}
		}
		return false
	})

	// A page holds the backups that come after the token's in the list's
	// order (start time, then ID), so backups started or deleted between
	// two pages never shift the others: each backup that exists throughout
	// the listing is answered exactly once.
	if after.id != "" {
		backups = backups[sort.Search(len(backups), func(i int) bool { return after.before(backups[i]) }):]
	}
	page := backupPage{Backups: backups}
	if len(backups) > limit {
		page.Backups = backups[:limit]
		last := page.Backups[limit-1]
		page.NextPageToken = encodeBackupPageToken(backupPosition{startedAt: last.StartedAt, id: last.ID})
	}
	writeJSON(w, http.StatusOK, page)
}

// labelFilter reads the ?label=key=value filters of a list; a backup is
// listed when its labels hold each of them.
func labelFilter(values []string) (map[string]string, error) {
	out := make(map[string]string, len(values))
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("label must be key=value, not %q", v)
		}
		out[k] = val
	}
	return out, nil
}

// backupPosition is a place in the list's order: a backup's start time and
// ID.
type backupPosition struct {
	startedAt time.Time
	id        string
}

// before reports whether the position comes before b in the list's order.
func (p backupPosition) before(b Backup) bool {
	if c := p.startedAt.Compare(b.StartedAt); c != 0 {
		return c < 0
	}
	return p.id < b.ID
}

// encodeBackupPageToken makes the token of the page after position p.
// Clients treat it as opaque; it is the start time and the ID,
// base64url-encoded.
func encodeBackupPageToken(p backupPosition) string {
	return base64.RawURLEncoding.EncodeToString([]byte(p.startedAt.UTC().Format(time.RFC3339Nano) + " " + p.id))
}

// decodeBackupPageToken returns the position a page token continues after,
// the zero position for no token (the first page), and false for a token
// this service did not issue.
func decodeBackupPageToken(token string) (backupPosition, bool) {
	if token == "" {
		return backupPosition{}, true
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return backupPosition{}, false
	}
	at, id, ok := strings.Cut(string(raw), " ")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || id == "" {
		return backupPosition{}, false
	}
	return backupPosition{startedAt: t, id: id}, true
}

// listBackupsLocked returns the backups of owner and app (all when empty),
// oldest first; consistent hides backups still inside the consistency delay.
func (s *Server) listBackupsLocked(owner, app string, consistent bool) []Backup {
	now := s.now()
	out := make([]Backup, 0, len(s.backups))
	for _, b := range s.backups {
		if owner != "" && b.Owner != owner || app != "" && b.App != app {
			continue
		}
		if consistent && !s.visibleLocked(ServiceBackup, b.StartedAt, now) {
			continue
		}
		out = append(out, b.view(now))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.Before(out[j].StartedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}
