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

package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// dnsDecisionCounts are the steps one sequence took, by kind.
type dnsDecisionCounts struct {
	moves, swaps, rotations, policies, deletions, outages int
}

func (c dnsDecisionCounts) String() string {
	return fmt.Sprintf("moves=%d swaps=%d rotations=%d policy-changes=%d deletions=%d outages=%d",
		c.moves, c.swaps, c.rotations, c.policies, c.deletions, c.outages)
}

// TestDNSDecisions is family 10 (issue 21): seeded sequences of the DNS
// decisions on the cluster tier under the simulator's faults. A sequence
// keeps a few MyApps with distinct hosts and, at random and without waiting
// for one step to converge before the next, moves one to a fresh host,
// swaps two hosts, rotates three, turns a deletionPolicy between Delete and
// Orphan, deletes a MyApp (once Ready; a new one takes its place) or takes
// the DNS service down for 1 to 3 s. Throughout, a sampler reads the
// namespace's Ingresses every 100 ms: no host may be routed by two at once.
// After the last step every MyApp must turn Ready on its spec.host, holding
// that host alone (status.dns names it, no previous host), and the oracle
// must be clean: each record ACTIVE under the owner its policy asks for,
// each Ready and DNSReady condition at the MyApp's generation, nothing
// leaked, and the record of every MyApp deleted under Orphan still there,
// marked orphaned.
func TestDNSDecisions(t *testing.T) {
	// A rotation takes three MyApps, so RELIABILITY_SCALE cannot go below.
	apps, steps := max(3, scale(3, 4)), 6
	if full() {
		steps = 16
	}
	for seed := range scaleSeeds() {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			dnsDecisionSequence(t, uint64(seed), apps, steps)
		})
	}
}

// scaleSeeds is how many seeds family 10 runs: one in make test, three in
// the campaign (RELIABILITY_SCALE does not change it; it sets how many
// MyApps a sequence keeps, at least 3).
func scaleSeeds() int {
	if full() {
		return 3
	}
	return 1
}

