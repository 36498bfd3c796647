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
	"fmt"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// The owner-record convention of the backends that keep owners in the zone
// themselves (RFC 2136, the webhook provider): each record name N carries
// its owner in a TXT record at OwnerLabel.N whose single string is the
// owner identity, and an installation's claim of its owner ID lives at
// InstallationLabel.<owner ID>.<zone>.

// OwnerLabel is the first label of the name an owner TXT record lives at.
const OwnerLabel = "_myapp-owner"

// InstallationLabel is the first label of the name an installation claim
// lives at.
const InstallationLabel = "_myapp-installation"

// MaxNameLength is the longest record name a backend that writes owner
// records manages: the owner name, OwnerLabel and a dot in front of it,
// must fit the 253 characters a domain name may have.
const MaxNameLength = contract.MaxNameLength - len(OwnerLabel) - 1

// UnmanagedOwner is the Owner of a record that has no owner TXT: one someone
// wrote by hand, or one a webhook transfer cut between its two batches
// left (only that Transfer, called again, takes it; see the webhook
// package). No owner identity can equal it (parentheses are not allowed in
// one), so nothing a client writes ever matches it.
const UnmanagedOwner = "(unmanaged)"

// OwnerProblem says what makes owner unusable as a record's owner, or ""
// when nothing does. The clients that write records themselves (RFC 2136,
// the webhook provider) check it before they send anything, as the DNS
// service checks it on its side.
func OwnerProblem(owner string) string {
	if owner == "" {
		return "record owner is required"
	}
	if err := contract.ValidateOwner(owner); err != nil {
		return "record owner: " + err.Error()
	}
	return ""
}

// RecordProblem says what makes rec unwritable (its owner, target or TTL),
// or "" when nothing does; the name is each client's to check, against its
// zone.
func RecordProblem(rec Record) string {
	if p := OwnerProblem(rec.Owner); p != "" {
		return p
	}
	if err := contract.ValidateTarget(rec.Type, rec.Value); err != nil {
		return fmt.Sprintf("record %s %s: %v", rec.Type, rec.Value, err)
	}
	if err := contract.ValidateTTL(int64(rec.TTL)); err != nil {
		return "record TTL: " + err.Error()
	}
	return ""
}
