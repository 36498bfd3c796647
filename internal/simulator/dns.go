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
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// upsertRequest is the body of PUT /dns/v1/records/{name}.
type upsertRequest struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	TTL   int32  `json:"ttl"`
	Owner string `json:"owner"`
}

func (s *Server) upsertRecord(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := contract.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "name: "+err.Error(), "")
		return
	}
	var req upsertRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if err := validateRecord(req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error(), "")
		return
	}

	s.mu.Lock()
	now := s.now()
	rec, exists := s.records[name]
	switch {
	case exists && rec.Owner != req.Owner:
		owner := rec.Owner
		s.mu.Unlock()
		// The service never lets one owner overwrite another's record; the
		// owner is returned so the caller can tell its user who holds it.
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("record %q is owned by %q", name, owner), owner)
		return
	case exists && rec.Type == req.Type && rec.Value == req.Value && rec.TTL == req.TTL:
		// Nothing changes, so nothing propagates: an ACTIVE record stays
		// ACTIVE, which is what lets a reconciler repeat its upsert freely.
		view := rec.view(now)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, view)
		return
	}
	status := http.StatusOK
	if !exists {
		rec = &storedRecord{Name: name, Owner: req.Owner, CreatedAt: now}
		s.records[name] = rec
		status = http.StatusCreated
	}
	rec.Type, rec.Value, rec.TTL = req.Type, req.Value, req.TTL
	rec.UpdatedAt = now
	rec.ActiveAt = now.Add(s.propagationDelay)
	view := rec.view(now)
	// A write always answers PENDING: propagation is only ever observed by
	// polling, even when the delay is zero.
	view.State = StatePending
	snapshot := s.snapshotLocked()
	s.mu.Unlock()

	s.save(snapshot)
	writeJSON(w, status, view)
}

func (s *Server) getRecord(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := contract.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "name: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	now := s.now()
	rec, ok := s.records[name]
	if !ok || !s.visibleLocked(ServiceDNS, rec.CreatedAt, now) {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("record %q does not exist", name), "")
		return
	}
	view := rec.view(now)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, view)
}

func (s *Server) deleteRecord(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := contract.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "name: "+err.Error(), "")
		return
	}
	owner := r.URL.Query().Get("owner")
	if err := contract.ValidateOwner(owner); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "owner query parameter: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	rec, ok := s.records[name]
	switch {
	case !ok:
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("record %q does not exist", name), "")
		return
	case rec.Owner != owner:
		current := rec.Owner
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("record %q is owned by %q", name, current), current)
		return
	}
	delete(s.records, name)
	snapshot := s.snapshotLocked()
	s.mu.Unlock()

	s.save(snapshot)
	w.WriteHeader(http.StatusNoContent)
}

// transferRequest is the body of PUT /dns/v1/records/{name}/owner.
type transferRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// transferRecord hands a record from one owner to another in one step, so a
// record is never ownerless and two claimants cannot both win: the change
// happens only while the owner is still "from". A record already owned by
// "to" is answered as it is, which makes a repeated transfer harmless.
func (s *Server) transferRecord(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := contract.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "name: "+err.Error(), "")
		return
	}
	var req transferRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if err := contract.ValidateOwner(req.From); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "from: "+err.Error(), "")
		return
	}
	if err := contract.ValidateOwner(req.To); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "to: "+err.Error(), "")
		return
	}

	s.mu.Lock()
	now := s.now()
	rec, ok := s.records[name]
	switch {
	case !ok:
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("record %q does not exist", name), "")
		return
	case rec.Owner == req.To:
		view := rec.view(now)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, view)
		return
	case rec.Owner != req.From:
		current := rec.Owner
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("record %q is owned by %q", name, current), current)
		return
	}
	// Resolvers serve the same answer whoever owns the record, so a
	// transfer leaves its state alone: an ACTIVE record stays ACTIVE.
	rec.Owner = req.To
	rec.UpdatedAt = now
	view := rec.view(now)
	snapshot := s.snapshotLocked()
	s.mu.Unlock()

	s.save(snapshot)
	writeJSON(w, http.StatusOK, view)
}

// Record list pages: a list answers at most DefaultRecordPageSize records
// unless ?limit= asks for fewer (or up to MaxRecordPageSize).
const (
	DefaultRecordPageSize = 1000
	MaxRecordPageSize     = 1000
)

// recordPage is the body of GET /dns/v1/records.
type recordPage struct {
	Records []Record `json:"records"`
	// NextPageToken, when set, asks for the next page; the last page has none.
	NextPageToken string `json:"nextPageToken,omitempty"`
}

func (s *Server) listRecords(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	owner, prefix := query.Get("owner"), query.Get("ownerPrefix")
	limit := DefaultRecordPageSize
	if v := query.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxRecordPageSize {
			writeError(w, http.StatusBadRequest, "invalid",
				fmt.Sprintf("limit must be a number from 1 to %d, not %q", MaxRecordPageSize, v), "")
			return
		}
		limit = n
	}
	after, err := decodePageToken(query.Get("pageToken"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "pageToken: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	records := s.listRecordsLocked(owner, prefix, true)
	s.mu.Unlock()

	// A page holds the records named after the token's name, so records
	// written or deleted between two pages never shift the others: each
	// record that exists throughout the listing is answered exactly once.
	if after != "" {
		records = records[sort.Search(len(records), func(i int) bool { return records[i].Name > after }):]
	}
	page := recordPage{Records: records}
	if len(records) > limit {
		page.Records = records[:limit]
		page.NextPageToken = encodePageToken(page.Records[limit-1].Name)
	}
	writeJSON(w, http.StatusOK, page)
}

// encodePageToken makes the token of the page after the record called name.
// Clients treat it as opaque; it is the name, base64url-encoded.
func encodePageToken(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(name))
}

// decodePageToken returns the name a page token continues after, or "" for
// no token (the first page).
func decodePageToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	name, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || contract.ValidateName(string(name)) != nil {
		return "", fmt.Errorf("%q is not a token this service issued", token)
	}
	return string(name), nil
}

// listRecordsLocked returns the records of owner and whose owner starts with
// prefix (either filter off when empty) sorted by name; consistent hides
// records still inside the consistency delay.
func (s *Server) listRecordsLocked(owner, prefix string, consistent bool) []Record {
	now := s.now()
	out := make([]Record, 0, len(s.records))
	for _, rec := range s.records {
		if owner != "" && rec.Owner != owner {
			continue
		}
		if !strings.HasPrefix(rec.Owner, prefix) {
			continue
		}
		if consistent && !s.visibleLocked(ServiceDNS, rec.CreatedAt, now) {
			continue
		}
		out = append(out, rec.view(now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// visibleLocked reports whether an object created at created can be read
// yet, given the service's consistency delay.
func (s *Server) visibleLocked(service Service, created, now time.Time) bool {
	delay := s.consistencyDelay[service]
	return delay == 0 || !now.Before(created.Add(delay))
}
