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

// Package dns is the client of the external DNS service described in
// docs/external-api.md. Every call is idempotent in crossplane's sense, so a
// reconciler can repeat any of them after a crash or a lost response.
package dns

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
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

// New returns a Client for the DNS service described by cfg.
func New(cfg external.Config) (Client, error) {
	api, err := httpapi.New(ServiceName, cfg)
	if err != nil {
		return nil, err
	}
	return &client{api: api}, nil
}

type client struct {
	api *httpapi.Client
}

// upsertBody is the request body of an upsert; the name travels in the path.
type upsertBody struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	TTL   int32  `json:"ttl"`
	Owner string `json:"owner"`
}

func (c *client) Upsert(ctx context.Context, rec Record) (Record, error) {
	switch {
	case rec.Name == "":
		return Record{}, c.api.Invalid("upsert", "record name is required")
	case rec.Owner == "":
		return Record{}, c.api.Invalid("upsert", "record owner is required")
	case rec.Type != TypeA && rec.Type != TypeCNAME:
		return Record{}, c.api.Invalid("upsert", fmt.Sprintf("record type must be A or CNAME, not %q", rec.Type))
	case rec.Value == "":
		return Record{}, c.api.Invalid("upsert", "record value is required")
	case rec.TTL <= 0:
		return Record{}, c.api.Invalid("upsert", "record TTL must be positive")
	}
	out := recordBody{name: rec.Name}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "upsert",
		Method:    http.MethodPut,
		Path:      recordsPath(rec.Name),
		Body:      upsertBody{Type: rec.Type, Value: rec.Value, TTL: rec.TTL, Owner: rec.Owner},
	}, &out)
	if err != nil {
		return Record{}, err
	}
	return out.Record, nil
}

func (c *client) Get(ctx context.Context, name string) (Record, error) {
	if name == "" {
		return Record{}, c.api.Invalid("get", "record name is required")
	}
	out := recordBody{name: name}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "get",
		Method:    http.MethodGet,
		Path:      recordsPath(name),
	}, &out)
	if err != nil {
		return Record{}, err
	}
	return out.Record, nil
}

func (c *client) Delete(ctx context.Context, name, owner string) error {
	switch {
	case name == "":
		return c.api.Invalid("delete", "record name is required")
	case owner == "":
		return c.api.Invalid("delete", "record owner is required")
	}
	return c.api.Do(ctx, httpapi.Call{
		Operation:  "delete",
		Method:     http.MethodDelete,
		Path:       recordsPath(name),
		Query:      url.Values{"owner": {owner}},
		NotFoundOK: true,
	}, nil)
}

func (c *client) List(ctx context.Context, owner string) ([]Record, error) {
	var query url.Values
	if owner != "" {
		query = url.Values{"owner": {owner}}
	}
	return c.list(ctx, query, func(r Record) bool {
		// The query is only a request: a proxy or an older service that drops
		// it answers with every owner's records, and a caller waiting for its
		// own to be gone would then wait forever.
		return owner == "" || r.Owner == owner
	})
}

func (c *client) ListByOwnerPrefix(ctx context.Context, prefix string) ([]Record, error) {
	if prefix == "" {
		return nil, c.api.Invalid("list", "owner prefix is required")
	}
	// As in List: a service that ignores the filter must not make every
	// record look like one of ours to a caller about to delete them.
	return c.list(ctx, url.Values{"ownerPrefix": {prefix}}, ownerPrefixed(prefix))
}

// ownerPrefixed keeps the records whose owner starts with prefix.
func ownerPrefixed(prefix string) func(Record) bool {
	return func(r Record) bool { return strings.HasPrefix(r.Owner, prefix) }
}

// keepRecords filters page in place to the records keep accepts.
func keepRecords(page []Record, keep func(Record) bool) []Record {
	kept := page[:0]
	for _, r := range page {
		if keep(r) {
			kept = append(kept, r)
		}
	}
	return kept
}

// list follows the pages of a list with query to the end and returns the
// records keep accepts. A page without a token is the last one, which is
// also how a service that does not page answers.
func (c *client) list(ctx context.Context, query url.Values, keep func(Record) bool) ([]Record, error) {
	var out []Record
	var at PageToken
	for {
		page, next, more, err := c.listPage(ctx, query, at)
		if err != nil {
			return nil, err
		}
		out = append(out, keepRecords(page, keep)...)
		if !more {
			if out == nil {
				out = []Record{}
			}
			return out, nil
		}
		at = next
	}
}

