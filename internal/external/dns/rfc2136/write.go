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
	"errors"
	"fmt"
	"time"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// Upsert creates the record or changes it in one UPDATE whose prerequisites
// make it atomic; see the package documentation.
func (c *Client) Upsert(ctx context.Context, rec extdns.Record) (_ extdns.Record, err error) {
	const op = "upsert"
	defer c.observe(op, time.Now(), &err)
	name, err := c.checkName(op, rec.Name)
	if err != nil {
		return extdns.Record{}, err
	}
	rec.Name = name
	if err := c.checkRecord(op, rec); err != nil {
		return extdns.Record{}, err
	}
	// Each pass reads, then writes on the condition that what it read still
	// holds. A failed condition means another writer moved in between: the
	// next pass sees what they did.
	createRefused := false
	for range 3 {
		st, err := c.read(ctx, op, name)
		if err != nil {
			return extdns.Record{}, err
		}
		m := c.newUpdate()
		switch st.holder() {
		case "":
			if createRefused {
				// The name is in use, but not by an A, a CNAME or an owner
				// TXT: someone keeps other records there.
				e := c.fail(op, external.KindConflict, fmt.Sprintf("%s has records of other types, written outside this operator", name), nil)
				e.Owner = extdns.UnmanagedOwner
				return extdns.Record{}, e
			}
			createRefused = true
			m.NameNotUsed([]dns.RR{anyRR(name), anyRR(ownerName(name))})
		case rec.Owner:
			if st.matches(rec) {
				out := st.record()
				out.State = c.propagation(ctx, out)
				return out, nil
			}
			m.Used([]dns.RR{ownerTXT(name, rec.Owner, 0)})
			m.RemoveRRset([]dns.RR{typedRR(name, dns.TypeA), typedRR(name, dns.TypeCNAME), typedRR(ownerName(name), dns.TypeTXT)})
		default:
			return extdns.Record{}, c.conflict(op, st)
		}
		rr, err := newRR(rec)
		if err != nil {
			return extdns.Record{}, c.fail(op, external.KindInvalid, err.Error(), nil)
		}
		m.Insert([]dns.RR{rr, ownerTXT(name, rec.Owner, uint32(rec.TTL))}) //nolint:gosec // checked positive
		err = c.update(ctx, op, m)
		if errors.Is(err, errPrerequisite) {
			continue
		}
		if err != nil {
			return extdns.Record{}, err
		}
		c.log.V(1).Info("Wrote DNS record", "name", name, "type", rec.Type, "value", rec.Value, "owner", rec.Owner)
		rec.State = extdns.StatePending
		return rec, nil
	}
	return extdns.Record{}, c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

// Delete removes the record and its owner TXT in one UPDATE that requires
// the owner TXT to be owner's.
func (c *Client) Delete(ctx context.Context, name, owner string) (err error) {
	const op = "delete"
	defer c.observe(op, time.Now(), &err)
	name, err = c.checkName(op, name)
	if err != nil {
		return err
	}
	if err := c.checkOwner(op, owner); err != nil {
		return err
	}
	for range 3 {
		m := c.newUpdate()
		m.Used([]dns.RR{ownerTXT(name, owner, 0)})
		m.RemoveRRset([]dns.RR{typedRR(name, dns.TypeA), typedRR(name, dns.TypeCNAME), typedRR(ownerName(name), dns.TypeTXT)})
		err := c.update(ctx, op, m)
		if err == nil {
			c.log.V(1).Info("Deleted DNS record", "name", name, "owner", owner)
			return nil
		}
		if !errors.Is(err, errPrerequisite) {
			return err
		}
		// The owner TXT is not owner's: find out whether the name is free
		// (nothing to delete) or someone else's.
		st, err := c.read(ctx, op, name)
		if err != nil {
			return err
		}
		switch st.holder() {
		case "":
			return nil
		case owner:
			continue // it changed back between the update and the read
		default:
			return c.conflict(op, st)
		}
	}
	return c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

// Transfer hands the record from one owner to another in one UPDATE that
// requires the owner TXT to be from's. A record already held by to is
// returned as it is.
func (c *Client) Transfer(ctx context.Context, name, from, to string) (_ extdns.Record, err error) {
	const op = "transfer"
	defer c.observe(op, time.Now(), &err)
	name, err = c.checkName(op, name)
	if err != nil {
		return extdns.Record{}, err
	}
	if err := errors.Join(c.checkOwner(op, from), c.checkOwner(op, to)); err != nil {
		return extdns.Record{}, err
	}
	for range 3 {
		st, err := c.read(ctx, op, name)
		if err != nil {
			return extdns.Record{}, err
		}
		if !st.exists() {
			return extdns.Record{}, c.fail(op, external.KindNotFound, fmt.Sprintf("no A or CNAME record at %s", name), nil)
		}
		rec := st.record()
		switch st.holder() {
		case to:
			rec.State = c.propagation(ctx, rec)
			return rec, nil
		case from:
		default:
			return extdns.Record{}, c.conflict(op, st)
		}
		m := c.newUpdate()
		m.Used([]dns.RR{ownerTXT(name, from, 0)})
		m.RemoveRRset([]dns.RR{typedRR(ownerName(name), dns.TypeTXT)})
		m.Insert([]dns.RR{ownerTXT(name, to, uint32(rec.TTL))}) //nolint:gosec // read from the server
		err = c.update(ctx, op, m)
		if errors.Is(err, errPrerequisite) {
			continue
		}
		if err != nil {
			return extdns.Record{}, err
		}
		c.log.V(1).Info("Transferred DNS record", "name", name, "from", from, "to", to)
		rec.Owner = to
		rec.State = c.propagation(ctx, rec)
		return rec, nil
	}
	return extdns.Record{}, c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

func (c *Client) newUpdate() *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(c.zone)
	return m
}
