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

package httpdns

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
)

var _ dns.InstallationClaims = (*client)(nil)

// claimBody is a claim on the wire: the check interval in seconds.
type claimBody struct {
	dns.InstallationClaim
	CheckIntervalSeconds float64 `json:"checkIntervalSeconds"`
	// ownerID is the owner ID the call asked about.
	ownerID string
}

func (b *claimBody) Validate() error {
	b.CheckInterval = time.Duration(b.CheckIntervalSeconds * float64(time.Second))
	if err := b.InstallationClaim.Validate(); err != nil {
		return err
	}
	if b.OwnerID != b.ownerID {
		return fmt.Errorf("asked for the claim of %q, got %q", b.ownerID, b.OwnerID)
	}
	return nil
}

// putClaimBody is the request body of a claim's PUT; the owner ID travels
// in the path.
type putClaimBody struct {
	Nonce                string  `json:"nonce"`
	Cluster              string  `json:"cluster"`
	Instance             string  `json:"instance"`
	CheckIntervalSeconds float64 `json:"checkIntervalSeconds"`
}

func (c *client) GetInstallationClaim(ctx context.Context, ownerID string) (dns.InstallationClaim, error) {
	if err := contract.ValidateLabel(ownerID); err != nil {
		return dns.InstallationClaim{}, c.api.Invalid("get-claim", "owner ID: "+err.Error())
	}
	out := claimBody{ownerID: ownerID}
	if err := c.api.Do(ctx, httpapi.Call{
		Operation: "get-claim",
		Method:    http.MethodGet,
		Path:      installationsPath(ownerID),
	}, &out); err != nil {
		return dns.InstallationClaim{}, err
	}
	return out.InstallationClaim, nil
}

func (c *client) PutInstallationClaim(ctx context.Context, claim dns.InstallationClaim) (dns.InstallationClaim, error) {
	if err := claim.Validate(); err != nil {
		return dns.InstallationClaim{}, c.api.Invalid("put-claim", err.Error())
	}
	out := claimBody{ownerID: claim.OwnerID}
	// A PUT of the whole claim is idempotent, so the client may retry it
	// after a lost response like any other PUT.
	if err := c.api.Do(ctx, httpapi.Call{
		Operation: "put-claim",
		Method:    http.MethodPut,
		Path:      installationsPath(claim.OwnerID),
		Body: putClaimBody{Nonce: claim.Nonce, Cluster: claim.Cluster, Instance: claim.Instance,
			CheckIntervalSeconds: claim.CheckInterval.Seconds()},
	}, &out); err != nil {
		return dns.InstallationClaim{}, err
	}
	if out.Nonce != claim.Nonce {
		// An answer that is not the claim written would let a writer believe
		// it holds a claim it does not.
		return dns.InstallationClaim{}, c.api.Invalid("put-claim", "the service answered another claim than the one written")
	}
	return out.InstallationClaim, nil
}

// installationsPath is the path of ownerID's claim.
func installationsPath(ownerID string) []string {
	return []string{"dns", "v1", "installations", ownerID}
}
