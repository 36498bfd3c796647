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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// The protocol's routes.
const (
	routeNegotiate = "/"
	routeRecords   = "/records"
	routeAdjust    = "/adjustendpoints"
)

// Traffic counts what the client sent to and read from the webhook server,
// for the cost figures (docs/benchmarks-results.md) and for tests that
// assert reads are shared.
type Traffic struct {
	// Requests is every HTTP request, retries included.
	Requests int64
	// ZoneReads is the GET /records among them.
	ZoneReads int64
	// Writes is the POST /records among them.
	Writes int64
	// BytesSent and BytesReceived are the request and response bodies.
	BytesSent, BytesReceived int64
}

type trafficCounters struct {
	requests, zoneReads, writes, sent, received atomic.Int64
}

func (t *trafficCounters) snapshot() Traffic {
	return Traffic{Requests: t.requests.Load(), ZoneReads: t.zoneReads.Load(), Writes: t.writes.Load(),
		BytesSent: t.sent.Load(), BytesReceived: t.received.Load()}
}

// transport sends the protocol's requests to one webhook server.
type transport struct {
	base       *url.URL
	http       *http.Client
	maxBody    int64
	maxRetries int
	retryWait  time.Duration
	log        logr.Logger
	traffic    trafficCounters
}

// request is one HTTP exchange with the server.
type request struct {
	// op names the logical call in errors.
	op     string
	method string
	route  string
	body   any
	// retry allows repeating the request after a 5xx or a transport error:
	// true for reads, never for POST /records, whose outcome is unknown
	// after such an answer and is read back instead.
	retry bool
	// strictType requires the answer's Content-Type to be the protocol's
	// media type, as at negotiation; otherwise any JSON type is read.
	strictType bool
}

