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

package external_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

func TestErrorClassification(t *testing.T) {
	sentinels := map[external.Kind]error{
		external.KindNotFound:     external.ErrNotFound,
		external.KindConflict:     external.ErrConflict,
		external.KindUnauthorized: external.ErrUnauthorized,
		external.KindThrottled:    external.ErrThrottled,
		external.KindTransient:    external.ErrTransient,
		external.KindInvalid:      external.ErrInvalid,
		external.KindTooLarge:     external.ErrTooLarge,
	}
	tests := []struct {
		name          string
		err           error
		wantKind      external.Kind
		wantRetryable bool
		wantWait      time.Duration
		wantText      string
	}{{
		name:     "conflict names the owner",
		err:      &external.Error{Kind: external.KindConflict, Service: "backup", Operation: "start", StatusCode: 409, Message: "key belongs to another owner", Owner: "team-a"},
		wantKind: external.KindConflict,
		wantText: `backup start: conflict (HTTP 409): key belongs to another owner (owner "team-a")`,
	}, {
		name:          "throttled carries the wait",
		err:           &external.Error{Kind: external.KindThrottled, Service: "backup", Operation: "start", StatusCode: 429, Message: "slow down", RetryAfter: time.Minute},
		wantKind:      external.KindThrottled,
		wantRetryable: true,
		wantWait:      time.Minute,
		wantText:      "backup start: throttled (HTTP 429): slow down (retry after 1m0s)",
	}, {
		name:          "wrapped transient keeps its cause and attempts",
		err:           fmt.Errorf("reconcile: %w", &external.Error{Kind: external.KindTransient, Service: "dns", Operation: "get", Message: "call abandoned", Attempts: 2, Err: context.Canceled}),
		wantKind:      external.KindTransient,
		wantRetryable: true,
		wantText:      "reconcile: dns get: transient: call abandoned (after 2 attempts): context canceled",
	}, {
		name:     "unauthorized is not retryable",
		err:      &external.Error{Kind: external.KindUnauthorized, Service: "dns", Operation: "list", StatusCode: 403},
		wantKind: external.KindUnauthorized,
		wantText: "dns list: unauthorized (HTTP 403)",
	}, {
		name:     "a plain error has no kind",
		err:      errors.New("boom"),
		wantText: "boom",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(external.KindOf(tt.err)).To(Equal(tt.wantKind))
			g.Expect(external.IsRetryable(tt.err)).To(Equal(tt.wantRetryable))
			wait, ok := external.RetryAfter(tt.err)
			g.Expect(wait).To(Equal(tt.wantWait))
			g.Expect(ok).To(Equal(tt.wantWait > 0))
			g.Expect(tt.err.Error()).To(Equal(tt.wantText))
			for kind, sentinel := range sentinels {
				g.Expect(errors.Is(tt.err, sentinel)).To(Equal(kind == tt.wantKind), "errors.Is(%v)", sentinel)
			}
		})
	}
}

func TestKindForStatus(t *testing.T) {
	tests := map[int]external.Kind{
		400: external.KindInvalid,
		401: external.KindUnauthorized,
		403: external.KindUnauthorized,
		404: external.KindNotFound,
		408: external.KindTransient,
		409: external.KindConflict,
		413: external.KindInvalid,
		422: external.KindInvalid,
		429: external.KindThrottled,
		500: external.KindTransient,
		501: external.KindInvalid,
		502: external.KindTransient,
		503: external.KindTransient,
		302: external.KindTransient,
	}
	for status, want := range tests {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			NewWithT(t).Expect(external.KindForStatus(status)).To(Equal(want))
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   external.Config
		want func(*WithT, external.Config)
	}{{
		name: "zero values get the defaults",
		want: func(g *WithT, c external.Config) {
			g.Expect(c.AttemptTimeout).To(Equal(external.DefaultAttemptTimeout))
			g.Expect(c.MaxRetries).To(Equal(external.DefaultMaxRetries))
			g.Expect(c.MinRetryWait).To(Equal(external.DefaultMinRetryWait))
			g.Expect(c.MaxRetryWait).To(Equal(external.DefaultMaxRetryWait))
			g.Expect(c.MaxResponseBytes).To(Equal(int64(external.DefaultMaxResponseBytes)))
			g.Expect(c.MaxRetryAfter).To(Equal(external.DefaultMaxRetryAfter))
		},
	}, {
		name: "negative retries turn retrying off",
		in:   external.Config{MaxRetries: -1},
		want: func(g *WithT, c external.Config) { g.Expect(c.MaxRetries).To(BeZero()) },
	}, {
		name: "the first backoff step never exceeds the cap",
		in:   external.Config{MinRetryWait: time.Minute, MaxRetryWait: time.Second},
		want: func(g *WithT, c external.Config) { g.Expect(c.MinRetryWait).To(Equal(time.Second)) },
	}, {
		name: "set values are kept",
		in:   external.Config{AttemptTimeout: time.Second, MaxRetries: 7, MaxRetryAfter: time.Minute},
		want: func(g *WithT, c external.Config) {
			g.Expect(c.AttemptTimeout).To(Equal(time.Second))
			g.Expect(c.MaxRetries).To(Equal(7))
			g.Expect(c.MaxRetryAfter).To(Equal(time.Minute))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			tt.want(g, tt.in.WithDefaults())
		})
	}
}

func TestReasonsFor(t *testing.T) {
	reasons := external.Reasons{
		Unauthorized: "Unauthorized", Throttled: "Throttled", Unavailable: "Unavailable", Rejected: "Rejected",
		TooLarge: "TooLarge", Other: "Other",
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "unauthorized", err: &external.Error{Kind: external.KindUnauthorized, StatusCode: 401}, want: "Unauthorized"},
		{name: "throttled", err: &external.Error{Kind: external.KindThrottled, StatusCode: 429}, want: "Throttled"},
		{name: "transient", err: &external.Error{Kind: external.KindTransient, StatusCode: 503}, want: "Unavailable"},
		{name: "invalid", err: &external.Error{Kind: external.KindInvalid, StatusCode: 400}, want: "Rejected"},
		{name: "too large", err: &external.Error{Kind: external.KindTooLarge, StatusCode: 200}, want: "TooLarge"},
		{name: "conflict", err: &external.Error{Kind: external.KindConflict, StatusCode: 409}, want: "Other"},
		{name: "not found", err: &external.Error{Kind: external.KindNotFound, StatusCode: 404}, want: "Other"},
		{name: "wrapped", err: fmt.Errorf("upsert: %w", &external.Error{Kind: external.KindThrottled}), want: "Throttled"},
		{name: "sentinel", err: external.ErrUnauthorized, want: "Unauthorized"},
		{name: "not an external error", err: errors.New("boom"), want: "Other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(reasons.For(tt.err)).To(Equal(tt.want))
		})
	}
	t.Run("too large without its own reason", func(t *testing.T) {
		reasons.TooLarge = ""
		NewWithT(t).Expect(reasons.For(external.ErrTooLarge)).To(Equal("Other"))
	})
}
