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

package myapp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/tools/events"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

// claimInterval is the claims' check interval in these tests.
const claimInterval = 100 * time.Millisecond

// runningClaim is an OwnerIDClaim running as on a leader, until stop.
type runningClaim struct {
	*OwnerIDClaim
	events *events.FakeRecorder
	stop   func()
}

func startClaim(t *testing.T, d dns.Client, ownerID, cluster string) *runningClaim {
	t.Helper()
	return startClaimEvery(t, d, ownerID, cluster, claimInterval)
}

func startClaimEvery(t *testing.T, d dns.Client, ownerID, cluster string, every time.Duration) *runningClaim {
	t.Helper()
	rec := events.NewFakeRecorder(100)
	c := &OwnerIDClaim{DNS: d, OwnerID: ownerID, Cluster: cluster, Instance: cluster + "-manager-0", Interval: every,
		Recorder: rec, Log: logr.Discard()}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Start(ctx) })
	stop := sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return &runningClaim{OwnerIDClaim: c, events: rec, stop: stop}
}

func (c *runningClaim) allowed() bool {
	ok, _ := c.SweepAllowed(context.Background())
	return ok
}

// TestOwnerIDClaimFindsAnotherInstallationWithTheSameID (issue 32 item 5,
// T2): one installation alone may sweep once its claim has stood two check
// intervals. A second installation with the same owner ID (another
// cluster) starts: within a few intervals both see the other's claim, say
// so in a Warning event naming the other cluster and in
// myapp_dns_owner_id_shared, and refuse to sweep, and they keep refusing
// while both run. Once the other stops, the first is alone again within
// two intervals, and says so. A new leader of the same installation taking
// over from the first is not another installation.
func TestOwnerIDClaimFindsAnotherInstallationWithTheSameID(t *testing.T) {
	g := NewWithT(t)
	_, url := simtest.Start(t, simulator.Options{Token: simToken})
	d, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())

	a := startClaim(t, d, "shared-id", "cluster-a")
	g.Expect(a.allowed()).To(BeFalse(), "not before the claim has stood")
	g.Eventually(a.allowed, 20*claimInterval, claimInterval/4).Should(BeTrue(), "alone, once the claim has stood")

	b := startClaim(t, d, "shared-id", "cluster-b")
	g.Eventually(func() bool { return a.Shared() && b.Shared() }, 20*claimInterval, claimInterval/4).
		Should(BeTrue(), "each finds the other's claim")
	g.Consistently(func() bool { return a.allowed() || b.allowed() || !a.Shared() || !b.Shared() }, 10*claimInterval, claimInterval/4).
		Should(BeFalse(), "neither sweeps while both run, and neither stops saying the ID is shared")
	g.Expect(testutil.ToFloat64(ownerIDShared.WithLabelValues("shared-id"))).To(Equal(1.0))
	for name, c := range map[string]*runningClaim{"cluster-b": a, "cluster-a": b} {
		g.Expect(drain(c.events)).To(ContainElement(SatisfyAll(ContainSubstring("Warning OwnerIDShared"),
			ContainSubstring("cluster "+name), ContainSubstring("owner ID shared-id"))), "the event names the other cluster")
	}

	b.stop()
	g.Eventually(a.allowed, 20*claimInterval, claimInterval/4).Should(BeTrue(), "alone again once the other stopped")
	g.Expect(a.Shared()).To(BeFalse())
	g.Expect(drain(a.events)).To(ContainElement(ContainSubstring("Normal OwnerIDClaimed")))

	// A leader handover within installation A: the old leader stops, the
	// new one writes its own claim at start.
	a.stop()
	a2 := startClaim(t, d, "shared-id", "cluster-a")
	g.Eventually(a2.allowed, 20*claimInterval, claimInterval/4).Should(BeTrue())
	g.Consistently(a2.Shared, 10*claimInterval, claimInterval/2).Should(BeFalse(), "its own installation's old claim is no other's")
}

// TestOwnerIDClaimWaitsForAnInstallationThatChecksLessOften: another
// installation with the same ID checks its claim six times less often. A
// new leader that checks often must not take two of its own intervals of
// quiet for proof that it is alone: the claim it found at start says how
// often its writer checks, and it waits two of those, by which time the
// other installation has found it and both refuse.
func TestOwnerIDClaimWaitsForAnInstallationThatChecksLessOften(t *testing.T) {
	g := NewWithT(t)
	_, url := simtest.Start(t, simulator.Options{Token: simToken})
	d, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())

	slow := startClaimEvery(t, d, "slow-and-fast", "cluster-slow", 6*claimInterval)
	g.Eventually(func() error {
		_, err := d.(dns.InstallationClaims).GetInstallationClaim(t.Context(), "slow-and-fast")
		return err
	}, 10*claimInterval, claimInterval/4).Should(Succeed(), "the slow installation has written its claim")
	fast := startClaim(t, d, "slow-and-fast", "cluster-fast")
	g.Consistently(fast.allowed, 5*claimInterval, claimInterval/4).Should(BeFalse(),
		"the fast one does not sweep before the slow one could have found it")
	g.Eventually(func() bool { return fast.Shared() && slow.Shared() }, 30*claimInterval, claimInterval/4).Should(BeTrue())
}

