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
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// TestEveryOwnerIsClassifiedOnce classifies every owner an installation may
// meet, built from its parts (either family, with or without an owner ID,
// of this installation or another, of this namespace and name or another,
// of this UID or another), against a cache that shows the named MyApp or
// not, and checks the promises of each kind: only this MyApp's identities
// are its own; only an earlier MyApp of its name in this installation (or
// written before owner IDs and orphaned on purpose) may be taken over;
// another installation's record is never its own or an earlier self's,
// whatever MyApp it names; a live MyApp is named live.
func TestEveryOwnerIsClassifiedOnce(t *testing.T) {
	c := proptest.New(t, "owners")
	for _, prefix := range []string{OwnerPrefix, OrphanedOwnerPrefix, "external-dns/", ""} {
		for _, inst := range []string{"here", "there", ""} {
			for _, ns := range []string{"ns", "other"} {
				for _, uid := range []string{"uid-1", "uid-0"} {
					for _, cached := range []bool{false, true} {
						p := ownerParts{prefix, inst, ns, uid}
						c.ObserveErr(func() string { return fmt.Sprintf("%q with cache %t", p.String(), cached) }, checkClassified(p, cached))
					}
				}
			}
		}
	}
	for _, bad := range []string{"", "myapp-operator/", "myapp-operator/a/b", "myapp-operator/a//c/d", "myapp-operator/a/b/c/d/e"} {
		if _, ok := ParseOwner(bad); ok {
			t.Errorf("%q parsed as an owner", bad)
		}
	}
	c.Report()
}

// ownerParts are the parts an owner is built from.
type ownerParts struct{ prefix, inst, ns, uid string }

func (p ownerParts) String() string {
	parts := []string{p.ns, "web", p.uid}
	if p.inst != "" {
		parts = append([]string{p.inst}, parts...)
	}
	return p.prefix + strings.Join(parts, "/")
}

// ours reports whether the owner is of a family this operator writes.
func (p ownerParts) ours() bool { return p.prefix == OwnerPrefix || p.prefix == OrphanedOwnerPrefix }

// checkClassified checks the classification of the owner built from p,
// with the cache showing the MyApp it names or not, against the promises
// of each kind, then checks that an owner of this operator's families
// parses back to its parts.
func checkClassified(p ownerParts, cached bool) error {
	owner := p.String()
	var app *App
	if cached {
		app = &App{Key: p.ns + "/web", UID: p.uid}
	}
	kind := self.Classify(owner, app).Kind
	if promise := p.misclassified(kind, cached); promise != "" {
		return proptest.Broke(promise, "classified %s", kind)
	}
	if ref, ok := ParseOwner(owner); p.ours() && (!ok || ref.Installation != p.inst || ref.UID != p.uid ||
		ref.Orphaned != (p.prefix == OrphanedOwnerPrefix)) {
		return proptest.Broke("an owner of this operator's families parses back to its parts", "parsed as %+v, %t", ref, ok)
	}
	return nil
}

// mine reports whether the owner is this MyApp's (namespace ns, UID
// uid-1) in this installation, or written before owner IDs.
func (p ownerParts) mine() bool {
	return p.ours() && p.ns == "ns" && p.uid == "uid-1" && (p.inst == "here" || p.inst == "")
}

// former reports whether the owner may be an earlier MyApp of this one's
// name: of this installation, or written before owner IDs and orphaned on
// purpose.
func (p ownerParts) former() bool {
	return p.ns == "ns" && p.uid != "uid-1" && p.inst != "there" && (p.inst != "" || p.prefix == OrphanedOwnerPrefix)
}

// misclassified names the promise the owner built from p, classified
// kind, breaks, or "" when it breaks none.
func (p ownerParts) misclassified(kind HolderKind, cached bool) string {
	another := kind == HolderSelf || kind == HolderFormer || kind == HolderMyApp
	switch {
	case (kind == HolderSelf) != p.mine():
		return "only this MyApp's identities are its own"
	case !p.ours() && kind != HolderForeign:
		return "an owner this operator does not write is foreign"
	case kind == HolderFormer && !p.former():
		return "only an earlier MyApp of its name in this installation, or orphaned before owner IDs, is an earlier self"
	case p.inst == "there" && another:
		return "another installation's record is never its own, an earlier self's or a live MyApp's"
	case kind == HolderMyApp && (!cached || p.inst != "here"):
		return "a MyApp is named live only when the cache shows it"
	case p.ours() && p.inst == "here" && p.ns == "other" && (kind == HolderMyApp) != cached:
		return "a MyApp of this installation the cache shows is named live"
	}
	return ""
}
