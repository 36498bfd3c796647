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

import "slices"

// pass is who a host this MyApp holds besides spec.host goes to, decided
// before the moves (planOthers) make their calls from it.
type pass struct {
	// peer is the MyApp the host is handed to: its receiver, or in a
	// conflict the last member of a closed cycle; nil for none.
	peer *App
	// wait is set when the host is owed to a giver that wants it but
	// cannot receive it now (it is suspended): nobody else gets it
	// meanwhile.
	wait bool
	// back is the giver the host goes back to (returnTo); nil for none.
	back *App
	// debtor is set when this MyApp gives first in a cycle: the MyApp that
	// holds the host it gives for (the first of the cycle after this
	// MyApp), which owes it that host.
	debtor *App
	// wanted is set in a conflict for a host kept while a MyApp that may
	// receive it wants it.
	wanted bool
}

// passes decides, for each of v.others (index for index; nil when it
// decides nothing), who receives it, given whether spec.host is held once the calls succeeded: while it
// is, the receiver of each host this MyApp may hand over, and the giver it
// may go back to; in a conflict, the hand-overs of a cycle and of debts.
func (v *view) passes(holds bool) []pass {
	if !holds {
		if len(v.ownOthers) == 0 {
			return nil
		}
		ps := make([]pass, len(v.others))
		v.conflictPasses(ps)
		return ps
	}
	var ps []pass
	for i, h := range v.others {
		r, read := v.Records[h]
		if read && (r.Name == "" && slices.Contains(v.known, h) || slices.Contains(v.ownOthers, h)) {
			if ps == nil {
				ps = make([]pass, len(v.others))
			}
			ps[i].peer, ps[i].wait = v.receiver(h, true)
			ps[i].back = v.returnTo(h)
		}
	}
	return ps
}

// conflictPasses decides the hosts held besides spec.host while another owner
// holds it. They are kept and routed, so the MyApp keeps a working name,
// except: the host a closed cycle's last member wants, which this MyApp
// hands over when it gives first; a host it owes a giver; and (when it
// remembers no debt) one a MyApp holding nothing wants, handed over as
// long as it keeps another host.
func (v *view) conflictPasses(ps []pass) {
	own := v.ownOthers
	closer, cycleHost, givesFirst := v.cycle()
	var passOn, keep []string
	// A host owed to a giver that still wants it is not given into a
	// cycle: it goes back to the giver, or waits for it while the giver
	// is suspended (receiver).
	givesFirst = givesFirst && !v.owedToGiver(cycleHost)
	for _, h := range own {
		switch {
		case givesFirst && h == cycleHost:
		case v.passesOn(h):
			passOn = append(passOn, h)
		default:
			keep = append(keep, h)
		}
	}
	if i := slices.IndexFunc(passOn, func(h string) bool { return !v.isOwed(h) }); len(keep) == 0 && i >= 0 {
		// One name is kept, one no giver is owed. A debt is paid even
		// when it leaves this MyApp without a name: the giver gave its own
		// host for it, first in a cycle this MyApp was part of, before
		// this MyApp's spec.host changed to a host it cannot have.
		passOn = slices.Delete(passOn, i, i+1)
	}
	for i, h := range v.others {
		switch {
		case !slices.Contains(own, h):
		case givesFirst && closer != nil && h == cycleHost:
			ps[i].peer, ps[i].debtor = closer, v.members[0]
		case slices.Contains(passOn, h):
			ps[i].peer, _ = v.receiver(h, false)
		default:
			// While another MyApp wants it, this one may be in a cycle
			// whose last edit only woke another member: it comes back to
			// follow the chain again, rather than at its drift check.
			ps[i].wanted = len(v.eligibleWanters(h)) > 0
		}
	}
}

// owedToGiver reports whether this MyApp owes h to a giver that still wants
// it, eligible to receive it now or not (suspended).
func (v *view) owedToGiver(h string) bool {
	_, owed := v.owedTo(h, v.eligibleWanters(h))
	return owed
}

// owedTo reports whether this MyApp owes h to a giver that still wants it,
// and that giver when it is among wanters (those eligible to receive h
// now); nil while it cannot receive it (it is suspended).
func (v *view) owedTo(h string, wanters []*App) (giver *App, owed bool) {
	for _, g := range v.Gifts {
		if g.For != h {
			continue
		}
		for _, w := range wanters {
			if g.Giver == w.Key {
				return w, true
			}
		}
		for _, w := range v.Wanters[h] {
			if g.Giver == w.Key && w.Host == h && !w.Deleting {
				return nil, true
			}
		}
	}
	return nil, false
}

// passesOn reports whether a MyApp in a conflict hands h over.
func (v *view) passesOn(h string) bool {
	peer, _ := v.receiver(h, false)
	return peer != nil
}

