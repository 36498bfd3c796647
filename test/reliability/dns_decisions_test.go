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

// dnsDecisions is one sequence of family 10: its scenario, its MyApps
// and waiters, and what it did.
type dnsDecisions struct {
	s       *scenario
	rng     *rand.Rand
	waitNS  string
	fresh   int
	apps    []*appsv1alpha1.MyApp
	waiters []*appsv1alpha1.MyApp
	judge   *handOverJudge
	counts  dnsDecisionCounts
	log     []string
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
	q := &dnsDecisions{s: s, rng: rand.New(rand.NewPCG(seed, 21)), waitNS: waitNS, judge: newHandOverJudge()}
	q.apps = make([]*appsv1alpha1.MyApp, 0, n)
	for range n {
		q.apps = append(q.apps, q.newApp())
	}
	for _, app := range q.apps {
		s.waitFor("MyApp "+app.Name+" Ready", s.readyAt(app))
	}
	if t.Failed() {
		return
	}
	stopJudge := sampleHandOvers(t.Context(), q.judge, s.sim, s.ns, waitNS)
	watch := watchRoutes(t.Context(), s.ns, waitNS)
	for range steps {
		time.Sleep(time.Duration(300+q.rng.IntN(1200)) * time.Millisecond)
		q.step()
	}
	s.sim.ClearFaults()
	for _, app := range q.apps {
		if app.Spec.Suspend {
			q.setSuspend(app, false)
		}
	}
	// The hand-over judge's verdict once every swap under way had the time
	// to end: each giver holds the host it gave its own for or its own, and
	// a waiter that held a host holds one.
	healed := time.Now()
	handOverProblems := q.handOverVerdict()
	stopJudge()
	// The waiters go; a waiter may have won a host its holder released,
	// which a later swap gave a MyApp of the scenario to want again.
	for _, w := range q.waiters {
		s.remove(w)
	}
	for _, w := range q.waiters {
		s.waitFor("waiter "+w.Name+" gone", gone(w))
	}
	var unsettled []string
	for _, app := range q.apps {
		if err := s.tryFor(holdsItsHost(app)); err != nil {
			unsettled = append(unsettled, fmt.Sprintf("%s: %v", app.Name, err))
		}
	}
	converged := time.Since(healed).Round(time.Second)
	twice := watch()
	r := s.oracle.settle(t)
	t.Logf("RESULT family=10 case=seed-%d apps=%d steps=%d %s hand-overs=%d first-gifts=%d converged-after=%s "+
		"unsettled=%d routed-twice=%d hand-over-problems=%d clean=%v",
		seed, n, steps, q.counts, q.judge.handOvers, q.judge.cycleGifts, converged, len(unsettled), len(twice),
		len(handOverProblems), r.Clean())
	if len(unsettled) > 0 {
		t.Errorf("MyApps not Ready on their own host %s after the faults ended: %v (steps: %v)", stepTimeout, unsettled, q.log)
	}
	if len(twice) > 0 {
		t.Errorf("hosts routed by two Ingresses at once: %v (steps: %v)", twice, q.log)
	}
	if len(handOverProblems) > 0 {
		t.Errorf("hand-overs: %v (steps: %v)", handOverProblems, q.log)
	}
	if !r.Clean() {
		t.Errorf("the oracle: %s (steps: %v)", r, q.log)
	}
}

// newHost is a host no MyApp of the sequence wanted before.
func (q *dnsDecisions) newHost() string {
	q.fresh++
	return fmt.Sprintf("d%d.%s.example.com", q.fresh, q.s.ns)
}

// newApp creates a MyApp on a fresh host, under either deletion policy.
func (q *dnsDecisions) newApp() *appsv1alpha1.MyApp {
	policy := appsv1alpha1.DeletionPolicyDelete
	if q.rng.IntN(2) == 0 {
		policy = appsv1alpha1.DeletionPolicyOrphan
	}
	app := fixtures.NewMyApp(q.s.ns, fmt.Sprintf("app-%d", q.fresh), fixtures.WithReplicas(1),
		fixtures.WithHost(q.newHost()), fixtures.WithAppDeletionPolicy(policy))
	q.s.create(app)
	return app
}

func (q *dnsDecisions) setHost(app *appsv1alpha1.MyApp, host string) {
	update(q.s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Host = host })
}

func (q *dnsDecisions) setSuspend(app *appsv1alpha1.MyApp, suspend bool) {
	update(q.s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Suspend = suspend })
}

func (q *dnsDecisions) logf(format string, args ...any) {
	q.log = append(q.log, fmt.Sprintf(format, args...))
}

