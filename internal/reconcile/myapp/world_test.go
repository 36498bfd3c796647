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
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// TestWorldsOfMyAppsKeepTheirPromises drives the real passes (Reconcile:
// observe, plan, apply) of up to four MyApps in three namespaces sharing
// four hosts, against an in-memory cluster (a fake client, indexed as the
// manager's cache is) and the DNS simulator, through seeded random edits:
// a new host (often one another MyApp holds, so MyApps wait for hosts),
// swaps, rotations, suspends and resumes, deletions and new MyApps, DNS
// outages and stale reads, each edit waking the MyApps it concerns as the
// manager's watch does. No API server runs, so it runs in seconds.
//
// After every step: no host is routed by two Ingresses, and an Ingress
// routes only hosts its MyApp holds; no record of another owner or of
// another installation is touched; and while a MyApp that gave its host
// first in a swap or a rotation waits for the host it gave it for, no
// MyApp outside that cycle holds that host. Once the edits and faults stop
// and every MyApp is resumed: every MyApp that gave its host holds the
// host it gave it for or its own; every MyApp that ever held a host holds
// one; no record is held unknown to its MyApp's status; and a MyApp whose
// host nobody else holds or wants holds and routes it.
func TestWorldsOfMyAppsKeepTheirPromises(t *testing.T) {
	seeds := 16
	if testing.Short() {
		seeds = 4
	}
	var total worldCounts
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			total.add(runWorld(t, seed))
		})
	}
	t.Logf("%d worlds: %s", seeds, total)
}

// worldCounts are what the worlds did, so a run shows it tested what it
// says.
type worldCounts struct {
	steps, handOvers, cycleGifts, paid, suspends, deletions, outages, staleSteps int
}

func (c *worldCounts) add(o worldCounts) {
	c.steps += o.steps
	c.handOvers += o.handOvers
	c.cycleGifts += o.cycleGifts
	c.paid += o.paid
	c.suspends += o.suspends
	c.deletions += o.deletions
	c.outages += o.outages
	c.staleSteps += o.staleSteps
}

func (c worldCounts) String() string {
	return fmt.Sprintf("%d steps, %d hand-overs (%d first gifts of a cycle, %d paid back), %d suspends, %d deletions, %d outages, %d steps of stale reads",
		c.steps, c.handOvers, c.cycleGifts, c.paid, c.suspends, c.deletions, c.outages, c.staleSteps)
}

// transferLog records the hand-overs the reconciler makes.
type transferLog struct {
	dns.Client
	mu        sync.Mutex
	transfers []dns.Record // Name, and Owner the new owner; Value the old owner
}

func (l *transferLog) Transfer(ctx context.Context, name, from, to string) (dns.Record, error) {
	rec, err := l.Client.Transfer(ctx, name, from, to)
	if err == nil && from != to {
		l.mu.Lock()
		l.transfers = append(l.transfers, dns.Record{Name: name, Owner: to, Value: from})
		l.mu.Unlock()
	}
	return rec, err
}

func (l *transferLog) take() []dns.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.transfers
	l.transfers = nil
	return out
}

// worldDebt is a host a MyApp gave first in a conflict, in a cycle of
// members.
type worldDebt struct {
	giver         *appsv1alpha1.MyApp
	members       []string // keys
	gave, forHost string
}

// world is one seeded run.
type world struct {
	*fakeWorld
	t      *testing.T
	seed   uint64
	rng    *rand.Rand
	hosts  []string
	apps   []*appsv1alpha1.MyApp
	clock  *clocktesting.FakePassiveClock
	log    *transferLog
	debts  []*worldDebt
	ever   map[string]bool // keys of MyApps that held a host
	counts worldCounts
	next   int
	trace  bool
	// untouched are records of other owners, which no pass may change.
	untouched map[string]string
}

