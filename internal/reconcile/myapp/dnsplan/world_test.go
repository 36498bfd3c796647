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
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// The tests of this package range over raw worlds: a DNS service holding
// records under owners written as strings, MyApps as the cache and the API
// server show them (their hosts, policies, suspends, deletions and
// statuses), what this MyApp's status, Ingress and memory say, and the
// faults of its reads. A plan is run the way the myapp package runs it:
// the test answers each Need from the world, as the shell reads it, and
// plans again. Nothing the plan decides (who gives first, who receives,
// who is an earlier self) is given to it: the properties state what must
// hold of the world afterwards.

const (
	wantedIP = "192.0.2.10"
	staleIP  = "192.0.2.99"
)

// self is the MyApp whose passes the exhaustive tests plan.
var self = Self{Installation: "here", Namespace: "ns", Name: "web", UID: "uid-1"}

// Owners of every kind, as strings.
var (
	me               = self.Owner()
	meOrphaned       = self.Orphaned()
	meLegacy         = self.Legacy()[0]
	meLegacyOrphaned = self.Legacy()[1]
	foreign          = "external-dns/team"
	former           = OwnerOf("here", "ns", "web", "uid-0", false)
	formerOrphaned   = OwnerOf("here", "ns", "web", "uid-0", true)
	formerLegacyOrph = "myapp-operator-orphaned/ns/web/uid-0"
	legacyOther      = "myapp-operator/ns-q/other/uid-7"
	// otherInst is the same namespace, name and UID (the same GitOps app
	// in another cluster) under another owner ID.
	otherInst = OwnerOf("there", "ns", "web", "uid-1", false)
	// gone is a MyApp of this installation no cache shows.
	gone = OwnerOf("here", "ns-g", "gone", "uid-8", false)
)

// wapp is a MyApp of a world.
type wapp struct {
	key, uid, host            string
	orphan, suspended, delete bool
	// gone is set once it no longer exists.
	gone bool
	// held are the hosts its status shows, status.dns.name first, and
	// statusOwner the owner status.dns shows ("" for the one its policy
	// asks for).
	held        []string
	statusOwner string
	// takeoverDoneFor is the status.dns.takeoverDoneFor its status shows.
	takeoverDoneFor string
	// transfer is status.dnsTransfer: a transfer made in two batches it
	// started, nil for none.
	transfer *Transfer
	routed   []string
	memory   *Memory
	gifts    []Gift
}

func (a *wapp) self(id string) Self {
	ns, name := cut(a.key)
	return Self{Installation: id, Namespace: ns, Name: name, UID: a.uid}
}

func (a *wapp) owner(id string) string { return a.self(id).Want(a.orphan) }

// view is a as a plan sees another MyApp.
func (a *wapp) view() App {
	return App{Key: a.key, UID: a.uid, Host: a.host, Orphan: a.orphan, Suspended: a.suspended, Deleting: a.delete,
		Holds: slices.Clone(a.held)}
}

// readFault is what a read of one name answers instead of the truth.
type readFault uint8

const (
	faultNone readFault = iota
	// faultUnread: the read failed.
	faultUnread
	// faultStale: the read answers that the name holds no record (a read
	// soon after a write, the read-after-create-404 of docs/external-api.md).
	faultStale
	// faultRefused: the service refuses the name as invalid.
	faultRefused
)

// tworld is a world: the DNS service, the MyApps, and the faults of reads.
type tworld struct {
	id   string
	svc  service
	apps []*wapp
	// faults are the faults of the next reads, by name; listFails fails a
	// list of the owner's records.
	faults    map[string]readFault
	listFails bool
	// selfLive is what the API server says of the MyApp planned.
	selfLive bool
	now      time.Time
}

// service is a model of the DNS service: owner-checked like the real one.
type service map[string]Record

var errConflict = errors.New("conflict")

// unmanaged is the owner the service shows for a name with an address and
// no owner (dns.UnmanagedOwner): a transfer's first batch on a provider
// that makes it in two sets it (sequence.batches).
const unmanaged = "(unmanaged)"

func (s service) apply(c Call) error {
	cur, ok := s[c.Name]
	switch c.Op {
	case OpUpsert:
		if ok && cur.Owner != c.Record.Owner {
			return errConflict
		}
		s[c.Name] = c.Record
	case OpTransfer:
		if !ok {
			return fmt.Errorf("not found")
		}
		if cur.Owner == c.To {
			return nil
		}
		if cur.Unowned {
			// A transfer cut between its two batches: only a Transfer
			// takes the name, and finishes it (the webhook client's).
			cur.Owner, cur.Unowned = c.To, false
			s[c.Name] = cur
			return nil
		}
		if cur.Owner != c.From {
			return errConflict
		}
		cur.Owner, cur.Unowned = c.To, c.To == unmanaged
		s[c.Name] = cur
	case OpDelete:
		if !ok {
			return nil
		}
		if cur.Owner != c.Owner {
			return errConflict
		}
		delete(s, c.Name)
	}
	return nil
}

