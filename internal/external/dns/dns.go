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

// Package dns is the contract every DNS backend keeps: the Client
// interface, the Record it reads and writes, the optional interfaces a
// backend may add (OwnerPrefixPager, InstallationClaims, Classer), and the
// owner-record convention (owner.go) the backends that write their own
// owner records share. Every call is idempotent in crossplane's sense, so a
// reconciler can repeat any of them after a crash or a lost response.
//
// Each backend is a package of its own beside this one, and they never
// import each other: httpdns (the HTTP DNS service of
// docs/external-api.md), rfc2136 (a DNS server taking dynamic updates) and
// webhook (a provider behind external-dns's webhook protocol).
// cmd/manager picks one with --dns-provider from one table.
package dns

import (
	"context"
	"errors"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// ServiceName names the service in errors, logs and metrics.
const ServiceName = "dns"

// RecordState says whether a record is visible to resolvers yet.
type RecordState string

const (
	// StatePending means the last change is still propagating.
	StatePending RecordState = "PENDING"
	// StateActive means resolvers serve the record as stored.
	StateActive RecordState = "ACTIVE"
)

// Record types the service accepts.
const (
	TypeA     = contract.TypeA
	TypeCNAME = contract.TypeCNAME
)

// Record is one DNS record as the service stores it. The JSON tags are the
// wire format.
type Record struct {
	// Name is the fully qualified name in lower case, without a trailing dot.
	Name string `json:"name"`
	// Type is TypeA or TypeCNAME.
	Type string `json:"type"`
	// Value is an IPv4 address for A records and a host name for CNAME records.
	Value string `json:"value"`
	// TTL is the time to live in seconds.
	TTL int32 `json:"ttl"`
	// Owner identifies who manages the record; only that owner may change or
	// delete it.
	Owner string `json:"owner"`
	// State is set by the service; it is ignored in an upsert.
	State RecordState `json:"state,omitempty"`
	// CreatedAt and UpdatedAt are set by the service. UpdatedAt moves only when
	// an upsert changes the record.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// ErrNotServed is wrapped by the error (external.KindInvalid) a backend
// gives for a name outside what it serves: its zone, or a provider's domain
// filter. No retry can write such a name, and the error's message names
// what leaves it out, so a MyApp's condition can say it.
var ErrNotServed = errors.New("the DNS backend does not serve this name")

// Client manages records in the DNS service.
type Client interface {
	// Upsert creates the record or brings it to the given type, value and TTL,
	// and returns what the service stored. A change leaves the record
	// StatePending until it has propagated; an upsert that changes nothing
	// returns the record untouched, StateActive included, so repairing drift by
	// repeating the desired upsert is free. A record held by another owner is
	// not touched: the error matches external.ErrConflict and names that owner.
	Upsert(ctx context.Context, rec Record) (Record, error)
	// Get returns the record called name, or an error matching
	// external.ErrNotFound. Poll it to learn when a change became StateActive.
	Get(ctx context.Context, name string) (Record, error)
	// Delete removes the record called name on behalf of owner. A record that
	// does not exist is success; one held by another owner is
	// external.ErrConflict and stays in place.
	Delete(ctx context.Context, name, owner string) error
	// List returns the records held by owner, or every record when owner is
	// empty, sorted by name. It follows the service's pages to the end, so
	// the list is whole however many records there are; a record written
	// during the listing is in it or not according to its name.
	List(ctx context.Context, owner string) ([]Record, error)
	// ListByOwnerPrefix returns the records whose owner starts with prefix,
	// sorted by name: every record a family of owners (one operator's
	// "myapp-operator/...") holds, whoever of them it is. An empty prefix is
	// external.ErrInvalid, so a caller cannot mistake every record in the
	// service for its own. It follows the pages as List does.
	ListByOwnerPrefix(ctx context.Context, prefix string) ([]Record, error)
	// Transfer changes the owner of the record called name from "from" to
	// "to" in one step and returns the record. A record owned by anyone but
	// "from" is not touched: the error matches external.ErrConflict and
	// names the holder. A missing record is external.ErrNotFound. A record
	// already owned by "to" is success, so a transfer can be repeated after
	// a lost response. Resolvers see no change, so the state stays as it was.
	Transfer(ctx context.Context, name, from, to string) (Record, error)
}

// PageToken is where a paged list goes on: the zero value is its first page.
// It is the backend's own: a caller passes back the token it was given.
type PageToken struct {
	// Token is the service's token for the page.
	Token string
	// After is the last name of the pages before.
	After string
}

// OwnerPrefixPager is a Client that lists the records of a family of owners
// one page at a time, so a caller can spread a large list over time and
// retry a failed page without starting again. The HTTP client is one; a
// client that is not (RFC 2136, whose list is one streamed zone transfer)
// is listed whole with ListByOwnerPrefix.
type OwnerPrefixPager interface {
	// ListPageByOwnerPrefix returns the page at from (PageToken{} for the
	// first) of the records whose owner starts with prefix, sorted by name,
	// and where the next page starts; more is false on the last page. An
	// empty prefix is external.ErrInvalid, as in ListByOwnerPrefix.
	ListPageByOwnerPrefix(ctx context.Context, prefix string, from PageToken) (records []Record, next PageToken, more bool, err error)
}

// Class is what a provider does with a write another writer got to first.
type Class string

const (
	// ClassUnknown is the class of a provider not measured yet.
	ClassUnknown Class = ""
	// ClassAtomic is a provider that refuses a create of a name that exists
	// and a delete of a value that is not there, so a compare-and-swap
	// batch lets one of several concurrent writers win and the others fail.
	ClassAtomic Class = "atomic"
	// ClassLastWriterWins is a provider that applies a batch without those
	// conditions: a lost race is detected by a read after the write, never
	// prevented.
	ClassLastWriterWins Class = "last_writer_wins"
)

// Classer is a Client whose provider's class is measured, not known in
// advance (the webhook client probes it at start). A Client that is not a
// Classer is atomic: the HTTP service and RFC 2136 check every write on
// the server.
type Classer interface {
	// Class returns the class measured, ClassUnknown before it was.
	Class() Class
}

// TwoBatchTransferer is implemented by a client whose Transfer may be made
// in two batches (the webhook client, on a provider that cannot replace a
// record set in one): cut between them, it leaves the name with its
// address and no owner (UnmanagedOwner), which only that Transfer, called
// again, finishes. A caller records the transfer somewhere that outlives
// it (the MyApp's status.dnsTransfer) before the call, so that the next
// pass knows what to finish.
type TwoBatchTransferer interface {
	// TransfersInTwoBatches reports whether a Transfer may be cut between
	// two batches.
	TransfersInTwoBatches() bool
}

// TransfersInTwoBatches reports whether c's Transfer may be cut between
// two batches (TwoBatchTransferer); false for a client that does not say.
func TransfersInTwoBatches(c Client) bool {
	t, ok := c.(TwoBatchTransferer)
	return ok && t.TransfersInTwoBatches()
}

// ClassOf returns c's class: what it measured when it is a Classer,
// ClassAtomic otherwise.
func ClassOf(c Client) Class {
	if k, ok := c.(Classer); ok {
		return k.Class()
	}
	return ClassAtomic
}