func runWorld(t *testing.T, seed uint64) worldCounts {
	rng := rand.New(rand.NewPCG(seed, 30))
	w := &world{t: t, seed: seed, rng: rng, ever: map[string]bool{}, untouched: map[string]string{},
		trace: os.Getenv("MYAPP_WORLD_TRACE_SEED") == fmt.Sprint(seed)}
	zone := fmt.Sprintf("w%d.example.com", seed)
	for i := range 4 {
		w.hosts = append(w.hosts, fmt.Sprintf("h%d.%s", i+1, zone))
	}
	w.fakeWorld = newFakeWorld(t)
	w.clock = clocktesting.NewFakePassiveClock(time.Now())
	w.r.Clock = w.clock
	w.log = &transferLog{Client: w.dns.client}
	w.r.DNS = w.log
	// Records of another tool and of another installation, at hosts some
	// MyApps will want: never to be touched.
	for name, owner := range map[string]string{
		"x." + zone: "external-dns/team",
		"y." + zone: "myapp-operator/other-cluster/w/web/0b7a4f60-0000-4000-8000-000000000abc",
	} {
		w.dns.seed(t, NewWithT(t), name, "198.51.100.9", owner)
		w.untouched[name] = owner
		w.hosts = append(w.hosts, name)
	}
	for range 2 + rng.IntN(3) {
		w.newApp()
	}
	w.settleWorld(3)
	for i := range 40 {
		w.edit(i)
		w.counts.steps++
		for range 2 {
			w.passOf(w.apps[w.rng.IntN(len(w.apps))])
		}
		w.checkStep(fmt.Sprintf("step %d", i))
	}
	w.dns.sim.SetOutage(simulator.ServiceDNS, false)
	w.dns.sim.SetConsistencyDelay(simulator.ServiceDNS, 0)
	for _, app := range w.apps {
		if got := w.get(app); got != nil && got.Spec.Suspend {
			w.setSuspend(app, false)
		}
	}
	w.settleWorld(16)
	w.converged()
	return w.counts
}

func (w *world) tracef(format string, args ...any) {
	if w.trace {
		w.t.Logf(format, args...)
	}
}

// newApp adds a MyApp on a random host, in one of three namespaces.
func (w *world) newApp() {
	w.next++
	ns := []string{"ns-a", "ns-m", "ns-z"}[w.rng.IntN(3)]
	app := worldApp(ns, fmt.Sprintf("app%d", w.next), w.hosts[w.rng.IntN(4)])
	if w.rng.IntN(3) == 0 {
		app.Spec.DeletionPolicy = appsv1alpha1.DeletionPolicyOrphan
	}
	w.add(app)
	w.apps = append(w.apps, app)
}

// live are the MyApps that exist and are not being deleted.
func (w *world) live() []*appsv1alpha1.MyApp {
	var out []*appsv1alpha1.MyApp
	for _, app := range w.apps {
		if got := w.get(app); got != nil && got.DeletionTimestamp.IsZero() {
			out = append(out, got)
		}
	}
	return out
}

// edit makes one random change, and wakes the MyApps it concerns.
func (w *world) edit(i int) {
	w.clock.SetTime(w.clock.Now().Add(time.Duration(w.rng.IntN(20)) * time.Second))
	w.dns.sim.SetOutage(simulator.ServiceDNS, false)
	w.dns.sim.SetConsistencyDelay(simulator.ServiceDNS, 0)
	live := w.live()
	if len(live) == 0 {
		w.newApp()
		return
	}
	before := map[string]*appsv1alpha1.MyApp{}
	for _, app := range live {
		before[app.Name] = app.DeepCopy()
	}
	setHost := func(app *appsv1alpha1.MyApp, host string) { w.setHost(app, host) }
	switch r := w.rng.IntN(18); {
	case r < 4:
		setHost(live[w.rng.IntN(len(live))], w.hosts[w.rng.IntN(len(w.hosts))])
	case r < 8 && len(live) >= 2:
		p := w.rng.Perm(len(live))
		x, y := live[p[0]], live[p[1]]
		setHost(x, y.Spec.Host)
		setHost(y, x.Spec.Host)
	case r < 10 && len(live) >= 3:
		p := w.rng.Perm(len(live))
		x, y, z := live[p[0]], live[p[1]], live[p[2]]
		setHost(x, y.Spec.Host)
		setHost(y, z.Spec.Host)
		setHost(z, x.Spec.Host)
	case r < 12:
		app := live[w.rng.IntN(len(live))]
		w.setSuspend(app, !app.Spec.Suspend)
		w.counts.suspends++
	case r < 13 && i > 10:
		app := live[w.rng.IntN(len(live))]
		NewWithT(w.t).Expect(w.c.Delete(w.t.Context(), app)).To(Succeed())
		w.counts.deletions++
		w.newApp()
	case r < 15:
		w.dns.sim.SetOutage(simulator.ServiceDNS, true)
		w.counts.outages++
	case r < 17:
		w.dns.sim.SetConsistencyDelay(simulator.ServiceDNS, time.Hour)
		w.counts.staleSteps++
	}
	w.tracef("edit %d: %s", i, w.describe())
	// The manager's watch: each MyApp changed wakes the MyApps waiting for
	// or holding its hosts, and brings a pass of its own.
	for _, app := range live {
		if got := w.get(app); got != nil && !equalSpecAndStatus(before[app.Name], got) {
			w.wake(before[app.Name])
			w.passOf(got)
		}
	}
}

