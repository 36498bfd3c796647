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

import "github.com/myapp-operator/myapp-operator/internal/external/dns/dnsrules"

// The service's limits, from docs/external-api.md. They are defined in
// package dnsrules, which the simulator enforces, so the operator and the
// simulator cannot disagree about them. The client leaves them to the
// service, the authority on what it accepts; the operator checks its flags
// and derived values against them, where a user can still fix a value.
const (
	// MinTTL and MaxTTL bound a record's TTL, in seconds.
	MinTTL = dnsrules.MinTTL
	MaxTTL = dnsrules.MaxTTL
	// MaxOwnerLength is the longest owner identity the service stores.
	MaxOwnerLength = dnsrules.MaxOwnerLength
	// MaxNameLength is the longest record name, dots included.
	MaxNameLength = dnsrules.MaxNameLength
	// MaxLabelLength is the longest label of a record name.
	MaxLabelLength = dnsrules.MaxLabelLength
)

// The validation functions return the messages the service puts in a 400,
// so a value refused early reads the same as one the service refused. Where
// a message does not say what it is about, prefix it, as in
// "owner: must be at most 253 characters".

// ValidateName accepts a record name: fully qualified, in lower case, without
// a trailing dot, such as "www.example.com", at most MaxNameLength
// characters. Labels hold letters, digits, hyphens and underscores and
// neither start nor end with a hyphen.
func ValidateName(name string) error { return dnsrules.ValidateName(name) }

// ValidateLabel accepts one host name label: 1 to MaxLabelLength lower-case
// letters, digits and hyphens, neither starting nor ending with a hyphen.
func ValidateLabel(label string) error { return dnsrules.ValidateLabel(label) }

// ValidateTarget accepts what a record of recordType may point at: an IPv4
// address for TypeA, a name that passes ValidateName for TypeCNAME. Any other
// type is an error.
func ValidateTarget(recordType, value string) error {
	return dnsrules.ValidateTarget(recordType, value)
}

// ValidateTTL accepts a TTL from MinTTL to MaxTTL seconds. It takes an int64
// so that a flag's int converts to it without overflowing first.
func ValidateTTL(ttl int64) error { return dnsrules.ValidateTTL(ttl) }

// ValidateOwner accepts an owner identity such as "team-a", "shop/frontend"
// or a Kubernetes UID: 1 to MaxOwnerLength ASCII letters, digits and -._:/.
// The backup service applies the same rule to the owners of backups.
func ValidateOwner(owner string) error { return dnsrules.ValidateOwner(owner) }
