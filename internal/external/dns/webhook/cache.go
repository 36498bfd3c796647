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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unique"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

// zoneAnswer decodes a zone read (GET /records) endpoint by endpoint into
// a zone state, which keeps of it only what concerns the client
// (zoneState.add): neither the body nor the endpoints are held whole, so a
// zone's cost in memory is what the state keeps, not what the server sent.
type zoneAnswer struct {
	zone      string
	state     *zoneState
	endpoints int
}

func (a *zoneAnswer) begin() { a.state, a.endpoints = newZoneState(a.zone), 0 }

func (a *zoneAnswer) decode(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		// null: a zone with nothing in it, as a nil list encodes.
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("the zone is %v, not a list of endpoints", tok)
	}
	for dec.More() {
		var ep Endpoint
		if err := dec.Decode(&ep); err != nil {
			return err
		}
		a.state.add(ep)
		a.endpoints++
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	a.state.compact()
	return nil
}

// compact drops, once a read is whole, what the client never sends back
// nor compares: the labels and provider-specific properties of the
// records at names without an owner TXT. The client writes over a name
// only when the owner TXT there names the writer (an interrupted transfer
// gets its owner TXT created, its address untouched), so those records
// are only ever reported; in a zone that other tools share, they are most
// of it. The owner IDs of external-dns's registry records, the same few
// strings over and over, are interned.
func (z *zoneState) compact() {
	for _, st := range z.names {
		for i := range st.externalDNS {
			st.externalDNS[i] = unique.Make(st.externalDNS[i]).Value()
		}
		if len(st.ownerTXTs) > 0 {
			continue
		}
		for i := range st.records {
			ep := &st.records[i]
			ep.Labels, ep.ProviderSpecific = nil, nil
			ep.RecordType = unique.Make(ep.RecordType).Value()
		}
	}
}

// recordCache serves reads from one read of the whole zone (GET /records)
// for up to interval, because the protocol has no read of one name: every
// read returns the whole zone. Concurrent readers share one request. The
// client's own successful writes are applied to the cached state, and the
// names they wrote read as PENDING until a zone read that started after
// the write shows them: that read is what confirms the write, and on a
// last-writer-wins provider what detects a lost race.
//
// Reads are numbered as they start, and "after" is judged by those numbers
// rather than by the clock, which a test or a coarse clock may not move.
type recordCache struct {
	zone     string
	interval time.Duration
	now      func() time.Time
	load     func(ctx context.Context) (*zoneState, int, error)

	mu sync.Mutex
	// tooLarge is the last read's error when the zone was over the body
	// cap, and tooLargeAt when that read was sent: for tooLargeReads read
	// intervals after it, every read fails with it without asking the
	// server again, so that MyApps retrying with backoff do not each read
	// tens of MiB.
	tooLarge   error
	tooLargeAt time.Time
	// state is the last read with the client's writes since applied; nil
	// before the first read.
	state *zoneState
	// stateRead is the number of the read state came from, and readAt when
	// it was sent.
	stateRead uint64
	readAt    time.Time
	// readsStarted counts the reads sent so far.
	readsStarted uint64
	// endpoints is how many endpoints that read returned.
	endpoints int
	// writtenAfter is, for each name the client wrote, the number of reads
	// started when the write finished: only a later read confirms it.
	writtenAfter map[string]uint64
	// journal is the client's writes that a read in flight or the last one
	// may not show: a read sent before a write finished may or may not
	// show it, so such writes are applied to it again (adding what is there
	// and removing what is not change nothing).
	journal  []journalEntry
	inflight *zoneRead
}

type journalEntry struct {
	// after is the number of reads started when the write finished.
	after uint64
	ch    Changes
}

// zoneRead is a read of the zone that readers wait on together.
type zoneRead struct {
	done chan struct{}
	id   uint64
	err  error
}

// tooLargeReads is for how many read intervals (a minute by default) a
// zone read over the body cap is not repeated: a configuration problem,
// which a person fixes on that time scale.
const tooLargeReads = 6

func newRecordCache(zone string, interval time.Duration, now func() time.Time,
	load func(context.Context) (*zoneState, int, error)) *recordCache {
	return &recordCache{zone: zone, interval: interval, now: now, load: load, writtenAfter: map[string]uint64{}}
}