func equalSpecAndStatus(a, b *appsv1alpha1.MyApp) bool {
	return a.Spec.Host == b.Spec.Host && a.Spec.Suspend == b.Spec.Suspend && a.DeletionTimestamp.IsZero() == b.DeletionTimestamp.IsZero()
}

// passOf runs one pass of app, and notes the hand-overs it made.
func (w *world) passOf(app *appsv1alpha1.MyApp) {
	if w.get(app) == nil {
		return
	}
	_ = w.pass(app)
	got := w.get(app)
	for _, tr := range w.log.take() {
		w.counts.handOvers++
		if got == nil || !got.DeletionTimestamp.IsZero() {
			continue
		}
		if c := conditionOf(got, appsv1alpha1.DNSReadyCondition); c == nil || c.Reason != appsv1alpha1.HostConflictReason ||
			tr.Name == got.Spec.Host {
			continue // handed over while holding spec.host: no debt
		}
		members, closed := w.chainFrom(got.Spec.Host, tr.Owner)
		if !closed {
			continue // passed on outside a cycle (a debt paid, or a host a MyApp holding nothing wants)
		}
		w.counts.cycleGifts++
		w.debts = append(w.debts, &worldDebt{giver: got, gave: tr.Name, forHost: got.Spec.Host, members: members})
	}
	if got != nil && len(w.held(got)) > 0 {
		w.ever[got.Name] = true
	}
	w.tracef("pass of %s: %s", app.Name, w.describe())
}

// chainFrom are the names of the MyApps from the holder of host, each
// holding the host the one before wants, to the one whose identity is
// last; closed is set when the chain reaches it (a hand-over in a cycle).
func (w *world) chainFrom(host, last string) (names []string, closed bool) {
	owners := w.owners()
	for range 8 {
		holder := w.appOwning(owners[host])
		if holder == nil {
			return names, false
		}
		names = append(names, holder.Name)
		if ownsRecord(w.r.OwnerID, last, holder) {
			return names, true
		}
		host = holder.Spec.Host
	}
	return names, false
}

// appOwning is the live MyApp owner names, or nil.
func (w *world) appOwning(owner string) *appsv1alpha1.MyApp {
	for _, app := range w.apps {
		if got := w.get(app); got != nil && ownsRecord(w.r.OwnerID, owner, got) {
			return got
		}
	}
	return nil
}

// settleWorld runs passes of every MyApp in turn, rounds times, a drift
// interval apart, so every timed read is due.
func (w *world) settleWorld(rounds int) {
	for range rounds {
		w.clock.SetTime(w.clock.Now().Add(phaseDriftCheck + time.Second))
		for _, app := range w.apps {
			w.passOf(app)
		}
		w.checkStep("settling")
	}
}

