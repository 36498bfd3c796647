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

package reliability

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// The oracle's part for Restores (docs/spec/restore.md): a MyApp deleted
// under deletionPolicy Orphan and restored from its backup comes back
// exactly once, marked by its Restore, and takes over the record the old
// one left in one owner-checked transfer, so the record the restored MyApp
// holds is the one the old MyApp registered, not one deleted and created
// again; a Restore ends Succeeded, and deleting it takes nothing it
// restored with it.

// handedOverRecord is the record a MyApp deleted under Orphan left for the
// MyApp restored from it.
type handedOverRecord struct {
	app       string // namespace/name of the deleted MyApp
	host      string
	oldOwner  string
	createdAt time.Time
}

// restoreOutcome is what a Restore reported when the scenario saw it
// succeed, which must still hold after it is deleted.
type restoreOutcome struct {
	restore    string // namespace/name
	restoreUID types.UID
	target     string
	appUID     types.UID
	backupID   string
	fromUID    types.UID
}

// handOver tells the oracle that app, Ready under deletionPolicy Orphan with
// its record registered, is about to be deleted and restored: its record,
// as it is now, must end up held by the MyApp restored from it.
func (o *oracle) handOver(t *testing.T, app *appsv1alpha1.MyApp) {
	t.Helper()
	owner := orphanedRecordOwner(app)
	for _, rec := range o.sim.Records() {
		if rec.Name == app.Spec.Host && rec.Owner == owner {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.handedOver[app.UID] = handedOverRecord{
				app: app.Namespace + "/" + app.Name, host: rec.Name, oldOwner: owner, createdAt: rec.CreatedAt,
			}
			return
		}
	}
	t.Errorf("MyApp %s/%s has no record %s under %s to hand over", app.Namespace, app.Name, app.Spec.Host, owner)
}

// restoredBy tells the oracle what rs, seen Succeeded, restored.
func (o *oracle) restoredBy(rs *backupv1alpha1.Restore) {
	out := outcomeOf(rs)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.restores[rs.UID] = out
}

// outcomeOf is what rs's status says it restored.
func outcomeOf(rs *backupv1alpha1.Restore) restoreOutcome {
	out := restoreOutcome{restore: rs.Namespace + "/" + rs.Name, restoreUID: rs.UID, target: rs.Status.TargetName,
		appUID: rs.Status.RestoredAppUID}
	if b := rs.Status.Backup; b != nil {
		out.backupID = b.ID
		if b.MyApp != nil {
			out.fromUID = b.MyApp.UID
		}
	}
	return out
}

// handedOverOwners are the owners of the records left for a restore.
func (o *oracle) handedOverOwners() map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	owners := map[string]bool{}
	for _, h := range o.handedOver {
		owners[h.oldOwner] = true
	}
	return owners
}

// checkRestores judges the MyApps restored from handed-over MyApps, the
// Restores the scenario saw succeed, and the Restores still there.
func (o *oracle) checkRestores(r *Report, apps []appsv1alpha1.MyApp, restores []backupv1alpha1.Restore,
	records []simulator.Record) {
	o.mu.Lock()
	handedOver := maps.Clone(o.handedOver)
	outcomes := maps.Clone(o.restores)
	o.mu.Unlock()
	live := map[string]*appsv1alpha1.MyApp{}
	for i := range apps {
		if apps[i].DeletionTimestamp.IsZero() {
			live[apps[i].Name] = &apps[i]
		}
	}
	recordOf := map[string]simulator.Record{}
	for _, rec := range records {
		recordOf[rec.Name] = rec
	}

	for oldUID, h := range handedOver {
		checkHandOver(r, oldUID, h, live, recordOf)
	}
	for _, out := range outcomes {
		checkRestored(r, live, out)
	}
	for i := range restores {
		rs := &restores[i]
		if rs.Status.Phase != backupv1alpha1.RestoreSucceeded {
			r.add(&r.RestoreMismatches, "Restore %s/%s is %q, not Succeeded", rs.Namespace, rs.Name, rs.Status.Phase)
			continue
		}
		if _, seen := outcomes[rs.UID]; !seen {
			checkRestored(r, live, outcomeOf(rs))
		}
	}
}

