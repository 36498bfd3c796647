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
	"net/netip"
	"strings"
)

// Limits of the contract, as documented in docs/external-api.md.
const (
	minTTL          = 30
	maxTTL          = 86400
	maxOwnerLen     = 253
	maxKeyLen       = 255
	maxLabels       = 32
	maxLabelKeyLen  = 63
	maxLabelValLen  = 253
	maxDNSNameLen   = 253
	maxDNSLabelLen  = 63
	maxAppNameLen   = 63
	recordTypeA     = "A"
	recordTypeCNAME = "CNAME"
)

// validateDNSName accepts a fully qualified name in lower case without a
// trailing dot, such as "www.example.com". Labels may hold letters, digits,
// hyphens and underscores (for names like "_acme-challenge"), and neither
// start nor end with a hyphen. Requiring one spelling per name keeps a record
// from existing twice under two spellings.
func validateDNSName(name string) error {
	if name == "" {
		return errors.New("must not be empty")
	}
	if len(name) > maxDNSNameLen {
		return fmt.Errorf("must be at most %d characters", maxDNSNameLen)
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return fmt.Errorf("%q is not fully qualified (want at least two labels, such as app.example.com)", name)
	}
	for _, label := range labels {
		if err := validateDNSLabel(label, true); err != nil {
			return fmt.Errorf("%q: %w", name, err)
		}
	}
	return nil
}

func validateDNSLabel(label string, allowUnderscore bool) error {
	if label == "" {
		return errors.New("has an empty label (lower case, no trailing dot)")
	}
	if len(label) > maxDNSLabelLen {
		return fmt.Errorf("label %q is longer than %d characters", label, maxDNSLabelLen)
	}
	if label[0] == '-' || label[len(label)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with a hyphen", label)
	}
	for _, c := range label {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c == '_' && allowUnderscore:
		default:
			return fmt.Errorf("label %q has character %q (want lower-case letters, digits and hyphens)", label, c)
		}
	}
	return nil
}

func validateRecord(req upsertRequest) error {
	switch req.Type {
	case recordTypeA:
		addr, err := netip.ParseAddr(req.Value)
		if err != nil || !addr.Is4() {
			return fmt.Errorf("value %q is not an IPv4 address, which an A record needs", req.Value)
		}
	case recordTypeCNAME:
		if err := validateDNSName(req.Value); err != nil {
			return fmt.Errorf("value of a CNAME record: %w", err)
		}
	case "":
		return errors.New("type is required (A or CNAME)")
	default:
		return fmt.Errorf("type %q is not supported (want A or CNAME)", req.Type)
	}
	if req.TTL < minTTL || req.TTL > maxTTL {
		return fmt.Errorf("ttl %d is outside %d-%d", req.TTL, minTTL, maxTTL)
	}
	if err := validateOwner(req.Owner); err != nil {
		return fmt.Errorf("owner: %w", err)
	}
	return nil
}

// validateOwner accepts identities such as "team-a", "shop/frontend" or a
// Kubernetes UID.
func validateOwner(owner string) error {
	if owner == "" {
		return errors.New("is required")
	}
	if len(owner) > maxOwnerLen {
		return fmt.Errorf("must be at most %d characters", maxOwnerLen)
	}
	for _, c := range owner {
		if !isAlnum(c) && !strings.ContainsRune("-._:/", c) {
			return fmt.Errorf("has character %q (want letters, digits and -._:/)", c)
		}
	}
	return nil
}

func validateAppName(app string) error {
	if app == "" {
		return errors.New("is required")
	}
	if len(app) > maxAppNameLen {
		return fmt.Errorf("must be at most %d characters", maxAppNameLen)
	}
	return validateDNSLabel(app, false)
}

func validateIdempotencyKey(key string) error {
	if key == "" {
		return errors.New("the Idempotency-Key header is required")
	}
	if len(key) > maxKeyLen {
		return fmt.Errorf("the Idempotency-Key header must be at most %d characters", maxKeyLen)
	}
	for _, c := range key {
		if c <= ' ' || c > '~' {
			return errors.New("the Idempotency-Key header must be printable ASCII without spaces")
		}
	}
	return nil
}

func validateLabels(labels map[string]string) error {
	if len(labels) > maxLabels {
		return fmt.Errorf("at most %d labels are allowed", maxLabels)
	}
	for k, v := range labels {
		if k == "" || len(k) > maxLabelKeyLen {
			return fmt.Errorf("label key %q must be 1-%d characters", k, maxLabelKeyLen)
		}
		for _, c := range k {
			if !isAlnum(c) && !strings.ContainsRune("-._/", c) {
				return fmt.Errorf("label key %q has character %q", k, c)
			}
		}
		if len(v) > maxLabelValLen {
			return fmt.Errorf("label %q: value must be at most %d characters", k, maxLabelValLen)
		}
	}
	return nil
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
