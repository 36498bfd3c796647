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
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// ownerPrefix starts every owner identity this operator writes while its
// MyApps live (dnsplan.OwnerPrefix): the prefix the sweep and the drift pass
// list.
const ownerPrefix = dnsplan.OwnerPrefix

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

// selfOf is app as the owner of records in installation id. Its identities
// follow from its parts (dnsplan.Self): myapp-operator/<id>/<ns>/<name>/<uid>
// while it lives, the same under myapp-operator-orphaned/ for records it
// leaves on purpose. The owner ID tells the records of two clusters sharing
// the service apart, so neither sweeps, replaces or adopts the other's. It
// ends in the UID, so a MyApp deleted and created again under the same name
// is a different owner, and the old one's cleanup can never remove the new
// one's record. Namespace and name are there for people reading it.
func selfOf(id string, app *appsv1alpha1.MyApp) dnsplan.Self {
	return dnsplan.Self{Installation: id, Namespace: app.Namespace, Name: app.Name, UID: string(app.UID)}
}

// wantedOwner is the owner app's records carry: under deletionPolicy Orphan
// they are written already marked orphaned, so the intent outlives any
// failure during the deletion and the orphan sweep never takes them.
func wantedOwner(id string, app *appsv1alpha1.MyApp) string {
	return selfOf(id, app).Want(app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan)
}

// installationPrefix is the owner prefix of every record installation id
// writes while its MyApps live: the prefix its sweep lists.
func installationPrefix(id string) string { return ownerPrefix + id + "/" }

// recordOwnerRef is what an owner identity this operator wrote says, as the
// sweep and the drift pass read it: the installation's owner ID ("" for an
// owner written before owner IDs), the MyApp's namespace, name and UID, and
// whether the record was orphaned on purpose.
type recordOwnerRef struct {
	installation string
	key          types.NamespacedName
	uid          types.UID
	orphaned     bool
}

// parseRecordOwner reads an owner identity of either family, with or
// without the owner ID (dnsplan.ParseOwner, the one parser). Anything else
// is not this operator's.
func parseRecordOwner(owner string) (recordOwnerRef, bool) {
	ref, ok := dnsplan.ParseOwner(owner)
	if !ok {
		return recordOwnerRef{}, false
	}
	return recordOwnerRef{installation: ref.Installation, key: types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name},
		uid: types.UID(ref.UID), orphaned: ref.Orphaned}, true
}

// wantsAdoption reports whether app asks to adopt the record of an earlier
// MyApp of its name.
func wantsAdoption(app *appsv1alpha1.MyApp) bool {
	return app.Annotations[appsv1alpha1.AdoptDNSRecordAnnotation] == "true"
}
