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

// Package webhook is a dns.Client for any DNS provider external-dns can
// reach, through external-dns's webhook provider protocol
// (docs/tutorials/webhook-provider.md and api/webhook.yaml in
// kubernetes-sigs/external-dns): an out-of-tree webhook provider, or one of
// external-dns's in-tree providers run as `external-dns --webhook-server
// --provider=X`, as a sidecar listening on loopback.
//
// # Ownership
//
// The records and their owners are laid out as the RFC 2136 client lays
// them out: the record N (an A or a CNAME) and, beside it, a TXT at
// "_myapp-owner.N" holding the owner identity. The two clients read each
// other's records. External-dns's own TXT registry format is never
// written, so neither mistakes the other's records for its own; a name
// that external-dns's registry claims (a "heritage=external-dns" TXT at
// the name or at its type-prefixed name) is a conflict whose holder is
// ExternalDNSHolder, and is never written to.
//
// Every write is one compare-and-swap batch of creates and exact deletes,
// never updateOld/updateNew (external-dns's aws provider turns updateNew
// into a Route 53 UPSERT, which no condition guards):
//
//   - create: create the record and its owner TXT;
//   - change: delete the record and owner TXT exactly as read, create the
//     new ones;
//   - transfer: delete the owner TXT exactly as read, create the new one;
//   - delete: delete the record and owner TXT exactly as read.
//
// On a provider that applies a batch whole or not at all, refuses a create
// of a name that exists and a delete of a value that is not there (Route 53,
// Google Cloud DNS, external-dns's inmemory), a concurrent writer that got
// there first makes the batch fail, so no interleaving lets two owners both
// believe they hold a name. Other providers (external-dns's rfc2136 and
// pdns) apply a batch without conditions: the last writer wins. The
// client cannot prevent a lost race there; it detects it when a later read
// of the zone shows another owner, or two. Probe measures which class a
// provider is at start.
//
// The protocol's answer to a failed batch is a bare 500, conflicts
// included, and a lost answer says nothing either. So every write that
// does not end in a 2xx is "outcome unknown": the client reads the zone
// again before it decides whether the write happened, another owner holds
// the name, or the server refused it.
//
// # Reads
//
// The protocol has no read of one name: GET /records returns the whole
// zone. Reads are served from one zone read per ReadInterval, shared by
// every caller; the client's own writes are applied to it, and a record it
// wrote reads as PENDING until a zone read sent after the write shows it
// (on a last-writer-wins provider, that read is what shows a lost race).
// Bodies are capped at 32 MiB by default, as external-dns caps them: at 364
// bytes of JSON per MyApp (its record and owner TXT), about 92,000 MyApps
// in a zone with nothing else.
//
// # Installation claims
//
// An installation's claim of its owner ID (extdns.InstallationClaims) is a
// TXT at "_myapp-installation.<owner-id>.<zone>", the RFC 2136 client's
// name, written with the same compare-and-swap as a record and kept apart
// from the records in the zone state, so that no list ever holds it. A
// claim is always read from a zone read sent after the call, never from the
// cache, which may hold the client's own claim where another installation's
// now stands; see claim.go.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// Defaults of Config.
const (
	// DefaultTimeout is external-dns's own client timeout for the protocol:
	// its read timeout (5s) plus its write timeout (10s).
	DefaultTimeout = 15 * time.Second
	// DefaultMaxBodyBytes is the protocol's body cap,
	// external-dns's --webhook-provider-max-body-size.
	DefaultMaxBodyBytes = 32 << 20
	// DefaultReadInterval is how long one zone read serves reads.
	DefaultReadInterval = 10 * time.Second
	// DefaultMaxRetries is how often a read is repeated after a 5xx or a
	// lost connection.
	DefaultMaxRetries = 2
)

// MaxNameLength is the longest record name this client manages, as for the
// RFC 2136 client: the owner name must fit a domain name.
const MaxNameLength = extdns.MaxNameLength

