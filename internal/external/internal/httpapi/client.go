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

// Package httpapi is the HTTP plumbing the dns and backup clients share: one
// place that sends a JSON call with retries, reads a bounded response, turns
// failures into *external.Error and records metrics. It is internal so
// reconcilers see only the small per-service interfaces.
package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	cleanhttp "github.com/hashicorp/go-cleanhttp"
	retryablehttp "github.com/hashicorp/go-retryablehttp"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

// IdempotencyKeyHeader carries the key that makes a POST safe to repeat. It is
// the header the IETF draft names, which net/http also recognises.
const IdempotencyKeyHeader = "Idempotency-Key"

// maxMessageLen bounds how much of a server's error message ends up in an
// error string, so a misbehaving server cannot flood logs and conditions.
const maxMessageLen = 512

// Client sends calls to one external service.
type Client struct {
	service     string
	base        *url.URL
	token       external.TokenSource
	http        *retryablehttp.Client
	log         logr.Logger
	maxResponse int64
	// gate holds every call back while the service asked to wait.
	gate *gate
}

// Call describes one logical call: what to send and how to read the answer.
type Call struct {
	// Operation names the call in errors, logs and metrics, such as "upsert".
	Operation string
	// Method is the HTTP method.
	Method string
	// Path holds the unescaped path segments after the base URL; each is
	// escaped on its own, so a segment may hold any character.
	Path []string
	// Query is appended to the URL when not empty.
	Query url.Values
	// Body is sent as JSON when not nil.
	Body any
	// IdempotencyKey is sent as the Idempotency-Key header when not empty, and
	// makes a POST safe to retry.
	IdempotencyKey string
	// NotFoundOK turns a 404 into success, for deletes of what is already gone.
	NotFoundOK bool
}

// Validator is implemented by response types that check what they decoded, so
// a well-formed but meaningless response becomes an error, not a zero value.
type Validator interface {
	// Validate returns an error describing the first thing wrong with the
	// decoded value.
	Validate() error
}

// ErrorBody is the JSON body of every error response the services send.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Owner   string `json:"owner,omitempty"`
	} `json:"error"`
}

