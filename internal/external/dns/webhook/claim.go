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

package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// An installation claim (extdns.InstallationClaims) lives where the RFC 2136
// client keeps it, at "_myapp-installation.<owner-id>.<zone>", as one TXT
// record. The protocol carries a TXT value as one string, and a provider
// behind it may store one DNS character-string of at most 255 bytes, so the
// claim is one quoted string of comma-separated "key=value" pairs (nonce,
// cluster, instance, every, written) of at most maxClaimValue bytes. It has
// no "heritage=external-dns" field, so external-dns's TXT registry never
// takes it for one of its own; its first label starts with an underscore,
// which no MyApp host has (the CRD refuses it) and which checkName refuses,
// so it is never a record's name; and the zone state keeps it apart from
// the names it manages, so no record list, drift pass or sweep sees it.
const claimLabel = extdns.InstallationLabel

// claimTTL is the claim's TTL: it is read through the protocol, never
// through a resolver's cache, so it only matters to people using dig.
const claimTTL = 60

// maxClaimValue is the longest claim value written: one DNS
// character-string.
const maxClaimValue = 255

var _ extdns.InstallationClaims = (*Client)(nil)

// claimState is what the zone holds at a claim's name.
type claimState struct {
	name string
	// txts are the TXT record sets at the name, as read: claims, or
	// anything else written there by hand.
	txts []Endpoint
	// externalDNS are the owner IDs of external-dns TXT registry records
	// at the name, which make it external-dns's.
	externalDNS []string
}

// holdsOnly reports whether the name holds want and nothing else.
func (s claimState) holdsOnly(want Endpoint) bool {
	return len(s.txts) == 1 && sameEndpoint(s.txts[0], want)
}

func (s claimState) fingerprint() string { return fingerprint(s.txts, s.externalDNS) }

// claimName is where ownerID's claim lives. The server's domain filter
// must cover it: a provider drops changes to names outside its filter and
// answers 2xx, so a claim written there would read back as never written.
func (c *Client) claimName(op, ownerID string) (string, error) {
	if err := contract.ValidateLabel(ownerID); err != nil {
		return "", c.fail(op, external.KindInvalid, "owner ID: "+err.Error(), nil)
	}
	name := claimLabel + "." + ownerID + "." + c.zone
	if len(name) > contract.MaxNameLength {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("the claim name %s is longer than a domain name may be", name), nil)
	}
	m, err := c.DomainFilter().matcher()
	if err != nil || !m.match(name) {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("the webhook server's domain filter (%s) does not cover the "+
			"installation claim's name %s", c.DomainFilter(), name), nil)
	}
	return name, nil
}

// GetInstallationClaim reads ownerID's claim. It is always read from a zone
// read sent after the call: a cached read could hold this client's own
// claim, written since, where another installation's now stands, which is
// exactly what the check is for. Writes of this client that finished
// before the call are never applied to that read (only those that finish
// while it is in flight are, and the owner ID claim's loop makes its
// reads and writes one at a time). A TXT at the name that is not a claim
// is no claim. Two claims at once, which only a last-writer-wins provider
// can leave (two writers' creates merged), read as the one written last:
// the writer whose claim that is not finds another's, and its next write
// replaces both, so each installation in turn finds the other's.
func (c *Client) GetInstallationClaim(ctx context.Context, ownerID string) (_ extdns.InstallationClaim, err error) {
	const op = "get-claim"
	defer c.observe(op, time.Now(), &err)
	if err := contract.ValidateLabel(ownerID); err != nil {
		return extdns.InstallationClaim{}, c.fail(op, external.KindInvalid, "owner ID: "+err.Error(), nil)
	}
	if err := c.ready(ctx); err != nil {
		return extdns.InstallationClaim{}, err
	}
	name, err := c.claimName(op, ownerID)
	if err != nil {
		return extdns.InstallationClaim{}, err
	}
	st, err := c.cache.claimAt(ctx, name, true)
	if err != nil {
		return extdns.InstallationClaim{}, err
	}
	var found []extdns.InstallationClaim
	for _, ep := range st.txts {
		for _, t := range ep.Targets {
			if claim, ok := parseClaim(ownerID, t); ok {
				found = append(found, claim)
			}
		}
	}
	if len(found) == 0 {
		return extdns.InstallationClaim{}, c.fail(op, external.KindNotFound, "no installation claims owner ID "+ownerID, nil)
	}
	if len(found) > 1 {
		c.log.V(1).Info("Several installation claims of one owner ID; reading the one written last", "ownerID", ownerID, "claims", len(found))
	}
	return slices.MaxFunc(found, func(a, b extdns.InstallationClaim) int {
		if n := a.WrittenAt.Compare(b.WrittenAt); n != 0 {
			return n
		}
		return strings.Compare(a.Nonce, b.Nonce)
	}), nil
}