// checkStep asserts the invariants after a step.
func (w *world) checkStep(when string) {
	w.t.Helper()
	w.checkRoutes(w.apps...)
	owners := w.owners()
	for name, owner := range w.untouched {
		if owners[name] != owner {
			w.t.Fatalf("seed %d %s: the record %s of another owner (%s) is now %q", w.seed, when, name, owner, owners[name])
		}
	}
	open := w.debts[:0]
	for _, d := range w.debts {
		giver := w.get(d.giver)
		switch {
		case giver == nil || !giver.DeletionTimestamp.IsZero():
			continue
		case giver.Spec.Host != d.forHost || slices.ContainsFunc(d.members, func(name string) bool {
			for _, app := range w.apps {
				if app.Name == name {
					got := w.get(app)
					return got == nil || !got.DeletionTimestamp.IsZero()
				}
			}
			return true
		}):
			w.ever[giver.Name] = false // void: its own edit, or a user's deletion
			continue
		case ownsRecord(w.r.OwnerID, owners[d.forHost], giver) || ownsRecord(w.r.OwnerID, owners[d.gave], giver):
			w.counts.paid++
			continue
		case func() bool {
			holder := w.appOwning(owners[d.forHost])
			return holder != nil && slices.Contains(d.members, holder.Name) && holder.Spec.Host == d.forHost
		}():
			// A member took the host back for itself before handing it on
			// (its spec.host changed back to it): the giver waits for it
			// as any MyApp waits for a held host.
			w.ever[giver.Name] = false
			continue
		}
		if holder := w.appOwning(owners[d.forHost]); holder != nil && holder.Name != giver.Name &&
			!slices.Contains(d.members, holder.Name) {
			w.t.Fatalf("seed %d %s: %s gave %s for %s, which %s, outside the cycle %v, now holds\n%s", w.seed, when,
				giver.Name, d.gave, d.forHost, holder.Name, d.members, w.describe())
		}
		open = append(open, d)
	}
	w.debts = open
}

// converged asserts the end state.
func (w *world) converged() {
	w.t.Helper()
	for _, d := range w.debts {
		w.t.Fatalf("seed %d: %s gave %s for %s and holds neither\n%s", w.seed, d.giver.Name, d.gave, d.forHost, w.describe())
	}
	owners := w.owners()
	for _, app := range w.live() {
		held := w.held(app)
		for host := range held {
			if !slices.Contains(heldHosts(app), host) {
				w.t.Fatalf("seed %d: %s holds %s, unknown to its status %v\n%s", w.seed, app.Name, host, heldHosts(app), w.describe())
			}
		}
		if w.ever[app.Name] && held.Len() == 0 {
			w.t.Fatalf("seed %d: %s held a host once and is left with none\n%s", w.seed, app.Name, w.describe())
		}
		contested := owners[app.Spec.Host] != "" && !ownsRecord(w.r.OwnerID, owners[app.Spec.Host], app)
		for _, other := range w.live() {
			contested = contested || other.Name != app.Name && other.Spec.Host == app.Spec.Host
		}
		if contested {
			continue
		}
		if !held.Has(app.Spec.Host) || !w.routed(app).Has(app.Spec.Host) {
			w.t.Fatalf("seed %d: %s, whose host is free, does not hold and route it\n%s", w.seed, app.Name, w.describe())
		}
	}
}

// describe is the world in one line per MyApp, for a failure.
func (w *world) describe() string {
	var b strings.Builder
	owners := w.owners()
	for _, app := range w.apps {
		got := w.get(app)
		if got == nil {
			continue
		}
		reason := ""
		if c := conditionOf(got, appsv1alpha1.DNSReadyCondition); c != nil {
			reason = c.Reason
		}
		fmt.Fprintf(&b, "  %s/%s wants %s suspended=%t deleting=%t status=%v service=%v routes=%v dns=%s\n",
			got.Namespace, got.Name, got.Spec.Host, got.Spec.Suspend, !got.DeletionTimestamp.IsZero(), heldHosts(got),
			sortedSet(w.held(got)), sortedSet(w.routed(got)), reason)
	}
	fmt.Fprintf(&b, "  records: %v", owners)
	return b.String()
}

func sortedSet[T interface{ UnsortedList() []string }](s T) []string {
	out := s.UnsortedList()
	slices.Sort(out)
	return out
}
