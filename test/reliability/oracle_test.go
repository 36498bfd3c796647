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
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// Report is what the oracle counts in one scenario once it has settled.
// Every field is a count of problems; the goal is zero in each.
type Report struct {
	// Leaks: a record or backup whose owner is gone (and did not ask to keep
	// it), and a final-backup hold no BackupConfig will ever release.
	LeakedRecords int
	LeakedBackups int
	OrphanedHolds int
	// Duplicates: a second record owned by one MyApp, and a second backup
	// for one idempotency key, or a second live final backup of one MyApp.
	DuplicateRecords int
	DuplicateBackups int
	// Stuck: a MyApp, BackupConfig or namespace still being deleted.
	Stuck int
	// Wrong state: a live MyApp not Ready at its generation, or without its
	// record for its current host; a BackupConfig whose status disagrees with
	// the service, or that missed the backup of its MyApp's generation.
	NotReady         int
	MissingRecords   int
	StatusMismatches int
	MissedBackups    int
	// LostRecords: a record a MyApp deleted with deletionPolicy Orphan was
	// meant to leave behind, marked orphaned, that is not there.
	LostRecords int
	// DuplicateRoutes: a host two Ingresses route at once.
	DuplicateRoutes int
	// DuplicateRestoredApps: a second live MyApp marked as restored from
	// one backed-up MyApp.
	DuplicateRestoredApps int
	// RestoreMismatches: a Restore not Succeeded, or one whose MyApp is
	// missing, is another incarnation than the one it reported, or lacks
	// its mark (the Restore's UID, the backup's ID, the backed-up UID).
	RestoreMismatches int
	// RecordsNotHandedOver: the record a MyApp deleted under Orphan left
	// behind, which the MyApp restored from it must take over in one
	// transfer, that is gone, still held by the old owner, held by another,
	// or deleted and created again.
	RecordsNotHandedOver int

	// Problems describes each count, for the log of a failing scenario.
	Problems []string
}

// Leaks, Duplicates and Stuck are the campaign's headline figures.
func (r Report) Leaks() int { return r.LeakedRecords + r.LeakedBackups + r.OrphanedHolds }
func (r Report) Duplicates() int {
	return r.DuplicateRecords + r.DuplicateBackups + r.DuplicateRoutes + r.DuplicateRestoredApps
}
func (r Report) Wrong() int {
	return r.NotReady + r.MissingRecords + r.StatusMismatches + r.MissedBackups + r.LostRecords +
		r.RestoreMismatches + r.RecordsNotHandedOver
}

// Clean reports whether nothing at all was counted.
func (r Report) Clean() bool { return r.Leaks()+r.Duplicates()+r.Stuck+r.Wrong() == 0 }

func (r Report) String() string {
	return fmt.Sprintf("leaks %d (records %d, backups %d, holds %d), duplicates %d (records %d, backups %d, routes %d, "+
		"restored apps %d), stuck %d, wrong %d (not ready %d, missing records %d, status mismatches %d, missed backups %d, "+
		"lost orphaned records %d, restore mismatches %d, records not handed over %d)",
		r.Leaks(), r.LeakedRecords, r.LeakedBackups, r.OrphanedHolds, r.Duplicates(), r.DuplicateRecords,
		r.DuplicateBackups, r.DuplicateRoutes, r.DuplicateRestoredApps, r.Stuck, r.Wrong(), r.NotReady, r.MissingRecords,
		r.StatusMismatches, r.MissedBackups, r.LostRecords, r.RestoreMismatches, r.RecordsNotHandedOver)
}

