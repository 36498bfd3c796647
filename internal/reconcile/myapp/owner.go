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
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// ownerPrefix starts every owner identity this operator writes.
const ownerPrefix = "myapp-operator/"

// MaxOwnerIDLength bounds an owner ID, so the longest owner identity,
// myapp-operator-orphaned/<id>/<ns>/<name>/<uid> with a 63-character
// namespace and name (both DNS labels) and a 36-character UID, is
// 24+63+1+63+1+63+1+36 = 252 characters: within the HTTP API's owner
// (contract.MaxOwnerLength, 253) and one 255-byte TXT string of RFC 2136.
const MaxOwnerIDLength = 63

// ValidateOwnerID checks an installation's owner ID: a DNS label (lower-case
// letters, digits and '-', starting and ending with a letter or digit) of at
// most MaxOwnerIDLength characters. It can hold no '/', which separates the
// parts of an owner identity.
func ValidateOwnerID(id string) error {
	if id == "" {
		return errors.New("the owner ID is empty")
	}
	if errs := validation.IsDNS1123Label(id); len(errs) > 0 {
		return fmt.Errorf("owner ID %q is not valid: %s", id, strings.Join(errs, "; "))
	}
	return nil
}

// recordOwnerOf is the owner identity of a MyApp's records in the DNS
// service, for the installation id: myapp-operator/<id>/<ns>/<name>/<uid>.
// The owner ID tells the records of two clusters sharing the service apart,
// so neither sweeps, replaces or adopts the other's. It ends in the UID, so a
// MyApp deleted and created again under the same name is a different owner,
// and the old one's cleanup can never remove the new one's record.
// Namespace and name are there for people reading it.
func recordOwnerOf(id string, app *appsv1alpha1.MyApp) string {
	return ownerPrefix + id + "/" + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// installationPrefix is the owner prefix of every record installation id
// writes while its MyApps live: the prefix its sweep lists.
func installationPrefix(id string) string { return ownerPrefix + id + "/" }

// describeOwner turns an owner identity into words for a condition message;
// a record of another installation (id is this one's) names it.
func describeOwner(id, owner string) string {
	ref, ok := parseRecordOwner(owner)
	if !ok {
		return fmt.Sprintf("owner %q", owner)
	}
	what := fmt.Sprintf("MyApp %s (uid %s)", ref.key, ref.uid)
	if !ref.legacy() && ref.installation != id {
		what += fmt.Sprintf(" of another installation (owner ID %s)", ref.installation)
	}
	if ref.orphaned {
		what += ", deleted with deletionPolicy Orphan"
	}
	if ref.legacy() {
		what += ", written before owner IDs (installation unknown)"
	}
	return what
}

// orphanedOwnerPrefix starts the owner a record is handed to when its MyApp
// is deleted with deletionPolicy Orphan. It is not under ownerPrefix, so the
// sweep, which lists ownerPrefix, never sees such a record; it keeps the
// owner ID, namespace, name and UID, so people can tell where it came from
// and a MyApp of the same name in the same installation can adopt it.
const orphanedOwnerPrefix = "myapp-operator-orphaned/"

// orphanedRecordOwnerOf is the owner of app's records once it was deleted
// with deletionPolicy Orphan.
func orphanedRecordOwnerOf(id string, app *appsv1alpha1.MyApp) string {
	return orphanedOwnerPrefix + id + "/" + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// legacyOwners are app's owner identities as written before owner IDs
// existed (myapp-operator/<ns>/<name>/<uid> and its orphaned form). Only the
// MyApp of that namespace, name and UID takes such a record over, once.
func legacyOwners(app *appsv1alpha1.MyApp) []string {
	rest := app.Namespace + "/" + app.Name + "/" + string(app.UID)
	return []string{ownerPrefix + rest, orphanedOwnerPrefix + rest}
}

// recordOwnerRef is what an owner identity this operator wrote says: the
// installation's owner ID ("" for an owner written before owner IDs), the
// MyApp's namespace, name and UID, and whether the record was orphaned on
// purpose.
type recordOwnerRef struct {
	installation string
	key          types.NamespacedName
	uid          types.UID
	orphaned     bool
}

// legacy reports whether the owner was written before owner IDs existed.
func (r recordOwnerRef) legacy() bool { return r.installation == "" }

// parseRecordOwner reads an owner identity of either form,
// myapp-operator/<id>/<ns>/<name>/<uid> or
// myapp-operator-orphaned/<id>/<ns>/<name>/<uid>, and the forms written
// before owner IDs, without <id>/. Anything else is not this operator's.
func parseRecordOwner(owner string) (recordOwnerRef, bool) {
	rest, orphaned := strings.CutPrefix(owner, orphanedOwnerPrefix)
	if !orphaned {
		var ok bool
		if rest, ok = strings.CutPrefix(owner, ownerPrefix); !ok {
			return recordOwnerRef{}, false
		}
	}
	parts := strings.Split(rest, "/")
	if slices.Contains(parts, "") {
		return recordOwnerRef{}, false
	}
	var ref recordOwnerRef
	switch len(parts) {
	case 3:
	case 4:
		ref.installation, parts = parts[0], parts[1:]
	default:
		return recordOwnerRef{}, false
	}
	ref.key = types.NamespacedName{Namespace: parts[0], Name: parts[1]}
	ref.uid, ref.orphaned = types.UID(parts[2]), orphaned
	return ref, true
}

// wantsAdoption reports whether app asks to adopt the record of an earlier
// MyApp of its name.
func wantsAdoption(app *appsv1alpha1.MyApp) bool {
	return app.Annotations[appsv1alpha1.AdoptDNSRecordAnnotation] == "true"
}

// formerSelf reports whether holder names an earlier MyApp of app's
// namespace and name in this installation (id): the same namespace and name
// under another UID, orphaned on purpose or not. Only such a record may ever
// be adopted, or replaced as a leak. A record written before owner IDs may
// come from any cluster sharing the service: it counts only when orphaned on
// purpose, and then only an adoption the user asks for takes it.
func formerSelf(id string, app *appsv1alpha1.MyApp, holder string) (recordOwnerRef, bool) {
	ref, ok := parseRecordOwner(holder)
	if !ok || ref.key != client.ObjectKeyFromObject(app) || ref.uid == app.UID {
		return recordOwnerRef{}, false
	}
	if ref.installation != id && (!ref.legacy() || !ref.orphaned) {
		return recordOwnerRef{}, false
	}
	return ref, true
}

// selfOf is app's owner identities in installation id, as the DNS planner
// compares them.
func selfOf(id string, app *appsv1alpha1.MyApp) dnsplan.Self {
	return dnsplan.Self{Owner: recordOwnerOf(id, app), Orphaned: orphanedRecordOwnerOf(id, app), Legacy: legacyOwners(app)}
}

// ownedBy reports whether owner is one of app's identities: the one place
// (dnsplan.Self.Owns) that tells this MyApp's records from another owner's.
func ownedBy(id string, app *appsv1alpha1.MyApp, owner string) bool {
	return selfOf(id, app).Owns(owner)
}

// wantedOwner is the owner app's records carry: under deletionPolicy Orphan
// they are written already marked orphaned, so the intent outlives any
// failure during the deletion and the orphan sweep never takes them.
func wantedOwner(id string, app *appsv1alpha1.MyApp) string {
	if app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
		return orphanedRecordOwnerOf(id, app)
	}
	return recordOwnerOf(id, app)
}

// namesApp reports whether owner is an identity this operator writes for
// app, of any installation or none: what app's own status may show, since
// only this cluster's operator writes it. Decisions about records in the
// DNS service compare whole identities instead (ownedBy).
func namesApp(owner string, app *appsv1alpha1.MyApp) bool {
	ref, ok := parseRecordOwner(owner)
	return ok && ref.key == client.ObjectKeyFromObject(app) && ref.uid == app.UID
}
