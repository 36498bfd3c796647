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
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// InstallationClaim is an installation's claim of its owner ID, as the
// service stores and answers it: the last one written under the owner ID.
type InstallationClaim struct {
	OwnerID              string    `json:"ownerId"`
	Nonce                string    `json:"nonce"`
	Cluster              string    `json:"cluster"`
	Instance             string    `json:"instance"`
	CheckIntervalSeconds float64   `json:"checkIntervalSeconds"`
	WrittenAt            time.Time `json:"writtenAt"`
}

// putClaimRequest is the body of PUT /dns/v1/installations/{ownerId}.
type putClaimRequest struct {
	Nonce                string  `json:"nonce"`
	Cluster              string  `json:"cluster"`
	Instance             string  `json:"instance"`
	CheckIntervalSeconds float64 `json:"checkIntervalSeconds"`
}

func (req putClaimRequest) validate() error {
	if err := contract.ValidateClaimNonce(req.Nonce); err != nil {
		return fmt.Errorf("nonce: %w", err)
	}
	if err := contract.ValidateClaimText(req.Cluster); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := contract.ValidateClaimText(req.Instance); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	if req.CheckIntervalSeconds < 0 {
		return errors.New("checkIntervalSeconds: must not be negative")
	}
	return nil
}

// putClaim stores a claim under the owner ID in the path, replacing any: a
// claim is whoever wrote it last, so the installation that wrote it can
// tell, on reading it back, whether another one wrote since.
func (s *Server) putClaim(w http.ResponseWriter, r *http.Request) {
	ownerID := r.PathValue("ownerId")
	if err := contract.ValidateLabel(ownerID); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "ownerId: "+err.Error(), "")
		return
	}
	var req putClaimRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if err := req.validate(); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", err.Error(), "")
		return
	}
	s.mu.Lock()
	_, existed := s.claims[ownerID]
	claim := &InstallationClaim{OwnerID: ownerID, Nonce: req.Nonce, Cluster: req.Cluster, Instance: req.Instance,
		CheckIntervalSeconds: req.CheckIntervalSeconds, WrittenAt: s.now()}
	s.claims[ownerID] = claim
	view := *claim
	snapshot := s.snapshotLocked()
	s.mu.Unlock()

	s.save(snapshot)
	status := http.StatusOK
	if !existed {
		status = http.StatusCreated
	}
	writeJSON(w, status, view)
}

func (s *Server) getClaim(w http.ResponseWriter, r *http.Request) {
	ownerID := r.PathValue("ownerId")
	if err := contract.ValidateLabel(ownerID); err != nil {
		writeError(w, http.StatusBadRequest, "invalid", "ownerId: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	claim, ok := s.claims[ownerID]
	var view InstallationClaim
	if ok {
		view = *claim
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no installation claims owner ID %q", ownerID), "")
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// Claims returns every stored installation claim, sorted by owner ID.
func (s *Server) Claims() []InstallationClaim {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]InstallationClaim, 0, len(s.claims))
	for _, c := range s.claims {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OwnerID < out[j].OwnerID })
	return out
}