// Config configures a Client.
type Config struct {
	// URL is the webhook server's root, such as http://127.0.0.1:8888.
	URL string
	// Zone is the zone every record must be in, such as example.com. The
	// provider's domain filter must cover it.
	Zone string
	// Timeout bounds one HTTP request; DefaultTimeout when zero.
	Timeout time.Duration
	// MaxBodyBytes caps a request or answer body; DefaultMaxBodyBytes when
	// zero. It must match the server's --webhook-provider-max-body-size.
	MaxBodyBytes int64
	// ReadInterval is how long one read of the zone serves reads;
	// DefaultReadInterval when zero.
	ReadInterval time.Duration
	// MaxRetries is how often a read is repeated; DefaultMaxRetries when
	// zero, none when negative.
	MaxRetries int
	// RetryWait is the first pause before a repeated read; it doubles.
	// 200ms when zero.
	RetryWait time.Duration
	// Logger receives the probe's result and debug lines about calls.
	Logger logr.Logger
	// Transport replaces the HTTP transport, for tests.
	Transport http.RoundTripper
	// Now is the clock the read interval is measured with; time.Now when
	// nil. Benchmarks move it to simulate hours.
	Now func() time.Time
}

// Client manages records in one zone through a webhook server. It is safe
// for concurrent use; writes to one name are made one at a time.
type Client struct {
	zone  string
	t     *transport
	cache *recordCache
	log   logr.Logger
	now   func() time.Time
	locks nameLocks

	// startMu guards the negotiation and the probe, which run once before
	// the first call (or when Start is called) and again after a failure.
	startMu sync.Mutex
	started bool
	filter  DomainFilter
	probe   ProbeResult

	// adjusted remembers what AdjustEndpoints made of the records the
	// client asked for, keyed by the adjusted record's type, value and TTL,
	// so that a record the provider normalised (a minimum TTL, say) reads
	// as the record asked for, not as drift to repair forever.
	adjustMu sync.Mutex
	adjusted map[string]recordKey
}

var _ extdns.Client = (*Client)(nil)

// New returns a Client for cfg. It does not contact the server: Start
// does, or the first call.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("webhook: URL is required")
	}
	base, err := url.Parse(cfg.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("webhook: URL must be an http or https URL, not %q", cfg.URL)
	}
	if base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, errors.New("webhook: URL must not carry user information, a query or a fragment")
	}
	zone := normalizeName(cfg.Zone)
	if zone == "" {
		return nil, errors.New("webhook: Zone is required")
	}
	if err := contract.ValidateName(zone); err != nil {
		return nil, fmt.Errorf("webhook: Zone %q: %w", cfg.Zone, err)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.ReadInterval <= 0 {
		cfg.ReadInterval = DefaultReadInterval
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryWait <= 0 {
		cfg.RetryWait = 200 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	roundTripper := cfg.Transport
	if roundTripper == nil {
		roundTripper = http.DefaultTransport.(*http.Transport).Clone()
	}
	registerMetrics()
	log := cfg.Logger.WithName("webhook")
	c := &Client{
		zone: zone,
		t: &transport{
			base: base,
			http: &http.Client{
				Transport: roundTripper,
				Timeout:   cfg.Timeout,
				// A webhook server never redirects (external-dns treats a 3xx
				// as a failure); following one could send a write elsewhere.
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			},
			maxBody:    cfg.MaxBodyBytes,
			maxRetries: cfg.MaxRetries,
			retryWait:  cfg.RetryWait,
			log:        log,
		},
		log:      log,
		now:      cfg.Now,
		adjusted: map[string]recordKey{},
	}
	c.cache = newRecordCache(zone, cfg.ReadInterval, cfg.Now, c.readZone)
	return c, nil
}

// Start negotiates with the server (GET /), checks that its domain filter
// covers the zone, and probes the provider's class, once; a later call
// returns the first result. A failure is returned and the next call tries
// again.
func (c *Client) Start(ctx context.Context) (ProbeResult, error) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if c.started {
		return c.probe, nil
	}
	if err := c.negotiate(ctx); err != nil {
		return ProbeResult{}, err
	}
	res, err := c.runProbe(ctx)
	if err != nil {
		return ProbeResult{}, err
	}
	c.probe, c.started = res, true
	setProviderClass(res.Class)
	c.log.Info("Measured the webhook DNS provider's class", "class", res.Class, "createOfATakenNameRefused", res.CreateRefused,
		"deleteOfAWrongValueRefused", res.WrongDeleteRefused, "replaceInOneBatch", res.ReplaceInOneBatch, "probeName", res.Name)
	return res, nil
}

// ProviderClass returns what the probe measured, or a zero ProbeResult
// (extdns.ClassUnknown) before it ran. The controller reads it for the DNS
// condition's message.
func (c *Client) ProviderClass() ProbeResult {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	return c.probe
}

var _ extdns.Classer = (*Client)(nil)

// Class returns the class the probe measured, extdns.ClassUnknown before it
// ran: the webhook client is the one backend whose class is measured.
func (c *Client) Class() extdns.Class {
	return c.ProviderClass().Class
}

// DomainFilter returns the server's domain filter, as negotiated.
func (c *Client) DomainFilter() DomainFilter {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	return c.filter
}

// Traffic returns what the client has sent and read so far.
func (c *Client) Traffic() Traffic { return c.t.traffic.snapshot() }

// ZoneSize is the number of endpoints of every owner in the last zone read.
func (c *Client) ZoneSize() int { return c.cache.size() }

func (c *Client) negotiate(ctx context.Context) error {
	var f DomainFilter
	negotiate := request{op: "negotiate", method: http.MethodGet, route: routeNegotiate, retry: true, strictType: true}
	if err := c.t.send(ctx, negotiate, &f); err != nil {
		return err
	}
	m, err := f.matcher()
	if err != nil {
		return c.fail("negotiate", external.KindInvalid, fmt.Sprintf("the webhook server's domain filter (%s) does not compile: %v", f, err), nil)
	}
	// MyApp hosts are names under the zone, as is the probe's: the filter
	// must cover them, not necessarily the apex (external-dns's ".zone"
	// filters cover only names under it).
	if !m.match(probeLabel + "x." + c.zone) {
		return c.fail("negotiate", external.KindInvalid, fmt.Sprintf("the webhook server's domain filter (%s) does not cover zone %s; "+
			"give the provider a --domain-filter that includes it", f, c.zone), nil)
	}
	c.filter = f
	return nil
}

// ready makes sure Start has run.
func (c *Client) ready(ctx context.Context) error {
	_, err := c.Start(ctx)
	return err
}

func (c *Client) readZone(ctx context.Context) ([]Endpoint, error) {
	var eps []Endpoint
	err := c.t.send(ctx, request{op: "list", method: http.MethodGet, route: routeRecords, retry: true}, &eps)
	if err != nil {
		return nil, err
	}
	zoneReads.Inc()
	return eps, nil
}

// class returns the measured class and whether the provider replaces in
// one batch.
func (c *Client) measured() (extdns.Class, bool) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	return c.probe.Class, c.probe.ReplaceInOneBatch
}

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
		return replaceSteps(Changes{Delete: st.written(), Create: u.want.endpoints()}, u.oneBatch), false, nil
	default:
		return nil, false, u.c.conflict("upsert", st)
	}
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