// send makes req and decodes a 2xx answer's body into out (nil to ignore
// it). Every error is an *external.Error; StatusCode says whether the
// server answered.
func (t *transport) send(ctx context.Context, req request, out any) error {
	var payload []byte
	if req.body != nil {
		var err error
		if payload, err = json.Marshal(req.body); err != nil {
			return t.fail(req.op, external.KindInvalid, 0, "encode request: "+err.Error(), err)
		}
		if int64(len(payload)) > t.maxBody {
			return t.fail(req.op, external.KindInvalid, 0, fmt.Sprintf("the request body is %d bytes, above the "+
				"protocol's cap of %d bytes", len(payload), t.maxBody), nil)
		}
	}
	var last error
	for attempt := 0; ; attempt++ {
		status, err := t.attempt(ctx, req, payload, out)
		if err == nil {
			return nil
		}
		last = err
		retryable := req.retry && (status == 0 || status >= 500) && status != http.StatusNotImplemented
		if !retryable || attempt >= t.maxRetries || ctx.Err() != nil {
			break
		}
		wait := t.retryWait << attempt
		wait = wait/2 + rand.N(wait/2+1) //nolint:gosec // jitter needs no cryptographic randomness
		t.log.V(1).Info("Retrying webhook DNS provider request", "route", req.route, "attempt", attempt+1, "error", err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	return last
}

// attempt makes one HTTP request and returns the answer's status (0 when
// there was none).
func (t *transport) attempt(ctx context.Context, req request, payload []byte, out any) (int, error) {
	u := *t.base
	u.Path = strings.TrimSuffix(u.Path, "/") + req.route
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return 0, t.fail(req.op, external.KindInvalid, 0, "build request: "+err.Error(), err)
	}
	hr.Header.Set("Accept", MediaType)
	hr.Header.Set("User-Agent", "myapp-operator")
	if payload != nil {
		hr.Header.Set("Content-Type", MediaType)
	}
	t.traffic.requests.Add(1)
	t.traffic.sent.Add(int64(len(payload)))
	if req.method == http.MethodGet && req.route == routeRecords {
		t.traffic.zoneReads.Add(1)
	}
	if req.method == http.MethodPost && req.route == routeRecords {
		t.traffic.writes.Add(1)
	}
	resp, err := t.http.Do(hr)
	if err != nil {
		msg := "no answer from the webhook server at " + t.base.Host
		if ctx.Err() != nil {
			msg = "call abandoned"
		}
		return 0, t.fail(req.op, external.KindTransient, 0, msg, err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}()
	if s, ok := out.(streamed); ok && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp.StatusCode, t.stream(req, resp, s)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, t.maxBody+1))
	t.received(req, int64(len(data)))
	if err != nil {
		return 0, t.fail(req.op, external.KindTransient, resp.StatusCode, "reading the answer: "+err.Error(), err)
	}
	if int64(len(data)) > t.maxBody {
		return resp.StatusCode, t.tooLarge(req, resp.StatusCode)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, t.statusError(req, resp, data)
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if err := decodeAnswer(resp.Header.Get("Content-Type"), req.strictType, data, out); err != nil {
		// At negotiation a wrong answer means the URL is not a webhook
		// server of this protocol version, which no retry changes.
		kind := external.KindTransient
		if req.strictType {
			kind = external.KindInvalid
		}
		return resp.StatusCode, t.fail(req.op, kind, resp.StatusCode,
			fmt.Sprintf("unexpected answer to %s %s: %v", req.method, req.route, err), nil)
	}
	return resp.StatusCode, nil
}

// received counts the bytes of an answer.
func (t *transport) received(req request, n int64) {
	t.traffic.received.Add(n)
	if req.method == http.MethodGet && req.route == routeRecords {
		zoneReadBytes.Add(float64(n))
	}
}

// tooLarge is the error for an answer above the body cap: a configuration
// problem (external.KindTooLarge), which no retry changes until a person
// raises the cap or narrows what the server answers.
func (t *transport) tooLarge(req request, status int) error {
	return t.fail(req.op, external.KindTooLarge, status, fmt.Sprintf("the answer to %s %s is larger than "+
		"%d bytes, the client's body cap (--dns-webhook-max-body-size; external-dns's --webhook-provider-max-body-size); "+
		"the zone is too large to read whole: raise the cap on both sides or narrow the server's domain filter",
		req.method, req.route, t.maxBody), nil)
}

// streamed is an answer decoded as it arrives rather than read whole
// first: the zone read, the protocol's one answer that grows with the
// zone, whose decoder keeps only what the client needs of it.
type streamed interface {
	// begin starts the answer over, before each attempt.
	begin()
	// decode reads the answer's one JSON value from dec.
	decode(dec *json.Decoder) error
}

// stream decodes a 2xx answer into out as it arrives, reading at most the
// body cap.
func (t *transport) stream(req request, resp *http.Response, out streamed) error {
	if err := checkContentType(resp.Header.Get("Content-Type"), req.strictType); err != nil {
		return t.fail(req.op, external.KindTransient, resp.StatusCode,
			fmt.Sprintf("unexpected answer to %s %s: %v", req.method, req.route, err), nil)
	}
	body := &cappedReader{r: resp.Body, left: t.maxBody}
	defer func() { t.received(req, t.maxBody-body.left) }()
	dec := json.NewDecoder(body)
	out.begin()
	err := out.decode(dec)
	if err == nil {
		err = atEnd(dec)
	}
	switch {
	case body.over:
		// Whatever the decoder made of it: json.Decoder.More swallows it.
		return t.tooLarge(req, resp.StatusCode)
	case err == nil:
		return nil
	case body.failed != nil:
		return t.fail(req.op, external.KindTransient, resp.StatusCode, "reading the answer: "+body.failed.Error(), body.failed)
	}
	return t.fail(req.op, external.KindTransient, resp.StatusCode,
		fmt.Sprintf("unexpected answer to %s %s: decode JSON: %v", req.method, req.route, err), nil)
}

// errOverCap is a cappedReader's error past its cap.
var errOverCap = errors.New("answer above the body cap")

// cappedReader reads at most left bytes of r, then fails with errOverCap
// if r has more, and from then on (over: a decoder may swallow one error
// and read again); failed keeps r's own error.
type cappedReader struct {
	r      io.Reader
	left   int64
	over   bool
	failed error
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.over {
		return 0, errOverCap
	}
	if c.left <= 0 {
		// Whether r has more: a Read may answer nothing and no error.
		var one [1]byte
		for {
			n, err := c.r.Read(one[:])
			switch {
			case n > 0:
				c.over = true
				return 0, errOverCap
			case err != nil && !errors.Is(err, io.EOF):
				c.failed = err
				return 0, err
			case err != nil:
				return 0, err
			}
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.failed = err
	}
	return n, err
}

// statusError turns a non-2xx answer into an error. The reference server
// answers every failure with a bare status and no body, so the status is
// all there is; a short text body is kept for the message.
func (t *transport) statusError(req request, resp *http.Response, data []byte) error {
	kind := external.KindForStatus(resp.StatusCode)
	if kind == external.KindNotFound || kind == external.KindConflict {
		// A webhook server has no notion of either for a route: a 404 is a
		// URL that is not a webhook server, a 409 a provider's refusal.
		kind = external.KindInvalid
		if resp.StatusCode == http.StatusConflict {
			kind = external.KindTransient
		}
	}
	msg := strings.ToLower(http.StatusText(resp.StatusCode))
	if text := strings.TrimSpace(string(data)); text != "" && len(text) <= 512 && !strings.ContainsAny(text, "<>") {
		msg += ": " + text
	}
	e := t.fail(req.op, kind, resp.StatusCode, fmt.Sprintf("%s %s answered %s", req.method, req.route, msg), nil)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return e
}

// decodeAnswer reads a JSON answer strictly enough to notice a wrong
// content type or trailing garbage, and ignores fields it does not know.
func decodeAnswer(contentType string, strict bool, data []byte, out any) error {
	if err := checkContentType(contentType, strict); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}
	return atEnd(dec)
}

// atEnd requires that dec has nothing after the answer's one JSON value.
func atEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}

// checkContentType requires JSON, and when strict the protocol's own
// media type.
func checkContentType(contentType string, strict bool) error {
	mediaType, params, err := mime.ParseMediaType(contentType)
	switch {
	case strict && (err != nil || mediaType != "application/external.dns.webhook+json" || params["version"] != "1"):
		return fmt.Errorf("content type %q is not %s: the URL is not an external-dns webhook server of this "+
			"protocol version", contentType, MediaType)
	case err != nil || (mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json")):
		return fmt.Errorf("content type %q is not JSON", contentType)
	}
	return nil
}

func (t *transport) fail(op string, kind external.Kind, status int, msg string, err error) *external.Error {
	return &external.Error{Kind: kind, Service: extdns.ServiceName, Operation: op, StatusCode: status, Message: msg, Err: err}
}
