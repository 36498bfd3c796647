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
)

// The two families of owner identities this operator writes. A record of a
// live MyApp is owned by OwnerPrefix<owner-id>/<ns>/<name>/<uid>; one whose
// MyApp has deletionPolicy Orphan by the same under OrphanedOwnerPrefix,
// which the orphan sweep never lists. Records written before owner IDs
// existed lack the <owner-id>/ part.
const (
	OwnerPrefix         = "myapp-operator/"
	OrphanedOwnerPrefix = "myapp-operator-orphaned/"
)

// OwnerRef is what an owner identity this operator wrote says.
type OwnerRef struct {
	// Installation is the owner ID of the installation that wrote it; ""
	// for a record written before owner IDs (Legacy).
	Installation    string
	Namespace, Name string
	UID             string
	// Orphaned is set for the identity under OrphanedOwnerPrefix.
	Orphaned bool
}

// Legacy reports whether the owner was written before owner IDs existed.
func (r OwnerRef) Legacy() bool { return r.Installation == "" }

// Key is "<namespace>/<name>" of the MyApp the owner names.
func (r OwnerRef) Key() string { return r.Namespace + "/" + r.Name }

// ParseOwner reads an owner identity of either family, with or without the
// owner ID. Anything else (another tool's owner, a record without an owner)
// is not this operator's: ok is false. It is the one parser of owners.
func ParseOwner(owner string) (ref OwnerRef, ok bool) {
	rest, orphaned := strings.CutPrefix(owner, OrphanedOwnerPrefix)
	if !orphaned {
		if rest, ok = strings.CutPrefix(owner, OwnerPrefix); !ok {
			return OwnerRef{}, false
		}
	}
	// Split on '/' into at most four parts without allocating: owners are
	// parsed at every step of every plan.
	var parts [4]string
	n := 0
	for {
		part, after, more := strings.Cut(rest, "/")
		if part == "" || n == len(parts) {
			return OwnerRef{}, false
		}
		parts[n], n, rest = part, n+1, after
		if !more {
			break
		}
	}
	p := parts[:n]
	switch n {
	case 3:
	case 4:
		ref.Installation, p = p[0], p[1:]
	default:
		return OwnerRef{}, false
	}
	ref.Namespace, ref.Name, ref.UID, ref.Orphaned = p[0], p[1], p[2], orphaned
	return ref, true
}

// OwnerOf is the owner identity of the records of the MyApp namespace/name
// with uid in installation id: orphaned is the identity its records carry
// under deletionPolicy Orphan.
func OwnerOf(id, namespace, name, uid string, orphaned bool) string {
	prefix := OwnerPrefix
	if orphaned {
		prefix = OrphanedOwnerPrefix
	}
	return prefix + id + "/" + namespace + "/" + name + "/" + uid
}

// Self is a MyApp as the owner of records: its installation, namespace,
// name and UID. Every identity its records may carry follows from them.
type Self struct {
	Installation    string
	Namespace, Name string
	UID             string
}

// Key is "<namespace>/<name>".
func (s Self) Key() string { return s.Namespace + "/" + s.Name }

// Owner is the identity of its records while it lives under
// deletionPolicy Delete.
func (s Self) Owner() string { return OwnerOf(s.Installation, s.Namespace, s.Name, s.UID, false) }

// Orphaned is the identity marking its records orphaned on purpose.
func (s Self) Orphaned() string { return OwnerOf(s.Installation, s.Namespace, s.Name, s.UID, true) }

// Want is the identity its records carry under the policy: under
// deletionPolicy Orphan they are written already marked, so the intent
// outlives any failure during the deletion.
func (s Self) Want(orphan bool) string {
	if orphan {
		return s.Orphaned()
	}
	return s.Owner()
}

// identities are its identities a plan may use, and only those, since
// each is a new string: for a deletion (deleting) the ones under Delete
// (owner) and Orphan (orphaned); and the one its policy writes (want).
func (s Self) identities(deleting, orphan bool) (owner, orphaned, want string) {
	if !deleting {
		return "", "", s.Want(orphan)
	}
	owner, orphaned = s.Owner(), s.Orphaned()
	if orphan {
		return owner, orphaned, orphaned
	}
	return owner, orphaned, owner
}

// cycleMembers are, link by link, the MyApp each link of chain names when
// it may take part in a cycle: a MyApp of this installation, not this one,
// neither deleting nor suspended, whose record the link's owner is; nil for
// no chain.
func (s Self) cycleMembers(chain []Link) []*App {
	if len(chain) == 0 {
		return nil
	}
	members := make([]*App, len(chain))
	for i, l := range chain {
		if !l.App.eligible() {
			continue
		}
		if h := s.Classify(l.Owner, l.App); h.Kind == HolderMyApp && h.App.UID != s.UID {
			members[i] = l.App
		}
	}
	return members
}

