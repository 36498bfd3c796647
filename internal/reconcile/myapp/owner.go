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
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// ownerPrefix starts every owner identity this operator writes.
const ownerPrefix = "myapp-operator/"

// recordOwner is the owner identity of a MyApp's records in the DNS service.
// It ends in the UID, so a MyApp deleted and created again under the same
// name is a different owner, and the old one's cleanup can never remove the
// new one's record. Namespace and name are there for people reading it.
func recordOwner(app *appsv1alpha1.MyApp) string {
	return ownerPrefix + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// describeOwner turns an owner identity into words for a condition message.
func describeOwner(owner string) string {
	ref, ok := parseRecordOwner(owner)
	switch {
	case ok && ref.orphaned:
		return fmt.Sprintf("MyApp %s (uid %s), deleted with deletionPolicy Orphan", ref.key, ref.uid)
	case ok:
		return fmt.Sprintf("MyApp %s (uid %s)", ref.key, ref.uid)
	}
	return fmt.Sprintf("owner %q", owner)
}

// orphanedOwnerPrefix starts the owner a record is handed to when its MyApp
// is deleted with deletionPolicy Orphan. It is not under ownerPrefix, so the
// sweep, which lists ownerPrefix, never sees such a record; it keeps the
// namespace, name and UID, so people can tell where it came from and a MyApp
// of the same name can adopt it.
const orphanedOwnerPrefix = "myapp-operator-orphaned/"

// orphanedRecordOwner is the owner of app's records once it was deleted with
// deletionPolicy Orphan.
func orphanedRecordOwner(app *appsv1alpha1.MyApp) string {
	return orphanedOwnerPrefix + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// recordOwnerRef is what an owner identity this operator wrote says: the
// MyApp's namespace, name and UID, and whether the record was orphaned on
// purpose.
type recordOwnerRef struct {
	key      types.NamespacedName
	uid      types.UID
	orphaned bool
}

// parseRecordOwner reads an owner identity of either form,
// myapp-operator/<ns>/<name>/<uid> or myapp-operator-orphaned/<ns>/<name>/<uid>.
// Anything else is not this operator's.
func parseRecordOwner(owner string) (recordOwnerRef, bool) {
	rest, orphaned := strings.CutPrefix(owner, orphanedOwnerPrefix)
	if !orphaned {
		var ok bool
		if rest, ok = strings.CutPrefix(owner, ownerPrefix); !ok {
			return recordOwnerRef{}, false
		}
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return recordOwnerRef{}, false
	}
	return recordOwnerRef{
		key:      types.NamespacedName{Namespace: parts[0], Name: parts[1]},
		uid:      types.UID(parts[2]),
		orphaned: orphaned,
	}, true
}

// wantsAdoption reports whether app asks to adopt the record of an earlier
// MyApp of its name.
func wantsAdoption(app *appsv1alpha1.MyApp) bool {
	return app.Annotations[appsv1alpha1.AdoptDNSRecordAnnotation] == "true"
}

// formerSelf reports whether holder names an earlier MyApp of app's
// namespace and name: the same namespace and name under another UID,
// orphaned on purpose or not. Only such a record may ever be adopted.
func formerSelf(app *appsv1alpha1.MyApp, holder string) (recordOwnerRef, bool) {
	ref, ok := parseRecordOwner(holder)
	if !ok || ref.key != client.ObjectKeyFromObject(app) || ref.uid == app.UID {
		return recordOwnerRef{}, false
	}
	return ref, true
}

// selfOf is app's owner identities, as the DNS planner compares them.
func selfOf(app *appsv1alpha1.MyApp) dnsplan.Self {
	return dnsplan.Self{Owner: recordOwner(app), Orphaned: orphanedRecordOwner(app)}
}

// ownedBy reports whether owner is one of app's identities: the one place
// (dnsplan.Self.Owns) that tells this MyApp's records from another owner's.
func ownedBy(app *appsv1alpha1.MyApp, owner string) bool {
	return selfOf(app).Owns(owner)
}

// wantedOwner is the owner app's records carry: under deletionPolicy Orphan
// they are written already marked orphaned, so the intent outlives any
// failure during the deletion and the orphan sweep never takes them.
func wantedOwner(app *appsv1alpha1.MyApp) string {
	if app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
		return orphanedRecordOwner(app)
	}
	return recordOwner(app)
}
