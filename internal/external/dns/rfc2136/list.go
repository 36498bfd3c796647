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

package rfc2136

import (
	"strings"

	"github.com/miekg/dns"

	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// ownedNames gathers, from the records of a zone transfer as they arrive,
// the names whose owner TXT an owner filter (keep) accepts, with their A or
// CNAME records and every owner TXT at them, and lets every other name go.
//
// A name's A or CNAME usually arrives before its owner TXT, so whether it
// is kept cannot be decided when it arrives. A server sends a zone in
// DNSSEC canonical order (RFC 4034 section 6.1; BIND and Knot do), where a
// name's subtree, its owner record "_myapp-owner.<name>" included, follows
// it without a break: once a name outside that subtree arrives, the name is
// decided. So only the names on the path to the last one are held open, and
// the memory a listing takes grows with the owned names, not with the zone
// (a corporate zone of a million records, mostly written by others, is
// listed every drift interval). The order is not required: a transfer seen
// out of order stops letting names go from there on, and if it let any go
// before, it asks to be read again whole (restart), keeping every name.
type ownedNames struct {
	keep func(owner string) bool
	// whole keeps every name until the end: the second reading of a zone
	// that arrived out of order.
	whole bool
	// owned are the names decided and kept.
	owned map[string]*state
	// open are the names not decided yet, outermost first: in canonical
	// order, the ancestors of the last name and that name.
	open []*state
	// last is the last name seen, for the order check.
	last string
	// unordered is set once a name arrives before the one before it.
	unordered bool
	// letGo is set once a name was decided against before the end.
	letGo bool
}

func newOwnedNames(keep func(owner string) bool, whole bool) *ownedNames {
	return &ownedNames{keep: keep, whole: whole, owned: map[string]*state{}}
}

// add takes one record of the transfer. Only A, CNAME and owner TXT records
// matter; the others are dropped as they arrive. It allocates nothing for a
// record it drops, so a listing's garbage, too, stays near what the
// transfer itself makes.
func (o *ownedNames) add(rr dns.RR) {
	// The record's own name, lower case and without the final dot, and the
	// name it is about: for an owner TXT, the name below the owner label.
	full := strings.TrimSuffix(strings.ToLower(rr.Header().Name), ".")
	name := full
	var owner string
	switch v := rr.(type) {
	case *dns.A, *dns.CNAME:
	case *dns.TXT:
		rest, ok := strings.CutPrefix(full, extdns.OwnerLabel+".")
		if !ok {
			return
		}
		name, owner = rest, strings.Join(v.Txt, "")
	default:
		return
	}
	if o.last != "" && compareNames(full, o.last) < 0 {
		o.unordered = true
	}
	o.last = full
	if !o.unordered && !o.whole {
		// Every open name whose subtree this one is outside is decided.
		for len(o.open) > 0 && !within(full, o.open[len(o.open)-1].name) {
			if !o.decide(o.open[len(o.open)-1]) {
				o.letGo = true
			}
			o.open = o.open[:len(o.open)-1]
		}
	}
	// A name kept already takes what comes for it later, out of order.
	st, kept := o.owned[name]
	if !kept {
		st = o.openState(name)
	}
	if owner != "" {
		st.owners = append(st.owners, owner)
	} else {
		st.rrs = append(st.rrs, rr)
	}
}

// openState is the open name called name, opened if it is not. In
// canonical order the search ends at once: the name is the last one opened
// or not open at all.
func (o *ownedNames) openState(name string) *state {
	for i := len(o.open) - 1; i >= 0; i-- {
		if o.open[i].name == name {
			return o.open[i]
		}
	}
	st := &state{name: name}
	o.open = append(o.open, st)
	return st
}

// decide keeps st when one of its owners is keep's, and reports whether it
// did.
func (o *ownedNames) decide(st *state) bool {
	for _, owner := range st.owners {
		if o.keep(owner) {
			o.owned[st.name] = st
			return true
		}
	}
	return false
}

// finish decides the names still open. restart is true when the transfer
// arrived out of order after a name was let go before the end, which then
// may have had its owner record later: the zone must be read again, whole.
func (o *ownedNames) finish() (owned map[string]*state, restart bool) {
	for _, st := range o.open {
		o.decide(st)
	}
	o.open = nil
	return o.owned, o.unordered && o.letGo && !o.whole
}

// compareNames orders two lower-case names without their final dot in
// DNSSEC canonical order: label by label from the right, each compared as
// a string of octets, an ancestor before its descendants. Names with
// escaped dots compare by their presentation form, which can only make a
// transfer look out of order: it is then read again whole, never wrongly.
func compareNames(a, b string) int {
	for {
		switch {
		case a == "" && b == "":
			return 0
		case a == "":
			return -1
		case b == "":
			return 1
		}
		la, restA := lastLabel(a)
		lb, restB := lastLabel(b)
		if c := strings.Compare(la, lb); c != 0 {
			return c
		}
		a, b = restA, restB
	}
}

// lastLabel splits name into its last label and the labels before it.
func lastLabel(name string) (label, rest string) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, ""
	}
	return name[i+1:], name[:i]
}

// within reports whether name is top or below it.
func within(name, top string) bool {
	if len(name) == len(top) {
		return name == top
	}
	return len(name) > len(top) && name[len(name)-len(top)-1] == '.' && name[len(name)-len(top):] == top
}
