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

package dns

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// InstallationClaim is an installation's claim of its owner ID in the DNS
// service: whoever wrote it last, with a nonce that tells one writer from
// another. Two clusters that write records under one owner ID (a cluster
// restored from another's etcd snapshot keeps its kube-system UID; one
// values file shared by two clusters) would sweep each other's records;
// each writes its claim and, finding another's there, knows the ID is
// shared. The JSON tags are the HTTP service's wire format.
type InstallationClaim struct {
	// OwnerID is the owner ID claimed.
	OwnerID string `json:"ownerId"`
	// Nonce is random, drawn by each manager process that leads its
	// installation: one nonce, one writer.
	Nonce string `json:"nonce"`
	// Cluster is the claiming cluster's identity (its kube-system
	// namespace's UID), and Instance the manager that wrote the claim (its
	// pod's name): for the people told the ID is shared.
	Cluster  string `json:"cluster"`
	Instance string `json:"instance"`
	// CheckInterval is how often the writer reads the claim back, so a
	// reader knows how long a claim it wrote must stand before no other
	// installation can be reading it.
	CheckInterval time.Duration `json:"-"`
	// WrittenAt is when the service stored the claim.
	WrittenAt time.Time `json:"writtenAt,omitzero"`
}

// Validate checks what a claim holds against the rules the services
// enforce.
func (c *InstallationClaim) Validate() error {
	if err := contract.ValidateLabel(c.OwnerID); err != nil {
		return fmt.Errorf("ownerId: %w", err)
	}
	if err := contract.ValidateClaimNonce(c.Nonce); err != nil {
		return fmt.Errorf("nonce: %w", err)
	}
	if err := contract.ValidateClaimText(c.Cluster); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	if err := contract.ValidateClaimText(c.Instance); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	if c.CheckInterval < 0 {
		return errors.New("checkIntervalSeconds: must not be negative")
	}
	return nil
}

// InstallationClaims is a Client whose service keeps installation claims.
// A backend that does not is used without them: a shared owner ID is then
// not detected.
type InstallationClaims interface {
	// GetInstallationClaim returns the claim of ownerID, or an error
	// matching external.ErrNotFound when there is none.
	GetInstallationClaim(ctx context.Context, ownerID string) (InstallationClaim, error)
	// PutInstallationClaim stores claim under claim.OwnerID, replacing
	// whatever claim was there, whoever wrote it, and returns it as
	// stored. A service that keeps no claims answers an error matching
	// external.ErrNotFound or external.ErrInvalid; the caller takes every
	// error as a check that could not tell (the sweep waits), never as a
	// reason to stop checking.
	PutInstallationClaim(ctx context.Context, claim InstallationClaim) (InstallationClaim, error)
}
