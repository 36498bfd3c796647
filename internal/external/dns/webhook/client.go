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
// Every write is one compare-and-swap batch of creates and exact deletes
// (external-dns's aws provider turns updateNew into a Route 53 UPSERT,
// which no condition guards):
//
//   - create: create the record and its owner TXT;
//   - change: delete the record and owner TXT exactly as read, create the
//     new ones;
//   - transfer: delete the owner TXT exactly as read, create the new one;
//   - delete: delete the record and owner TXT exactly as read.
//
// A provider that cannot replace a record set in one batch (inmemory,
// rfc2136, pdns; the probe measures it) gets a change as one
// updateOld/updateNew batch of the address record alone, and a transfer as
// two batches of the owner TXT alone, a delete then a create: the address
// record is never deleted to be created again, so the name resolves
// throughout. A transfer cut between its two batches leaves the address
// and no owner TXT, which every call but that Transfer reads as a conflict
// with extdns.UnmanagedOwner, and which that Transfer called again
// finishes.
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
// in a zone with nothing else. A zone read is decoded as it arrives into
// what the client keeps of it (zoneAnswer); one over the cap is a
// configuration problem (external.KindTooLarge), not asked again for six
// read intervals.
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
//
// The files are cut by verb: client.go (configuration, negotiation, the
// probe's entry), read.go (Get and the lists), write.go (Upsert, Delete,
// Transfer and the batches they send), checks.go (names, owners and the
// errors they give, the per-name locks), zone.go (the zone state: what a
// name holds and who), cache.go (the zone read, decoded as it arrives, and
// its cache), probe.go, claim.go, transport.go and wire.go (the protocol).
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	matcher *matcher
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

// TransfersInTwoBatches reports whether a Transfer is made in two batches
// (dns.TwoBatchTransferer): the probe found that the provider cannot
// replace a record set in one batch. Before the probe, it says so too.
func (c *Client) TransfersInTwoBatches() bool {
	_, oneBatch := c.measured()
	return !oneBatch
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
	c.filter, c.matcher = f, m
	return nil
}

// ready makes sure Start has run.
func (c *Client) ready(ctx context.Context) error {
	_, err := c.Start(ctx)
	return err
}

// readZone reads the zone into a zone state as the answer arrives
// (zoneAnswer), and returns it with the number of endpoints read.
func (c *Client) readZone(ctx context.Context) (*zoneState, int, error) {
	a := &zoneAnswer{zone: c.zone}
	err := c.t.send(ctx, request{op: "list", method: http.MethodGet, route: routeRecords, retry: true}, a)
	if err != nil {
		return nil, 0, err
	}
	zoneReads.Inc()
	return a.state, a.endpoints, nil
}

// class returns the measured class and whether the provider replaces in
// one batch.
func (c *Client) measured() (extdns.Class, bool) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	return c.probe.Class, c.probe.ReplaceInOneBatch
}
