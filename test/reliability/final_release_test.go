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
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// releaseCheck watches the MyApps of a scenario's namespace through the API
// server and judges every release of a final-backup hold on a MyApp being
// deleted, at the moment the watch delivers it: each BackupConfig that
// wanted a final backup of the MyApp when the scenario deleted it (expect)
// must by then have a SUCCEEDED final backup of it in the service, completed
// no later than the release was seen, or have given it up as documented
// (its Ready condition's reason FinalBackupAbandoned, or, once it is gone,
// a FinalBackupAbandoned event regarding it). A release the watch sees comes
// after the controller's write, so a backup completed after it cannot have
// been what the controller saw.
//
// Two more ways out are documented (docs/spec/backupconfig.md, "A final
// backup before the app goes"): turning backupBeforeAppDeletion off, and
// deleting a BackupConfig with deletionPolicy Delete (it deletes its
// backups as it goes, so no final backup is owed). A BackupConfig the
// scenario took either way out (tookOut) before the
// release was seen owes nothing. Deleting a Retain BackupConfig is no way
// out: it takes the final backup before it lets go, or gives it up as
// documented.
type releaseCheck struct {
	sim *simulator.Server

	mu sync.Mutex
	// want maps a MyApp's UID to the BackupConfigs that wanted its final
	// backup when it was deleted.
	want map[types.UID][]*backupv1alpha1.BackupConfig
	// held says whether the last version seen carried the hold.
	held map[types.UID]bool
	// wayOut maps a BackupConfig's UID to when the scenario, just before
	// the write, turned its option off or deleted it under Delete.
	wayOut map[types.UID]time.Time
	// tookWayOut counts the BackupConfigs of judged releases that owed
	// nothing because they had been taken a way out.
	tookWayOut int
	// checked counts releases judged against at least one BackupConfig;
	// early lists those released without a final backup or a give-up.
	checked int
	early   []string
	// ended is set when the watch stopped before the scenario did: from then
	// on releases go unjudged.
	ended bool
}

// watchReleases starts a releaseCheck on s's namespace for the rest of the
// test.
func watchReleases(t *testing.T, s *scenario) *releaseCheck {
	t.Helper()
	dc, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apps.myapp.dev", Version: "v1alpha1", Resource: "myapps"}
	w, err := dc.Resource(gvr).Namespace(s.ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	rc := &releaseCheck{sim: s.sim, want: map[types.UID][]*backupv1alpha1.BackupConfig{}, held: map[types.UID]bool{},
		wayOut: map[types.UID]time.Time{}}
	go func() {
		for ev := range w.ResultChan() {
			obj, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			rc.observe(ev.Type, obj, time.Now())
		}
		if t.Context().Err() == nil {
			rc.mu.Lock()
			rc.ended = true
			rc.mu.Unlock()
		}
	}()
	return rc
}

// expect records, before the scenario deletes the MyApp with uid, the
// BackupConfigs that want its final backup (backupBeforeAppDeletion on,
// appRef naming it, not being deleted).
func (rc *releaseCheck) expect(uid types.UID, bcs []*backupv1alpha1.BackupConfig) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.want[uid] = bcs
}

// tookOut records, just before the scenario's write, that it takes the
// BackupConfig with uid a documented way out of a final backup: it turns
// backupBeforeAppDeletion off, or deletes it with deletionPolicy Delete.
// Releases seen from then on owe that BackupConfig nothing. Taken before
// the write, the time errs on the lenient side by the write's latency.
func (rc *releaseCheck) tookOut(uid types.UID, at time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := rc.wayOut[uid]; !ok {
		rc.wayOut[uid] = at
	}
}

func (rc *releaseCheck) observe(typ watch.EventType, obj metav1.Object, seen time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	uid := obj.GetUID()
	hold := typ != watch.Deleted && slices.Contains(obj.GetFinalizers(), backupv1alpha1.FinalBackupFinalizer)
	deleting := typ == watch.Deleted || obj.GetDeletionTimestamp() != nil
	if rc.held[uid] && !hold && deleting {
		rc.judge(obj.GetName(), uid, seen)
	}
	rc.held[uid] = hold
}

// judge decides one release of the hold on a MyApp being deleted.
func (rc *releaseCheck) judge(name string, uid types.UID, seen time.Time) {
	want := rc.want[uid]
	if len(want) == 0 {
		return
	}
	rc.checked++
	backups := rc.sim.Backups()
	for _, bc := range want {
		if at, ok := rc.wayOut[bc.UID]; ok && !seen.Before(at) {
			rc.tookWayOut++
			continue
		}
		if slices.ContainsFunc(backups, func(b simulator.Backup) bool {
			return b.Owner == backupOwner(bc) && b.Phase == simulator.PhaseSucceeded &&
				b.Labels["backup.myapp.dev/myapp-uid"] == string(uid) &&
				b.Labels["backup.myapp.dev/trigger"] == string(backupv1alpha1.TriggerAppDeletion) &&
				b.CompletedAt != nil && !b.CompletedAt.After(seen)
		}) {
			continue
		}
		if gaveUp(bc) {
			continue
		}
		rc.early = append(rc.early, fmt.Sprintf("MyApp %s (uid %s) released at %s without a SUCCEEDED final backup by BackupConfig %s",
			name, uid, seen.UTC().Format("15:04:05.000"), bc.Name))
	}
}

// gaveUp reports whether bc gave its final backup up as documented: its
// Ready condition says FinalBackupAbandoned, or, when it is gone, an event
// regarding it said so.
func gaveUp(bc *backupv1alpha1.BackupConfig) bool {
	ctx := context.Background()
	current := &backupv1alpha1.BackupConfig{}
	err := k8sClient.Get(ctx, client.ObjectKeyFromObject(bc), current)
	if err == nil && current.UID == bc.UID {
		c := meta.FindStatusCondition(current.Status.Conditions, backupv1alpha1.ReadyCondition)
		return c != nil && c.Reason == backupv1alpha1.FinalBackupAbandonedReason
	}
	var events eventsv1.EventList
	if err := k8sClient.List(ctx, &events, client.InNamespace(bc.Namespace)); err != nil {
		return false
	}
	return slices.ContainsFunc(events.Items, func(ev eventsv1.Event) bool {
		return ev.Regarding.UID == bc.UID && ev.Reason == backupv1alpha1.FinalBackupAbandonedReason
	})
}

// Results returns how many releases were judged, how many BackupConfigs
// of them owed nothing for a way out taken, the early ones, and whether the
// watch stopped before the scenario did.
func (rc *releaseCheck) Results() (checked, tookWayOut int, early []string, ended bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.checked, rc.tookWayOut, slices.Clone(rc.early), rc.ended
}
