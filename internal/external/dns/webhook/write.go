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
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// Upsert creates the record, or changes it, in one compare-and-swap batch;
// see the package documentation.
func (c *Client) Upsert(ctx context.Context, rec extdns.Record) (out extdns.Record, err error) {
	const op = "upsert"
	defer c.observe(op, time.Now(), &err)
	if rec.Name, err = c.checkName(op, rec.Name); err != nil {
		return extdns.Record{}, err
	}
	if err := c.checkRecord(op, rec); err != nil {
		return extdns.Record{}, err
	}
	if err := c.ready(ctx); err != nil {
		return extdns.Record{}, err
	}
	if err := c.checkServed(op, rec.Name); err != nil {
		return extdns.Record{}, err
	}
	defer c.locks.lock(rec.Name)()
	class, oneBatch := c.measured()
	u := upsert{c: c, rec: rec, want: desiredRecord(rec), oneBatch: oneBatch}
	// On a last-writer-wins provider nothing guards a write, so the read it
	// is decided on is made just before it: that narrows the window in
	// which another writer's change is overwritten to one round trip.
	fresh := class != extdns.ClassAtomic
	for range 3 {
		st, confirmed, err := c.cache.lookup(ctx, rec.Name, fresh)
		if err != nil {
			return extdns.Record{}, err
		}
		steps, inPlace, err := u.plan(ctx, st)
		switch {
		case err != nil:
			return extdns.Record{}, err
		case inPlace:
			return c.report(st, confirmed), nil
		}
		err = c.apply(ctx, op, rec.Name, steps)
		if err == nil {
			c.log.V(1).Info("Wrote DNS record", "name", rec.Name, "type", rec.Type, "value", rec.Value, "owner", rec.Owner)
			rec.State = extdns.StatePending
			return rec, nil
		}
		_, v, err := c.readBack(ctx, op, st, err, u.done, func(h string) bool { return h == rec.Owner })
		switch v {
		case verdictDone:
			rec.State = extdns.StatePending
			return rec, nil
		case verdictFailed:
			return extdns.Record{}, err
		}
		fresh = true // it changed under the write: decide again on what is there now
	}
	return extdns.Record{}, c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", rec.Name), nil)
}

// upsert is one Upsert's plan: what to write for the state read.
type upsert struct {
	c        *Client
	rec      extdns.Record
	want     desired
	adjusted bool
	oneBatch bool
}

// plan returns the batches to send, or inPlace when the name holds the
// record already, or a conflict. The record is passed through
// AdjustEndpoints once, before it is first written or found different.
func (u *upsert) plan(ctx context.Context, st nameState) (steps []Changes, inPlace bool, err error) {
	switch st.holder() {
	case "":
		if st.otherTypes {
			return nil, false, u.c.conflict("upsert", st)
		}
		if err := u.adjust(ctx); err != nil {
			return nil, false, err
		}
		return []Changes{{Create: u.want.endpoints()}}, false, nil
	case u.rec.Owner:
		if u.done(st) {
			return nil, true, nil
		}
		if err := u.adjust(ctx); err != nil {
			return nil, false, err
		}
		if u.done(st) {
			return nil, true, nil
		}
		if !u.oneBatch {
			if ch, ok := u.update(st); ok {
				return []Changes{ch}, false, nil
			}
		}
		return replaceSteps(Changes{Delete: st.written(), Create: u.want.endpoints()}, u.oneBatch), false, nil
	default:
		return nil, false, u.c.conflict("upsert", st)
	}
}

// update is a change of value on a provider that cannot replace a record
// set with a delete and a create in one batch: the address record is
// changed in place by updateOld/updateNew, in one batch, and the owner TXT
// is left as it is, so the name resolves throughout. It applies when the
// name holds one address record of the type wanted and the one owner TXT
// of this owner; otherwise (a CNAME becoming an A, several values, a
// missing owner TXT) the change is made as its deletes and its creates.
// The providers this path serves apply an update at once: external-dns's
// inmemory replaces the set after checking it is there, its rfc2136 sends
// the removal and the addition in one UPDATE message, its pdns sends one
// REPLACE of the set. Route 53, whose updateNew is an unconditional
// UPSERT, replaces in one batch and never takes this path.
func (u *upsert) update(st nameState) (Changes, bool) {
	if len(st.records) != 1 || st.records[0].RecordType != u.want.record.RecordType ||
		len(st.ownerTXTs) != 1 || !sameEndpoint(st.ownerTXTs[0], u.want.owner) {
		return Changes{}, false
	}
	return Changes{UpdateOld: []Endpoint{st.records[0]}, UpdateNew: []Endpoint{u.want.record}}, true
}

func (u *upsert) adjust(ctx context.Context) error {
	if u.adjusted {
		return nil
	}
	want, err := u.c.adjust(ctx, "upsert", u.rec)
	if err != nil {
		return err
	}
	u.want, u.adjusted = want, true
	return nil
}

