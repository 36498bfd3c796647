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

package dnsplan

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// The hand-over space: this MyApp (key ns/web) wants a and holds b, or b
// and c, or a and b; a is free or held by another MyApp; other MyApps want
// b, c or d, each live, suspended or being deleted, holding a host or
// none; chains of two holders close on b or c or not; a hand-over note
// says this MyApp owes b to a giver, or not.

// The MyApps of the hand-over space, by key: p sorts before this MyApp
// ("ns-p" < "ns/"), z after it, and the waiter w between.
var (
	pKey, zKey, wKey = "ns-p/peer", "zz/zed", "ns/waiter"
)

// handOverApp is one MyApp of the space: the host it wants, and its state.
type handOverApp struct {
	host string
	// state: 0 live, 1 suspended, 2 being deleted, 3 absent.
	state int
	// holds is set when its status shows a host held.
	holds bool
}

func (h handOverApp) String() string {
	if h.state == 3 {
		return "-"
	}
	return fmt.Sprintf("%s/%d/%t", h.host, h.state, h.holds)
}

// handOverWorld builds one world of the hand-over space. aHolder is who
// holds a: "" none, "p", "z", "gone", "foreign"; d, when wanted by p or z,
// is held by the other of them.
func handOverWorld(held, routed []string, aHolder string, p, z, waiter handOverApp, gift int) (*tworld, *wapp) {
	w := &tworld{id: "here", svc: service{}, faults: map[string]readFault{}, selfLive: true, now: time.Unix(1_800_000_000, 0)}
	me := &wapp{key: "ns/web", uid: "uid-1", host: "a", held: held, routed: routed}
	w.apps = append(w.apps, me)
	add := func(key, uid string, h handOverApp) *wapp {
		if h.state == 3 {
			return nil
		}
		a := &wapp{key: key, uid: uid, host: h.host, suspended: h.state == 1, delete: h.state == 2}
		if h.holds {
			a.held = []string{"x-" + uid}
		}
		w.apps = append(w.apps, a)
		return a
	}
	pa, za := add(pKey, "uid-p", p), add(zKey, "uid-z", z)
	add(wKey, "uid-w", waiter)
	put := func(name string, a *wapp) {
		if a != nil {
			w.svc[name] = Record{Name: name, Type: "A", Value: wantedIP, TTL: 300, Owner: a.owner("here"), Active: true}
			if !slices.Contains(a.held, name) {
				a.held = append([]string{name}, a.held...)
			}
		}
	}
	for _, h := range held {
		w.svc[h] = Record{Name: h, Type: "A", Value: wantedIP, TTL: 300, Owner: me.owner("here"), Active: true}
	}
	switch aHolder {
	case "p":
		put("a", pa)
		if pa != nil && pa.host == "d" {
			put("d", za)
		}
	case "z":
		put("a", za)
		if za != nil && za.host == "d" {
			put("d", pa)
		}
	case "gone":
		w.svc["a"] = Record{Name: "a", Type: "A", Value: wantedIP, TTL: 300, Owner: gone, Active: true}
	case "foreign":
		w.svc["a"] = Record{Name: "a", Type: "A", Value: staleIP, TTL: 300, Owner: foreign, Active: true}
	}
	switch gift {
	case 1:
		me.gifts = []Gift{{Host: held[0], Giver: wKey, For: "b"}}
	case 2:
		me.gifts = []Gift{{Host: held[0], Giver: pKey, For: "b"}}
	}
	return w, me
}

// everyHandOverWorld calls check for every world of the hand-over space and
// returns how many.
func everyHandOverWorld(check func(w *tworld, me *wapp)) int {
	helds := [][]string{{"b"}, {"b", "c"}, {"a", "b"}}
	routeds := [][]string{nil, {"b"}, {"b", "c"}, {"a"}, {"a", "b"}}
	apps := make([]handOverApp, 0, 25)
	for _, host := range []string{"b", "c", "d", "a"} {
		for state := range 3 {
			for _, holds := range []bool{false, true} {
				apps = append(apps, handOverApp{host: host, state: state, holds: holds})
			}
		}
	}
	apps = append(apps, handOverApp{state: 3})
	waiters := []handOverApp{{state: 3}, {host: "b"}, {host: "b", holds: true}, {host: "b", state: 1}, {host: "c"}}
	n := 0
	for _, held := range helds {
		for _, routed := range routeds {
			for _, aHolder := range []string{"", "p", "z", "gone", "foreign"} {
				for _, p := range apps {
					for _, z := range apps {
						for _, waiter := range waiters {
							for gift := range 3 {
								w, me := handOverWorld(held, routed, aHolder, p, z, waiter, gift)
								check(w, me)
								n++
							}
						}
					}
				}
			}
		}
	}
	return n
}

// TestHandOversKeepTheirPromisesInEveryWorld runs the plan of this MyApp's
// pass in every world of the hand-over space and checks every property of
// its calls, the hand-over's above all: only to the last member of a
// closed cycle of live, unsuspended MyApps, by the member with the smallest
// key, or to a giver it owes; never to a MyApp waiting outside the cycle,
// never to a suspended one.
func TestHandOversKeepTheirPromisesInEveryWorld(t *testing.T) {
	t.Parallel()
	c := proptest.New(t, "worlds of the hand-over space")
	handOvers, cycles := 0, 0
	n := everyHandOverWorld(func(w *tworld, me *wapp) {
		o, p, err := w.plan(w.observe(me))
		if err == nil {
			err = checkPlan(w, o, p)
		}
		c.ObserveErr(func() string {
			return fmt.Sprintf("world: held %v routed %v gifts %v services %v apps %v\n    plan: %+v", me.held, me.routed, me.gifts,
				w.svc, describeApps(w), p)
		}, proptest.Promise("the pass's loop of needs ends in a plan", err))
		if err != nil {
			return
		}
		for _, c := range p.Calls {
			if c.Why == WhyHandOver {
				handOvers++
				if p.Outcome.Kind == KindConflict && c.For != "" {
					cycles++
				}
			}
		}
	})
	t.Logf("checked %d worlds of the hand-over space: %d hand-overs, %d of them first gifts of a cycle", n, handOvers, cycles)
	c.Report()
	if cycles == 0 || handOvers == cycles {
		t.Errorf("the space holds no cycle given first, or no other hand-over: it tests less than it says")
	}
}

func describeApps(w *tworld) []string {
	out := make([]string, 0, len(w.apps))
	for _, a := range w.apps {
		out = append(out, fmt.Sprintf("%s wants %s holds %v suspended %t deleting %t", a.key, a.host, a.held, a.suspended, a.delete))
	}
	return out
}
