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

package rfc2136

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// An installation claim lives at "_myapp-installation.<owner-id>.<zone>"
// (extdns.InstallationLabel), a TXT record whose strings are "key=value"
// pairs (nonce, cluster, instance, every in seconds, written). Like the
// owner label, its first label cannot be a host name.

// claimTTL is the TTL of a claim record: it is read from the primary, never
// through a cache, so it only matters to people looking at it with dig.
const claimTTL = 60

var _ extdns.InstallationClaims = (*Client)(nil)

// claimName is where ownerID's claim lives.
func (c *Client) claimName(op, ownerID string) (string, error) {
	if err := contract.ValidateLabel(ownerID); err != nil {
		return "", c.fail(op, external.KindInvalid, "owner ID: "+err.Error(), nil)
	}
	name := extdns.InstallationLabel + "." + ownerID + "." + c.zone
	if len(name) > contract.MaxNameLength+1 { // the zone is fully qualified
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("the claim name %s is longer than a domain name may be", name), nil)
	}
	return name, nil
}

// GetInstallationClaim reads ownerID's claim from the primary. A TXT there
// that is not a claim (one made up from a wildcard, one written by hand)
// is no claim.
func (c *Client) GetInstallationClaim(ctx context.Context, ownerID string) (_ extdns.InstallationClaim, err error) {
	const op = "get-claim"
	defer c.observe(op, time.Now(), &err)
	name, err := c.claimName(op, ownerID)
	if err != nil {
		return extdns.InstallationClaim{}, err
	}
	r, err := c.query(ctx, op, c.server, name, dns.TypeTXT, true)
	if err != nil {
		return extdns.InstallationClaim{}, err
	}
	for _, rr := range r.Answer {
		txt, ok := rr.(*dns.TXT)
		if !ok || !strings.EqualFold(rr.Header().Name, name) {
			continue
		}
		if claim, ok := parseClaim(ownerID, txt.Txt); ok {
			return claim, nil
		}
	}
	return extdns.InstallationClaim{}, c.fail(op, external.KindNotFound, "no installation claims owner ID "+ownerID, nil)
}

// PutInstallationClaim replaces ownerID's claim with one UPDATE: whatever
// TXT was there goes, the new claim comes, atomically.
func (c *Client) PutInstallationClaim(ctx context.Context, claim extdns.InstallationClaim) (_ extdns.InstallationClaim, err error) {
	const op = "put-claim"
	defer c.observe(op, time.Now(), &err)
	if err := claim.Validate(); err != nil {
		return extdns.InstallationClaim{}, c.fail(op, external.KindInvalid, "installation claim: "+err.Error(), nil)
	}
	name, err := c.claimName(op, claim.OwnerID)
	if err != nil {
		return extdns.InstallationClaim{}, err
	}
	claim.WrittenAt = c.now().UTC().Truncate(time.Second)
	m := c.newUpdate()
	m.RemoveRRset([]dns.RR{typedRR(name, dns.TypeTXT)})
	m.Insert([]dns.RR{&dns.TXT{
		Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: claimTTL},
		Txt: []string{
			"nonce=" + claim.Nonce,
			"cluster=" + claim.Cluster,
			"instance=" + claim.Instance,
			"every=" + strconv.FormatFloat(claim.CheckInterval.Seconds(), 'f', -1, 64),
			"written=" + claim.WrittenAt.Format(time.RFC3339),
		},
	}})
	if err := c.update(ctx, op, m); err != nil {
		// The update has no prerequisite: a failed one cannot happen.
		return extdns.InstallationClaim{}, err
	}
	c.log.V(1).Info("Wrote installation claim", "ownerID", claim.OwnerID, "name", name)
	return claim, nil
}

// parseClaim reads a claim's strings; ok is false for a TXT that is not a
// valid claim.
func parseClaim(ownerID string, strs []string) (extdns.InstallationClaim, bool) {
	claim := extdns.InstallationClaim{OwnerID: ownerID}
	for _, s := range strs {
		key, value, _ := strings.Cut(s, "=")
		switch key {
		case "nonce":
			claim.Nonce = value
		case "cluster":
			claim.Cluster = value
		case "instance":
			claim.Instance = value
		case "every":
			seconds, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return extdns.InstallationClaim{}, false
			}
			claim.CheckInterval = time.Duration(seconds * float64(time.Second))
		case "written":
			t, err := time.Parse(time.RFC3339, value)
			if err != nil {
				return extdns.InstallationClaim{}, false
			}
			claim.WrittenAt = t
		}
	}
	return claim, claim.Validate() == nil
}
