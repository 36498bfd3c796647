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

package httpdns_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/dnstest"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

const testToken = "dns-s3cr3t-token-value"

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newClient returns a client tuned for tests: two retries and millisecond
// backoff, so retry paths run in milliseconds.
func newClient(t testing.TB, baseURL string, mutate ...func(*external.Config)) dns.Client {
	t.Helper()
	cfg := external.Config{
		BaseURL:        baseURL,
		Token:          external.StaticTokenSource(testToken),
		AttemptTimeout: 2 * time.Second,
		MaxRetries:     2,
		MinRetryWait:   time.Millisecond,
		MaxRetryWait:   20 * time.Millisecond,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := httpdns.New(cfg)
	if err != nil {
		t.Fatalf("dns.New: %v", err)
	}
	return c
}

func record(name, owner string) dns.Record {
	return dns.Record{Name: name, Type: dns.TypeA, Value: "192.0.2.10", TTL: 300, Owner: owner}
}

func TestRecordLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakeClock(epoch)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken, PropagationDelay: 5 * time.Second, Clock: clock})
	c := newClient(t, url)

	created, err := c.Upsert(ctx, record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created.State).To(Equal(dns.StatePending))
	g.Expect(created.CreatedAt).To(Equal(epoch))

	got, err := c.Get(ctx, "www.example.com")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.State).To(Equal(dns.StatePending), "propagation takes 5s")

	clock.Step(5 * time.Second)
	got, err = c.Get(ctx, "www.example.com")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.State).To(Equal(dns.StateActive))

	// Repeating the same upsert must not restart propagation, or a
	// reconciler repairing drift would flap its record back to PENDING.
	again, err := c.Upsert(ctx, record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.State).To(Equal(dns.StateActive))
	g.Expect(again.UpdatedAt).To(Equal(epoch))

	changed := record("www.example.com", "team-a")
	changed.Value = "192.0.2.20"
	updated, err := c.Upsert(ctx, changed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(updated.State).To(Equal(dns.StatePending))
	g.Expect(updated.Value).To(Equal("192.0.2.20"))
	g.Expect(updated.UpdatedAt).To(Equal(epoch.Add(5 * time.Second)))

	_, err = c.Upsert(ctx, dns.Record{Name: "api.example.com", Type: dns.TypeCNAME, Value: "www.example.com", TTL: 60, Owner: "team-b"})
	g.Expect(err).NotTo(HaveOccurred())

	mine, err := c.List(ctx, "team-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mine).To(HaveLen(1))
	g.Expect(mine[0].Name).To(Equal("www.example.com"))
	all, err := c.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(HaveLen(2))
	none, err := c.List(ctx, "nobody")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none).To(BeEmpty())

	g.Expect(c.Delete(ctx, "www.example.com", "team-a")).To(Succeed())
	_, err = c.Get(ctx, "www.example.com")
	g.Expect(err).To(MatchError(external.ErrNotFound))
	// Deleting what is gone is success, so a finalizer can repeat it.
	g.Expect(c.Delete(ctx, "www.example.com", "team-a")).To(Succeed())
	g.Expect(sim.Records()).To(HaveLen(1))
}