// isOwed reports whether this MyApp owes h to a giver that still wants it.
func (v *view) isOwed(h string) bool {
	for _, g := range v.Gifts {
		if g.For == h {
			for _, w := range v.eligibleWanters(h) {
				if w.Key == g.Giver {
					return true
				}
			}
		}
	}
	return false
}

// cycle is the closed chain spec.host's holder starts, if any: the member
// that closes it (the last, which wants the host this MyApp holds, here
// and eligible to receive it as the API server shows it) and whether this
// MyApp gives first (its key is the smallest of the cycle).
func (v *view) cycle() (closer *App, host string, givesFirst bool) {
	givesFirst = true
	for _, app := range v.members {
		if app == nil {
			return nil, "", false
		}
		if app.Key < v.key {
			givesFirst = false
		}
		if !slices.Contains(v.ownOthers, app.Host) {
			continue
		}
		for _, w := range v.eligibleWanters(app.Host) {
			if w.UID == app.UID && w.Key == app.Key {
				return w, app.Host, givesFirst
			}
		}
		return nil, "", false
	}
	return nil, "", false
}

// chainOpen reports whether the chain read so far may go on: its last
// link's MyApp is a member (see), is not this MyApp, and wants a host that
// is not one this MyApp holds (which would close it), within MaxChain
// links.
func (v *view) chainOpen() bool {
	if len(v.Chain) == 0 {
		return true
	}
	if len(v.Chain) >= MaxChain {
		return false
	}
	app := v.members[len(v.members)-1]
	if app == nil || slices.Contains(v.ownOthers, app.Host) || app.Host == v.Host {
		return false
	}
	for _, l := range v.Chain[:len(v.Chain)-1] {
		if l.Host == app.Host {
			return false // a loop that does not pass through this MyApp
		}
	}
	return true
}

// othersWanted reports whether a host this MyApp holds besides spec.host is
// wanted by a MyApp that may receive it.
func (v *view) othersWanted() bool {
	for _, h := range v.ownOthers {
		if len(v.eligibleWanters(h)) > 0 {
			return true
		}
	}
	return false
}

// receiver is who a host h this MyApp holds is handed to, if anyone: the
// MyApp that gave this one a host for it, while it wants it; otherwise a
// MyApp that wants it and holds no host, then any that wants it, the
// smallest key first. holding is set when this MyApp holds spec.host (a
// MyApp in a conflict passes on only what it owes, or, when it remembers
// no debt, what a MyApp holding nothing wants). wait is set when h is owed
// to a giver that wants it but cannot receive it now (it is suspended):
// nobody else gets it meanwhile.
func (v *view) receiver(h string, holding bool) (peer *App, wait bool) {
	wanters := v.eligibleWanters(h)
	slices.SortFunc(wanters, func(a, b *App) int { return compare(a.Key, b.Key) })
	if giver, owed := v.owedTo(h, wanters); owed {
		return giver, giver == nil
	}
	if !holding && v.owes() {
		return nil, false
	}
	for _, w := range wanters {
		if len(w.Holds) == 0 {
			return w, false
		}
	}
	if holding && len(wanters) > 0 {
		return wanters[0], false
	}
	return nil, false
}

// returnTo is the MyApp h goes back to, if any: one that handed h to this
// MyApp, wants the host this MyApp holds as spec.host, may receive a host
// and holds none. A swap whose partner took its own host back ends so with
// each MyApp on its own host.
func (v *view) returnTo(h string) *App {
	for _, g := range v.Gifts {
		giver, ok := v.Givers[g.Giver]
		if g.Host == h && ok && giver.eligible() && giver.Host == v.Host && len(giver.Holds) == 0 && giver.UID != v.Self.UID {
			return &giver
		}
	}
	return nil
}

// owes reports whether this MyApp remembers owing a host to a giver.
func (v *view) owes() bool {
	for _, g := range v.Gifts {
		if g.For != "" {
			return true
		}
	}
	return false
}

// eligibleWanters are the MyApps that may receive h: live, not deleting,
// not suspended, wanting h, not this MyApp.
func (v *view) eligibleWanters(h string) []*App {
	var out []*App
	for i := range v.Wanters[h] {
		a := &v.Wanters[h][i]
		if a.eligible() && a.Host == h && a.UID != v.Self.UID {
			out = append(out, a)
		}
	}
	return out
}

// eligible reports whether app may receive a host or take part in a cycle
// of moves: a live MyApp that is not being deleted, and not suspended (a
// suspended MyApp passes nothing on, and its record is not to be written).
func (a *App) eligible() bool { return a != nil && !a.Deleting && !a.Suspended }

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
