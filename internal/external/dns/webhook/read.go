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
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// Get returns the record called name. It is ACTIVE when a zone read shows
// it as the client last wrote it, PENDING until then.
func (c *Client) Get(ctx context.Context, name string) (rec extdns.Record, err error) {
	const op = "get"
	defer c.observe(op, time.Now(), &err)
	if name, err = c.checkName(op, name); err != nil {
		return extdns.Record{}, err
	}
	if err := c.ready(ctx); err != nil {
		return extdns.Record{}, err
	}
	if err := c.checkServed(op, name); err != nil {
		return extdns.Record{}, err
	}
	st, confirmed, err := c.cache.lookup(ctx, name, false)
	if err != nil {
		return extdns.Record{}, err
	}
	if !st.exists() {
		return extdns.Record{}, c.fail(op, external.KindNotFound, fmt.Sprintf("no A or CNAME record at %s", name), nil)
	}
	return c.report(st, confirmed), nil
}

// report is the record a state shows, with a value AdjustEndpoints made
// shown as the one asked for.
func (c *Client) report(st nameState, confirmed bool) extdns.Record {
	rec := st.record()
	if len(st.records) == 1 {
		c.adjustMu.Lock()
		if asked, ok := c.adjusted[recordKey{rec.Type, rec.Value, rec.TTL}.String()]; ok {
			rec.Type, rec.Value, rec.TTL = asked.typ, asked.value, asked.ttl
		}
		c.adjustMu.Unlock()
	}
	rec.State = extdns.StatePending
	if confirmed {
		rec.State = extdns.StateActive
	}
	return rec
}

// List returns the records owner holds, or every record with one owner TXT
// when owner is empty, sorted by name.
func (c *Client) List(ctx context.Context, owner string) (out []extdns.Record, err error) {
	const op = "list"
	defer c.observe(op, time.Now(), &err)
	return c.list(ctx, func(o string) bool { return owner == "" || o == owner })
}

// ListByOwnerPrefix returns the records whose owner starts with prefix,
// sorted by name. An empty prefix is refused, as by the other clients.
func (c *Client) ListByOwnerPrefix(ctx context.Context, prefix string) (out []extdns.Record, err error) {
	const op = "list"
	defer c.observe(op, time.Now(), &err)
	if prefix == "" {
		return nil, c.fail(op, external.KindInvalid, "owner prefix is required", nil)
	}
	return c.list(ctx, func(o string) bool { return strings.HasPrefix(o, prefix) })
}

// list serves both lists from the cached zone read. A name with two owner
// TXTs or one that external-dns claims is no one's, so it is in no owner's
// list and no sweep ever counts it as its own.
func (c *Client) list(ctx context.Context, keep func(owner string) bool) ([]extdns.Record, error) {
	if err := c.ready(ctx); err != nil {
		return nil, err
	}
	type listed struct {
		st        nameState
		confirmed bool
	}
	var found []listed
	err := c.cache.each(ctx, func(st *nameState, confirmed bool) {
		if len(st.owners) == 1 && st.exists() && len(st.externalDNS) == 0 && keep(st.owners[0]) {
			found = append(found, listed{st.clone(), confirmed})
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]extdns.Record, 0, len(found))
	for _, l := range found {
		out = append(out, c.report(l.st, l.confirmed))
	}
	slices.SortFunc(out, func(a, b extdns.Record) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
