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

package external

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Kind classifies a failed call by what a reconciler should do about it. The
// values double as the outcome label of the request metrics.
type Kind string

const (
	// KindNotFound means the object does not exist. Delete treats it as success.
	KindNotFound Kind = "not_found"
	// KindConflict means the object belongs to another owner; the service refused
	// to overwrite or remove it and will keep refusing until the owners change.
	KindConflict Kind = "conflict"
	// KindUnauthorized means the token was missing, wrong or unreadable (HTTP 401
	// or 403). Retrying does not help until the credentials change.
	KindUnauthorized Kind = "unauthorized"
	// KindThrottled means the service asked the caller to slow down; the error
	// carries the wait the service asked for.
	KindThrottled Kind = "throttled"
	// KindTransient means the service failed in a way that may pass: a 5xx, a
	// timeout, a reset connection, an outage, or a response the client could not
	// make sense of.
	KindTransient Kind = "transient"
	// KindInvalid means the request itself was rejected (a 4xx validation error or
	// a request the client refused to send). Retrying the same request fails again.
	KindInvalid Kind = "invalid"
	// KindTooLarge means an answer was larger than the client may read (a
	// configured cap): a configuration problem, which no retry changes until
	// a person raises the cap or the service answers less (a DNS zone read
	// whole, over the webhook protocol's body cap). Unlike KindInvalid it
	// says nothing about the request, so a name read this way is not one the
	// service refuses.
	KindTooLarge Kind = "too_large"
)

// Sentinel errors for errors.Is. Every *Error matches the sentinel of its Kind,
// so callers can branch without a type assertion:
//
//	if errors.Is(err, external.ErrConflict) { ... }
var (
	ErrNotFound     = &Error{Kind: KindNotFound, sentinel: true}
	ErrConflict     = &Error{Kind: KindConflict, sentinel: true}
	ErrUnauthorized = &Error{Kind: KindUnauthorized, sentinel: true}
	ErrThrottled    = &Error{Kind: KindThrottled, sentinel: true}
	ErrTransient    = &Error{Kind: KindTransient, sentinel: true}
	ErrInvalid      = &Error{Kind: KindInvalid, sentinel: true}
	ErrTooLarge     = &Error{Kind: KindTooLarge, sentinel: true}
)

// Error is the error every client in this package tree returns. Its text names
// the service, the operation and the HTTP status, and never a token: messages
// that come from a server are redacted before they are stored here.
type Error struct {
	// Kind says what a caller can do about the failure.
	Kind Kind
	// Service is the external service that was called, such as "dns".
	Service string
	// Operation is the logical call, such as "upsert".
	Operation string
	// StatusCode is the HTTP status of the last response, or 0 when there was
	// none (a timeout, a reset, or a request refused before it was sent).
	StatusCode int
	// Message is the service's explanation, or the client's when no response
	// explains the failure.
	Message string
	// Code is the service's own code for the failure, from its answer's
	// body ("invalid_request"), or "" when it sent none.
	Code string
	// Owner is the current owner of the object when Kind is KindConflict, so a
	// reconciler can tell the user who holds the name.
	Owner string
	// RetryAfter is the wait the service asked for through Retry-After, or zero.
	RetryAfter time.Duration
	// Attempts is how many HTTP attempts the call made; more than one means the
	// client retried before giving up.
	Attempts int
	// Err is the underlying cause, such as a network error or context.Canceled.
	Err error

	// sentinel marks the package-level values that errors.Is compares against.
	sentinel bool
}

// Error renders the failure as "<service> <operation>: <kind> (HTTP <status>): <message>".
func (e *Error) Error() string {
	if e.sentinel {
		return "external: " + string(e.Kind)
	}
	var b strings.Builder
	b.WriteString(e.Service)
	if e.Operation != "" {
		b.WriteString(" ")
		b.WriteString(e.Operation)
	}
	b.WriteString(": ")
	b.WriteString(string(e.Kind))
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Owner != "" && !strings.Contains(e.Message, e.Owner) {
		// Name the owner once: the service's own message usually does.
		fmt.Fprintf(&b, " (owner %q)", e.Owner)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the cause, so errors.Is(err, context.Canceled) works.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every *Error match the sentinel of its Kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.sentinel && t.Kind == e.Kind
}

// KindOf returns the Kind of err, or "" when err is nil or not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// RetryAfter returns the wait a service asked for before the call is repeated.
// It reports false when err carries no such wait. A reconciler uses it as
// RequeueAfter so a throttled call frees the worker instead of sleeping in it.
func RetryAfter(err error) (time.Duration, bool) {
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}

// IsRetryable reports whether repeating the same call later may succeed without
// anyone changing anything: throttling and transient failures. Not found,
// conflicts, bad credentials and invalid requests need a change first.
func IsRetryable(err error) bool {
	switch KindOf(err) {
	case KindThrottled, KindTransient:
		return true
	default:
		return false
	}
}

// KindForStatus maps an HTTP status that is not a success onto a Kind. Both
// clients use it, so the two services classify failures the same way.
func KindForStatus(status int) Kind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindUnauthorized
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusConflict:
		return KindConflict
	case status == http.StatusTooManyRequests:
		return KindThrottled
	case status == http.StatusRequestTimeout:
		return KindTransient
	case status == http.StatusNotImplemented:
		// 501 is permanent: the service does not support the call at all.
		return KindInvalid
	case status >= 400 && status < 500:
		return KindInvalid
	default:
		// 5xx, and statuses no well-behaved service sends (1xx, 3xx) that
		// usually come from a proxy in the way.
		return KindTransient
	}
}