func dnsDecisionSequence(t *testing.T, seed uint64, n, steps int) {
	s := newScenario(t)
	s.startManager(newCrashGate(0))
	rng := rand.New(rand.NewPCG(seed, 21))
	fresh := 0
	newHost := func() string {
		fresh++
		return fmt.Sprintf("d%d.%s.example.com", fresh, s.ns)
	}
	newApp := func() *appsv1alpha1.MyApp {
		policy := appsv1alpha1.DeletionPolicyDelete
		if rng.IntN(2) == 0 {
			policy = appsv1alpha1.DeletionPolicyOrphan
		}
		app := fixtures.NewMyApp(s.ns, fmt.Sprintf("app-%d", fresh), fixtures.WithReplicas(1),
			fixtures.WithHost(newHost()), fixtures.WithAppDeletionPolicy(policy))
		s.create(app)
		return app
	}
	apps := make([]*appsv1alpha1.MyApp, 0, n)
	for range n {
		apps = append(apps, newApp())
	}
	for _, app := range apps {
		s.waitFor("MyApp "+app.Name+" Ready", s.readyAt(app))
	}
	if t.Failed() {
		return
	}

	setHost := func(app *appsv1alpha1.MyApp, host string) {
		update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Host = host })
	}
	watch := watchRoutes(t.Context(), s.ns)
	var counts dnsDecisionCounts
	var log []string
	for range steps {
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		switch k := rng.IntN(12); {
		case k < 3:
			app := apps[rng.IntN(len(apps))]
			host := newHost()
			setHost(app, host)
			counts.moves++
			log = append(log, fmt.Sprintf("move %s to %s", app.Name, host))
		case k < 5:
			i, j := distinct2(rng, len(apps))
			a, b := apps[i], apps[j]
			ha, hb := a.Spec.Host, b.Spec.Host
			setHost(a, hb)
			setHost(b, ha)
			counts.swaps++
			log = append(log, fmt.Sprintf("swap %s %s", a.Name, b.Name))
		case k < 7:
			perm := rng.Perm(len(apps))[:3]
			x, y, z := apps[perm[0]], apps[perm[1]], apps[perm[2]]
			hx, hy, hz := x.Spec.Host, y.Spec.Host, z.Spec.Host
			setHost(x, hy)
			setHost(y, hz)
			setHost(z, hx)
			counts.rotations++
			log = append(log, fmt.Sprintf("rotate %s %s %s", x.Name, y.Name, z.Name))
		case k < 9:
			app := apps[rng.IntN(len(apps))]
			update(s, app, func(a *appsv1alpha1.MyApp) {
				if a.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
					a.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete
				} else {
					a.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyOrphan
				}
			})
			counts.policies++
			log = append(log, fmt.Sprintf("policy %s %s", app.Name, app.Spec.DeletionPolicy))
		case k < 10:
			// Deleted once Ready, so the record it leaves under Orphan is
			// for its spec.host; a new MyApp on a fresh host takes its place.
			i := rng.IntN(len(apps))
			app := apps[i]
			if err := s.tryFor(s.readyAt(app)); err != nil {
				t.Errorf("MyApp %s not Ready before its deletion: %v (steps: %v)", app.Name, err, log)
			}
			if app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
				s.oracle.keep(app)
			}
			s.remove(app)
			apps[i] = newApp()
			counts.deletions++
			log = append(log, fmt.Sprintf("delete %s (%s), create %s", app.Name, app.Spec.DeletionPolicy, apps[i].Name))
		default:
			d := time.Duration(1+rng.IntN(3)) * time.Second
			s.sim.SetFault(simulator.ServiceDNS, simulator.AllOperations, simulator.Fault{Status: http.StatusServiceUnavailable})
			time.Sleep(d)
			s.sim.ClearFault(simulator.ServiceDNS, simulator.AllOperations)
			counts.outages++
			log = append(log, "dns outage "+d.String())
		}
	}
	s.sim.ClearFaults()
	healed := time.Now()
	var unsettled []string
	for _, app := range apps {
		if err := s.tryFor(holdsItsHost(app)); err != nil {
			unsettled = append(unsettled, fmt.Sprintf("%s: %v", app.Name, err))
		}
	}
	converged := time.Since(healed).Round(time.Second)
	twice := watch()
	r := s.oracle.settle(t)
	t.Logf("RESULT family=10 case=seed-%d apps=%d steps=%d %s converged-after=%s unsettled=%d routed-twice=%d clean=%v",
		seed, n, steps, counts, converged, len(unsettled), len(twice), r.Clean())
	if len(unsettled) > 0 {
		t.Errorf("MyApps not Ready on their own host %s after the faults ended: %v (steps: %v)", stepTimeout, unsettled, log)
	}
	if len(twice) > 0 {
		t.Errorf("hosts routed by two Ingresses at once: %v (steps: %v)", twice, log)
	}
	if !r.Clean() {
		t.Errorf("the oracle: %s (steps: %v)", r, log)
	}
}

// distinct2 picks two different indexes below n.
func distinct2(rng *rand.Rand, n int) (int, int) {
	p := rng.Perm(n)
	return p[0], p[1]
}

// holdsItsHost holds once app is Ready at its generation and holds its
// spec.host alone: status.dns names it and no previous host is left.
func holdsItsHost(app *appsv1alpha1.MyApp) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		if err := myAppReady(app); err != nil {
			return err
		}
		switch d := app.Status.DNS; {
		case d == nil:
			return fmt.Errorf("%w: no status.dns", errNotReady)
		case d.Name != app.Spec.Host:
			return fmt.Errorf("%w: holds %s, not its host %s", errNotReady, d.Name, app.Spec.Host)
		case len(d.Previous) > 0:
			return fmt.Errorf("%w: still holds %v", errNotReady, d.Previous)
		}
		return nil
	}
}

// watchRoutes samples the Ingresses of ns every sampleInterval until the
// returned function is called, which returns each host a sample saw routed
// by two Ingresses, with the Ingresses.
func watchRoutes(ctx context.Context, ns string) func() []string {
	var seen []string
	stop := sampleEvery(ctx, func(ctx context.Context) {
		var list networkingv1.IngressList
		if k8sClient.List(ctx, &list, client.InNamespace(ns)) != nil {
			return
		}
		routedBy := map[string][]string{}
		for _, ing := range list.Items {
			for _, rule := range ing.Spec.Rules {
				if rule.Host != "" && !slices.Contains(routedBy[rule.Host], ing.Name) {
					routedBy[rule.Host] = append(routedBy[rule.Host], ing.Name)
				}
			}
		}
		for host, by := range routedBy {
			if entry := fmt.Sprintf("%s by %v", host, by); len(by) > 1 && !slices.Contains(seen, entry) {
				seen = append(seen, entry)
			}
		}
	})
	return func() []string {
		stop()
		return seen
	}
}
