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

// moves is what becomes of the hosts held other than spec.host.
type moves struct {
	calls        []Call
	routes, kept []string
	// busy is set while a step of a move is under way.
	busy bool
}

// planOthers decides each host held other than spec.host, given whether
// spec.host is held once the calls succeeded and who receives each
// (passes, index for index with v.others, or nil for nobody).
func planOthers(v *view, holds bool, ps []pass) moves {
	routed := setOf(v.Routed)
	specRouted := holds && routed[v.Host]
	var m moves
	if holds {
		m.routes = append(m.routes, v.Host)
	}
	for i, h := range v.others {
		var p pass
		if ps != nil {
			p = ps[i]
		}
		r, read := v.Records[h]
		known := slices.Contains(v.known, h)
		switch {
		case read && r.Name == "" && known:
			m.heldReadAbsent(v, h, p, routed[h], holds, specRouted)
		case !read && known:
			m.keep(h, routed[h]) // not read: kept as it is
		case !slices.Contains(v.ownOthers, h):
			// Not ours: nothing to keep, route or release.
		case holds:
			m.release(v, h, r, p, routed[h], specRouted)
		default:
			m.conflicted(v, h, r, p, routed[h])
		}
	}
	if !holds {
		slices.Sort(m.kept)
	}
	return m
}

// heldReadAbsent decides a host this MyApp holds that read as absent: the
// read may be stale (a record created moments ago answers 404 for a
// while), so the host is not forgotten on this answer. It is not routed
// (it may be gone, and another MyApp may take it). A host another MyApp
// wants (or is owed) stays held until a read shows the record, to be
// handed over then; if it is truly gone, the MyApp that wants it takes it
// as a free host. One nobody wants leaves the status only through an
// owner-checked Delete: a Delete of what is gone succeeds, and one of a
// record another owner holds is a conflict, observed again.
func (m *moves) heldReadAbsent(v *view, h string, p pass, routed, holds, specRouted bool) {
	if routed || !holds || !specRouted {
		m.kept = append(m.kept, h)
		m.busy = m.busy || holds
		return
	}
	if p.peer != nil || p.wait {
		m.kept = append(m.kept, h)
		m.busy = true
		return
	}
	m.calls = append(m.calls, Call{Op: OpDelete, Name: h, Owner: v.want, Why: WhyRelease})
}

// release decides a host held besides spec.host while spec.host is held:
// it stays held and routed until spec.host is routed, then is unrouted,
// then handed to the MyApp that wants it, or deleted.
func (m *moves) release(v *view, h string, r Record, p pass, routed, specRouted bool) {
	switch {
	case !specRouted:
		m.keep(h, true)
		m.busy = true
	case p.back != nil:
		// This MyApp keeps the host the giver gave h for (its spec.host
		// changed back to it), and the giver holds nothing: it gets its
		// own host back.
		m.handOver(v, h, r, p.back, routed, nil)
		if n := len(m.calls); n > 0 && m.calls[n-1].Name == h {
			m.calls[n-1].Return = true
		}
	case p.wait:
		// Owed to a suspended giver: kept, unrouted, until it resumes.
		m.keep(h, false)
	case p.peer != nil:
		m.handOver(v, h, r, p.peer, routed, nil)
	case routed:
		m.keep(h, false)
		m.busy = true
	default:
		m.calls = append(m.calls, Call{Op: OpDelete, Name: h, Owner: r.Owner, Why: WhyRelease})
	}
}

// conflicted decides a host this MyApp holds besides spec.host while
// another owner holds spec.host: handed over when passes says so, kept and
// routed otherwise, so the MyApp keeps a working name.
func (m *moves) conflicted(v *view, h string, r Record, p pass, routed bool) {
	if p.peer != nil {
		m.handOver(v, h, r, p.peer, routed, p.debtor)
		return
	}
	m.keep(h, true)
	m.busy = m.busy || p.wanted
}

// handOver gives h to peer: first unrouted, then, once the Ingress no
// longer routes it, transferred with one owner-checked call. debtor, when
// this MyApp gives first in a cycle, owes it the host it gives h for.
func (m *moves) handOver(v *view, h string, r Record, peer *App, routed bool, debtor *App) {
	m.busy = true
	if routed {
		m.keep(h, false)
		return
	}
	c := Call{Op: OpTransfer, Name: h, From: r.Owner, To: peer.owner(v.Self.Installation), Why: WhyHandOver, Peer: peer}
	if debtor != nil {
		c.For, c.Debtor = v.Host, debtor
	}
	m.calls = append(m.calls, c)
}

func (m *moves) keep(h string, route bool) {
	m.kept = append(m.kept, h)
	if route {
		m.routes = append(m.routes, h)
	}
}

// unsettledGifts are the notes still open once the plan's calls succeeded:
// a host handed over not read yet, and a debt whose host this MyApp still
// holds besides spec.host. A debt whose host is spec.host ends: this MyApp
// took the host back for itself, and the giver now waits for it as any
// MyApp waits for a held host (a debt kept would pay it later, to a giver
// outside a cycle that host closed meanwhile).
func (m *moves) unsettledGifts(v *view) []Gift {
	var out []Gift
	for _, g := range v.Gifts {
		if slices.ContainsFunc(m.calls, func(c Call) bool { return c.Return && c.Peer.Key == g.Giver }) {
			continue // its own host went back to the giver
		}
		if r, read := v.Records[g.Host]; g.Host != "" && (!read || r.Unowned) {
			// Not read, or held by no owner: a hand-over cut between its
			// two batches, which its giver finishes toward this MyApp
			// (finish.go). Either way it is not settled yet.
			out = append(out, g)
			continue
		}
		if g.For != "" && slices.Contains(m.kept, g.For) {
			out = append(out, Gift{Giver: g.Giver, For: g.For})
		}
	}
	return out
}

func setOf(hosts []string) map[string]bool {
	m := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		m[h] = true
	}
	return m
}
