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

// Package external holds what the clients of the operator's external services
// share: their configuration, their credentials, and the typed errors a
// reconciler branches on. The clients themselves live in the dns and backup
// subpackages; the wire contract is described in docs/external-api.md.
package external

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-logr/logr"
)

// Defaults applied by Config.WithDefaults. They are chosen so a call finishes,
// retries included, well inside a reconcile: three retries with at most ten
// seconds between them, and each attempt cut off after ten seconds.
const (
	DefaultAttemptTimeout   = 10 * time.Second
	DefaultMaxRetries       = 3
	DefaultMinRetryWait     = 250 * time.Millisecond
	DefaultMaxRetryWait     = 10 * time.Second
	DefaultMaxResponseBytes = 4 << 20
	// DefaultMaxRetryAfter is long enough to respect any sensible rate limit
	// and short enough that a wrong answer stalls deletions for minutes, not
	// days.
	DefaultMaxRetryAfter = 5 * time.Minute
)

// Config configures a client of one external service. The zero value of every
// optional field means "use the default".
type Config struct {
	// BaseURL is the service's root, such as "https://dns.example.com". A path
	// prefix is kept; user information is refused so credentials only ever come
	// from Token.
	BaseURL string
	// Token supplies the bearer token for every call. Required.
	Token TokenSource
	// CAFile is an optional PEM bundle trusted in addition to the system roots,
	// for services behind a private certificate authority.
	CAFile string
	// AttemptTimeout bounds a single HTTP attempt, including reading the body.
	AttemptTimeout time.Duration
	// MaxRetries is how many times a failed attempt is repeated. Zero means the
	// default; a negative value turns retries off.
	MaxRetries int
	// MinRetryWait is the first backoff step; later steps double it.
	MinRetryWait time.Duration
	// MaxRetryWait caps both the backoff and how long a call sleeps through a
	// server's Retry-After. A server that asks for a longer wait gets an
	// ErrThrottled carrying that wait instead, so the caller can requeue
	// rather than sleep.
	MaxRetryWait time.Duration
	// MaxRetryAfter caps the wait a server's Retry-After can impose. While
	// that wait lasts, every call of the client fails at once with an
	// ErrThrottled carrying the time left, without reaching the service. A
	// longer Retry-After is honoured for MaxRetryAfter only, and logged.
	MaxRetryAfter time.Duration
	// MaxResponseBytes bounds how much of a response body is read; a larger
	// response is an error.
	MaxResponseBytes int64
	// Logger receives debug lines about calls and retries, never a token.
	Logger logr.Logger
	// Transport replaces the network transport. Tests and fuzzing use it to
	// feed responses in without a server; it cannot be combined with CAFile.
	Transport http.RoundTripper
}

// WithDefaults returns a copy of c with every unset optional field filled in.
func (c Config) WithDefaults() Config {
	if c.AttemptTimeout <= 0 {
		c.AttemptTimeout = DefaultAttemptTimeout
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.MinRetryWait <= 0 {
		c.MinRetryWait = DefaultMinRetryWait
	}
	if c.MaxRetryWait <= 0 {
		c.MaxRetryWait = DefaultMaxRetryWait
	}
	if c.MinRetryWait > c.MaxRetryWait {
		c.MinRetryWait = c.MaxRetryWait
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return c
}

// Validate reports a configuration no client can work with. It does not touch
// the network or the CA file.
func (c Config) Validate() error {
	if c.BaseURL == "" {
		return errors.New("external: BaseURL is required")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return fmt.Errorf("external: BaseURL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("external: BaseURL scheme must be http or https, not %q", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("external: BaseURL has no host")
	}
	if u.User != nil {
		// Credentials in a URL end up in logs and error strings; the token
		// source is the only place a credential may come from.
		return errors.New("external: BaseURL must not contain user information")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("external: BaseURL must not contain a query or fragment")
	}
	if c.Token == nil {
		return errors.New("external: Token is required")
	}
	if c.MaxRetryAfter < 0 {
		return fmt.Errorf("external: MaxRetryAfter must not be negative, got %s", c.MaxRetryAfter)
	}
	if c.Transport != nil && c.CAFile != "" {
		return errors.New("external: CAFile cannot be combined with a custom Transport")
	}
	return nil
}