// done reports whether st holds the record as wanted, with its one owner
// TXT.
func (u *upsert) done(st nameState) bool {
	return st.holder() == u.rec.Owner && st.matches(u.want.record) && len(st.ownerTXTs) == 1
}

// Delete removes the record and its owner TXT, exactly as read, in one
// batch.
func (c *Client) Delete(ctx context.Context, name, owner string) (err error) {
	const op = "delete"
	defer c.observe(op, time.Now(), &err)
	if name, err = c.checkName(op, name); err != nil {
		return err
	}
	if err := c.checkOwner(op, owner); err != nil {
		return err
	}
	if err := c.ready(ctx); err != nil {
		return err
	}
	if err := c.checkServed(op, name); err != nil {
		return err
	}
	defer c.locks.lock(name)()
	class, _ := c.measured()
	fresh := class != extdns.ClassAtomic
	gone := func(st nameState) bool { return st.holder() == "" }
	for range 3 {
		st, _, err := c.cache.lookup(ctx, name, fresh)
		if err != nil {
			return err
		}
		switch st.holder() {
		case "":
			if !fresh {
				// A name the cached read shows free may have been written
				// since; a deletion that ends a MyApp's finalizer is not
				// decided on a read up to ReadInterval old.
				fresh = true
				continue
			}
			return nil
		case owner:
		default:
			return c.conflict(op, st)
		}
		err = c.apply(ctx, op, name, []Changes{{Delete: st.written()}})
		if err == nil {
			c.log.V(1).Info("Deleted DNS record", "name", name, "owner", owner)
			return nil
		}
		_, v, err := c.readBack(ctx, op, st, err, gone, func(h string) bool { return h == owner })
		switch v {
		case verdictDone:
			return nil
		case verdictFailed:
			return err
		}
		fresh = true
	}
	return c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

// Transfer hands the record from one owner to another and touches only
// the owner TXT: one batch deletes it exactly as read and creates the new
// one, or, on a provider that cannot replace a record set in one batch,
// one batch deletes it and a second creates the new one. A record already
// held by to is returned as it is. A name that holds its address record
// and no owner TXT at all is what such a transfer leaves when its second
// batch fails: Transfer finishes it, writing to's owner TXT (every other
// call reads that name as held by no one it may take it from).
func (c *Client) Transfer(ctx context.Context, name, from, to string) (rec extdns.Record, err error) {
	const op = "transfer"
	defer c.observe(op, time.Now(), &err)
	if name, err = c.checkName(op, name); err != nil {
		return extdns.Record{}, err
	}
	if err := errors.Join(c.checkOwner(op, from), c.checkOwner(op, to)); err != nil {
		return extdns.Record{}, err
	}
	if err := c.ready(ctx); err != nil {
		return extdns.Record{}, err
	}
	if err := c.checkServed(op, name); err != nil {
		return extdns.Record{}, err
	}
	defer c.locks.lock(name)()
	class, oneBatch := c.measured()
	tr := transfer{c: c, name: name, from: from, to: to, oneBatch: oneBatch}
	fresh := class != extdns.ClassAtomic
	for range 3 {
		st, confirmed, err := c.cache.lookup(ctx, name, fresh)
		if err != nil {
			return extdns.Record{}, err
		}
		if !st.exists() && st.holder() == "" && !fresh {
			fresh = true
			continue
		}
		steps, inPlace, err := tr.plan(st)
		switch {
		case err != nil:
			return extdns.Record{}, err
		case inPlace:
			return c.report(st, confirmed), nil
		}
		err = c.apply(ctx, op, name, steps)
		if err == nil {
			c.log.V(1).Info("Transferred DNS record", "name", name, "from", from, "to", to)
			return tr.result(ctx, st), nil
		}
		// A name left between the two batches of a transfer holds no owner
		// (extdns.UnmanagedOwner): planned again, it is finished if it is
		// the interrupted transfer, a conflict otherwise.
		now, v, err := c.readBack(ctx, op, st, err, tr.done, func(h string) bool {
			return h == from || h == to || h == extdns.UnmanagedOwner
		})
		switch v {
		case verdictDone:
			return c.report(now, false), nil
		case verdictFailed:
			return extdns.Record{}, err
		}
		fresh = true
	}
	return extdns.Record{}, c.fail(op, external.KindTransient, fmt.Sprintf("%s kept changing under concurrent writers", name), nil)
}

// transfer is one Transfer's plan.
type transfer struct {
	c              *Client
	name, from, to string
	oneBatch       bool
}

// plan returns the batches to send for the state read, or inPlace when the
// record is held by to already, or an error: not found or a conflict.
func (tr *transfer) plan(st nameState) (steps []Changes, inPlace bool, err error) {
	const op = "transfer"
	switch {
	case !st.exists():
		return nil, false, tr.c.fail(op, external.KindNotFound, fmt.Sprintf("no A or CNAME record at %s", tr.name), nil)
	case st.holder() == tr.to:
		return nil, true, nil
	case tr.interrupted(st):
		return []Changes{{Create: []Endpoint{ownerEndpoint(tr.name, tr.to, st.records[0].RecordTTL)}}}, false, nil
	case st.holder() != tr.from:
		return nil, false, tr.c.conflict(op, st)
	}
	owner := ownerEndpoint(tr.name, tr.to, st.records[0].RecordTTL)
	if tr.oneBatch {
		return []Changes{{Delete: slices.Clone(st.ownerTXTs), Create: []Endpoint{owner}}}, false, nil
	}
	// A provider that cannot delete and create one record set in one batch
	// gets the old owner TXT deleted, then the new one created: the
	// address record is never touched, so the name resolves throughout.
	// Between the two batches the name holds its address and no owner
	// TXT, which every other writer reads as held by no one it may take
	// it from (extdns.UnmanagedOwner, a conflict), never free; a Transfer
	// from the same giver to the same receiver that finds it so finishes
	// it (interrupted).
	return []Changes{{Delete: slices.Clone(st.ownerTXTs)}, {Create: []Endpoint{owner}}}, false, nil
}

// interrupted reports whether st is what a transfer made in two batches
// leaves when its second batch did not go through: the address record as
// it was, and no owner TXT or other claim at all. Only Transfer finishes
// it, toward its receiver; Upsert and Delete read it as a conflict.
func (tr *transfer) interrupted(st nameState) bool {
	return st.exists() && len(st.ownerTXTs) == 0 && len(st.owners) == 0 && len(st.externalDNS) == 0 && !st.otherTypes
}

func (tr *transfer) done(st nameState) bool { return st.holder() == tr.to && st.exists() }

// result is the record after a transfer the server accepted.
func (tr *transfer) result(ctx context.Context, before nameState) extdns.Record {
	after, _, err := tr.c.cache.lookup(ctx, tr.name, false)
	if err != nil || !after.exists() {
		after = before
		after.owners = []string{tr.to}
	}
	return tr.c.report(after, false)
}

// verdict is what a read after a write whose outcome is unknown shows.
type verdict int

const (
	// verdictDone: the write is in place; its answer was lost or wrong.
	verdictDone verdict = iota
	// verdictFailed: the call ends with the error readBack returns: a
	// conflict, a zone unchanged (the provider did not apply the batch), a
	// failed read, or an error that is not about the outcome at all.
	verdictFailed
	// verdictChanged: the name changed otherwise; plan again.
	verdictChanged
)

// readBack decides a write that ended in err, planned on before: every
// answer but a 2xx leaves the outcome unknown (the reference server answers
// a conflict with a bare 500), so the zone is read again. done says whether
// the write is in place; mayHold whether a holder other than none is one the
// write may leave (not a conflict).
func (c *Client) readBack(ctx context.Context, op string, before nameState, err error,
	done func(nameState) bool, mayHold func(holder string) bool) (nameState, verdict, error) {
	if !outcomeUnknown(err) {
		return nameState{}, verdictFailed, err
	}
	now, _, rerr := c.cache.lookup(ctx, before.name, true)
	switch {
	case rerr != nil:
		return now, verdictFailed, errors.Join(err, rerr)
	case done(now):
		c.log.V(1).Info("A write whose answer was an error is in place", "name", before.name, "error", err.Error())
		return now, verdictDone, nil
	case now.holder() != "" && !mayHold(now.holder()):
		return now, verdictFailed, c.conflict(op, now)
	case now.fingerprint() == before.fingerprint():
		return now, verdictFailed, c.refused(err, before)
	}
	return now, verdictChanged, nil
}

// apply sends the steps of a write, in order; the cached state follows each
// one the server accepted. An error from a step the server did not accept
// leaves its names PENDING until the next read.
func (c *Client) apply(ctx context.Context, op, name string, steps []Changes) error {
	for _, ch := range steps {
		err := c.t.send(ctx, request{op: op, method: http.MethodPost, route: routeRecords, body: ch}, nil)
		if err != nil {
			c.cache.unsure(name)
			return err
		}
		c.cache.wrote(ch, name)
	}
	return nil
}

// replaceSteps is a change as one batch where the provider applies one,
// and otherwise as its deletes, then its creates. A provider that refuses a
// delete and a create of the same record set in one batch (external-dns's
// inmemory checks every create against the zone before any delete) leaves
// the name free between the two batches: a concurrent creator can take it
// there, which the second batch's failure shows as a conflict.
func replaceSteps(ch Changes, oneBatch bool) []Changes {
	if oneBatch || len(ch.Delete) == 0 || len(ch.Create) == 0 {
		return []Changes{ch}
	}
	return []Changes{{Delete: ch.Delete}, {Create: ch.Create}}
}

// outcomeUnknown reports whether a write's error leaves its outcome open:
// every error but a request the client refused to send.
func outcomeUnknown(err error) bool {
	var e *external.Error
	return !errors.As(err, &e) || e.StatusCode != 0 || e.Kind == external.KindTransient
}

// refused is the error for a write the server did not take although the
// zone held what the write expected: an outage, or a provider that cannot
// apply it. It keeps the answer's kind (a 5xx or a lost connection is
// transient, a 429 throttled with its wait, a 401 unauthorized) and says
// that nothing changed.
func (c *Client) refused(err error, st nameState) error {
	e := &external.Error{}
	if !errors.As(err, &e) {
		return err
	}
	out := *e
	out.Message = fmt.Sprintf("%s; a read after it shows %s unchanged, so the provider did not apply the batch", e.Message, st.name)
	return &out
}

// desired is the record and owner TXT the client writes for a Record.
type desired struct {
	record, owner Endpoint
}

func (d desired) endpoints() []Endpoint { return []Endpoint{d.record, d.owner} }

func desiredRecord(rec extdns.Record) desired {
	return desired{
		record: Endpoint{DNSName: rec.Name, RecordType: rec.Type, Targets: []string{rec.Value}, RecordTTL: int64(rec.TTL)},
		owner:  ownerEndpoint(rec.Name, rec.Owner, int64(rec.TTL)),
	}
}

// ownerEndpoint is name's owner TXT for owner. The value is quoted, as
// external-dns's TXT registry quotes its own: every provider handles that
// form, and reading strips the quotes. Its ownedRecord label keeps it in
// one Route 53 batch with the record (see ownedRecordLabel).
func ownerEndpoint(name, owner string, ttl int64) Endpoint {
	return Endpoint{DNSName: ownerName(name), RecordType: typeTXT, Targets: []string{`"` + owner + `"`}, RecordTTL: ttl,
		Labels: map[string]string{ownedRecordLabel: name}}
}

// recordKey is a record's type, value and TTL.
type recordKey struct {
	typ, value string
	ttl        int32
}

func (k recordKey) String() string { return k.typ + " " + k.value + " " + strconv.Itoa(int(k.ttl)) }

// adjust asks the provider to normalise the record and owner TXT about to
// be written (POST /adjustendpoints), so that what is written is what the
// provider keeps and a later read compares equal. A provider that drops
// the owner TXT cannot hold ownership, which is an error; a server that
// fails to answer leaves the endpoints as they are.
func (c *Client) adjust(ctx context.Context, op string, rec extdns.Record) (desired, error) {
	want := desiredRecord(rec)
	var out []Endpoint
	err := c.t.send(ctx, request{op: op, method: http.MethodPost, route: routeAdjust, body: want.endpoints(), retry: true}, &out)
	if err != nil {
		c.log.V(1).Info("AdjustEndpoints failed; writing the records as asked", "name", rec.Name, "error", err.Error())
		return want, nil
	}
	var got desired
	var haveRecord, haveOwner bool
	for _, ep := range out {
		switch {
		case normalizeName(ep.DNSName) == rec.Name && ep.RecordType == rec.Type && len(ep.Targets) == 1:
			got.record, haveRecord = ep, true
		case normalizeName(ep.DNSName) == ownerName(rec.Name) && ep.RecordType == typeTXT && len(ep.Targets) == 1 &&
			unquote(ep.Targets[0]) == rec.Owner:
			got.owner, haveOwner = ep, true
		}
	}
	if !haveOwner {
		return desired{}, c.fail(op, external.KindInvalid, fmt.Sprintf("the webhook provider's AdjustEndpoints dropped or changed the owner "+
			"TXT record at %s: it cannot hold the owner, so this operator cannot manage records there", ownerName(rec.Name)), nil)
	}
	if !haveRecord {
		return desired{}, c.fail(op, external.KindInvalid, fmt.Sprintf("the webhook provider's AdjustEndpoints dropped or changed the %s "+
			"record %s %s", rec.Type, rec.Name, rec.Value), nil)
	}
	if got.owner.Labels == nil {
		got.owner.Labels = map[string]string{}
	}
	got.owner.Labels[ownedRecordLabel] = rec.Name
	gotKey := recordKey{got.record.RecordType, normalizeTarget(got.record.RecordType, got.record.Targets[0]), clampTTL(got.record.RecordTTL)}
	asked := recordKey{rec.Type, rec.Value, rec.TTL}
	if gotKey != asked {
		c.adjustMu.Lock()
		c.adjusted[gotKey.String()] = asked
		c.adjustMu.Unlock()
	}
	return got, nil
}