// ownerOf is the live MyApp of the world whose identity owner is, or nil.
func (w *tworld) ownerOf(owner string) *wapp {
	for _, a := range w.apps {
		if !a.gone && (a.self(w.id).Owns(owner)) {
			return a
		}
	}
	return nil
}

// byKey is the MyApp of the world with key, as the cache shows it.
func (w *tworld) byKey(key string) *wapp {
	for _, a := range w.apps {
		if !a.gone && a.key == key {
			return a
		}
	}
	return nil
}

// observe is what a pass of a knows before it reads: its spec, status,
// Ingress and memory.
func (w *tworld) observe(a *wapp) Observation {
	ns, name := cut(a.key)
	o := Observation{
		Now: w.now, Self: Self{Installation: w.id, Namespace: ns, Name: name, UID: a.uid}, Host: a.host,
		Generation: 2, ResourceVersion: "7", Orphan: a.orphan, Deleting: a.delete, DeletingSince: w.now,
		Default: Target{Type: "A", Value: wantedIP}, TTL: 300, Routed: slices.Clone(a.routed),
		Memory: a.memory, Gifts: slices.Clone(a.gifts), Asked: AskRequested, Transfer: a.transfer,
	}
	if len(a.held) > 0 {
		owner := a.statusOwner
		if owner == "" {
			owner = a.owner(w.id)
		}
		o.Status.Record = &appsv1alpha1.DNSRecordStatus{Name: a.held[0], Type: "A", Value: wantedIP,
			Owner: owner, Previous: slices.Clone(a.held[1:]), TakeoverDoneFor: a.takeoverDoneFor}
	}
	return o
}

// answer fills o with what need asks, read from the world as the myapp
// package reads it; false when a live pass's read failed, which ends it.
func (w *tworld) answer(o *Observation, need Need) bool {
	o.Answered |= need
	switch need {
	case NeedLost:
		w.answerLost(o)
	case NeedRecords:
		return w.answerRecords(o)
	case NeedLiveSelf:
		o.SelfLive = w.selfLive
	case NeedWanters:
		w.answerWanters(o)
	case NeedChain:
		w.answerChain(o)
	}
	return true
}

func (w *tworld) answerLost(o *Observation) {
	if w.listFails {
		o.LostFailed = true
		return
	}
	for _, name := range sortedNames(w.svc) {
		if r := w.svc[name]; o.Self.Owns(r.Owner) && !slices.Contains(o.Names(), name) {
			o.Lost = append(o.Lost, r)
		}
	}
}

func (w *tworld) answerRecords(o *Observation) bool {
	o.Records, o.Refused, o.Unread = map[string]Record{}, map[string]bool{}, map[string]bool{}
	for _, name := range o.Names() {
		switch w.faults[name] {
		case faultUnread:
			o.Unread[name] = true
		case faultRefused:
			o.Refused[name] = true
		case faultStale:
			o.Records[name] = Record{}
		default:
			o.Records[name] = w.svc[name]
		}
		if !o.Deleting && (o.Unread[name] || o.Refused[name]) {
			return false
		}
	}
	return true
}

func (w *tworld) answerWanters(o *Observation) {
	o.Wanters, o.Givers = map[string][]App{}, map[string]App{}
	for _, h := range o.GivableHosts() {
		for _, b := range w.apps {
			if !b.gone && b.uid != o.Self.UID && b.host == h {
				o.Wanters[h] = append(o.Wanters[h], b.view())
			}
		}
	}
	for _, g := range o.Gifts {
		if b := w.byKey(g.Giver); b != nil {
			o.Givers[g.Giver] = b.view()
		}
	}
}

func (w *tworld) answerChain(o *Observation) {
	l := Link{Host: o.Host, Owner: o.Records[o.Host].Owner}
	if n := len(o.Chain); n > 0 {
		l.Host = o.Chain[n-1].App.Host
		l.Owner = w.svc[l.Host].Owner
	}
	if ref, ok := ParseOwner(l.Owner); ok {
		if b := w.byKey(ref.Key()); b != nil {
			v := b.view()
			l.App = &v
		}
	}
	o.Chain = append(o.Chain, l)
}

// errFailed is a pass whose read failed.
var errFailed = errors.New("a read failed")

