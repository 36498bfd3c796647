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

package httpapi

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

// callState travels with a request through its context, because
// go-retryablehttp's CheckRetry sees only the context, the response and the
// error, not the request that decided whether retrying is safe.
type callState struct {
	operation string
	// retrySafe is false for a POST without an idempotency key: repeating it
	// after a lost response could create a second object.
	retrySafe bool
	// attempts counts the HTTP attempts made so far.
	attempts int
	// retryAfter is the wait the last answer asked for, as honoured (capped),
	// or the wait left on the gate when that stopped the retries; overCap
	// records that it was longer than the client is willing to sleep.
	retryAfter time.Duration
	overCap    bool
}

type callStateKey struct{}

func stateFrom(ctx context.Context) *callState {
	if st, ok := ctx.Value(callStateKey{}).(*callState); ok {
		return st
	}
	// Requests built elsewhere carry no state; treat them as unsafe to retry.
	return &callState{}
}

// retryPolicy decides after every attempt whether to try again. Unlike
// go-retryablehttp's default it retries a POST only when it carries an
// idempotency key, and it stops at once when the server asks for a wait longer
// than maxWait, instead of sleeping for however long the server said
// (hashicorp/go-retryablehttp#247). Every Retry-After goes to the client's
// gate, which caps it and holds the client's other calls back meanwhile.
type retryPolicy struct {
	service string
	maxWait time.Duration
	log     logr.Logger
	now     func() time.Time
	gate    *gate
}

func (p retryPolicy) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	st := stateFrom(ctx)
	st.attempts++
	st.retryAfter, st.overCap = 0, false
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		// The library's own policy already knows which transport errors are
		// permanent (bad scheme, untrusted certificate, too many redirects).
		retry, _ := retryablehttp.ErrorPropagatedRetryPolicy(ctx, nil, err)
		retry = retry && st.retrySafe && !p.gateOutlastsRetry(ctx, st)
		if retry {
			p.log.V(1).Info("Retrying external API call", "service", p.service, "operation", st.operation,
				"attempt", st.attempts, "error", err.Error())
		}
		return retry, nil
	}

	status := resp.StatusCode
	retry := false
	switch {
	case status == http.StatusTooManyRequests:
		// A 429 means the request was not processed, so even a plain POST may
		// be repeated.
		retry = true
	case status == http.StatusRequestTimeout,
		status >= 500 && status != http.StatusNotImplemented:
		retry = st.retrySafe
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		header := resp.Header.Get("Retry-After")
		if asked, ok := parseRetryAfter(header, p.now()); ok {
			wait := p.gate.honour(asked, header)
			st.retryAfter = wait
			if wait > p.maxWait || exceedsDeadline(ctx, wait, p.now()) {
				// Sleeping here would hold the caller's worker for longer than
				// it agreed to; hand the wait back instead.
				st.overCap = true
				return false, nil
			}
		}
	}
	if retry && p.gateOutlastsRetry(ctx, st) {
		return false, nil
	}
	if retry {
		p.log.V(1).Info("Retrying external API call", "service", p.service, "operation", st.operation,
			"attempt", st.attempts, "status", status)
	}
	return retry, nil
}

// gateOutlastsRetry reports whether another call's answer closed the gate
// for longer than a retry may sleep, and then records that wait for the
// error, so a call already under way does not reach the service early either.
func (p retryPolicy) gateOutlastsRetry(ctx context.Context, st *callState) bool {
	left := p.gate.remaining()
	if left <= 0 || (left <= p.maxWait && !exceedsDeadline(ctx, left, p.now())) {
		return false
	}
	st.retryAfter, st.overCap = left, true
	return true
}

// backoff honours a Retry-After below the cap and otherwise waits an
// exponentially growing, jittered time so many clients failing together do
// not come back together. It never retries before the gate opens.
func (p retryPolicy) backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	wait := time.Duration(-1)
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if asked, ok := parseRetryAfter(resp.Header.Get("Retry-After"), p.now()); ok {
			wait = asked
		}
	}
	if wait < 0 {
		wait = jitteredBackoff(minWait, maxWait, attempt)
	}
	return min(max(wait, p.gate.remaining()), maxWait)
}

// jitteredBackoff returns a wait drawn from the upper half of
// minWait*2^attempt, capped at maxWait.
func jitteredBackoff(minWait, maxWait time.Duration, attempt int) time.Duration {
	ceiling := minWait
	for i := 0; i < attempt && ceiling < maxWait; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, maxWait)
	if ceiling <= 1 {
		return ceiling
	}
	half := ceiling / 2
	return half + rand.N(ceiling-half+1)
}

// exceedsDeadline reports whether waiting would outlast the caller's deadline,
// in which case the wait is pointless and the throttling is reported now.
func exceedsDeadline(ctx context.Context, wait time.Duration, now time.Time) bool {
	deadline, ok := ctx.Deadline()
	return ok && deadline.Sub(now) < wait
}

// parseRetryAfter reads a Retry-After value in either of its forms: a number
// of seconds or an HTTP-date. A date in the past means "now". Anything else,
// including a negative number, is ignored as if the header were absent.
func parseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if seconds, err := strconv.ParseInt(value, 10, 64); err == nil {
		if seconds < 0 {
			return 0, false
		}
		// Clamp absurd values instead of overflowing time.Duration.
		const maxSeconds = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(seconds, maxSeconds)) * time.Second, true
	}
	when, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	if wait := when.Sub(now); wait > 0 {
		return wait, true
	}
	return 0, true
}