// checkHandOver judges the hand-over of the record the MyApp oldUID left
// under Orphan: exactly one live MyApp restored from it, holding that very
// record under the owner its policy asks for.
func checkHandOver(r *Report, oldUID types.UID, h handedOverRecord, live map[string]*appsv1alpha1.MyApp,
	recordOf map[string]simulator.Record) {
	var marked []*appsv1alpha1.MyApp
	for _, app := range live {
		if app.Annotations[backupv1alpha1.RestoredFromUIDAnnotation] == string(oldUID) {
			marked = append(marked, app)
		}
	}
	switch len(marked) {
	case 0:
		r.add(&r.RestoreMismatches, "no live MyApp is restored from %s (uid %s)", h.app, oldUID)
	case 1:
	default:
		r.add(&r.DuplicateRestoredApps, "%d live MyApps are restored from %s (uid %s)", len(marked), h.app, oldUID)
	}
	rec, ok := recordOf[h.host]
	switch {
	case !ok:
		r.add(&r.RecordsNotHandedOver, "record %s, left by %s (uid %s) for its restore, is gone", h.host, h.app, oldUID)
	case rec.Owner == h.oldOwner:
		r.add(&r.RecordsNotHandedOver, "record %s is still held by %s (uid %s), deleted", h.host, h.app, oldUID)
	case !rec.CreatedAt.Equal(h.createdAt):
		r.add(&r.RecordsNotHandedOver, "record %s was deleted and created again (created %s, the old one %s), not transferred",
			h.host, rec.CreatedAt.Format(time.RFC3339Nano), h.createdAt.Format(time.RFC3339Nano))
	case len(marked) == 1 && rec.Owner != wantedRecordOwner(marked[0]):
		r.add(&r.RecordsNotHandedOver, "record %s is held by %s, not by MyApp %s (uid %s), restored from %s",
			h.host, rec.Owner, marked[0].Name, marked[0].UID, h.app)
	}
}

// checkRestored judges what a Restore reported when it succeeded: its
// MyApp is live, the very incarnation it restored, and carries its mark.
func checkRestored(r *Report, live map[string]*appsv1alpha1.MyApp, out restoreOutcome) {
	app := live[out.target]
	switch {
	case app == nil:
		r.add(&r.RestoreMismatches, "MyApp %s, restored by Restore %s, is gone", out.target, out.restore)
	case app.UID != out.appUID:
		r.add(&r.RestoreMismatches, "MyApp %s is uid %s, not the uid %s Restore %s restored", out.target, app.UID,
			out.appUID, out.restore)
	default:
		checkRestoreMark(r, app, out)
	}
}

// checkRestoreMark counts a restored MyApp that does not carry its
// Restore's mark (the Restore's UID, the backup's ID, the backed-up
// MyApp's UID), which after a crash is what tells the MyApp as the
// Restore's own: once per MyApp, naming every annotation that is wrong.
func checkRestoreMark(r *Report, app *appsv1alpha1.MyApp, out restoreOutcome) {
	want := []struct{ key, value string }{
		{backupv1alpha1.RestoreUIDAnnotation, string(out.restoreUID)},
		{backupv1alpha1.BackupIDAnnotation, out.backupID},
		{backupv1alpha1.RestoredFromUIDAnnotation, string(out.fromUID)},
	}
	var wrong []string
	for _, w := range want {
		if got := app.Annotations[w.key]; got != w.value || w.value == "" {
			wrong = append(wrong, fmt.Sprintf("%s is %q, want %q", w.key, got, w.value))
		}
	}
	if len(wrong) > 0 {
		r.add(&r.RestoreMismatches, "MyApp %s/%s, restored by Restore %s, does not carry its mark: %s",
			app.Namespace, app.Name, out.restore, strings.Join(wrong, "; "))
	}
}