func (r *Report) add(count *int, format string, args ...any) {
	*count++
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// oracle judges one scenario: one namespace and the simulator that serves it
// alone, so every record and backup in it belongs to the scenario.
type oracle struct {
	ns  string
	sim *simulator.Server
	// backupsOf reads the backups the scenario's storage holds, and what
	// is wrong with any of them beyond what the oracle judges (content a
	// restore could not read); the simulator's when nil.
	backupsOf func(context.Context) ([]simulator.Backup, []string, error)

	mu sync.Mutex
	// retained are the UIDs of BackupConfigs with deletionPolicy Retain,
	// whose backups are meant to outlive them.
	retained map[types.UID]bool
	// namespaceDeleted is set by scenarios that delete the namespace itself.
	namespaceDeleted bool
	// kept maps the orphaned owner of each MyApp a scenario deleted under
	// deletionPolicy Orphan to the host whose record must outlive it.
	kept map[string]string
	// handedOver maps the UID of each MyApp a scenario deleted under
	// deletionPolicy Orphan to be restored to the record the restored
	// MyApp must take over (oracle_restore_test.go).
	handedOver map[types.UID]handedOverRecord
	// restores are the Restores a scenario saw succeed, by their UID.
	restores map[types.UID]restoreOutcome
}

func newOracle(ns string, sim *simulator.Server) *oracle {
	return &oracle{ns: ns, sim: sim, retained: map[types.UID]bool{}, kept: map[string]string{},
		handedOver: map[types.UID]handedOverRecord{}, restores: map[types.UID]restoreOutcome{}}
}

func (o *oracle) retain(uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.retained[uid] = true
}

// keep tells the oracle that app, Ready on its spec.host, is being deleted
// under deletionPolicy Orphan: its record must remain, marked orphaned.
func (o *oracle) keep(app *appsv1alpha1.MyApp) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.kept[orphanedRecordOwner(app)] = app.Spec.Host
}

func (o *oracle) isRetained(uid types.UID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.retained[uid]
}

// quietPeriod is how long the oracle must count nothing before a scenario
// counts as settled: a leak can appear after a moment of calm, when a late
// pass of the controller writes what nobody will clean up.
const quietPeriod = 2 * time.Second

