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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

func newTestClient(t *testing.T, service, url string) *Client {
	t.Helper()
	c, err := New(service, external.Config{
		BaseURL:      url,
		Token:        external.StaticTokenSource("token"),
		MaxRetries:   2,
		MinRetryWait: time.Millisecond,
		MaxRetryWait: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPOSTIsRetriedOnlyWithAnIdempotencyKey(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		key       string
		status    int
		wantCalls int32
	}{
		{name: "POST without a key after a 503", method: http.MethodPost, status: 503, wantCalls: 1},
		{name: "POST with a key after a 503", method: http.MethodPost, key: "k", status: 503, wantCalls: 3},
		{name: "POST without a key after a 429", method: http.MethodPost, status: 429, wantCalls: 3},
		{name: "PUT after a 503", method: http.MethodPut, status: 503, wantCalls: 3},
		{name: "DELETE after a 500", method: http.MethodDelete, status: 500, wantCalls: 3},
		{name: "GET after a 501", method: http.MethodGet, status: 501, wantCalls: 1},
		{name: "GET after a 409", method: http.MethodGet, status: 409, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var calls atomic.Int32
			var keys atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				keys.Store(r.Header.Get(IdempotencyKeyHeader))
				w.WriteHeader(tt.status)
			}))
			t.Cleanup(srv.Close)

			err := newTestClient(t, "svc", srv.URL).Do(t.Context(), Call{
				Operation: "op", Method: tt.method, Path: []string{"x"}, Body: map[string]string{"a": "b"}, IdempotencyKey: tt.key,
			}, nil)
			g.Expect(err).To(HaveOccurred())
			g.Expect(calls.Load()).To(Equal(tt.wantCalls))
			g.Expect(keys.Load()).To(Equal(tt.key))
		})
	}
}

func TestPOSTWithoutAKeyIsNotRetriedAfterAReset(t *testing.T) {
	g := NewWithT(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)

	err := newTestClient(t, "svc", srv.URL).Do(t.Context(), Call{Operation: "create", Method: http.MethodPost, Body: struct{}{}}, nil)
	g.Expect(err).To(MatchError(external.ErrTransient))
	g.Expect(err.Error()).To(ContainSubstring("not safe to retry"))
	g.Expect(calls.Load()).To(Equal(int32(1)))
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{value: "", wantOK: false},
		{value: "0", want: 0, wantOK: true},
		{value: "30", want: 30 * time.Second, wantOK: true},
		{value: " 7 ", want: 7 * time.Second, wantOK: true},
		{value: "-5", wantOK: false},
		{value: "1.5", wantOK: false},
		{value: "soon", wantOK: false},
		{value: "99999999999999999", want: time.Duration(1<<63 - 1).Truncate(time.Second), wantOK: true},
		{value: "Sun, 01 Mar 2026 12:00:45 GMT", want: 45 * time.Second, wantOK: true},
		{value: "Sunday, 01-Mar-26 12:01:00 GMT", want: time.Minute, wantOK: true},
		{value: "Sun, 01 Mar 2026 11:00:00 GMT", want: 0, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			g := NewWithT(t)
			got, ok := parseRetryAfter(tt.value, now)
			g.Expect(ok).To(Equal(tt.wantOK))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestBackoffIsJitteredAndCapped(t *testing.T) {
	g := NewWithT(t)
	p := retryPolicy{maxWait: time.Second, now: time.Now}
	seen := map[time.Duration]bool{}
	for attempt := range 10 {
		ceiling := min(100*time.Millisecond<<attempt, time.Second)
		for range 50 {
			wait := p.backoff(100*time.Millisecond, time.Second, attempt, nil)
			g.Expect(wait).To(BeNumerically(">=", ceiling/2))
			g.Expect(wait).To(BeNumerically("<=", ceiling))
			seen[wait] = true
		}
	}
	g.Expect(len(seen)).To(BeNumerically(">", 100), "waits are spread, not fixed")

	throttled := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"3600"}}}
	g.Expect(p.backoff(100*time.Millisecond, time.Second, 0, throttled)).To(Equal(time.Second), "Retry-After is capped")
	throttled.Header.Set("Retry-After", "0")
	g.Expect(p.backoff(100*time.Millisecond, time.Second, 0, throttled)).To(BeZero(), "a short Retry-After is honoured as is")
}