// PageToken is where a paged list goes on: the zero value is its first page.
type PageToken struct {
	// token is the service's token for the page.
	token string
	// after is the last name of the pages before.
	after string
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

var _ OwnerPrefixPager = (*client)(nil)

func (c *client) ListPageByOwnerPrefix(ctx context.Context, prefix string, from PageToken) ([]Record, PageToken, bool, error) {
	if prefix == "" {
		return nil, PageToken{}, false, c.api.Invalid("list", "owner prefix is required")
	}
	page, next, more, err := c.listPage(ctx, url.Values{"ownerPrefix": {prefix}}, from)
	if err != nil {
		return nil, PageToken{}, false, err
	}
	// As in ListByOwnerPrefix: a service that ignores the filter must not
	// make every record look like one of ours.
	return keepRecords(page, ownerPrefixed(prefix)), next, more, nil
}

// listPage reads the page at of a list with query. Each page continues after
// the last name of the one before (docs/external-api.md), so the client
// requires every page to continue the name order: a service or a proxy that
// ignored the token and answered a page again would otherwise make the walk
// repeat records or never end.
func (c *client) listPage(ctx context.Context, query url.Values, at PageToken) ([]Record, PageToken, bool, error) {
	q := maps.Clone(query)
	if at.token != "" {
		if q == nil {
			q = url.Values{}
		}
		q.Set("pageToken", at.token)
	}
	page := listBody{after: at.after, token: at.token}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "list",
		Method:    http.MethodGet,
		Path:      recordsPath(),
		Query:     q,
	}, &page)
	if err != nil {
		return nil, PageToken{}, false, err
	}
	if page.NextPageToken == "" {
		return page.Records, PageToken{}, false, nil
	}
	next := PageToken{token: page.NextPageToken, after: at.after}
	if n := len(page.Records); n > 0 {
		next.after = page.Records[n-1].Name
	}
	return page.Records, next, true, nil
}

// transferBody is the request body of a transfer; the name travels in the
// path.
type transferBody struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (c *client) Transfer(ctx context.Context, name, from, to string) (Record, error) {
	switch {
	case name == "":
		return Record{}, c.api.Invalid("transfer", "record name is required")
	case from == "" || to == "":
		return Record{}, c.api.Invalid("transfer", "both owners are required")
	}
	// The answer must name the new owner: a service that answered 200
	// without making the change would let a caller believe it holds a
	// record it does not.
	out := recordBody{name: name, owner: to}
	// A PUT of the owner with the expected current owner is idempotent, so
	// the client may retry it after a lost response like any other PUT.
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "transfer",
		Method:    http.MethodPut,
		Path:      append(recordsPath(name), "owner"),
		Body:      transferBody{From: from, To: to},
	}, &out)
	if err != nil {
		return Record{}, err
	}
	return out.Record, nil
}

// recordsPath is the path of the record collection, or of the record called
// name when one is given.
func recordsPath(name ...string) []string {
	return append([]string{"dns", "v1", "records"}, name...)
}

// recordBody is a Record read from a response, checked before it is trusted.
type recordBody struct {
	Record
	// name is the record the call asked about; a response about another one
	// means something between the client and the service is broken.
	name string
	// owner, when set, is the owner the record must have.
	owner string
}

func (r *recordBody) Validate() error {
	if err := validateRecord(&r.Record); err != nil {
		return err
	}
	if r.Name != r.name {
		return fmt.Errorf("asked for record %q, got %q", r.name, r.Name)
	}
	if r.owner != "" && r.Owner != r.owner {
		return fmt.Errorf("record %q is owned by %q, not %q", r.Name, r.Owner, r.owner)
	}
	return nil
}

// listBody is one page of a list call.
type listBody struct {
	Records       []Record `json:"records"`
	NextPageToken string   `json:"nextPageToken"`
	// after is the last name of the pages before; every record of this page
	// must come after it.
	after string
	// token is the token this page was asked for with; a page that hands it
	// back would be asked for again and again.
	token string
}

func (l *listBody) Validate() error {
	if l.Records == nil {
		return errors.New(`missing "records"`)
	}
	prev := l.after
	for i := range l.Records {
		if err := validateRecord(&l.Records[i]); err != nil {
			return fmt.Errorf("records[%d]: %w", i, err)
		}
		if name := l.Records[i].Name; prev != "" && name <= prev {
			return fmt.Errorf("records[%d]: %q does not come after %q: the list is not in name order or a page was answered twice", i, name, prev)
		}
		prev = l.Records[i].Name
	}
	if l.NextPageToken != "" && l.NextPageToken == l.token {
		return errors.New("the next page token is the one this page was asked for")
	}
	return nil
}

func validateRecord(r *Record) error {
	switch {
	case r.Name == "":
		return errors.New("record has no name")
	case r.Type == "":
		return fmt.Errorf("record %q has no type", r.Name)
	case r.Owner == "":
		return fmt.Errorf("record %q has no owner", r.Name)
	case r.State != StatePending && r.State != StateActive:
		return fmt.Errorf("record %q has unknown state %q", r.Name, r.State)
	}
	return nil
}

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