// settle applies the oracle until it has counted nothing for quietPeriod or
// settleTimeout has passed, and returns the last report: a scenario has settled
// when the operator has nothing left to do, which the oracle cannot tell
// from a slow operator except by waiting.
func (o *oracle) settle(t *testing.T) Report {
	t.Helper()
	deadline := time.Now().Add(settleTimeout)
	var cleanSince time.Time
	for {
		r, err := o.check(t.Context())
		now := time.Now()
		switch {
		case err != nil:
			cleanSince = time.Time{}
			if now.After(deadline) {
				t.Fatalf("oracle: %v", err)
			}
		case r.Clean():
			if cleanSince.IsZero() {
				cleanSince = now
			}
			if now.Sub(cleanSince) >= quietPeriod {
				return r
			}
		default:
			cleanSince = time.Time{}
			if now.After(deadline) {
				t.Logf("oracle: %s", r)
				for _, p := range r.Problems {
					t.Logf("  %s", p)
				}
				return r
			}
		}
		select {
		case <-t.Context().Done():
			return r
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// check applies the oracle once.
func (o *oracle) check(ctx context.Context) (Report, error) {
	var r Report
	var apps appsv1alpha1.MyAppList
	var bcs backupv1alpha1.BackupConfigList
	if err := k8sClient.List(ctx, &apps, client.InNamespace(o.ns)); err != nil {
		return r, err
	}
	if err := k8sClient.List(ctx, &bcs, client.InNamespace(o.ns)); err != nil {
		return r, err
	}
	var ingresses networkingv1.IngressList
	if err := k8sClient.List(ctx, &ingresses, client.InNamespace(o.ns)); err != nil {
		return r, err
	}
	var restores backupv1alpha1.RestoreList
	if err := k8sClient.List(ctx, &restores, client.InNamespace(o.ns)); err != nil {
		return r, err
	}
	records := o.sim.Records()
	backups := o.sim.Backups()
	if o.backupsOf != nil {
		var problems []string
		var err error
		if backups, problems, err = o.backupsOf(ctx); err != nil {
			return r, err
		}
		for _, p := range problems {
			r.add(&r.StatusMismatches, "%s", p)
		}
	}

	o.checkNamespace(ctx, &r)
	o.checkApps(&r, apps.Items, bcs.Items, records)
	o.checkRoutes(&r, ingresses.Items)
	o.checkBackupConfigs(&r, apps.Items, bcs.Items, backups)
	o.checkRestores(&r, apps.Items, restores.Items, records)
	return r, nil
}

func (o *oracle) checkNamespace(ctx context.Context, r *Report) {
	o.mu.Lock()
	deleted := o.namespaceDeleted
	o.mu.Unlock()
	if !deleted {
		return
	}
	var ns corev1.Namespace
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: o.ns}, &ns); !apierrors.IsNotFound(err) {
		r.add(&r.Stuck, "namespace %s is still there (phase %s)", o.ns, ns.Status.Phase)
	}
}

// checkApps judges the MyApps and the DNS records. A MyApp's records carry
// its own owner, or the orphaned owner under deletionPolicy Orphan (written
// so while it lives, so the intent survives any failure of its deletion);
// after a deletion under Orphan the record must remain, marked orphaned.
func (o *oracle) checkApps(r *Report, apps []appsv1alpha1.MyApp, bcs []backupv1alpha1.BackupConfig, records []simulator.Record) {
	owners := map[string]*appsv1alpha1.MyApp{}
	for i := range apps {
		owners[recordOwner(&apps[i])] = &apps[i]
		owners[orphanedRecordOwner(&apps[i])] = &apps[i]
	}
	o.mu.Lock()
	kept := maps.Clone(o.kept)
	o.mu.Unlock()
	handedOver := o.handedOverOwners()
	owned := map[*appsv1alpha1.MyApp][]simulator.Record{}
	for _, rec := range records {
		app, ok := owners[rec.Owner]
		if !ok && handedOver[rec.Owner] {
			// A record left for a restore, judged by checkRestores.
			continue
		}
		if !ok {
			if host, ok := kept[rec.Owner]; ok && host == rec.Name {
				delete(kept, rec.Owner)
				continue
			}
			r.add(&r.LeakedRecords, "record %s (owner %s) belongs to no MyApp", rec.Name, rec.Owner)
			continue
		}
		owned[app] = append(owned[app], rec)
	}
	for owner, host := range kept {
		if _, live := owners[owner]; !live {
			r.add(&r.LostRecords, "record %s of %s, deleted with deletionPolicy Orphan, is gone", host, owner)
		}
	}
	for i := range apps {
		app := &apps[i]
		key := app.Namespace + "/" + app.Name
		if !app.DeletionTimestamp.IsZero() {
			r.add(&r.Stuck, "MyApp %s (uid %s) is stuck deleting, finalizers %v", key, app.UID, app.Finalizers)
		} else {
			checkLiveApp(r, app, owned[app])
		}
		if controllerutil.ContainsFinalizer(app, backupv1alpha1.FinalBackupFinalizer) && !holdWanted(app, bcs) {
			r.add(&r.OrphanedHolds, "MyApp %s carries %s but no BackupConfig wants a final backup of it",
				key, backupv1alpha1.FinalBackupFinalizer)
		}
	}
}

// checkLiveApp judges a MyApp that is not being deleted: Ready, its
// conditions observed at its generation, and exactly one record, for its
// host, under the owner its policy asks for.
func checkLiveApp(r *Report, app *appsv1alpha1.MyApp, owned []simulator.Record) {
	key := app.Namespace + "/" + app.Name
	if err := myAppReady(app); err != nil {
		r.add(&r.NotReady, "MyApp %s: %v", key, err)
	}
	for _, c := range app.Status.Conditions {
		if (c.Type == appsv1alpha1.ReadyCondition || c.Type == appsv1alpha1.DNSReadyCondition) && c.ObservedGeneration != app.Generation {
			r.add(&r.StatusMismatches, "MyApp %s: condition %s observed generation %d of %d", key, c.Type, c.ObservedGeneration, app.Generation)
		}
	}
	// Exactly one record, for the current host, under the owner its
	// policy asks for: any other record the MyApp owns (an old
	// host's, say) is one too many.
	hasHost := false
	for _, rec := range owned {
		switch {
		case rec.Name != app.Spec.Host:
			r.add(&r.DuplicateRecords, "MyApp %s also owns record %s, not its host %s", key, rec.Name, app.Spec.Host)
		case rec.State != simulator.StateActive:
			hasHost = true
			r.add(&r.NotReady, "MyApp %s: record %s is %s", key, rec.Name, rec.State)
		case rec.Owner != wantedRecordOwner(app):
			hasHost = true
			r.add(&r.StatusMismatches, "MyApp %s (deletionPolicy %s): record %s is owned by %s (marked orphaned: %v)",
				key, app.Spec.DeletionPolicy, rec.Name, rec.Owner, rec.Owner == orphanedRecordOwner(app))
		default:
			hasHost = true
		}
	}
	if !hasHost {
		r.add(&r.MissingRecords, "MyApp %s has no record for %s", key, app.Spec.Host)
	}
}

// checkRoutes counts every host two Ingresses of the namespace route.
func (o *oracle) checkRoutes(r *Report, ingresses []networkingv1.Ingress) {
	routedBy := map[string][]string{}
	for _, ing := range ingresses {
		for _, rule := range ing.Spec.Rules {
			if rule.Host != "" && !slices.Contains(routedBy[rule.Host], ing.Name) {
				routedBy[rule.Host] = append(routedBy[rule.Host], ing.Name)
			}
		}
	}
	for host, by := range routedBy {
		if len(by) > 1 {
			r.add(&r.DuplicateRoutes, "host %s is routed by %d Ingresses %v", host, len(by), by)
		}
	}
}

// holdWanted reports whether some BackupConfig still accounts for app's
// final-backup finalizer: one that references it and either wants a final
// backup or is itself being deleted (and so still has to release it).
func holdWanted(app *appsv1alpha1.MyApp, bcs []backupv1alpha1.BackupConfig) bool {
	for i := range bcs {
		bc := &bcs[i]
		if bc.Spec.AppRef.Name == app.Name && (bc.Spec.BackupBeforeAppDeletion || !bc.DeletionTimestamp.IsZero()) {
			return true
		}
	}
	return false
}

// checkBackupConfigs judges the BackupConfigs and the backups.
func (o *oracle) checkBackupConfigs(r *Report, apps []appsv1alpha1.MyApp, bcs []backupv1alpha1.BackupConfig, backups []simulator.Backup) {
	byOwner := map[string]*backupv1alpha1.BackupConfig{}
	for i := range bcs {
		byOwner[backupOwner(&bcs[i])] = &bcs[i]
	}
	byKey := o.checkBackups(r, byOwner, backups)
	byID := map[string]simulator.Backup{}
	for _, b := range backups {
		byID[b.ID] = b
	}
	appsByName := map[string]*appsv1alpha1.MyApp{}
	for i := range apps {
		appsByName[apps[i].Name] = &apps[i]
	}
	covered := coveredGenerations(backups)
	for i := range bcs {
		checkBackupConfig(r, &bcs[i], appsByName[bcs[i].Spec.AppRef.Name], byID, byKey, covered)
	}
}

// checkBackups counts leaked and duplicated backups, and returns how many
// backups each idempotency key names.
func (o *oracle) checkBackups(r *Report, byOwner map[string]*backupv1alpha1.BackupConfig, backups []simulator.Backup) map[string]int {
	byKey := map[string]int{}
	liveFinals := map[string]int{}
	for _, b := range backups {
		byKey[b.IdempotencyKey]++
		if byKey[b.IdempotencyKey] == 2 {
			r.add(&r.DuplicateBackups, "two backups with idempotency key %s", b.IdempotencyKey)
		}
		if prefix, ok := finalPrefix(b.IdempotencyKey); ok && b.Phase != simulator.PhaseFailed {
			liveFinals[prefix]++
			if liveFinals[prefix] == 2 {
				r.add(&r.DuplicateBackups, "two final backups not failed under %s", prefix)
			}
		}
		if _, ok := byOwner[b.Owner]; !ok && !o.isRetained(types.UID(strings.TrimPrefix(b.Owner, "backupconfig/"))) {
			r.add(&r.LeakedBackups, "backup %s (%s, key %s) belongs to no BackupConfig", b.ID, b.Phase, b.IdempotencyKey)
		}
	}
	return byKey
}

// checkBackupConfig judges one BackupConfig against the service; app is its
// MyApp, nil when there is none.
func checkBackupConfig(r *Report, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp,
	byID map[string]simulator.Backup, byKey map[string]int, covered map[string]bool) {
	key := bc.Namespace + "/" + bc.Name
	if !bc.DeletionTimestamp.IsZero() {
		r.add(&r.Stuck, "BackupConfig %s (uid %s) is stuck deleting, finalizers %v", key, bc.UID, bc.Finalizers)
		return
	}
	if bc.Status.ObservedGeneration != bc.Generation {
		r.add(&r.StatusMismatches, "BackupConfig %s observed generation %d of %d", key, bc.Status.ObservedGeneration, bc.Generation)
	}
	if last := bc.Status.LastBackup; last != nil {
		b, ok := byID[last.ID]
		switch {
		case !ok:
			r.add(&r.StatusMismatches, "BackupConfig %s: last backup %s is not in the service", key, last.ID)
		case string(last.Phase) != phaseName(b.Phase):
			r.add(&r.StatusMismatches, "BackupConfig %s: last backup %s is %s in status, %s in the service", key, last.ID, last.Phase, b.Phase)
		}
	}
	if app == nil || !app.DeletionTimestamp.IsZero() || bc.Spec.Suspend {
		return
	}
	if c := meta.FindStatusCondition(bc.Status.Conditions, backupv1alpha1.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
		r.add(&r.StatusMismatches, "BackupConfig %s is not Ready: %v", key, c)
	}
	if bc.Spec.BackupOnChange == nil || *bc.Spec.BackupOnChange {
		want := fmt.Sprintf("%s/change/%s/%d", backupOwner(bc), app.UID, app.Generation)
		if byKey[want] == 0 && !covered[coverKey(backupOwner(bc), string(app.UID), app.Generation)] {
			r.add(&r.MissedBackups, "BackupConfig %s has no backup of MyApp %s generation %d (key %s), "+
				"nor a SUCCEEDED one labelled with that generation", key, app.Name, app.Generation, want)
		}
	}
}

// coveredGenerations returns the owner, MyApp UID and generation
// (coverKey) of every SUCCEEDED backup, by the labels every backup
// carries. The README's trigger is "a generation no backup was taken of":
// an on-change backup started for it (its key), or a successful backup of
// any trigger, such as the scheduled backup that came due while the edit
// waited (one backup runs at a time; the slot comes first and covers the
// change), whose success ends the change's retries. Retention then deletes
// a failed on-change backup older than that success (README, "Retention and
// cleanup"), so the change's key may be gone although the generation is
// covered.
func coveredGenerations(backups []simulator.Backup) map[string]bool {
	covered := map[string]bool{}
	for _, b := range backups {
		if b.Phase != simulator.PhaseSucceeded {
			continue
		}
		generation, err := strconv.ParseInt(b.Labels["backup.myapp.dev/myapp-generation"], 10, 64)
		if uid := b.Labels["backup.myapp.dev/myapp-uid"]; uid != "" && err == nil {
			covered[coverKey(b.Owner, uid, generation)] = true
		}
	}
	return covered
}

// coverKey names one generation of one MyApp backed up by one owner.
func coverKey(owner, appUID string, generation int64) string {
	return fmt.Sprintf("%s %s %d", owner, appUID, generation)
}

// finalPrefix returns "<owner>/final/<app uid>" for a final backup's key.
func finalPrefix(key string) (string, bool) {
	i := strings.Index(key, "/final/")
	if i < 0 {
		return "", false
	}
	rest := key[i+len("/final/"):]
	j := strings.Index(rest, "/")
	if j < 0 {
		return key, true
	}
	return key[:i+len("/final/")+j], true
}

// phaseName maps the service's phase onto the status's.
func phaseName(p simulator.Phase) string {
	switch p {
	case simulator.PhaseRunning:
		return string(backupv1alpha1.BackupRunning)
	case simulator.PhaseSucceeded:
		return string(backupv1alpha1.BackupSucceeded)
	default:
		return string(backupv1alpha1.BackupFailed)
	}
}

// ownerID is the owner ID of the installation under test.
const ownerID = "reliability"

// recordOwner and backupOwner are the owner identities the controllers write
// (docs/external-api.md): they end in the object's UID.
func recordOwner(app *appsv1alpha1.MyApp) string {
	return "myapp-operator/" + ownerID + "/" + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// orphanedRecordOwner is the owner app's records carry under deletionPolicy
// Orphan, while it lives and after it is gone.
func orphanedRecordOwner(app *appsv1alpha1.MyApp) string {
	return "myapp-operator-orphaned/" + ownerID + "/" + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// wantedRecordOwner is the owner app's record carries under its policy.
func wantedRecordOwner(app *appsv1alpha1.MyApp) string {
	if app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
		return orphanedRecordOwner(app)
	}
	return recordOwner(app)
}

func backupOwner(bc *backupv1alpha1.BackupConfig) string { return "backupconfig/" + string(bc.UID) }

// myAppReady is nil when app is Ready at its generation.
func myAppReady(app *appsv1alpha1.MyApp) error {
	if app.Status.ObservedGeneration != app.Generation {
		return fmt.Errorf("%w: observed generation %d of %d", errNotReady, app.Status.ObservedGeneration, app.Generation)
	}
	c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("%w: %v", errNotReady, c)
	}
	return nil
}