// TestOwnerIDClaimWithoutClaimsInTheServiceLetsTheSweepRun: a DNS client
// that keeps no claims (not a dns.InstallationClaims) cannot tell; the
// sweep runs as before, and the start says the detection is off. A client
// that keeps them but answers an error is TestOwnerIDClaimFailsClosed.
func TestOwnerIDClaimWithoutClaimsInTheServiceLetsTheSweepRun(t *testing.T) {
	g := NewWithT(t)
	_, url := simtest.Start(t, simulator.Options{Token: simToken})
	d, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())
	c := startClaim(t, noClaims{d}, "some-id", "cluster-a")
	g.Eventually(c.allowed, 20*claimInterval, claimInterval/4).Should(BeTrue())
}

// noClaims hides a client's installation claims.
type noClaims struct{ dns.Client }

// drain is what a fake recorder holds, one line an event.
func drain(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, strings.TrimSpace(e))
		default:
			return out
		}
	}
}

// TestOwnerIDClaimFailsClosed (issue 39, D6): a claim check that cannot
// tell, whatever the error (one 400, 404 or 422 answer to a claim write
// included, which once switched the detection off until a restart), pauses
// the sweep with a reason until a check succeeds; the detection stays on,
// so another installation with the same owner ID is still found.
func TestOwnerIDClaimFailsClosed(t *testing.T) {
	for _, fault := range []struct {
		name string
		kind external.Kind
		code int
	}{
		{"400", external.KindInvalid, 400},
		{"404", external.KindNotFound, 404},
		{"422", external.KindInvalid, 422},
		{"500", external.KindTransient, 500},
	} {
		t.Run(fault.name, func(t *testing.T) {
			g := NewWithT(t)
			_, url := simtest.Start(t, simulator.Options{Token: simToken})
			d, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken)})
			g.Expect(err).NotTo(HaveOccurred())
			f := &failingClaims{Client: d, claims: d.(dns.InstallationClaims),
				err: &external.Error{Kind: fault.kind, Service: dns.ServiceName, Operation: "put-claim",
					StatusCode: fault.code, Message: "an answer the test gives"}}
			id := "fails-closed-" + fault.name

			// Every write fails for a while: the sweep waits, with a
			// reason, and runs only once a claim was written and has stood.
			f.failWrites(1 << 30)
			a := startClaim(t, f, id, "cluster-a")
			g.Consistently(func() string {
				ok, why := a.SweepAllowed(t.Context())
				if ok {
					return "allowed"
				}
				return why
			}, 4*claimInterval, claimInterval/4).ShouldNot(Or(Equal("allowed"), BeEmpty()),
				"the sweep waits, with a reason, while the claim cannot be written")
			f.failWrites(0)
			g.Eventually(a.allowed, 30*claimInterval, claimInterval/4).Should(BeTrue(), "the claim was written and has stood")

			// A write answered with the error once, while a second
			// installation with this owner ID runs: the first refuses to
			// sweep for as long as the other runs, and finds it.
			f.failWrites(1)
			b := startClaim(t, d, id, "cluster-b")
			g.Eventually(func() string {
				claim, _ := d.(dns.InstallationClaims).GetInstallationClaim(t.Context(), id)
				return claim.Cluster
			}, 10*claimInterval, claimInterval/8).Should(Equal("cluster-b"), "the second installation wrote its claim")
			g.Consistently(a.allowed, 15*claimInterval, claimInterval/4).Should(BeFalse(),
				"the first installation never sweeps while another uses its owner ID")
			g.Eventually(a.Shared, 30*claimInterval, claimInterval/4).Should(BeTrue(), "the detection is still on")
			b.stop()
			g.Eventually(a.allowed, 40*claimInterval, claimInterval/4).Should(BeTrue(), "alone again, it sweeps")
		})
	}
}

// failingClaims is a DNS client whose next claim writes fail with err.
type failingClaims struct {
	dns.Client
	claims dns.InstallationClaims
	err    error

	mu       sync.Mutex
	failures int
}

func (f *failingClaims) failWrites(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = n
}

func (f *failingClaims) GetInstallationClaim(ctx context.Context, ownerID string) (dns.InstallationClaim, error) {
	return f.claims.GetInstallationClaim(ctx, ownerID)
}

func (f *failingClaims) PutInstallationClaim(ctx context.Context, claim dns.InstallationClaim) (dns.InstallationClaim, error) {
	f.mu.Lock()
	fail := f.failures > 0
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	if fail {
		return dns.InstallationClaim{}, f.err
	}
	return f.claims.PutInstallationClaim(ctx, claim)
}
