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
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// The hand-over part of the oracle (family 10). It samples the DNS service's
// records and the MyApps of a scenario's namespaces, and judges the swaps
// and rotations it sees from outside, as a user would:
//   - a host handed over by a MyApp in a conflict (one that does not hold
//     its own spec.host: it gives first in a cycle) never goes to a MyApp
//     waiting outside the swap, and while the giver waits for the host it
//     gave its own for, no waiter holds that host;
//   - once the scenario settled, a giver holds the host it gave its own
//     for, or its own again, unless its own spec.host changed since, or it
//     went;
//   - a waiter that held a host once still holds one.
// A waiter is a MyApp the scenario created to want a host another MyApp
// holds (the scenario names them).

// handOverDebt is a host a MyApp gave first, in a conflict.
type handOverDebt struct {
	giver, gave, forHost string // giver is namespace/name
}

// handOverJudge keeps what the samples showed.
type handOverJudge struct {
	mu sync.Mutex
	// waiters are the keys of the MyApps waiting for a host.
	waiters map[string]bool
	// owners is the owner of each record at the last sample.
	owners map[string]string
	debts  []*handOverDebt
	// held are the keys of the MyApps seen holding a host.
	held map[string]bool
	// Problems found while sampling, and counts for the RESULT line.
	problems                                []string
	handOvers, cycleGifts, toWaiters, taken int
}

func newHandOverJudge() *handOverJudge {
	return &handOverJudge{waiters: map[string]bool{}, owners: map[string]string{}, held: map[string]bool{}}
}

// waiter tells the judge that key waits for a host.
func (j *handOverJudge) waiter(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.waiters[key] = true
}

// sampleApp is a MyApp as the judge sees it.
type sampleApp struct {
	key, uid, host string
	conflict       bool
	deleting       bool
}

// ownerKey is the namespace/name an owner this operator writes names, and
// its UID.
func ownerKey(owner string) (key, uid string, ok bool) {
	owner, _ = strings.CutPrefix(owner, "myapp-operator-orphaned/")
	owner, _ = strings.CutPrefix(owner, "myapp-operator/")
	parts := strings.Split(owner, "/")
	if len(parts) != 4 {
		return "", "", false
	}
	return parts[1] + "/" + parts[2], parts[3], true
}

// sample is the MyApps of one sample, by namespace/name.
type sample map[string]sampleApp

func newSample(apps []sampleApp) sample {
	byKey := sample{}
	for _, a := range apps {
		byKey[a.key] = a
	}
	return byKey
}

// holderOf is the MyApp of the sample owner names, if it is there with the
// UID owner names.
func (s sample) holderOf(owner string) (sampleApp, bool) {
	key, uid, ok := ownerKey(owner)
	a, found := s[key]
	return a, ok && found && a.uid == uid
}

// observe judges one sample: the records and the MyApps.
func (j *handOverJudge) observe(records []simulator.Record, apps []sampleApp) {
	j.mu.Lock()
	defer j.mu.Unlock()
	byKey := newSample(apps)
	now := map[string]string{}
	for _, r := range records {
		now[r.Name] = r.Owner
		if a, ok := byKey.holderOf(r.Owner); ok {
			j.held[a.key] = true
		}
		if before, seen := j.owners[r.Name]; seen && before != r.Owner {
			j.ownerChanged(byKey, r.Name, before, r.Owner)
		}
	}
	j.owners = now
	j.checkDebts(byKey, now)
}

// ownerChanged judges the record name passing from the owner before to
// the owner now: a hand-over between two MyApps of the sample, which one
// in a conflict makes giving first and must not make to a waiter.
func (j *handOverJudge) ownerChanged(byKey sample, name, before, now string) {
	from, okFrom := byKey.holderOf(before)
	to, okTo := byKey.holderOf(now)
	if !okFrom || !okTo || from.key == to.key {
		return
	}
	j.handOvers++
	if from.host == name || !from.conflict {
		return // handed over holding its own spec.host: the last step of a move
	}
	if j.waiters[to.key] && !j.waiters[from.key] {
		j.toWaiters++
		j.problems = append(j.problems, fmt.Sprintf("%s, in a conflict for %s, handed %s to %s, a MyApp waiting outside the swap",
			from.key, from.host, name, to.key))
	}
	j.cycleGifts++
	j.debts = append(j.debts, &handOverDebt{giver: from.key, gave: name, forHost: from.host})
}

// checkDebts finds the hosts givers wait for that a waiter holds in the
// sample, owners being each record's owner.
func (j *handOverJudge) checkDebts(byKey sample, owners map[string]string) {
	for _, d := range j.debts {
		giver, live := byKey[d.giver]
		if !live || giver.host != d.forHost {
			continue
		}
		if a, ok := byKey.holderOf(owners[d.forHost]); ok && j.waiters[a.key] && a.key != d.giver {
			problem := fmt.Sprintf("%s gave %s for %s, which %s, waiting outside the swap, now holds",
				d.giver, d.gave, d.forHost, a.key)
			if !slices.Contains(j.problems, problem) {
				j.taken++
				j.problems = append(j.problems, problem)
			}
		}
	}
}