// Transfer hands the record from one owner to another: one batch deletes
// the owner TXT exactly as read and creates the new one. A record already
// held by to is returned as it is.
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
	defer c.locks.lock(name)()
	class, oneBatch := c.measured()
	tr := transfer{c: c, name: name, from: from, to: to, oneBatch: oneBatch}
	fresh := class != extdns.ClassAtomic
	for range 3 {
		st, confirmed, err := c.cache.lookup(ctx, name, fresh)
		if err != nil {
			return extdns.Record{}, err
		}
		if !st.exists() && st.holder() == "" && tr.recreate == nil && !fresh {
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
		now, v, err := c.readBack(ctx, op, st, err, tr.done, func(h string) bool { return h == from || h == to })
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
	// recreate is the second batch of a transfer made in two whose first
	// batch went through: the name is free because this call emptied it,
	// and only the second batch is left to send.
	recreate []Endpoint
}

// plan returns the batches to send for the state read, or inPlace when the
// record is held by to already, or an error: not found or a conflict.
func (tr *transfer) plan(st nameState) (steps []Changes, inPlace bool, err error) {
	const op = "transfer"
	switch {
	case !st.exists() && st.holder() == "" && tr.recreate != nil:
		return []Changes{{Create: tr.recreate}}, false, nil
	case !st.exists():
		return nil, false, tr.c.fail(op, external.KindNotFound, fmt.Sprintf("no A or CNAME record at %s", tr.name), nil)
	case st.holder() == tr.to:
		return nil, true, nil
	case st.holder() != tr.from:
		return nil, false, tr.c.conflict(op, st)
	}
	owner := ownerEndpoint(tr.name, tr.to, st.records[0].RecordTTL)
	if tr.oneBatch {
		return []Changes{{Delete: slices.Clone(st.ownerTXTs), Create: []Endpoint{owner}}}, false, nil
	}
	// A provider that cannot delete and create one record set in one batch
	// gets the record and its owner TXT deleted, then created again with
	// the new owner: between the two the name is free, never a record
	// without an owner, which would read as held by no one.
	tr.recreate = append(slices.Clone(st.records), owner)
	return []Changes{{Delete: st.written()}, {Create: tr.recreate}}, false, nil
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

// checkName normalises name and refuses one this client cannot manage, as
// the RFC 2136 client does.
func (c *Client) checkName(op, name string) (string, error) {
	name = normalizeName(name)
	if name == "" {
		return "", c.fail(op, external.KindInvalid, "record name is required", nil)
	}
	if err := contract.ValidateName(name); err != nil {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q: %v", name, err), nil)
	}
	if len(name) > MaxNameLength {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q: must be at most %d characters, so that its owner "+
			"record %s.<name> fits in a domain name", name, MaxNameLength, extdns.OwnerLabel), nil)
	}
	if name != c.zone && !strings.HasSuffix(name, "."+c.zone) {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q is not in zone %s", name, c.zone), nil)
	}
	switch first, _, _ := strings.Cut(name, "."); first {
	case extdns.OwnerLabel:
		return "", c.fail(op, external.KindInvalid,
			fmt.Sprintf("record name %q: the label %s is reserved for owner records", name, extdns.OwnerLabel), nil)
	case claimLabel:
		return "", c.fail(op, external.KindInvalid,
			fmt.Sprintf("record name %q: the label %s is reserved for installation claims", name, claimLabel), nil)
	}
	return name, nil
}