// New builds a client of service from cfg, applying cfg's defaults.
func New(service string, cfg external.Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	base, err := url.Parse(strings.TrimSuffix(cfg.BaseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("external: BaseURL: %w", err)
	}
	transport := cfg.Transport
	if transport == nil {
		t := cleanhttp.DefaultPooledTransport()
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CAFile != "" {
			pool, err := loadCAFile(cfg.CAFile)
			if err != nil {
				return nil, err
			}
			t.TLSClientConfig.RootCAs = pool
		}
		transport = t
	}
	registerMetrics()

	log := cfg.Logger.WithName(service)
	g := &gate{service: service, maxWait: cfg.MaxRetryAfter, log: log, now: time.Now}
	policy := retryPolicy{service: service, maxWait: cfg.MaxRetryWait, log: log, now: time.Now, gate: g}
	rc := &retryablehttp.Client{
		HTTPClient: &http.Client{
			Transport: transport,
			Timeout:   cfg.AttemptTimeout,
			// A redirect from an API is a misconfiguration; following it
			// could send the request, and its token, somewhere unexpected.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		// The library's own logger would print every attempt at its own
		// levels; the retry policy logs through logr instead.
		Logger:       nil,
		RetryWaitMin: cfg.MinRetryWait,
		RetryWaitMax: cfg.MaxRetryWait,
		RetryMax:     cfg.MaxRetries,
		CheckRetry:   policy.checkRetry,
		Backoff:      policy.backoff,
		// Hand back the last response instead of a generic "giving up" error,
		// so its status and body decide the error kind.
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	return &Client{
		service:     service,
		base:        base,
		token:       cfg.Token,
		http:        rc,
		log:         log,
		maxResponse: cfg.MaxResponseBytes,
		gate:        g,
	}, nil
}

func loadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("external: CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("external: CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// Endpoint is the service's base URL, as a message names it: it holds no
// credentials (Config.Validate refuses user information and a query).
func (c *Client) Endpoint() string { return c.base.String() }

// Invalid returns, and counts in the metrics, an error for a call the client
// refuses to send because the caller's arguments are incomplete.
func (c *Client) Invalid(operation, message string) error {
	err := &external.Error{Kind: external.KindInvalid, Service: c.service, Operation: operation, Message: message}
	observe(c.service, operation, 0, err)
	return err
}

// Do sends call and decodes a successful response into out, which may be nil
// when no body is expected. Every failure is an *external.Error. While the
// service's last Retry-After is not over, the call is not sent and fails as
// throttled, with the wait that is left.
func (c *Client) Do(ctx context.Context, call Call, out any) (err error) {
	if err := c.gate.heldBack(call.Operation); err != nil {
		observe(c.service, call.Operation, 0, err)
		return err
	}
	start := time.Now()
	defer func() { observe(c.service, call.Operation, time.Since(start), err) }()

	token, err := c.token.Token(ctx)
	if err != nil {
		return c.tokenError(call, err)
	}

	var body any
	if call.Body != nil {
		data, err := json.Marshal(call.Body)
		if err != nil {
			return c.newError(call, external.KindInvalid, 0, "encode request: "+err.Error(), err)
		}
		body = data
	}

	state := &callState{
		operation: call.Operation,
		retrySafe: call.Method != http.MethodPost || call.IdempotencyKey != "",
	}
	u := c.url(call)
	req, err := retryablehttp.NewRequestWithContext(context.WithValue(ctx, callStateKey{}, state), call.Method, u.String(), body)
	if err != nil {
		return c.newError(call, external.KindInvalid, 0, "build request: "+err.Error(), nil)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "myapp-operator")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if call.IdempotencyKey != "" {
		req.Header.Set(IdempotencyKeyHeader, call.IdempotencyKey)
	}

	c.log.V(1).Info("Calling external API", "operation", call.Operation, "method", call.Method, "path", u.EscapedPath())
	resp, err := c.http.Do(req)
	if err != nil {
		if resp != nil {
			drain(resp.Body)
		}
		return c.transportError(ctx, call, state, err)
	}
	defer drain(resp.Body)

	data, err := readLimited(resp.Body, c.maxResponse)
	if err != nil {
		e := c.newError(call, external.KindTransient, resp.StatusCode, "read response: "+err.Error(), nil)
		e.Attempts = state.attempts
		return e
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if out == nil {
			return nil
		}
		if err := decode(resp.Header.Get("Content-Type"), data, out); err != nil {
			e := c.newError(call, external.KindTransient, resp.StatusCode, "unexpected response: "+truncate(redact(err.Error(), token)), nil)
			e.Attempts = state.attempts
			return e
		}
		return nil
	}
	if resp.StatusCode == http.StatusNotFound && call.NotFoundOK {
		return nil
	}
	return c.statusError(call, state, resp, data, token)
}

func (c *Client) url(call Call) *url.URL {
	u := *c.base
	raw := u.EscapedPath()
	for _, seg := range call.Path {
		raw += "/" + url.PathEscape(seg)
	}
	u.RawPath = raw
	u.Path, _ = url.PathUnescape(raw)
	if len(call.Query) > 0 {
		u.RawQuery = call.Query.Encode()
	}
	return &u
}

func (c *Client) newError(call Call, kind external.Kind, status int, message string, cause error) *external.Error {
	return &external.Error{
		Kind:       kind,
		Service:    c.service,
		Operation:  call.Operation,
		StatusCode: status,
		Message:    message,
		Err:        cause,
	}
}

// tokenError keeps the kind a token source chose (transient for an API server
// hiccup) and treats every other failure to get a token as bad credentials.
func (c *Client) tokenError(call Call, err error) error {
	var e *external.Error
	if errors.As(err, &e) {
		return c.newError(call, e.Kind, 0, "get token: "+e.Message, e.Err)
	}
	return c.newError(call, external.KindUnauthorized, 0, "get token", err)
}

// transportError classifies a call that ended without a usable response.
func (c *Client) transportError(ctx context.Context, call Call, state *callState, err error) error {
	e := c.newError(call, external.KindTransient, 0, "", err)
	e.Attempts = state.attempts
	if state.overCap {
		// Another call's answer closed the gate for longer than a retry
		// may sleep.
		e.RetryAfter = state.retryAfter
	}
	switch {
	case ctx.Err() != nil:
		// The caller gave up; keep its reason reachable through errors.Is.
		e.Message = "call abandoned"
		e.Err = ctx.Err()
	case !state.retrySafe:
		e.Message = "request failed and is not safe to retry"
	default:
		e.Message = "request failed"
	}
	return e
}

// statusError turns an error response into its typed error.
func (c *Client) statusError(call Call, state *callState, resp *http.Response, data []byte, token string) error {
	e := c.newError(call, external.KindForStatus(resp.StatusCode), resp.StatusCode, "", nil)
	e.Attempts = state.attempts
	var body ErrorBody
	if json.Unmarshal(data, &body) == nil && body.Error.Message != "" {
		e.Message = truncate(redact(body.Error.Message, token))
		e.Code = truncate(redact(body.Error.Code, token))
		e.Owner = truncate(redact(body.Error.Owner, token))
	} else {
		// Not the service's error shape, likely a proxy's page: the status
		// text says as much as the body would, and cannot leak anything.
		e.Message = strings.ToLower(http.StatusText(resp.StatusCode))
	}
	// The wait the last answer asked for, as the gate honours it (capped),
	// or the gate's own wait when it stopped the retries.
	e.RetryAfter = state.retryAfter
	return e
}

// decode reads a JSON response strictly enough to notice a wrong content
// type, trailing garbage or a value that does not validate, and leniently
// enough to ignore fields a newer server adds.
func decode(contentType string, data []byte, out any) error {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil || (mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json")) {
		return fmt.Errorf("content type %q is not JSON", contentType)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return errors.New("empty body")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	if v, ok := out.(Validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// readLimited reads at most limit bytes and fails on more, so a huge or
// endless body cannot exhaust memory.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("body larger than %d bytes", limit)
	}
	return data, nil
}

// drain reads a little of what is left and closes the body, so the connection
// can be reused without waiting on a large remainder.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}

// redact removes the token from text that came from the server, which may
// echo request headers back in its messages.
func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[REDACTED]")
}

// truncate shortens s to maxMessageLen bytes without splitting a character.
func truncate(s string) string {
	if len(s) <= maxMessageLen {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessageLen], "") + "..."
}