// plan runs the plan of a's pass against the world: it answers each Need
// and plans again, as the myapp package's loop does.
func (w *tworld) plan(o Observation) (Observation, Plan, error) {
	for range 4 + MaxChain {
		p := Make(o)
		if p.Need == NeedNothing {
			return o, p, nil
		}
		if err := checkNeed(o, p.Need); err != nil {
			return o, p, err
		}
		if !w.answer(&o, p.Need) {
			return o, p, errFailed
		}
	}
	return o, Plan{}, proptest.Broke("a pass's loop of needs ends", "no plan within %d rounds", 4+MaxChain)
}

// checkNeed states what a plan may ask to read, so reads stay as cheap as
// the schedule promises: a need is asked once; the live read of this MyApp
// only when spec.host's record names an earlier MyApp of its namespace and
// name; the chain of holders only in a conflict, and past its first link
// only while a host this MyApp holds is wanted; a list of its records only
// when the status does not show spec.host held.
func checkNeed(o Observation, need Need) error {
	if o.Answered&need != 0 && need != NeedChain {
		return proptest.Broke("a need is asked once", "need %d asked twice", need)
	}
	rec := o.Records[o.Host]
	ref, parsed := ParseOwner(rec.Owner)
	switch need {
	case NeedLiveSelf:
		if !parsed || ref.Namespace != "ns" || ref.Name != "web" || ref.UID == o.Self.UID {
			return proptest.Broke("this MyApp is read live only when spec.host's record names an earlier MyApp of its name",
				"spec.host held by %q", rec.Owner)
		}
	case NeedChain:
		if rec.Name == "" || o.Self.Owns(rec.Owner) {
			return proptest.Broke("the chain of holders is followed only in a conflict", "spec.host held by %q", rec.Owner)
		}
		if len(o.Chain) > 0 && !anyWanted(o) {
			return proptest.Broke("the chain is followed past its first link only while a host this MyApp holds is wanted", "")
		}
	case NeedLost:
		if st := o.Status.Record; st != nil && st.Name == o.Host {
			return proptest.Broke("its records are listed only when the status does not show spec.host held", "")
		}
	}
	return nil
}

// anyWanted is the test's own reading of whether a MyApp able to receive
// it wants a host this MyApp holds besides spec.host.
func anyWanted(o Observation) bool {
	for h, apps := range o.Wanters {
		for _, a := range apps {
			if r := o.Records[h]; r.Name != "" && o.Self.Owns(r.Owner) && !a.Suspended && !a.Deleting && a.Host == h {
				return true
			}
		}
	}
	return false
}

func sortedNames(s service) []string {
	names := slices.Collect(maps.Keys(s))
	sort.Strings(names)
	return names
}

// applyPlan makes p's calls in the world's service: a call that races a
// record its read did not see ends a live pass (the next one observes it);
// a deletion's call marked SkipOnRace is skipped. It returns the error that
// ended the pass, if any.
func (w *tworld) applyPlan(p Plan) error {
	for _, c := range p.Calls {
		if err := w.svc.apply(c); err != nil {
			if c.SkipOnRace {
				continue
			}
			return err
		}
	}
	return nil
}

// convergeAfterLostAnswer runs the world as it was before p (before, a)
// where p's calls up to i applied and the answer of call i was lost: the
// pass records what HeldAfter says, with the outcome unknown, and drops its
// memory; the routes stay; then spec.host becomes host (the same, or a
// host the status showed held: a move undone). The MyApp must then
// converge, and its status must know every record those calls left it
// holding.
func convergeAfterLostAnswer(w *tworld, before service, a wapp, o Observation, p Plan, i int, host string) error {
	w.svc, w.apps[0] = maps.Clone(before), &a
	for _, c := range p.Calls[:i+1] {
		if err := w.svc.apply(c); err != nil && !c.SkipOnRace {
			return nil // it raced: the service answered, nothing was lost
		}
	}
	holds, previous := p.HeldAfter(o, i, true)
	a.held = nil
	if holds != "" {
		a.held = append(a.held, holds)
	}
	a.held, a.memory, a.host = append(a.held, previous...), nil, host
	next := w.observe(&a)
	next.Adopt, next.ReplaceLeaks = o.Adopt, o.ReplaceLeaks
	if err := converge(w, &a, next, 6); err != nil {
		return err
	}
	// The status the pass at the fixpoint writes.
	_, last, err := w.plan(w.observe(&a))
	if err != nil {
		return err
	}
	held := append([]string{last.Outcome.Holds}, last.Outcome.Previous...)
	for _, c := range p.Calls[:i+1] {
		if a.self(w.id).Owns(w.svc[c.Name].Owner) && !slices.Contains(held, c.Name) {
			return proptest.Broke("no record is held unknown to its status", "holds %s, unknown to its status %v", c.Name, held)
		}
	}
	return nil
}