func TestMetricsPerLogicalCall(t *testing.T) {
	g := NewWithT(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Fail the first attempt of every call; a logical call that
		// succeeds after a retry still counts once, as ok.
		if calls.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	// A service name of its own keeps counts from other runs (-count=N) out.
	service := fmt.Sprintf("metrics-test-%d", time.Now().UnixNano())
	c := newTestClient(t, service, srv.URL)
	// A second client for the same service must not register twice.
	_ = newTestClient(t, service, srv.URL)

	var out map[string]any
	g.Expect(c.Do(t.Context(), Call{Operation: "get", Method: http.MethodGet, Path: []string{"found"}}, &out)).To(Succeed())
	err := c.Do(t.Context(), Call{Operation: "get", Method: http.MethodGet, Path: []string{"missing"}}, &out)
	g.Expect(err).To(MatchError(external.ErrNotFound))
	g.Expect(c.Do(t.Context(), Call{Operation: "delete", Method: http.MethodDelete, Path: []string{"missing"}, NotFoundOK: true}, nil)).To(Succeed())
	g.Expect(c.Invalid("get", "no name")).To(MatchError(external.ErrInvalid))

	g.Expect(testutil.ToFloat64(requestsTotal.WithLabelValues(service, "get", "ok"))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(requestsTotal.WithLabelValues(service, "get", "not_found"))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(requestsTotal.WithLabelValues(service, "get", "invalid"))).To(Equal(1.0))
	g.Expect(testutil.ToFloat64(requestsTotal.WithLabelValues(service, "delete", "ok"))).To(Equal(1.0), "a delete of what is gone is ok")
	g.Expect(testutil.CollectAndCount(requestDuration, "myapp_external_request_duration_seconds")).To(BeNumerically(">=", 2))
	g.Expect(calls.Load()).To(Equal(int32(6)), "each call was retried once")
}

func TestURLEscapesEachSegment(t *testing.T) {
	g := NewWithT(t)
	c := newTestClient(t, "svc", "https://api.example.com/base/")
	u := c.url(Call{Path: []string{"backups", "a/b c?d"}, Query: map[string][]string{"owner": {"ns/name"}}})
	g.Expect(u.String()).To(Equal("https://api.example.com/base/backups/a%2Fb%20c%3Fd?owner=ns%2Fname"))
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	g := NewWithT(t)
	var elsewhere atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(target.Close)
	srv := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(srv.Close)

	err := newTestClient(t, "svc", srv.URL).Do(t.Context(), Call{Operation: "get", Method: http.MethodGet}, nil)
	g.Expect(err).To(MatchError(ContainSubstring("HTTP 307")))
	g.Expect(elsewhere.Load()).To(BeZero(), "the token never followed the redirect")
}

// throttlingServer answers every call with 429 and the given Retry-After,
// counting the calls that reached it.
func throttlingServer(t *testing.T, retryAfter string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Retry-After", retryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestAbsurdRetryAfterIsCapped(t *testing.T) {
	for _, tt := range []struct {
		value   string
		cap     time.Duration
		wantCap time.Duration
	}{
		{value: "86400", wantCap: external.DefaultMaxRetryAfter},
		// A millisecond count sent as seconds by mistake: 8h20m.
		{value: "30000", wantCap: external.DefaultMaxRetryAfter},
		{value: "99999999999999999", wantCap: external.DefaultMaxRetryAfter},
		{value: time.Now().AddDate(5, 0, 0).UTC().Format(http.TimeFormat), wantCap: external.DefaultMaxRetryAfter},
		{value: "3600", cap: time.Minute, wantCap: time.Minute},
	} {
		t.Run(tt.value, func(t *testing.T) {
			g := NewWithT(t)
			srv, calls := throttlingServer(t, tt.value)
			logs := &syncBuffer{}
			// A service name of its own keeps counts from other runs out.
			service := fmt.Sprintf("capped-%d", time.Now().UnixNano())
			c, err := New(service, external.Config{
				BaseURL:       srv.URL,
				Token:         external.StaticTokenSource("token"),
				MinRetryWait:  time.Millisecond,
				MaxRetryWait:  10 * time.Millisecond,
				MaxRetryAfter: tt.cap,
				Logger:        funcr.New(logs.add, funcr.Options{}),
			})
			g.Expect(err).NotTo(HaveOccurred())

			err = c.Do(t.Context(), Call{Operation: "get", Method: http.MethodGet}, nil)
			g.Expect(err).To(MatchError(external.ErrThrottled))
			wait, ok := external.RetryAfter(err)
			g.Expect(ok).To(BeTrue())
			g.Expect(wait).To(Equal(tt.wantCap), "the wait honoured is the cap")
			g.Expect(c.gate.remaining()).To(And(BeNumerically(">", tt.wantCap-time.Minute), BeNumerically("<=", tt.wantCap)))
			g.Expect(calls.Load()).To(Equal(int32(1)))

			g.Expect(logs.String()).To(And(
				ContainSubstring("Capping the wait the external service asked for"),
				ContainSubstring(`"service"=%q`, service),
				ContainSubstring(`"retryAfter"=%q`, tt.value),
				ContainSubstring(`"honoured"=%q`, tt.wantCap.String()),
			))
			g.Expect(testutil.ToFloat64(retryAfterCapped.WithLabelValues(service))).To(Equal(1.0))
		})
	}
}

func TestNoCallReachesAServiceThatAskedToWait(t *testing.T) {
	g := NewWithT(t)
	srv, calls := throttlingServer(t, "120")
	c := newTestClient(t, "svc", srv.URL)
	err := c.Do(t.Context(), Call{Operation: "upsert", Method: http.MethodPut, Path: []string{"a"}}, nil)
	g.Expect(err).To(MatchError(external.ErrThrottled))
	g.Expect(calls.Load()).To(Equal(int32(1)))

	// Every later call of this client, whatever its operation, fails
	// without reaching the service, with the wait that is left.
	for _, call := range []Call{
		{Operation: "get", Method: http.MethodGet, Path: []string{"b"}},
		{Operation: "delete", Method: http.MethodDelete, Path: []string{"a"}, NotFoundOK: true},
		{Operation: "create", Method: http.MethodPost, Body: struct{}{}},
	} {
		err := c.Do(t.Context(), call, nil)
		g.Expect(err).To(MatchError(external.ErrThrottled), call.Operation)
		g.Expect(err.Error()).To(ContainSubstring("svc " + call.Operation + ": throttled: not sent: the service asked to wait until"))
		wait, ok := external.RetryAfter(err)
		g.Expect(ok).To(BeTrue())
		g.Expect(wait).To(And(BeNumerically(">", time.Minute), BeNumerically("<=", 2*time.Minute)))
	}
	g.Expect(calls.Load()).To(Equal(int32(1)), "nothing reached the service while it asked to wait")

	// Another client of the same service has a gate of its own.
	g.Expect(newTestClient(t, "svc", srv.URL).Do(t.Context(), Call{Operation: "get", Method: http.MethodGet}, nil)).
		To(MatchError(external.ErrThrottled))
	g.Expect(calls.Load()).To(Equal(int32(2)))

	// Once the wait is over, calls go out again.
	c.gate.now = func() time.Time { return time.Now().Add(2*time.Minute + time.Second) }
	g.Expect(c.gate.remaining()).To(BeZero())
	g.Expect(c.Do(t.Context(), Call{Operation: "get", Method: http.MethodGet}, nil)).To(MatchError(external.ErrThrottled))
	g.Expect(calls.Load()).To(Equal(int32(3)))
}

func TestAWaitSleptThroughHoldsOtherCallsBack(t *testing.T) {
	g := NewWithT(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	c, err := New("svc", external.Config{
		BaseURL:      srv.URL,
		Token:        external.StaticTokenSource("token"),
		MinRetryWait: time.Millisecond,
		MaxRetryWait: 5 * time.Second,
	})
	g.Expect(err).NotTo(HaveOccurred())

	// The first call sleeps through the second it was asked to wait...
	first := make(chan error, 1)
	go func() { first <- c.Do(t.Context(), Call{Operation: "get", Method: http.MethodGet}, nil) }()
	g.Eventually(c.gate.remaining).WithTimeout(5 * time.Second).WithPolling(time.Millisecond).ShouldNot(BeZero())

	// ...and another call meanwhile does not reach the service.
	err = c.Do(t.Context(), Call{Operation: "list", Method: http.MethodGet}, nil)
	g.Expect(err).To(MatchError(external.ErrThrottled))
	wait, _ := external.RetryAfter(err)
	g.Expect(wait).To(And(BeNumerically(">", 0), BeNumerically("<=", time.Second)))
	g.Expect(calls.Load()).To(Equal(int32(1)))

	g.Eventually(first).WithTimeout(5 * time.Second).Should(Receive(BeNil()))
	g.Expect(calls.Load()).To(Equal(int32(2)))
}

func TestARetryWaitsForTheGate(t *testing.T) {
	g := NewWithT(t)
	gt := &gate{maxWait: time.Hour, now: time.Now, log: logr.Discard()}
	p := retryPolicy{maxWait: 2 * time.Second, now: time.Now, gate: gt}
	gt.honour(time.Second, "1")
	// A retry after a 500 sleeps until the gate opens, not just its backoff.
	g.Expect(p.backoff(time.Millisecond, 2*time.Second, 0, &http.Response{StatusCode: 500})).
		To(BeNumerically(">", 900*time.Millisecond))

	// A gate closed for longer than a retry may sleep stops the retries and
	// hands its wait back.
	gt.honour(time.Minute, "60")
	st := &callState{retrySafe: true}
	ctx := context.WithValue(t.Context(), callStateKey{}, st)
	retry, err := p.checkRetry(ctx, &http.Response{StatusCode: 500}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(retry).To(BeFalse())
	g.Expect(st.overCap).To(BeTrue())
	g.Expect(st.retryAfter).To(BeNumerically("~", time.Minute, time.Second))
}

// syncBuffer collects log output from the client's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) add(prefix, args string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintln(&b.buf, prefix, args)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