// restoredFrom reports whether h is exactly the MyApp uid, an earlier MyApp
// of this namespace and name in this installation, as a Restore's mark
// names it. A record written before owner IDs may be another cluster's, so
// it never is.
func (s Self) restoredFrom(h Holder, uid string) bool {
	return uid != "" && h.Kind == HolderFormer && !h.Ref.Legacy() &&
		h.Ref.Installation == s.Installation && h.Ref.UID == uid
}

// Legacy are its identities written before owner IDs (the same namespace,
// name and UID, no installation part): its own records, to take over once.
func (s Self) Legacy() []string {
	rest := s.Namespace + "/" + s.Name + "/" + s.UID
	return []string{OwnerPrefix + rest, OrphanedOwnerPrefix + rest}
}

// Owns reports whether owner is one of its identities: the one place that
// tells this MyApp's records from another owner's. A record of another
// installation, even of a MyApp of the same namespace, name and UID (the
// same GitOps app in another cluster), is never this MyApp's.
func (s Self) Owns(owner string) bool {
	ref, ok := ParseOwner(owner)
	return ok && s.names(ref) && (ref.Legacy() || ref.Installation == s.Installation)
}

// IsLegacy reports whether owner is one of its identities written before
// owner IDs existed.
func (s Self) IsLegacy(owner string) bool {
	ref, ok := ParseOwner(owner)
	return ok && ref.Legacy() && s.names(ref)
}

// Names reports whether owner names this MyApp, in any installation or
// none: what its own status may show, since only this cluster's operator
// writes it. Decisions about records in the DNS service use Owns.
func (s Self) Names(owner string) bool {
	ref, ok := ParseOwner(owner)
	return ok && s.names(ref)
}

func (s Self) names(ref OwnerRef) bool {
	return ref.Namespace == s.Namespace && ref.Name == s.Name && ref.UID == s.UID
}

// HolderKind is who holds a record, as this MyApp sees it.
type HolderKind string

// The holders of a record.
const (
	// HolderNone: the name holds no record.
	HolderNone HolderKind = "None"
	// HolderSelf: one of this MyApp's identities.
	HolderSelf HolderKind = "Self"
	// HolderForeign: an owner this operator does not write (another tool,
	// or a record without an owner record).
	HolderForeign HolderKind = "Foreign"
	// HolderOtherInstallation: a MyApp of another installation sharing the
	// DNS service (another owner ID).
	HolderOtherInstallation HolderKind = "OtherInstallation"
	// HolderLegacy: a MyApp's record written before owner IDs, of an
	// installation nobody can tell.
	HolderLegacy HolderKind = "Legacy"
	// HolderFormer: an earlier MyApp of this namespace and name (another
	// UID) in this installation, or one written before owner IDs and
	// orphaned on purpose: the only records ever adopted or replaced.
	HolderFormer HolderKind = "Former"
	// HolderMyApp: a MyApp of this installation that the cache shows live.
	HolderMyApp HolderKind = "MyApp"
	// HolderGone: a MyApp of this installation the cache does not show:
	// deleted (on purpose with deletionPolicy Orphan when its identity is
	// orphaned, or its record leaked), or not yet in the cache.
	HolderGone HolderKind = "Gone"
)

// Holder is the holder of a record, classified once for the plan and for
// the words of a conflict.
type Holder struct {
	Kind  HolderKind
	Owner string
	// Ref is what Owner says, for an owner this operator writes.
	Ref OwnerRef
	// App is the MyApp Owner names, as the cache shows it; nil when none
	// does (or it has another UID).
	App *App
}

// Classify tells who holds a record owned by owner, given the MyApp the
// cache shows under the namespace and name the owner names (nil when none,
// or another UID).
func (s Self) Classify(owner string, app *App) Holder {
	h := Holder{Owner: owner}
	ref, ok := ParseOwner(owner)
	h.Ref = ref
	switch {
	case owner == "":
		h.Kind = HolderNone
	case !ok:
		h.Kind = HolderForeign
	case s.Owns(owner):
		h.Kind = HolderSelf
	case ref.Namespace == s.Namespace && ref.Name == s.Name &&
		(ref.Installation == s.Installation || ref.Legacy() && ref.Orphaned):
		// A record written before owner IDs may come from any cluster
		// sharing the service: it counts as an earlier self only when
		// orphaned on purpose, and then only an adoption takes it.
		h.Kind = HolderFormer
	case ref.Legacy():
		h.Kind = HolderLegacy
	case ref.Installation != s.Installation:
		h.Kind = HolderOtherInstallation
	case app != nil && app.UID == ref.UID && app.Key == ref.Key():
		h.Kind, h.App = HolderMyApp, app
	default:
		h.Kind = HolderGone
	}
	return h
}