// TestListFiltersByOwnerWhenTheServiceDoesNot puts the service behind a proxy
// that drops the owner filter. A caller waiting for "no records left for my
// owner" would wait forever if List trusted the service's answer.
func TestListFiltersByOwnerWhenTheServiceDoesNot(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	_, url := simtest.StartBehind(t, simulator.Options{Token: testToken}, simtest.DropQuery(http.MethodGet, "owner"))
	c := newClient(t, url)
	for _, rec := range []dns.Record{
		record("a.example.com", "team-a"),
		record("b.example.com", "team-b"),
		record("c.example.com", "team-a"),
	} {
		_, err := c.Upsert(ctx, rec)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(listOwnersUnfiltered(t, url+"/dns/v1/records?owner=team-b")).To(HaveLen(3),
		"the proxy drops the filter, so the service answers with every record")

	mine, err := c.List(ctx, "team-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mine).To(HaveExactElements(HaveField("Name", "a.example.com"), HaveField("Name", "c.example.com")))
	none, err := c.List(ctx, "team-z")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none).To(BeEmpty())
	all, err := c.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(HaveLen(3))
}

// listOwnersUnfiltered lists records with a plain GET, bypassing the client,
// and returns the owner of each.
func listOwnersUnfiltered(t *testing.T, url string) []string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Records []dns.Record `json:"records"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	owners := make([]string, 0, len(body.Records))
	for _, r := range body.Records {
		owners = append(owners, r.Owner)
	}
	return owners
}

func TestOwnerConflicts(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name string
		call func(dns.Client) error
	}{{
		name: "upsert of another owner's record",
		call: func(c dns.Client) error {
			_, err := c.Upsert(ctx, record("www.example.com", "team-b"))
			return err
		},
	}, {
		name: "delete of another owner's record",
		call: func(c dns.Client) error { return c.Delete(ctx, "www.example.com", "team-b") },
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			c := newClient(t, url)
			_, err := c.Upsert(ctx, record("www.example.com", "team-a"))
			g.Expect(err).NotTo(HaveOccurred())

			err = tt.call(c)
			g.Expect(err).To(MatchError(external.ErrConflict))
			var e *external.Error
			g.Expect(errors.As(err, &e)).To(BeTrue())
			g.Expect(e.Owner).To(Equal("team-a"))
			g.Expect(e.StatusCode).To(Equal(http.StatusConflict))
			g.Expect(external.IsRetryable(err)).To(BeFalse())
			g.Expect(sim.Records()).To(ConsistOf(HaveField("Owner", "team-a")))
		})
	}
}

func TestInvalidRequests(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name string
		rec  dns.Record
		// sent says whether the request reached the server. The client
		// checks only what it needs to build a request and leaves the
		// service's own rules (name syntax, address family, TTL range) to
		// the service, which is the authority on them.
		sent    bool
		message string
	}{
		{name: "no name", rec: dns.Record{Type: "A", Value: "192.0.2.1", TTL: 60, Owner: "o"}, message: "name is required"},
		{name: "no owner", rec: dns.Record{Name: "a.example.com", Type: "A", Value: "192.0.2.1", TTL: 60}, message: "owner is required"},
		{name: "unsupported type", rec: dns.Record{Name: "a.example.com", Type: "MX", Value: "x", TTL: 60, Owner: "o"}, message: "A or CNAME"},
		{name: "zero TTL", rec: dns.Record{Name: "a.example.com", Type: "A", Value: "192.0.2.1", Owner: "o"}, message: "TTL must be positive"},
		{name: "upper-case name", rec: dns.Record{Name: "A.example.com", Type: "A", Value: "192.0.2.1", TTL: 60, Owner: "o"}, sent: true, message: "lower-case"},
		{name: "IPv6 in an A record", rec: dns.Record{Name: "a.example.com", Type: "A", Value: "2001:db8::1", TTL: 60, Owner: "o"}, sent: true, message: "not an IPv4 address"},
		{name: "TTL too short", rec: dns.Record{Name: "a.example.com", Type: "A", Value: "192.0.2.1", TTL: 5, Owner: "o"}, sent: true, message: "outside 30-86400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			_, err := newClient(t, url).Upsert(ctx, tt.rec)
			g.Expect(err).To(MatchError(external.ErrInvalid))
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
			wantCalls := 0
			if tt.sent {
				wantCalls = 1 // and never retried
			}
			g.Expect(sim.RequestCount(simulator.ServiceDNS, simulator.OpUpsert)).To(Equal(wantCalls))
		})
	}
}

// TestFaults runs each call against one injected fault and checks both what
// the caller sees and how many requests the client spent on it.
func TestFaults(t *testing.T) {
	ctx := t.Context()
	get := func(c dns.Client) error { _, err := c.Get(ctx, "www.example.com"); return err }
	upsert := func(c dns.Client) error { _, err := c.Upsert(ctx, record("www.example.com", "team-a")); return err }
	del := func(c dns.Client) error { return c.Delete(ctx, "www.example.com", "team-a") }

	tests := []struct {
		name      string
		config    func(*external.Config)
		inject    func(*simulator.Server)
		call      func(dns.Client) error
		op        simulator.Operation
		wantKind  external.Kind // empty for success
		wantCalls int
		check     func(*WithT, error)
	}{{
		name: "5xx is retried until the limit",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 503})
		},
		call:      get,
		op:        simulator.OpGet,
		wantKind:  external.KindTransient,
		wantCalls: 3,
		check: func(g *WithT, err error) {
			var e *external.Error
			g.Expect(errors.As(err, &e)).To(BeTrue())
			g.Expect(e.StatusCode).To(Equal(503))
			g.Expect(e.Attempts).To(Equal(3))
			g.Expect(err.Error()).To(ContainSubstring("dns get: transient (HTTP 503)"))
		},
	}, {
		name: "5xx within the retry budget recovers",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 500, Count: 2})
		},
		call:      get,
		op:        simulator.OpGet,
		wantCalls: 3,
	}, {
		name:   "retries turned off",
		config: func(c *external.Config) { c.MaxRetries = -1 },
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 500, Count: 1})
		},
		call: get, op: simulator.OpGet, wantKind: external.KindTransient, wantCalls: 1,
	}, {
		name: "429 with Retry-After seconds over the cap comes back at once",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 429, RetryAfter: 30 * time.Second})
		},
		call: get, op: simulator.OpGet, wantKind: external.KindThrottled, wantCalls: 1,
		check: func(g *WithT, err error) {
			wait, ok := external.RetryAfter(err)
			g.Expect(ok).To(BeTrue())
			g.Expect(wait).To(Equal(30 * time.Second))
			g.Expect(external.IsRetryable(err)).To(BeTrue())
		},
	}, {
		name: "429 with a Retry-After date over the cap comes back at once",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpUpsert, simulator.Fault{Status: 429, RetryAfter: 30 * time.Second, RetryAfterDate: true})
		},
		call: upsert, op: simulator.OpUpsert, wantKind: external.KindThrottled, wantCalls: 1,
		check: func(g *WithT, err error) {
			// An HTTP-date has whole seconds, so the wait lands within a
			// second or two below what was asked.
			wait, ok := external.RetryAfter(err)
			g.Expect(ok).To(BeTrue())
			g.Expect(wait).To(BeNumerically("~", 29*time.Second, 1500*time.Millisecond))
		},
	}, {
		name: "429 without Retry-After is retried with backoff, then reported",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 429})
		},
		call: get, op: simulator.OpGet, wantKind: external.KindThrottled, wantCalls: 3,
		check: func(g *WithT, err error) {
			_, ok := external.RetryAfter(err)
			g.Expect(ok).To(BeFalse())
		},
	}, {
		name: "503 with a long Retry-After stays transient and carries the wait",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpDelete, simulator.Fault{Status: 503, RetryAfter: time.Minute})
		},
		call: del, op: simulator.OpDelete, wantKind: external.KindTransient, wantCalls: 1,
		check: func(g *WithT, err error) {
			wait, ok := external.RetryAfter(err)
			g.Expect(ok).To(BeTrue())
			g.Expect(wait).To(Equal(time.Minute))
		},
	}, {
		name:   "an outage during delete is transient after every retry",
		inject: func(s *simulator.Server) { s.SetOutage(simulator.ServiceDNS, true) },
		call:   del, op: simulator.OpDelete, wantKind: external.KindTransient, wantCalls: 3,
		check: func(g *WithT, err error) {
			g.Expect(err.Error()).To(ContainSubstring("dns service is unavailable"))
		},
	}, {
		name:   "a hung attempt is cut by the attempt timeout and retried",
		config: func(c *external.Config) { c.AttemptTimeout = 300 * time.Millisecond },
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Hang: true, Count: 1})
		},
		call: get, op: simulator.OpGet, wantCalls: 2,
	}, {
		name:   "hanging on every attempt ends as transient",
		config: func(c *external.Config) { c.AttemptTimeout = 50 * time.Millisecond },
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Hang: true})
		},
		call: get, op: simulator.OpGet, wantKind: external.KindTransient, wantCalls: 3,
		check: func(g *WithT, err error) {
			g.Expect(err.Error()).To(ContainSubstring("Client.Timeout exceeded"))
		},
	}, {
		name: "latency below the attempt timeout is only slow",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Latency: 30 * time.Millisecond})
		},
		call: get, op: simulator.OpGet, wantCalls: 1,
	}, {
		name: "a reset after a committed upsert is retried into the same record",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpUpsert, simulator.Fault{ResetAfterCommit: true, Count: 1})
		},
		call: func(c dns.Client) error {
			changed := record("www.example.com", "team-a")
			changed.TTL = 600
			rec, err := c.Upsert(ctx, changed)
			if err == nil && rec.TTL != 600 {
				return fmt.Errorf("got TTL %d", rec.TTL)
			}
			return err
		},
		op: simulator.OpUpsert, wantCalls: 2,
	}, {
		name: "an error rate by status code on every operation",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.AllOperations, simulator.Fault{Status: 502, Rate: 1})
		},
		call: func(c dns.Client) error { _, err := c.List(ctx, ""); return err },
		op:   simulator.OpList, wantKind: external.KindTransient, wantCalls: 3,
	}, {
		name:   "a wrong token is unauthorized and not retried",
		config: func(c *external.Config) { c.Token = external.StaticTokenSource("wrong-token") },
		call:   get, op: simulator.OpGet, wantKind: external.KindUnauthorized, wantCalls: 1,
		check: func(g *WithT, err error) {
			g.Expect(err).To(MatchError(external.ErrUnauthorized))
			g.Expect(err.Error()).To(ContainSubstring("HTTP 403"))
		},
	}, {
		name: "a 400 is invalid and not retried",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 400})
		},
		call: get, op: simulator.OpGet, wantKind: external.KindInvalid, wantCalls: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			// Every case starts from an existing record, written before the
			// fault, so reads and deletes have something to act on.
			_, err := newClient(t, url).Upsert(ctx, record("www.example.com", "team-a"))
			g.Expect(err).NotTo(HaveOccurred())
			if tt.inject != nil {
				tt.inject(sim)
			}
			var mutate []func(*external.Config)
			if tt.config != nil {
				mutate = append(mutate, tt.config)
			}
			before := sim.RequestCount(simulator.ServiceDNS, tt.op)

			err = tt.call(newClient(t, url, mutate...))

			if tt.wantKind == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(external.KindOf(err)).To(Equal(tt.wantKind), "error: %v", err)
			}
			if tt.check != nil {
				tt.check(g, err)
			}
			// Hung and reset requests are counted when their handler ends,
			// which can be just after the client has moved on.
			g.Eventually(func() int {
				return sim.RequestCount(simulator.ServiceDNS, tt.op) - before
			}).WithTimeout(2 * time.Second).WithPolling(5 * time.Millisecond).Should(Equal(tt.wantCalls))
			g.Consistently(func() int {
				return sim.RequestCount(simulator.ServiceDNS, tt.op) - before
			}).WithTimeout(30 * time.Millisecond).Should(Equal(tt.wantCalls))
		})
	}
}

func TestRetryAfterBelowTheCapIsHonoured(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url, func(c *external.Config) { c.MaxRetryWait = 2 * time.Second })
	_, err := c.Upsert(t.Context(), record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	sim.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 429, RetryAfter: time.Second, Count: 1})

	start := time.Now()
	_, err = c.Get(t.Context(), "www.example.com")
	g.Expect(err).NotTo(HaveOccurred())
	// The backoff alone would retry after about a millisecond; only the
	// server's Retry-After explains a wait of a second.
	g.Expect(time.Since(start)).To(BeNumerically(">=", 900*time.Millisecond))
	g.Expect(sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpGet, 429)).To(Equal(1))
	g.Expect(sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpGet, 200)).To(Equal(1))
}

func TestContextCancellationEndsAWaitAtOnce(t *testing.T) {
	tests := []struct {
		name  string
		fault simulator.Fault
	}{
		{name: "waiting out a Retry-After", fault: simulator.Fault{Status: 429, RetryAfter: 5 * time.Second}},
		{name: "waiting on a hung request", fault: simulator.Fault{Hang: true}},
		{name: "waiting on added latency", fault: simulator.Fault{Latency: 5 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			sim.SetFault(simulator.ServiceDNS, simulator.OpGet, tt.fault)
			c := newClient(t, url, func(c *external.Config) {
				c.AttemptTimeout = 10 * time.Second
				c.MaxRetryWait = 10 * time.Second
			})
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(100*time.Millisecond, cancel)

			start := time.Now()
			_, err := c.Get(ctx, "www.example.com")
			g.Expect(time.Since(start)).To(BeNumerically("<", time.Second))
			g.Expect(err).To(MatchError(context.Canceled))
			g.Expect(err).To(MatchError(external.ErrTransient))
		})
	}
}

func TestDeadlineShorterThanRetryAfterReportsThrottling(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	sim.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 429, RetryAfter: 5 * time.Second})
	c := newClient(t, url, func(c *external.Config) { c.MaxRetryWait = 10 * time.Second })
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()

	start := time.Now()
	_, err := c.Get(ctx, "www.example.com")
	// Sleeping five seconds could never fit in the caller's one, so the
	// throttling is reported straight away.
	g.Expect(time.Since(start)).To(BeNumerically("<", 500*time.Millisecond))
	g.Expect(err).To(MatchError(external.ErrThrottled))
	wait, _ := external.RetryAfter(err)
	g.Expect(wait).To(Equal(5 * time.Second))
}

// TestThrottledServiceIsNotCalledBeforeRetryAfter: see simtest.RunThrottleTests.
func TestThrottledServiceIsNotCalledBeforeRetryAfter(t *testing.T) {
	simtest.RunThrottleTests(t, simulator.Options{Token: testToken}, simtest.ThrottledService{
		Service: simulator.ServiceDNS, Op: simulator.OpUpsert,
		Setup: func(t *testing.T, url string, maxRetryAfter time.Duration) (map[string]func() error, string) {
			ctx := t.Context()
			c := newClient(t, url, func(c *external.Config) { c.MaxRetryAfter = maxRetryAfter })
			_, err := c.Upsert(ctx, record("www.example.com", "team-a"))
			NewWithT(t).Expect(err).NotTo(HaveOccurred())
			return map[string]func() error{
				"get":    func() error { _, err := c.Get(ctx, "www.example.com"); return err },
				"list":   func() error { _, err := c.List(ctx, "team-a"); return err },
				"upsert": func() error { _, err := c.Upsert(ctx, record("www.example.com", "team-a")); return err },
				"delete": func() error { return c.Delete(ctx, "other.example.com", "team-a") },
			}, "upsert"
		},
	})
}

func TestEventualConsistency(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakeClock(epoch)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken, Clock: clock})
	sim.SetConsistencyDelay(simulator.ServiceDNS, 10*time.Second)
	c := newClient(t, url)

	_, err := c.Upsert(ctx, record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Get(ctx, "www.example.com")
	g.Expect(err).To(MatchError(external.ErrNotFound), "a fresh record is not readable yet")
	list, err := c.List(ctx, "team-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(list).To(BeEmpty())
	// Writes see the record even while reads do not.
	_, err = c.Upsert(ctx, record("www.example.com", "team-b"))
	g.Expect(err).To(MatchError(external.ErrConflict))

	clock.Step(10 * time.Second)
	got, err := c.Get(ctx, "www.example.com")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Owner).To(Equal("team-a"))
}

// syncBuffer collects log output from the client's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
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

func TestSecretsStayOutOfLogsAndErrors(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	// A server that echoes the Authorization header in its error message, as
	// careless proxies do.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":{"code":"invalid","message":"bad header %s"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(echo.Close)

	logs := &syncBuffer{}
	logger := funcr.New(logs.add, funcr.Options{Verbosity: 10})
	withLogs := func(c *external.Config) { c.Logger = logger }
	c := newClient(t, url, withLogs)

	errs := make([]error, 0, 4)
	_, err := c.Upsert(ctx, record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	sim.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 503})
	_, err = c.Get(ctx, "www.example.com")
	errs = append(errs, err)
	sim.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 429, RetryAfter: time.Hour})
	// A client of its own: the hour asked for holds back every later call
	// of the client that got the answer.
	_, err = newClient(t, url, withLogs).Get(ctx, "www.example.com")
	errs = append(errs, err)
	// The delete is reset after it committed; the retry finds the record
	// gone, which is success.
	sim.SetFault(simulator.ServiceDNS, simulator.OpDelete, simulator.Fault{ResetAfterCommit: true, Count: 1})
	g.Expect(c.Delete(ctx, "www.example.com", "team-a")).To(Succeed())
	_, err = newClient(t, url, withLogs, func(c *external.Config) {
		c.Token = external.StaticTokenSource("wrong-" + testToken)
	}).Get(ctx, "www.example.com")
	errs = append(errs, err)
	_, err = newClient(t, echo.URL, withLogs).Get(ctx, "www.example.com")
	errs = append(errs, err)

	for _, err := range errs {
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).NotTo(ContainSubstring(testToken))
	}
	g.Expect(errs[len(errs)-1].Error()).To(ContainSubstring("[REDACTED]"), "the echoed token was redacted")
	g.Expect(logs.String()).To(ContainSubstring("Retrying external API call"), "the test captured the retry logs")
	g.Expect(logs.String()).NotTo(ContainSubstring(testToken))
}

func TestTLSWithCustomCA(t *testing.T) {
	g := NewWithT(t)
	_, srv := simtest.StartTLS(t, simulator.Options{Token: testToken})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	g.Expect(os.WriteFile(caFile, pemBytes, 0o600)).To(Succeed())

	trusted := newClient(t, srv.URL, func(c *external.Config) { c.CAFile = caFile })
	_, err := trusted.Upsert(t.Context(), record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())

	_, err = newClient(t, srv.URL).Get(t.Context(), "www.example.com")
	g.Expect(err).To(MatchError(external.ErrTransient))
	g.Expect(err.Error()).To(ContainSubstring("certificate"))

	badCA := filepath.Join(t.TempDir(), "bad.pem")
	g.Expect(os.WriteFile(badCA, []byte("not a certificate"), 0o600)).To(Succeed())
	_, err = httpdns.New(external.Config{BaseURL: srv.URL, Token: external.StaticTokenSource("t"), CAFile: badCA})
	g.Expect(err).To(MatchError(ContainSubstring("holds no PEM certificate")))
}

func TestMalformedResponses(t *testing.T) {
	const validRecord = `{"name":"www.example.com","type":"A","value":"192.0.2.1","ttl":60,"owner":"o","state":"ACTIVE"}`
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		list        bool
		wantKind    external.Kind
		wantMessage string
	}{
		{name: "HTML instead of JSON", status: 200, contentType: "text/html", body: "<html>hi</html>", wantMessage: `content type "text/html" is not JSON`},
		{name: "truncated JSON", status: 200, body: `{"name":"www.exa`, wantMessage: "unexpected EOF"},
		{name: "wrong JSON type", status: 200, body: `{"name":"www.example.com","ttl":"sixty"}`, wantMessage: "cannot unmarshal"},
		{name: "TTL overflowing int32", status: 200, body: `{"name":"www.example.com","ttl":99999999999}`, wantMessage: "cannot unmarshal"},
		{name: "empty body", status: 200, body: "", wantMessage: "empty body"},
		{name: "JSON null", status: 200, body: "null", wantMessage: "record has no name"},
		{name: "missing state", status: 200, body: `{"name":"www.example.com","type":"A","owner":"o"}`, wantMessage: `unknown state ""`},
		{name: "unknown state", status: 200, body: `{"name":"www.example.com","type":"A","owner":"o","state":"GONE"}`, wantMessage: `unknown state "GONE"`},
		{name: "another record", status: 200, body: strings.Replace(validRecord, "www.", "api.", 1), wantMessage: `asked for record "www.example.com"`},
		{name: "data after the value", status: 200, body: validRecord + validRecord, wantMessage: "data after the JSON value"},
		{name: "body over the size limit", status: 200, body: `{"name":"` + strings.Repeat("x", 2048) + `"}`, wantMessage: "body larger than 1024 bytes"},
		{name: "list without records", status: 200, body: `{}`, list: true, wantMessage: `missing "records"`},
		{name: "list with a bad record", status: 200, body: `{"records":[{"name":"a.example.com"}]}`, list: true, wantMessage: "records[0]"},
		{name: "proxy error page", status: 502, contentType: "text/html", body: "<html>oops</html>", wantMessage: "bad gateway"},
		{name: "error with unknown shape", status: 418, body: `["teapot"]`, wantKind: external.KindInvalid, wantMessage: "teapot"},
		{name: "redirect", status: 302, body: "", wantMessage: "HTTP 302"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ct := tt.contentType
				if ct == "" {
					ct = "application/json"
				}
				w.Header().Set("Content-Type", ct)
				if tt.status == 302 {
					w.Header().Set("Location", "http://example.com/")
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL, func(c *external.Config) {
				c.MaxResponseBytes = 1024
				c.MaxRetries = -1
			})

			var err error
			if tt.list {
				_, err = c.List(t.Context(), "")
			} else {
				_, err = c.Get(t.Context(), "www.example.com")
			}
			wantKind := tt.wantKind
			if wantKind == "" {
				wantKind = external.KindTransient
			}
			g.Expect(external.KindOf(err)).To(Equal(wantKind), "error: %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tt.wantMessage))
			g.Expect(err.Error()).To(HavePrefix("dns "))
		})
	}
}

