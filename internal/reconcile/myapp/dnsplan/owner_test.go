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
	"strings"
	"testing"
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
	n := 0
	for _, prefix := range []string{OwnerPrefix, OrphanedOwnerPrefix, "external-dns/", ""} {
		for _, inst := range []string{"here", "there", ""} {
			for _, ns := range []string{"ns", "other"} {
				for _, uid := range []string{"uid-1", "uid-0"} {
					for _, cached := range []bool{false, true} {
						parts := []string{ns, "web", uid}
						if inst != "" {
							parts = append([]string{inst}, parts...)
						}
						owner := prefix + strings.Join(parts, "/")
						var app *App
						if cached {
							app = &App{Key: ns + "/web", UID: uid}
						}
						h := self.Classify(owner, app)
						n++
						mine := (prefix == OwnerPrefix || prefix == OrphanedOwnerPrefix) && ns == "ns" && uid == "uid-1" &&
							(inst == "here" || inst == "")
						ours := prefix == OwnerPrefix || prefix == OrphanedOwnerPrefix
						switch {
						case (h.Kind == HolderSelf) != mine:
							t.Errorf("%q with cache %t: %s", owner, cached, h.Kind)
						case !ours && h.Kind != HolderForeign:
							t.Errorf("%q is not this operator's, classified %s", owner, h.Kind)
						case h.Kind == HolderFormer && (ns != "ns" || uid == "uid-1" || inst == "there" ||
							inst == "" && prefix != OrphanedOwnerPrefix):
							t.Errorf("%q is taken for an earlier self", owner)
						case inst == "there" && (h.Kind == HolderSelf || h.Kind == HolderFormer || h.Kind == HolderMyApp):
							t.Errorf("%q of another installation classified %s", owner, h.Kind)
						case h.Kind == HolderMyApp && (!cached || inst != "here"):
							t.Errorf("%q named live without a MyApp in the cache", owner)
						case ours && inst == "here" && ns == "other" && (h.Kind == HolderMyApp) != cached:
							t.Errorf("%q with cache %t: %s", owner, cached, h.Kind)
						}
						if ref, ok := ParseOwner(owner); ours && (!ok || ref.Installation != inst || ref.UID != uid ||
							ref.Orphaned != (prefix == OrphanedOwnerPrefix)) {
							t.Errorf("%q parsed as %+v, %t", owner, ref, ok)
						}
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
	t.Logf("classified %d owners", n)
}