// PutInstallationClaim replaces ownerID's claim, whoever wrote it, with the
// compare-and-swap the client makes for records: a create where there is
// none; otherwise a delete of the TXT exactly as read and a create of the
// new one, in one batch where the provider takes a change in one batch and
// in two (deletes, then the create) where it does not. On an atomic
// provider a claim another writer changed meanwhile makes the batch fail,
// and the claim is decided again on a fresh read; on a last-writer-wins
// provider the read is made just before the write. Every answer but a 2xx
// leaves the outcome unknown and the zone is read again: the claim in
// place is success, a zone unchanged is the server's refusal, anything
// else is planned again. A name that external-dns's registry claims is a
// conflict, never written.
func (c *Client) PutInstallationClaim(ctx context.Context, claim extdns.InstallationClaim) (_ extdns.InstallationClaim, err error) {
	const op = "put-claim"
	defer c.observe(op, time.Now(), &err)
	if err := claim.Validate(); err != nil {
		return extdns.InstallationClaim{}, c.fail(op, external.KindInvalid, "installation claim: "+err.Error(), nil)
	}
	if err := c.ready(ctx); err != nil {
		return extdns.InstallationClaim{}, err
	}
	name, err := c.claimName(op, claim.OwnerID)
	if err != nil {
		return extdns.InstallationClaim{}, err
	}
	defer c.locks.lock(name)()
	claim.WrittenAt = c.now().UTC().Truncate(time.Second)
	claim, value := fitClaim(claim)
	want := Endpoint{DNSName: name, RecordType: typeTXT, Targets: []string{`"` + value + `"`}, RecordTTL: claimTTL}
	class, oneBatch := c.measured()
	fresh := class != extdns.ClassAtomic
	for range 3 {
		st, err := c.cache.claimAt(ctx, name, fresh)
		if err != nil {
			return extdns.InstallationClaim{}, err
		}
		if len(st.externalDNS) > 0 {
			e := c.fail(op, external.KindConflict, fmt.Sprintf("%s is managed by external-dns (a heritage=external-dns TXT registry "+
				"record claims it); this operator never writes a name external-dns owns, so it cannot claim owner ID %s here",
				name, claim.OwnerID), nil)
			e.Owner = ExternalDNSHolder(st.externalDNS[0])
			return extdns.InstallationClaim{}, e
		}
		if st.holdsOnly(want) {
			// Written already this second: a delete and a create of one value
			// would be no change at best, and on a provider that applies the
			// creates before the deletes, a deletion.
			return claim, nil
		}
		steps := replaceSteps(Changes{Delete: slices.Clone(st.txts), Create: []Endpoint{want}}, oneBatch)
		err = c.apply(ctx, op, name, steps)
		if err == nil {
			c.log.V(1).Info("Wrote installation claim", "ownerID", claim.OwnerID, "name", name)
			return claim, nil
		}
		if !outcomeUnknown(err) {
			return extdns.InstallationClaim{}, err
		}
		now, rerr := c.cache.claimAt(ctx, name, true)
		switch {
		case rerr != nil:
			return extdns.InstallationClaim{}, errors.Join(err, rerr)
		case now.holdsOnly(want):
			c.log.V(1).Info("An installation claim whose answer was an error is in place", "ownerID", claim.OwnerID, "error", err.Error())
			return claim, nil
		case now.fingerprint() == st.fingerprint():
			return extdns.InstallationClaim{}, c.refused(err, nameState{name: name})
		}
		fresh = true // another writer changed it: decide again on what is there now
	}
	return extdns.InstallationClaim{}, c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

// fitClaim returns the claim as it will be stored and its value: when the
// value would be longer than maxClaimValue, the cluster and the instance
// share what is left, each shortened to its end (a UID's and a pod name's
// distinct part), the longer one first. They are for people; the nonce,
// which decides, is never shortened, and with it at its longest the two
// have about 120 bytes.
func fitClaim(claim extdns.InstallationClaim) (extdns.InstallationClaim, string) {
	budget := maxClaimValue - (len(claimValue(claim)) - len(claim.Cluster) - len(claim.Instance))
	if len(claim.Cluster)+len(claim.Instance) > budget {
		half := budget / 2
		keepCluster, keepInstance := half, budget-half
		switch {
		case len(claim.Cluster) <= half:
			keepCluster, keepInstance = len(claim.Cluster), budget-len(claim.Cluster)
		case len(claim.Instance) <= budget-half:
			keepCluster, keepInstance = budget-len(claim.Instance), len(claim.Instance)
		}
		claim.Cluster = claim.Cluster[len(claim.Cluster)-keepCluster:]
		claim.Instance = claim.Instance[len(claim.Instance)-keepInstance:]
	}
	return claim, claimValue(claim)
}

func claimValue(claim extdns.InstallationClaim) string {
	return "nonce=" + claim.Nonce +
		",cluster=" + claim.Cluster +
		",instance=" + claim.Instance +
		",every=" + strconv.FormatFloat(claim.CheckInterval.Seconds(), 'f', -1, 64) +
		",written=" + claim.WrittenAt.UTC().Format(time.RFC3339)
}

// parseClaim reads a claim's value; ok is false for a TXT that is not a
// valid claim. Besides commas it takes spaces and quotes between the
// pairs, so a claim written as several strings (the RFC 2136 client's
// form) reads too where a provider joins them.
func parseClaim(ownerID, value string) (extdns.InstallationClaim, bool) {
	claim := extdns.InstallationClaim{OwnerID: ownerID}
	var haveNonce bool
	for _, pair := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '"' }) {
		key, v, _ := strings.Cut(pair, "=")
		switch key {
		case "nonce":
			claim.Nonce, haveNonce = v, true
		case "cluster":
			claim.Cluster = v
		case "instance":
			claim.Instance = v
		case "every":
			seconds, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return extdns.InstallationClaim{}, false
			}
			claim.CheckInterval = time.Duration(seconds * float64(time.Second))
		case "written":
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return extdns.InstallationClaim{}, false
			}
			claim.WrittenAt = t
		}
	}
	return claim, haveNonce && claim.Validate() == nil
}
