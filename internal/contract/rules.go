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

// Package contract holds the external services' validation rules from
// docs/external-api.md: record names, targets and TTLs of the DNS service,
// app names of the backup service, and the owner identities both store. The
// simulator enforces exactly these rules and the clients and the manager's
// flag checks use them too; the package has no dependencies, so the
// simulator does not link a client, nor a client the simulator.
package contract

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Record types the service accepts.
const (
	TypeA     = "A"
	TypeCNAME = "CNAME"
)

// The service's limits. The simulator enforces them and the operator checks
// its flags and derived values against them, so a value the service would
// refuse is caught where the user can fix it.
const (
	// MinTTL and MaxTTL bound a record's TTL, in seconds.
	MinTTL = 30
	MaxTTL = 86400
	// MaxOwnerLength is the longest owner identity the service stores.
	MaxOwnerLength = 253
	// MaxNameLength is the longest record name, dots included.
	MaxNameLength = 253
	// MaxLabelLength is the longest label of a record name.
	MaxLabelLength = 63
	// MaxClaimNonceLength and MaxClaimTextLength bound an installation
	// claim's nonce, and its cluster and instance.
	MaxClaimNonceLength = 64
	MaxClaimTextLength  = 253
	// MaxStartTokenLength bounds a backup start's token.
	MaxStartTokenLength = 64
)

// The validation functions below return the messages the service puts in a
// 400, so a value refused early reads the same as one the service refused.
// Where a message does not say what it is about, callers prefix it, as in
// "owner: must be at most 253 characters".

// ValidateName accepts a record name: fully qualified, in lower case, without
// a trailing dot, such as "www.example.com". Labels hold letters, digits,
// hyphens and underscores (for names like "_acme-challenge") and neither
// start nor end with a hyphen. Requiring one spelling per name keeps a record
// from existing twice under two spellings.
func ValidateName(name string) error {
	if name == "" {
		return errors.New("must not be empty")
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("must be at most %d characters", MaxNameLength)
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 {
		return fmt.Errorf("%q is not fully qualified (want at least two labels, such as app.example.com)", name)
	}
	for _, label := range labels {
		if err := validateLabel(label, true); err != nil {
			return fmt.Errorf("%q: %w", name, err)
		}
	}
	return nil
}

// ValidateLabel accepts one host name label: 1 to MaxLabelLength lower-case
// letters, digits and hyphens, neither starting nor ending with a hyphen. The
// backup service names apps this way.
func ValidateLabel(label string) error {
	return validateLabel(label, false)
}

func validateLabel(label string, allowUnderscore bool) error {
	if label == "" {
		return errors.New("has an empty label (lower case, no trailing dot)")
	}
	if len(label) > MaxLabelLength {
		return fmt.Errorf("label %q is longer than %d characters", label, MaxLabelLength)
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

// ValidateTarget accepts what a record of recordType may point at: an IPv4
// address for TypeA, and a name that passes ValidateName for TypeCNAME. Any
// other type is an error. The messages name the type or the value.
func ValidateTarget(recordType, value string) error {
	switch recordType {
	case TypeA:
		addr, err := netip.ParseAddr(value)
		if err != nil || !addr.Is4() {
			return fmt.Errorf("value %q is not an IPv4 address, which an A record needs", value)
		}
	case TypeCNAME:
		if err := ValidateName(value); err != nil {
			return fmt.Errorf("value of a CNAME record: %w", err)
		}
	case "":
		return errors.New("type is required (A or CNAME)")
	default:
		return fmt.Errorf("type %q is not supported (want A or CNAME)", recordType)
	}
	return nil
}

// ValidateTTL accepts a TTL from MinTTL to MaxTTL seconds. It takes an int64
// so that a flag's int converts to it without overflowing first.
func ValidateTTL(ttl int64) error {
	if ttl < MinTTL || ttl > MaxTTL {
		return fmt.Errorf("%d is outside %d-%d", ttl, MinTTL, MaxTTL)
	}
	return nil
}

// ValidateOwner accepts an owner identity such as "team-a", "shop/frontend"
// or a Kubernetes UID: 1 to MaxOwnerLength ASCII letters, digits and -._:/.
// The backup service applies the same rule to the owners of backups.
func ValidateOwner(owner string) error {
	if owner == "" {
		return errors.New("is required")
	}
	if len(owner) > MaxOwnerLength {
		return fmt.Errorf("must be at most %d characters", MaxOwnerLength)
	}
	for _, c := range owner {
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && !strings.ContainsRune("-._:/", c) {
			return fmt.Errorf("has character %q (want letters, digits and -._:/)", c)
		}
	}
	return nil
}

// ValidateClaimNonce accepts an installation claim's nonce: 1 to
// MaxClaimNonceLength lower-case letters and digits.
func ValidateClaimNonce(nonce string) error {
	if nonce == "" {
		return errors.New("is required")
	}
	if len(nonce) > MaxClaimNonceLength {
		return fmt.Errorf("must be at most %d characters", MaxClaimNonceLength)
	}
	for _, c := range nonce {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return fmt.Errorf("has character %q (want a-z and 0-9)", c)
		}
	}
	return nil
}

// ValidateClaimText accepts an installation claim's cluster or instance:
// up to MaxClaimTextLength ASCII letters, digits and -._:/, or nothing when
// the writer does not know it.
func ValidateClaimText(text string) error {
	if len(text) > MaxClaimTextLength {
		return fmt.Errorf("must be at most %d characters", MaxClaimTextLength)
	}
	for _, c := range text {
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && !strings.ContainsRune("-._:/", c) {
			return fmt.Errorf("has character %q (want letters, digits and -._:/)", c)
		}
	}
	return nil
}

// ValidateStartToken accepts a backup start's token: nothing (a start that
// sends none), or up to MaxStartTokenLength ASCII letters, digits and -._.
// The token is stored with the backup and read back as it was sent, so the
// rule keeps to what every provider stores unchanged (an S3 object's
// metadata included).
func ValidateStartToken(token string) error {
	if len(token) > MaxStartTokenLength {
		return fmt.Errorf("must be at most %d characters", MaxStartTokenLength)
	}
	for _, c := range token {
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && !strings.ContainsRune("-._", c) {
			return fmt.Errorf("has character %q (want letters, digits and -._)", c)
		}
	}
	return nil
}
