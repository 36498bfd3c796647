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

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// dnsDecisionCounts are the steps one sequence took, by kind.
type dnsDecisionCounts struct {
	moves, swaps, rotations, policies, deletions, outages, waiters, suspends, resumes, swapMoves int
}

func (c dnsDecisionCounts) String() string {
	return fmt.Sprintf("moves=%d swaps=%d rotations=%d policy-changes=%d deletions=%d outages=%d waiters=%d "+
		"suspends=%d resumes=%d swaps-then-moves=%d", c.moves, c.swaps, c.rotations, c.policies, c.deletions, c.outages,
		c.waiters, c.suspends, c.resumes, c.swapMoves)
}

// TestDNSDecisions is family 10 (issues 21 and 30): seeded sequences of the
// DNS decisions on the cluster tier under the simulator's faults. A
// sequence keeps a few MyApps and, at random and without waiting for one
// step to converge before the next, moves one to a fresh host, swaps two
// hosts, rotates three, turns a deletionPolicy between Delete and Orphan,
// deletes a MyApp (once Ready; a new one takes its place), takes the DNS
// service down for 1 to 3 s, creates in a second namespace a MyApp waiting
// for a host one of them holds, suspends or resumes one (in the middle of
// whatever hand-over is under way), or swaps two and moves one of them on
// to a fresh host right after. Throughout, a sampler reads the Ingresses
// every 100 ms (no host may be routed by two at once), and the hand-over
// judge (oracle_handovers_test.go) reads the records and the MyApps: a host
// handed over in a swap never goes to a waiter, nor does the host its giver
// gave it for. After the last step every MyApp is resumed and must turn
// Ready on its spec.host, holding that host alone; every giver holds the
// host it gave its own for or its own; a waiter that held a host holds one;
// and once the waiters are deleted the oracle must be clean: each record
// ACTIVE under the owner its policy asks for, each Ready and DNSReady
// condition at the MyApp's generation, nothing leaked, and the record of
// every MyApp deleted under Orphan still there, marked orphaned.
func TestDNSDecisions(t *testing.T) {
	// A rotation takes three MyApps, so RELIABILITY_SCALE cannot go below.
	apps, steps := max(3, scale(3, 4)), 8
	if full() {
		steps = 18
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
	// The waiters live in a namespace of their own, which the manager
	// watches too; it goes with the test. Its name sorts before the
	// scenario's ("rel-await-" < "rel-dnsdecisions-"): the defect audit G1
	// found handed a host to the first MyApp by namespace/name wanting it.
	waitNS := fixtures.CreateNamespace(t, k8sClient, "rel-await")
	t.Cleanup(func() {
		stripFinalizers(waitNS)
		_ = k8sClient.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: waitNS}})
	})
	s.alsoWatch = append(s.alsoWatch, waitNS)
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
	setSuspend := func(app *appsv1alpha1.MyApp, suspend bool) {
		update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Suspend = suspend })
	}
	judge := newHandOverJudge()
	stopJudge := sampleHandOvers(t.Context(), judge, s.sim, s.ns, waitNS)
	watch := watchRoutes(t.Context(), s.ns, waitNS)
	var waiters []*appsv1alpha1.MyApp
	var counts dnsDecisionCounts
	var log []string
	swap := func() (*appsv1alpha1.MyApp, *appsv1alpha1.MyApp) {
		i, j := distinct2(rng, len(apps))
		a, b := apps[i], apps[j]
		ha, hb := a.Spec.Host, b.Spec.Host
		setHost(a, hb)
		setHost(b, ha)
		return a, b
	}
	for range steps {
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
		switch k := rng.IntN(16); {
		case k < 2:
			app := apps[rng.IntN(len(apps))]
			host := newHost()
			setHost(app, host)
			counts.moves++
			log = append(log, fmt.Sprintf("move %s to %s", app.Name, host))
		case k < 4:
			a, b := swap()
			counts.swaps++
			log = append(log, fmt.Sprintf("swap %s %s", a.Name, b.Name))
		case k < 6:
			perm := rng.Perm(len(apps))[:3]
			x, y, z := apps[perm[0]], apps[perm[1]], apps[perm[2]]
			hx, hy, hz := x.Spec.Host, y.Spec.Host, z.Spec.Host
			setHost(x, hy)
			setHost(y, hz)
			setHost(z, hx)
			counts.rotations++
			log = append(log, fmt.Sprintf("rotate %s %s %s", x.Name, y.Name, z.Name))
		case k < 7:
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
		case k < 8:
			// Deleted once Ready, so the record it leaves under Orphan is
			// for its spec.host; a new MyApp on a fresh host takes its
			// place. Every MyApp is resumed first: a suspended partner
			// would hold a swap it is in, and the MyApp with it.
			for _, other := range apps {
				if other.Spec.Suspend {
					setSuspend(other, false)
					counts.resumes++
				}
			}
			i := rng.IntN(len(apps))
			app := apps[i]
			// Ready, and holding spec.host alone: a MyApp deleted under
			// Orphan in the middle of a move would leave its previous host
			// too (see "Not covered" in docs/reliability.md). One whose
			// host a waiter won (a rotation gave it a host its holder had
			// released) never is: it is not deleted in this step.
			if err := s.tryFor(holdsItsHost(app)); err != nil {
				log = append(log, fmt.Sprintf("no deletion of %s: %v", app.Name, err))
				continue
			}
			if app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
				s.oracle.keep(app)
			}
			s.remove(app)
			apps[i] = newApp()
			counts.deletions++
			log = append(log, fmt.Sprintf("delete %s (%s), create %s", app.Name, app.Spec.DeletionPolicy, apps[i].Name))
		case k < 9:
			d := time.Duration(1+rng.IntN(3)) * time.Second
			s.sim.SetFault(simulator.ServiceDNS, simulator.AllOperations, simulator.Fault{Status: http.StatusServiceUnavailable})
			time.Sleep(d)
			s.sim.ClearFault(simulator.ServiceDNS, simulator.AllOperations)
			counts.outages++
			log = append(log, "dns outage "+d.String())
		case k < 11 && len(waiters) < 3:
			// A MyApp in another namespace wants a host a MyApp holds: it
			// waits in HostConflict, and no swap may hand it that host.
			held := apps[rng.IntN(len(apps))]
			w := fixtures.NewMyApp(waitNS, fmt.Sprintf("waiter-%d", len(waiters)), fixtures.WithReplicas(1),
				fixtures.WithHost(held.Spec.Host))
			s.create(w)
			judge.waiter(waitNS + "/" + w.Name)
			waiters = append(waiters, w)
			counts.waiters++
			log = append(log, fmt.Sprintf("waiter %s for %s", w.Name, held.Spec.Host))
		case k < 13:
			app := apps[rng.IntN(len(apps))]
			setSuspend(app, !app.Spec.Suspend)
			if app.Spec.Suspend {
				counts.suspends++
				log = append(log, "suspend "+app.Name)
			} else {
				counts.resumes++
				log = append(log, "resume "+app.Name)
			}
		default:
			// A partner changes its host right after the hand-over began.
			a, b := swap()
			time.Sleep(time.Duration(300+rng.IntN(600)) * time.Millisecond)
			moved := []*appsv1alpha1.MyApp{a, b}[rng.IntN(2)]
			host := newHost()
			setHost(moved, host)
			counts.swapMoves++
			log = append(log, fmt.Sprintf("swap %s %s, then move %s to %s", a.Name, b.Name, moved.Name, host))
		}
	}
	s.sim.ClearFaults()
	for _, app := range apps {
		if app.Spec.Suspend {
			setSuspend(app, false)
		}
	}
	// The hand-over judge's verdict once every swap under way had the time
	// to end: each giver holds the host it gave its own for or its own, and
	// a waiter that held a host holds one.
	healed := time.Now()
	var handOverProblems []string
	_ = s.tryFor(func(ctx context.Context) error {
		sampled, err := sampleApps(ctx, s.ns, waitNS)
		if err != nil {
			return err
		}
		if handOverProblems = judge.settled(s.sim.Records(), sampled); len(handOverProblems) > 0 {
			return fmt.Errorf("%d hand-over problems", len(handOverProblems))
		}
		return nil
	})
	stopJudge()
	// The waiters go; a waiter may have won a host its holder released,
	// which a later swap gave a MyApp of the scenario to want again.
	for _, w := range waiters {
		s.remove(w)
	}
	for _, w := range waiters {
		s.waitFor("waiter "+w.Name+" gone", gone(w))
	}
	var unsettled []string
	for _, app := range apps {
		if err := s.tryFor(holdsItsHost(app)); err != nil {
			unsettled = append(unsettled, fmt.Sprintf("%s: %v", app.Name, err))
		}
	}
	converged := time.Since(healed).Round(time.Second)
	twice := watch()
	r := s.oracle.settle(t)
	t.Logf("RESULT family=10 case=seed-%d apps=%d steps=%d %s hand-overs=%d first-gifts=%d converged-after=%s "+
		"unsettled=%d routed-twice=%d hand-over-problems=%d clean=%v",
		seed, n, steps, counts, judge.handOvers, judge.cycleGifts, converged, len(unsettled), len(twice),
		len(handOverProblems), r.Clean())
	if len(unsettled) > 0 {
		t.Errorf("MyApps not Ready on their own host %s after the faults ended: %v (steps: %v)", stepTimeout, unsettled, log)
	}
	if len(twice) > 0 {
		t.Errorf("hosts routed by two Ingresses at once: %v (steps: %v)", twice, log)
	}
	if len(handOverProblems) > 0 {
		t.Errorf("hand-overs: %v (steps: %v)", handOverProblems, log)
	}
	if !r.Clean() {
		t.Errorf("the oracle: %s (steps: %v)", r, log)
	}
}