// step takes one step of the sequence, of a kind picked at random.
func (q *dnsDecisions) step() {
	switch k := q.rng.IntN(16); {
	case k < 2:
		app := q.apps[q.rng.IntN(len(q.apps))]
		host := q.newHost()
		q.setHost(app, host)
		q.counts.moves++
		q.logf("move %s to %s", app.Name, host)
	case k < 4:
		a, b := q.swap()
		q.counts.swaps++
		q.logf("swap %s %s", a.Name, b.Name)
	case k < 6:
		q.rotate()
	case k < 7:
		q.flipPolicy()
	case k < 8:
		q.replaceOne()
	case k < 9:
		d := time.Duration(1+q.rng.IntN(3)) * time.Second
		q.s.sim.SetFault(simulator.ServiceDNS, simulator.AllOperations, simulator.Fault{Status: http.StatusServiceUnavailable})
		time.Sleep(d)
		q.s.sim.ClearFault(simulator.ServiceDNS, simulator.AllOperations)
		q.counts.outages++
		q.logf("dns outage %s", d)
	case k < 11 && len(q.waiters) < 3:
		q.addWaiter()
	case k < 13:
		app := q.apps[q.rng.IntN(len(q.apps))]
		q.setSuspend(app, !app.Spec.Suspend)
		if app.Spec.Suspend {
			q.counts.suspends++
			q.logf("suspend %s", app.Name)
		} else {
			q.counts.resumes++
			q.logf("resume %s", app.Name)
		}
	default:
		// A partner changes its host right after the hand-over began.
		a, b := q.swap()
		time.Sleep(time.Duration(300+q.rng.IntN(600)) * time.Millisecond)
		moved := []*appsv1alpha1.MyApp{a, b}[q.rng.IntN(2)]
		host := q.newHost()
		q.setHost(moved, host)
		q.counts.swapMoves++
		q.logf("swap %s %s, then move %s to %s", a.Name, b.Name, moved.Name, host)
	}
}

// swap swaps the hosts of two MyApps picked at random.
func (q *dnsDecisions) swap() (*appsv1alpha1.MyApp, *appsv1alpha1.MyApp) {
	i, j := distinct2(q.rng, len(q.apps))
	a, b := q.apps[i], q.apps[j]
	ha, hb := a.Spec.Host, b.Spec.Host
	q.setHost(a, hb)
	q.setHost(b, ha)
	return a, b
}

// rotate rotates the hosts of three MyApps picked at random.
func (q *dnsDecisions) rotate() {
	perm := q.rng.Perm(len(q.apps))[:3]
	x, y, z := q.apps[perm[0]], q.apps[perm[1]], q.apps[perm[2]]
	hx, hy, hz := x.Spec.Host, y.Spec.Host, z.Spec.Host
	q.setHost(x, hy)
	q.setHost(y, hz)
	q.setHost(z, hx)
	q.counts.rotations++
	q.logf("rotate %s %s %s", x.Name, y.Name, z.Name)
}

// flipPolicy flips the deletion policy of a MyApp picked at random.
func (q *dnsDecisions) flipPolicy() {
	app := q.apps[q.rng.IntN(len(q.apps))]
	update(q.s, app, func(a *appsv1alpha1.MyApp) {
		if a.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
			a.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyDelete
		} else {
			a.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyOrphan
		}
	})
	q.counts.policies++
	q.logf("policy %s %s", app.Name, app.Spec.DeletionPolicy)
}

// replaceOne deletes a MyApp picked at random once it is Ready, so the
// record it leaves under Orphan is for its spec.host; a new MyApp on a
// fresh host takes its place. Every MyApp is resumed first: a suspended
// partner would hold a swap it is in, and the MyApp with it.
func (q *dnsDecisions) replaceOne() {
	for _, other := range q.apps {
		if other.Spec.Suspend {
			q.setSuspend(other, false)
			q.counts.resumes++
		}
	}
	i := q.rng.IntN(len(q.apps))
	app := q.apps[i]
	// Ready, and holding spec.host alone: a MyApp deleted under Orphan in
	// the middle of a move would leave its previous host too (see "Not
	// covered" in docs/reliability.md). One whose host a waiter won (a
	// rotation gave it a host its holder had released) never is: it is
	// not deleted in this step.
	if err := q.s.tryFor(holdsItsHost(app)); err != nil {
		q.logf("no deletion of %s: %v", app.Name, err)
		return
	}
	if app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
		q.s.oracle.keep(app)
	}
	q.s.remove(app)
	q.apps[i] = q.newApp()
	q.counts.deletions++
	q.logf("delete %s (%s), create %s", app.Name, app.Spec.DeletionPolicy, q.apps[i].Name)
}

// addWaiter creates a MyApp in the waiters' namespace wanting a host a
// MyApp holds: it waits in HostConflict, and no swap may hand it that
// host.
func (q *dnsDecisions) addWaiter() {
	held := q.apps[q.rng.IntN(len(q.apps))]
	w := fixtures.NewMyApp(q.waitNS, fmt.Sprintf("waiter-%d", len(q.waiters)), fixtures.WithReplicas(1),
		fixtures.WithHost(held.Spec.Host))
	q.s.create(w)
	q.judge.waiter(q.waitNS + "/" + w.Name)
	q.waiters = append(q.waiters, w)
	q.counts.waiters++
	q.logf("waiter %s for %s", w.Name, held.Spec.Host)
}

// handOverVerdict waits up to the step timeout for the hand-over judge to
// find nothing left unsettled, and returns what it last found.
func (q *dnsDecisions) handOverVerdict() []string {
	var problems []string
	_ = q.s.tryFor(func(ctx context.Context) error {
		sampled, err := sampleApps(ctx, q.s.ns, q.waitNS)
		if err != nil {
			return err
		}
		if problems = q.judge.settled(q.s.sim.Records(), sampled); len(problems) > 0 {
			return fmt.Errorf("%d hand-over problems", len(problems))
		}
		return nil
	})
	return problems
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