// settled judges the end state: every giver holds the host it gave its own
// for, or its own again, unless it changed its spec.host since or went;
// every waiter that held a host once holds one. It returns the problems
// found, sampled ones included.
func (j *handOverJudge) settled(records []simulator.Record, apps []sampleApp) []string {
	j.observe(records, apps)
	j.mu.Lock()
	defer j.mu.Unlock()
	byKey := newSample(apps)
	holds := map[string]bool{}
	for _, r := range records {
		if key, uid, ok := ownerKey(r.Owner); ok && byKey[key].uid == uid {
			holds[key+" "+r.Name] = true
			holds[key] = true
		}
	}
	problems := slices.Clone(j.problems)
	for _, d := range j.debts {
		giver, live := byKey[d.giver]
		if !live || giver.deleting || giver.host != d.forHost {
			continue
		}
		if !holds[d.giver+" "+d.forHost] && !holds[d.giver+" "+d.gave] {
			problems = append(problems, fmt.Sprintf("%s gave %s for %s and holds neither", d.giver, d.gave, d.forHost))
		}
	}
	for key := range j.waiters {
		if a, live := byKey[key]; live && !a.deleting && j.held[key] && !holds[key] {
			problems = append(problems, fmt.Sprintf("%s, waiting for a host, held one once and holds none", key))
		}
	}
	return problems
}

// sampleHandOvers samples the simulator and the MyApps of namespaces for
// the judge until the returned function is called.
func sampleHandOvers(ctx context.Context, j *handOverJudge, sim *simulator.Server, namespaces ...string) func() {
	return sampleEvery(ctx, func(ctx context.Context) {
		apps, err := sampleApps(ctx, namespaces...)
		if err == nil {
			j.observe(sim.Records(), apps)
		}
	})
}

// sampleApps reads the MyApps of namespaces as the judge sees them.
func sampleApps(ctx context.Context, namespaces ...string) ([]sampleApp, error) {
	var out []sampleApp
	for _, ns := range namespaces {
		var list appsv1alpha1.MyAppList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for _, app := range list.Items {
			c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition)
			out = append(out, sampleApp{key: ns + "/" + app.Name, uid: string(app.UID), host: app.Spec.Host,
				conflict: c != nil && c.Reason == appsv1alpha1.HostConflictReason, deleting: !app.DeletionTimestamp.IsZero()})
		}
	}
	return out, nil
}

// TestHandOverJudgeCountsWhatItShould feeds the judge the samples of a
// swap that went right and of the three ways audit G1 saw one go wrong:
// it must count nothing for the first and a problem for each of the
// others.
func TestHandOverJudgeCountsWhatItShould(t *testing.T) {
	owner := func(key, uid string) string { return "myapp-operator/test/" + key + "/" + uid }
	rec := func(name, key, uid string) simulator.Record {
		return simulator.Record{Name: name, Owner: owner(key, uid)}
	}
	a := func(host string, conflict bool) sampleApp {
		return sampleApp{key: "ns/a", uid: "ua", host: host, conflict: conflict}
	}
	b := func(host string, conflict bool) sampleApp {
		return sampleApp{key: "ns/b", uid: "ub", host: host, conflict: conflict}
	}
	d := sampleApp{key: "w/d", uid: "ud", host: "h1", conflict: true}

	for _, tc := range []struct {
		name    string
		samples [][]simulator.Record
		apps    [][]sampleApp
		want    int
	}{{
		name: "a swap that ends with each on the other's host",
		samples: [][]simulator.Record{
			{rec("h1", "ns/a", "ua"), rec("h2", "ns/b", "ub")},
			{rec("h1", "ns/b", "ub"), rec("h2", "ns/b", "ub")},
			{rec("h1", "ns/b", "ub"), rec("h2", "ns/a", "ua")},
		},
		apps: [][]sampleApp{{a("h2", true), b("h1", true), d}, {a("h2", true), b("h1", false), d}, {a("h2", false), b("h1", false), d}},
		want: 0,
	}, {
		name: "the host given first goes to the waiter",
		samples: [][]simulator.Record{
			{rec("h1", "ns/a", "ua"), rec("h2", "ns/b", "ub")},
			{rec("h1", "w/d", "ud"), rec("h2", "ns/b", "ub")},
		},
		apps: [][]sampleApp{{a("h2", true), b("h1", true), d}, {a("h2", true), b("h1", true), d}},
		want: 2, // handed to a waiter, and the giver holds neither
	}, {
		name: "the host given for goes to a waiter",
		samples: [][]simulator.Record{
			{rec("h1", "ns/a", "ua"), rec("h2", "ns/b", "ub")},
			{rec("h1", "ns/b", "ub"), rec("h2", "ns/b", "ub")},
			{rec("h1", "ns/b", "ub"), rec("h2", "w/e", "ue")},
		},
		apps: [][]sampleApp{{a("h2", true), b("h1", true)}, {a("h2", true), b("h1", false)},
			{a("h2", true), b("h1", false), {key: "w/e", uid: "ue", host: "h2"}}},
		want: 2, // a waiter holds it while the debt is open, and the giver holds neither
	}, {
		name: "the giver is left with nothing",
		samples: [][]simulator.Record{
			{rec("h1", "ns/a", "ua"), rec("h2", "ns/b", "ub")},
			{rec("h1", "ns/b", "ub"), rec("h2", "ns/b", "ub")},
		},
		apps: [][]sampleApp{{a("h2", true), b("h1", true)}, {a("h2", true), b("h3", true)}},
		want: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			j := newHandOverJudge()
			j.waiter("w/d")
			j.waiter("w/e")
			for i := range tc.samples[:len(tc.samples)-1] {
				j.observe(tc.samples[i], tc.apps[i])
			}
			last := len(tc.samples) - 1
			if got := j.settled(tc.samples[last], tc.apps[last]); len(got) != tc.want {
				t.Errorf("%d problems, want %d: %q", len(got), tc.want, got)
			}
		})
	}
}