// ownedByLive reports whether the owner references name a MyApp that live
// says exists and is not being deleted.
func ownedByLive(refs []metav1.OwnerReference, live map[types.UID]bool) bool {
	for _, ref := range refs {
		if ref.Kind == "MyApp" && live[ref.UID] {
			return true
		}
	}
	return false
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

// watchRoutes samples the Ingresses of namespaces every sampleInterval
// until the returned function is called, which returns each host a sample
// saw routed by two Ingresses, with the Ingresses.
func watchRoutes(ctx context.Context, namespaces ...string) func() []string {
	var seen []string
	stop := sampleEvery(ctx, func(ctx context.Context) {
		// One list, so the sample is of one moment across the namespaces.
		var list networkingv1.IngressList
		if k8sClient.List(ctx, &list) != nil {
			return
		}
		// The Ingress of a MyApp being deleted, or gone, is left to the
		// garbage collector, which may delete it a moment after another
		// MyApp took a host it routed: that window is the deletion's,
		// not a decision's (a known gap, docs/reliability.md).
		var apps appsv1alpha1.MyAppList
		if k8sClient.List(ctx, &apps) != nil {
			return
		}
		live := map[types.UID]bool{}
		for _, app := range apps.Items {
			live[app.UID] = app.DeletionTimestamp.IsZero()
		}
		routedBy := map[string][]string{}
		for _, ing := range list.Items {
			if !slices.Contains(namespaces, ing.Namespace) || !ownedByLive(ing.OwnerReferences, live) {
				continue
			}
			for _, rule := range ing.Spec.Rules {
				name := ing.Namespace + "/" + ing.Name
				if rule.Host != "" && rule.HTTP != nil && !slices.Contains(routedBy[rule.Host], name) {
					routedBy[rule.Host] = append(routedBy[rule.Host], name)
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