// ensure makes the cached state usable: read within the interval or, when
// fresh, read by a request sent after ensure was called. It returns with
// c.mu held.
func (c *recordCache) ensure(ctx context.Context, fresh bool) error {
	c.mu.Lock()
	asked := c.now()
	// need is the first read that counts as fresh: one not started yet.
	need := c.readsStarted + 1
	for {
		switch {
		case c.state != nil && !fresh && asked.Sub(c.readAt) < c.interval:
			return nil
		case c.state != nil && fresh && c.stateRead >= need:
			return nil
		case c.tooLarge != nil && asked.Sub(c.tooLargeAt) < tooLargeReads*c.interval:
			err := c.tooLarge
			c.mu.Unlock()
			return err
		}
		if r := c.inflight; r != nil {
			c.mu.Unlock()
			select {
			case <-r.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			c.mu.Lock()
			if r.err != nil && (!errors.Is(r.err, context.Canceled) || ctx.Err() != nil) {
				c.mu.Unlock()
				return r.err
			}
			// A read that started before a fresh one was asked for does not
			// count; the loop starts another. So does one whose reader gave
			// up.
			continue
		}
		c.readsStarted++
		r := &zoneRead{done: make(chan struct{}), id: c.readsStarted}
		at := c.now()
		c.inflight = r
		c.mu.Unlock()
		st, endpoints, err := c.load(ctx)
		c.mu.Lock()
		c.inflight = nil
		r.err = err
		close(r.done)
		if err != nil {
			if errors.Is(err, external.ErrTooLarge) {
				c.tooLarge, c.tooLargeAt = err, at
			}
			c.mu.Unlock()
			return err
		}
		c.install(r.id, at, st, endpoints)
	}
}

// install makes the state read id, sent at at, the cached one, with the
// client's writes that read may not show applied to it. c.mu is held.
func (c *recordCache) install(id uint64, at time.Time, st *zoneState, endpoints int) {
	c.tooLarge = nil
	c.journal = slices.DeleteFunc(c.journal, func(j journalEntry) bool { return j.after < id })
	for _, j := range c.journal {
		st.apply(j.ch)
	}
	c.state, c.stateRead, c.readAt, c.endpoints = st, id, at, endpoints
	zoneEndpoints.Set(float64(endpoints))
	for name, after := range c.writtenAfter {
		if after < id {
			delete(c.writtenAfter, name)
		}
	}
}

// lookup returns the state of name and whether a read confirmed it since
// the client last wrote it.
func (c *recordCache) lookup(ctx context.Context, name string, fresh bool) (nameState, bool, error) {
	if err := c.ensure(ctx, fresh); err != nil {
		return nameState{}, false, err
	}
	defer c.mu.Unlock()
	_, pending := c.writtenAfter[name]
	if st := c.state.names[name]; st != nil {
		return st.clone(), !pending, nil
	}
	return nameState{name: name}, !pending, nil
}

// claimAt returns what the zone holds at an installation claim's name,
// read within the interval or, when fresh, by a read sent after the call.
func (c *recordCache) claimAt(ctx context.Context, name string, fresh bool) (claimState, error) {
	if err := c.ensure(ctx, fresh); err != nil {
		return claimState{}, err
	}
	defer c.mu.Unlock()
	st := claimState{name: name, txts: slices.Clone(c.state.claims[name])}
	if ns := c.state.names[name]; ns != nil {
		st.externalDNS = slices.Clone(ns.externalDNS)
	}
	return st, nil
}

// each calls fn with every name's state and whether it is confirmed, in no
// particular order.
func (c *recordCache) each(ctx context.Context, fn func(st *nameState, confirmed bool)) error {
	if err := c.ensure(ctx, false); err != nil {
		return err
	}
	defer c.mu.Unlock()
	for name, st := range c.state.names {
		_, pending := c.writtenAfter[name]
		fn(st, !pending)
	}
	return nil
}

// wrote applies a write the server accepted (2xx) to the cached state and
// marks the names it touched unconfirmed.
func (c *recordCache) wrote(ch Changes, names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != nil {
		c.state.apply(ch)
	}
	c.journal = append(c.journal, journalEntry{after: c.readsStarted, ch: ch})
	for _, n := range names {
		c.writtenAfter[n] = c.readsStarted
	}
}

// unsure marks names written by a request whose outcome is unknown: they
// read as PENDING until a later read shows what happened.
func (c *recordCache) unsure(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		c.writtenAfter[n] = c.readsStarted
	}
}

// size is how many endpoints the last read returned.
func (c *recordCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endpoints
}
