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

// Package httpdns is the dns.Client of the HTTP DNS service described in
// docs/external-api.md (internal/simulator serves it for tests and
// development).
package httpdns

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
)

// New returns a dns.Client for the DNS service described by cfg.
func New(cfg external.Config) (dns.Client, error) {
	api, err := httpapi.New(dns.ServiceName, cfg)
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

func (c *client) Upsert(ctx context.Context, rec dns.Record) (dns.Record, error) {
	switch {
	case rec.Name == "":
		return dns.Record{}, c.api.Invalid("upsert", "record name is required")
	case rec.Owner == "":
		return dns.Record{}, c.api.Invalid("upsert", "record owner is required")
	case rec.Type != dns.TypeA && rec.Type != dns.TypeCNAME:
		return dns.Record{}, c.api.Invalid("upsert", fmt.Sprintf("record type must be A or CNAME, not %q", rec.Type))
	case rec.Value == "":
		return dns.Record{}, c.api.Invalid("upsert", "record value is required")
	case rec.TTL <= 0:
		return dns.Record{}, c.api.Invalid("upsert", "record TTL must be positive")
	}
	out := recordBody{name: rec.Name}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "upsert",
		Method:    http.MethodPut,
		Path:      recordsPath(rec.Name),
		Body:      upsertBody{Type: rec.Type, Value: rec.Value, TTL: rec.TTL, Owner: rec.Owner},
	}, &out)
	if err != nil {
		return dns.Record{}, err
	}
	return out.Record, nil
}

func (c *client) Get(ctx context.Context, name string) (dns.Record, error) {
	if name == "" {
		return dns.Record{}, c.api.Invalid("get", "record name is required")
	}
	out := recordBody{name: name}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "get",
		Method:    http.MethodGet,
		Path:      recordsPath(name),
	}, &out)
	if err != nil {
		return dns.Record{}, err
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

func (c *client) List(ctx context.Context, owner string) ([]dns.Record, error) {
	var query url.Values
	if owner != "" {
		query = url.Values{"owner": {owner}}
	}
	return c.list(ctx, query, func(r dns.Record) bool {
		// The query is only a request: a proxy or an older service that drops
		// it answers with every owner's records, and a caller waiting for its
		// own to be gone would then wait forever.
		return owner == "" || r.Owner == owner
	})
}

func (c *client) ListByOwnerPrefix(ctx context.Context, prefix string) ([]dns.Record, error) {
	if prefix == "" {
		return nil, c.api.Invalid("list", "owner prefix is required")
	}
	// As in List: a service that ignores the filter must not make every
	// record look like one of ours to a caller about to delete them.
	return c.list(ctx, url.Values{"ownerPrefix": {prefix}}, ownerPrefixed(prefix))
}

// ownerPrefixed keeps the records whose owner starts with prefix.
func ownerPrefixed(prefix string) func(dns.Record) bool {
	return func(r dns.Record) bool { return strings.HasPrefix(r.Owner, prefix) }
}

// keepRecords filters page in place to the records keep accepts.
func keepRecords(page []dns.Record, keep func(dns.Record) bool) []dns.Record {
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
func (c *client) list(ctx context.Context, query url.Values, keep func(dns.Record) bool) ([]dns.Record, error) {
	var out []dns.Record
	var at dns.PageToken
	for {
		page, next, more, err := c.listPage(ctx, query, at)
		if err != nil {
			return nil, err
		}
		out = append(out, keepRecords(page, keep)...)
		if !more {
			if out == nil {
				out = []dns.Record{}
			}
			return out, nil
		}
		at = next
	}
}

var _ dns.OwnerPrefixPager = (*client)(nil)

func (c *client) ListPageByOwnerPrefix(ctx context.Context, prefix string, from dns.PageToken) ([]dns.Record, dns.PageToken, bool, error) {
	if prefix == "" {
		return nil, dns.PageToken{}, false, c.api.Invalid("list", "owner prefix is required")
	}
	page, next, more, err := c.listPage(ctx, url.Values{"ownerPrefix": {prefix}}, from)
	if err != nil {
		return nil, dns.PageToken{}, false, err
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
func (c *client) listPage(ctx context.Context, query url.Values, at dns.PageToken) ([]dns.Record, dns.PageToken, bool, error) {
	q := maps.Clone(query)
	if at.Token != "" {
		if q == nil {
			q = url.Values{}
		}
		q.Set("pageToken", at.Token)
	}
	page := listBody{after: at.After, token: at.Token}
	err := c.api.Do(ctx, httpapi.Call{
		Operation: "list",
		Method:    http.MethodGet,
		Path:      recordsPath(),
		Query:     q,
	}, &page)
	if err != nil {
		return nil, dns.PageToken{}, false, err
	}
	if page.NextPageToken == "" {
		return page.Records, dns.PageToken{}, false, nil
	}
	next := dns.PageToken{Token: page.NextPageToken, After: at.After}
	if n := len(page.Records); n > 0 {
		next.After = page.Records[n-1].Name
	}
	return page.Records, next, true, nil
}

// transferBody is the request body of a transfer; the name travels in the
// path.
type transferBody struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (c *client) Transfer(ctx context.Context, name, from, to string) (dns.Record, error) {
	switch {
	case name == "":
		return dns.Record{}, c.api.Invalid("transfer", "record name is required")
	case from == "" || to == "":
		return dns.Record{}, c.api.Invalid("transfer", "both owners are required")
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
		return dns.Record{}, err
	}
	return out.Record, nil
}

// recordsPath is the path of the record collection, or of the record called
// name when one is given.
func recordsPath(name ...string) []string {
	return append([]string{"dns", "v1", "records"}, name...)
}

// recordBody is a dns.Record read from a response, checked before it is trusted.
type recordBody struct {
	dns.Record
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
	Records       []dns.Record `json:"records"`
	NextPageToken string       `json:"nextPageToken"`
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

func validateRecord(r *dns.Record) error {
	switch {
	case r.Name == "":
		return errors.New("record has no name")
	case r.Type == "":
		return fmt.Errorf("record %q has no type", r.Name)
	case r.Owner == "":
		return fmt.Errorf("record %q has no owner", r.Name)
	case r.State != dns.StatePending && r.State != dns.StateActive:
		return fmt.Errorf("record %q has unknown state %q", r.Name, r.State)
	}
	return nil
}