func TestTokenErrors(t *testing.T) {
	tests := []struct {
		name     string
		token    func(t *testing.T) external.TokenSource
		wantKind external.Kind
	}{{
		name: "missing token file",
		token: func(t *testing.T) external.TokenSource {
			return external.NewFileTokenSource(filepath.Join(t.TempDir(), "absent"))
		},
		wantKind: external.KindUnauthorized,
	}, {
		name: "empty token file",
		token: func(t *testing.T) external.TokenSource {
			path := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(path, []byte("\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return external.NewFileTokenSource(path)
		},
		wantKind: external.KindUnauthorized,
	}, {
		name:     "token source that asks for a retry",
		token:    func(*testing.T) external.TokenSource { return flakyTokenSource{} },
		wantKind: external.KindTransient,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			c := newClient(t, url, func(c *external.Config) { c.Token = tt.token(t) })
			_, err := c.Get(t.Context(), "www.example.com")
			g.Expect(external.KindOf(err)).To(Equal(tt.wantKind), "error: %v", err)
			g.Expect(sim.RequestCount(simulator.ServiceDNS, simulator.OpGet)).To(BeZero(), "nothing is sent without a token")
		})
	}
}

type flakyTokenSource struct{}

func (flakyTokenSource) Token(context.Context) (string, error) {
	return "", &external.Error{Kind: external.KindTransient, Message: "API server unreachable"}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  external.Config
		want string
	}{
		{name: "no base URL", cfg: external.Config{Token: external.StaticTokenSource("t")}, want: "BaseURL is required"},
		{name: "no token", cfg: external.Config{BaseURL: "http://127.0.0.1"}, want: "Token is required"},
		{name: "credentials in the URL", cfg: external.Config{BaseURL: "http://u:p@127.0.0.1", Token: external.StaticTokenSource("t")}, want: "user information"},
		{name: "unsupported scheme", cfg: external.Config{BaseURL: "ftp://127.0.0.1", Token: external.StaticTokenSource("t")}, want: "scheme"},
		{name: "missing CA file", cfg: external.Config{BaseURL: "https://127.0.0.1", Token: external.StaticTokenSource("t"), CAFile: "/nonexistent/ca.pem"}, want: "CA file"},
		{name: "negative Retry-After cap", cfg: external.Config{BaseURL: "https://127.0.0.1", Token: external.StaticTokenSource("t"), MaxRetryAfter: -time.Second}, want: "MaxRetryAfter must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := httpdns.New(tt.cfg)
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
}

func TestBaseURLWithPathPrefix(t *testing.T) {
	g := NewWithT(t)
	sim := simulator.New(simulator.Options{Token: testToken})
	mux := http.NewServeMux()
	mux.Handle("/prefix/", http.StripPrefix("/prefix", sim))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	_, err := newClient(t, srv.URL+"/prefix/").Upsert(t.Context(), record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sim.Records()).To(HaveLen(1))
}

func TestListByOwnerPrefix(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	_, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url)
	for _, rec := range []dns.Record{
		record("c.example.com", "op/ns/a/1"),
		record("a.example.com", "op/ns/b/2"),
		record("b.example.com", "op-marked/ns/c/3"),
		record("d.example.com", "team-a"),
	} {
		_, err := c.Upsert(ctx, rec)
		g.Expect(err).NotTo(HaveOccurred())
	}

	ours, err := c.ListByOwnerPrefix(ctx, "op/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ours).To(HaveExactElements(
		And(HaveField("Name", "a.example.com"), HaveField("Owner", "op/ns/b/2")),
		And(HaveField("Name", "c.example.com"), HaveField("Owner", "op/ns/a/1")),
	), "sorted by name, and a prefix is a prefix of the owner, not of a path segment")
	none, err := c.ListByOwnerPrefix(ctx, "nobody/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none).To(BeEmpty())

	_, err = c.ListByOwnerPrefix(ctx, "")
	g.Expect(err).To(MatchError(external.ErrInvalid), "an empty prefix would list every record in the service")
}

// TestListByOwnerPrefixFiltersWhenTheServiceDoesNot puts the service behind a
// proxy that drops the prefix filter: a sweep that trusted the answer would
// take every record in the service for its own.
func TestListByOwnerPrefixFiltersWhenTheServiceDoesNot(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	_, url := simtest.StartBehind(t, simulator.Options{Token: testToken}, simtest.DropQuery(http.MethodGet, "ownerPrefix"))
	c := newClient(t, url)
	for _, rec := range []dns.Record{record("a.example.com", "op/1"), record("b.example.com", "team-b")} {
		_, err := c.Upsert(ctx, rec)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(listOwnersUnfiltered(t, url+"/dns/v1/records?ownerPrefix=op/")).To(HaveLen(2),
		"the proxy drops the filter, so the service answers with every record")

	ours, err := c.ListByOwnerPrefix(ctx, "op/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ours).To(HaveExactElements(HaveField("Name", "a.example.com")))

	page, _, more, err := c.(dns.OwnerPrefixPager).ListPageByOwnerPrefix(ctx, "op/", dns.PageToken{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(more).To(BeFalse())
	g.Expect(page).To(HaveExactElements(HaveField("Name", "a.example.com")), "a page is filtered as the whole list is")
}

func TestTransfer(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakeClock(epoch)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken, PropagationDelay: 5 * time.Second, Clock: clock})
	c := newClient(t, url)
	_, err := c.Upsert(ctx, record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	clock.Step(5 * time.Second)

	moved, err := c.Transfer(ctx, "www.example.com", "team-a", "team-b")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved.Owner).To(Equal("team-b"))
	g.Expect(moved.Value).To(Equal("192.0.2.10"))
	g.Expect(moved.State).To(Equal(dns.StateActive), "resolvers see no change, so nothing propagates")
	g.Expect(sim.Records()).To(ConsistOf(HaveField("Owner", "team-b")))

	again, err := c.Transfer(ctx, "www.example.com", "team-a", "team-b")
	g.Expect(err).NotTo(HaveOccurred(), "a repeated transfer, as after a lost response, is success")
	g.Expect(again.Owner).To(Equal("team-b"))

	// The old owner has lost every right to the record.
	g.Expect(c.Delete(ctx, "www.example.com", "team-a")).To(MatchError(external.ErrConflict))
	_, err = c.Upsert(ctx, record("www.example.com", "team-a"))
	g.Expect(err).To(MatchError(external.ErrConflict))

	_, err = c.Transfer(ctx, "www.example.com", "team-c", "team-d")
	g.Expect(err).To(MatchError(external.ErrConflict))
	var e *external.Error
	g.Expect(errors.As(err, &e)).To(BeTrue())
	g.Expect(e.Owner).To(Equal("team-b"), "the conflict names the holder")
	g.Expect(sim.Records()).To(ConsistOf(HaveField("Owner", "team-b")), "a refused transfer changes nothing")

	_, err = c.Transfer(ctx, "nothing.example.com", "team-a", "team-b")
	g.Expect(err).To(MatchError(external.ErrNotFound))

	for _, args := range [][3]string{{"", "a", "b"}, {"www.example.com", "", "b"}, {"www.example.com", "a", ""}} {
		_, err = c.Transfer(ctx, args[0], args[1], args[2])
		g.Expect(err).To(MatchError(external.ErrInvalid), "arguments %q", args)
	}
	_, err = c.Transfer(ctx, "www.example.com", "team-b", "no spaces allowed")
	g.Expect(err).To(MatchError(external.ErrInvalid))
	g.Expect(err.Error()).To(ContainSubstring("to: has character"))
}

// TestTransferAfterALostResponse resets the connection after the service
// committed a transfer: the client's retry finds the record already moved
// and reports success, not a conflict with the caller itself.
func TestTransferAfterALostResponse(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url)
	_, err := c.Upsert(ctx, record("www.example.com", "team-a"))
	g.Expect(err).NotTo(HaveOccurred())
	sim.SetFault(simulator.ServiceDNS, simulator.OpTransfer, simulator.Fault{ResetAfterCommit: true, Count: 1})

	moved, err := c.Transfer(ctx, "www.example.com", "team-a", "team-b")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(moved.Owner).To(Equal("team-b"))
	g.Expect(sim.RequestCount(simulator.ServiceDNS, simulator.OpTransfer)).To(Equal(2))
}

// TestTransferAnswerMustNameTheNewOwner stands in for a service that answers
// 200 without making the change: the caller must not believe it holds the
// record.
func TestTransferAnswerMustNameTheNewOwner(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"www.example.com","type":"A","value":"192.0.2.10","ttl":300,"owner":"team-a","state":"ACTIVE"}`))
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, srv.URL).Transfer(t.Context(), "www.example.com", "team-a", "team-b")
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring(`owned by "team-a", not "team-b"`))
}

// TestListManyRecords lists 20,000 records of one operator (owners as long
// as a MyApp's) and 500 of another owner: more than one response may carry
// (DefaultMaxResponseBytes), so the client must follow the service's pages
// to the end, and return each record once, in name order.
func TestListManyRecords(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	const ours, theirs = 20000, 500
	_, url := simtest.StartWithRecords(t, simulator.Options{Token: testToken}, ours+theirs, func(i int) string {
		if i%41 == 0 && i/41 < theirs {
			return fmt.Sprintf("team-b/%d", i)
		}
		return fmt.Sprintf("myapp-operator/namespace-%05d/application-%05d/0f8fad5b-d9cb-469f-a165-%012d", i, i, i)
	})
	c := newClient(t, url)

	isSorted := func(recs []dns.Record) bool {
		for i := 1; i < len(recs); i++ {
			if recs[i-1].Name >= recs[i].Name {
				return false
			}
		}
		return true
	}
	all, err := c.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(HaveLen(ours+theirs), "every record, once")
	g.Expect(isSorted(all)).To(BeTrue(), "sorted by name, no record twice")

	mine, err := c.ListByOwnerPrefix(ctx, "myapp-operator/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mine).To(HaveLen(ours))
	g.Expect(isSorted(mine)).To(BeTrue())
	g.Expect(mine[0].Name).To(Equal("r00001.example.com"))
	g.Expect(mine[len(mine)-1].Name).To(Equal("r20499.example.com"))

	one, err := c.List(ctx, "myapp-operator/namespace-19999/application-19999/0f8fad5b-d9cb-469f-a165-000000019999")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(one).To(HaveExactElements(HaveField("Name", "r19999.example.com")))
}

// TestListPages serves list pages by hand: the client follows each token,
// sends the filter with every page, stops at the page without a token (how a
// service that does not page answers, in one request), and refuses a page
// that repeats what it has seen instead of walking it for ever.
func TestListPages(t *testing.T) {
	rec := func(name string) string {
		return `{"name":"` + name + `","type":"A","value":"192.0.2.1","ttl":60,"owner":"op/1","state":"ACTIVE"}`
	}
	tests := []struct {
		name string
		// pages maps the pageToken asked for to the body answered.
		pages     map[string]string
		wantNames []string
		wantCalls int
		wantError string
	}{{
		name:      "a service that does not page",
		pages:     map[string]string{"": `{"records":[` + rec("a.example.com") + `,` + rec("b.example.com") + `]}`},
		wantNames: []string{"a.example.com", "b.example.com"},
		wantCalls: 1,
	}, {
		name: "three pages, one of them empty",
		pages: map[string]string{
			"":   `{"records":[` + rec("a.example.com") + `],"nextPageToken":"t1"}`,
			"t1": `{"records":[],"nextPageToken":"t2"}`,
			"t2": `{"records":[` + rec("b.example.com") + `,` + rec("c.example.com") + `]}`,
		},
		wantNames: []string{"a.example.com", "b.example.com", "c.example.com"},
		wantCalls: 3,
	}, {
		name: "a proxy that drops the token answers the first page again",
		pages: map[string]string{
			"": `{"records":[` + rec("a.example.com") + `],"nextPageToken":"t1"}`,
		},
		wantError: `"a.example.com" does not come after "a.example.com"`,
	}, {
		name: "a page that hands its own token back",
		pages: map[string]string{
			"":   `{"records":[` + rec("a.example.com") + `],"nextPageToken":"t1"}`,
			"t1": `{"records":[],"nextPageToken":"t1"}`,
		},
		wantError: "the next page token is the one this page was asked for",
	}, {
		name: "a page out of name order",
		pages: map[string]string{
			"":   `{"records":[` + rec("b.example.com") + `],"nextPageToken":"t1"}`,
			"t1": `{"records":[` + rec("a.example.com") + `]}`,
		},
		wantError: `"a.example.com" does not come after "b.example.com"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var mu sync.Mutex
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				mu.Unlock()
				if got := r.URL.Query().Get("ownerPrefix"); got != "op/" {
					http.Error(w, "ownerPrefix "+got, http.StatusBadRequest)
					return
				}
				body, ok := tt.pages[r.URL.Query().Get("pageToken")]
				if !ok {
					// A proxy that drops the token.
					body = tt.pages[""]
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL, func(c *external.Config) { c.MaxRetries = -1 })

			recs, err := c.ListByOwnerPrefix(t.Context(), "op/")
			if tt.wantError != "" {
				g.Expect(err).To(MatchError(external.ErrTransient))
				g.Expect(err.Error()).To(ContainSubstring(tt.wantError))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			names := make([]string, 0, len(recs))
			for _, r := range recs {
				names = append(names, r.Name)
			}
			g.Expect(names).To(Equal(tt.wantNames))
			g.Expect(calls).To(Equal(tt.wantCalls))
		})
	}
}

// TestConformance runs the dns.Client contract's suite on the HTTP client
// against the simulator.
func TestConformance(t *testing.T) {
	dnstest.RunConformance(t, func(t *testing.T) dnstest.Backend {
		sim, url := simtest.Start(t, simulator.Options{Token: testToken})
		faults := &dnstest.Faults{}
		c := newClient(t, url, func(cfg *external.Config) {
			cfg.Transport = faults.RoundTripper(http.DefaultTransport, func(r *http.Request) bool {
				return r.Method == http.MethodPut || r.Method == http.MethodDelete || r.Method == http.MethodPost
			})
		})
		read := func(_ context.Context, name string) ([]string, error) {
			var out []string
			for _, r := range sim.Records() {
				if r.Name == name {
					out = append(out, r.Value)
				}
			}
			return out, nil
		}
		return dnstest.Backend{Client: c, Zone: "example.com", Faults: faults, Read: read, Peer: newClient(t, url)}
	})
}