func (c *Client) checkOwner(op, owner string) error {
	if p := extdns.OwnerProblem(owner); p != "" {
		return c.fail(op, external.KindInvalid, p, nil)
	}
	return nil
}

func (c *Client) checkRecord(op string, rec extdns.Record) error {
	if p := extdns.RecordProblem(rec); p != "" {
		return c.fail(op, external.KindInvalid, p, nil)
	}
	return nil
}

// conflict is the error for a name someone else holds.
func (c *Client) conflict(op string, st nameState) error {
	holder := st.holder()
	msg := fmt.Sprintf("%s is held by %q", st.name, holder)
	switch {
	case len(st.externalDNS) > 0:
		msg = fmt.Sprintf("%s is managed by external-dns (a heritage=external-dns TXT registry record claims it, %s); "+
			"this operator never writes a name external-dns owns", st.name, holder)
	case len(st.owners) > 1:
		msg = fmt.Sprintf("%s has %d owner records at %s (%s), so no one provably holds it; remove all but one by hand",
			st.name, len(st.owners), ownerName(st.name), strings.Join(st.owners, ", "))
	case holder == extdns.UnmanagedOwner:
		msg = fmt.Sprintf("%s has records without an owner record at %s, written outside this operator", st.name, ownerName(st.name))
	}
	e := c.fail(op, external.KindConflict, msg, nil)
	e.Owner = holder
	return e
}

func (c *Client) fail(op string, kind external.Kind, msg string, err error) *external.Error {
	return c.t.fail(op, kind, 0, msg, err)
}

func (c *Client) observe(op string, start time.Time, err *error) {
	observe(op, time.Since(start), *err)
}

// String names the server and zone, for logs.
func (c *Client) String() string {
	return "webhook " + c.t.base.Redacted() + " zone " + c.zone
}

// nameLocks serialises writes to one name within the process, so that the
// installation's own writers never race each other, whatever the provider.
type nameLocks struct {
	mu sync.Mutex
	m  map[string]*nameLock
}

type nameLock struct {
	sync.Mutex
	refs int
}

// lock locks name and returns its unlock.
func (l *nameLocks) lock(name string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*nameLock{}
	}
	nl := l.m[name]
	if nl == nil {
		nl = &nameLock{}
		l.m[name] = nl
	}
	nl.refs++
	l.mu.Unlock()
	nl.Lock()
	return func() {
		nl.Unlock()
		l.mu.Lock()
		if nl.refs--; nl.refs == 0 {
			delete(l.m, name)
		}
		l.mu.Unlock()
	}
}

// randomLabel is a short random hex label.
func randomLabel() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
