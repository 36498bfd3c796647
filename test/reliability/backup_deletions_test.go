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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// deletionCheck follows the BackupConfigs family 9 deletes, and the final
// backups of the whole sequence, by sampling the API server and the service
// every 100 ms:
//   - a BackupConfig with deletionPolicy Delete may be gone only once the
//     service holds none of its backups (owner backupconfig/<uid>), and none
//     may appear after it went;
//   - a BackupConfig with Retain keeps its backups: those the service held
//     when it was seen gone are all still there at the end;
//   - no BackupConfig has two SUCCEEDED final backups of one MyApp, even if
//     retention deleted one of them later (a schedule or retention changed
//     while the MyApp was being deleted must not duplicate it).
//
// The service's truth (simulator.Backups, without the listing delay) is
// read, not its listing: a backup the listing does not show yet still
// counts, which is why the controller waits CleanupGrace before an empty
// listing counts.
type deletionCheck struct {
	sim *simulator.Server
	ns  string

	mu      sync.Mutex
	tracked []*trackedDeletion
	// finals maps an owner and a MyApp UID to the IDs of the SUCCEEDED
	// final backups ever seen.
	finals   map[string]map[string]bool
	problems []string
	samples  int

	stop func()
}

// trackedDeletion is one BackupConfig the sequence deleted.
type trackedDeletion struct {
	key    types.NamespacedName
	uid    types.UID
	owner  string
	delete bool
	// gone is set when the API server was first seen without it; kept
	// lists, for Retain, the backups the service held then.
	gone bool
	kept []string
}

// watchDeletions starts a deletionCheck for the rest of ctx.
func watchDeletions(ctx context.Context, sim *simulator.Server, ns string) *deletionCheck {
	dc := &deletionCheck{sim: sim, ns: ns, finals: map[string]map[string]bool{}}
	dc.stop = sampleEvery(ctx, dc.sample)
	return dc
}

// deleted records that the sequence is about to delete bc, with the policy
// its spec has now.
func (dc *deletionCheck) deleted(bc *backupv1alpha1.BackupConfig) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	dc.tracked = append(dc.tracked, &trackedDeletion{key: types.NamespacedName{Namespace: bc.Namespace, Name: bc.Name},
		uid: bc.UID, owner: backupOwner(bc), delete: bc.Spec.DeletionPolicy == backupv1alpha1.DeletionPolicyDelete})
}

// sample takes one look: the BackupConfigs first, then the service, so a
// backup seen after a Delete BackupConfig was seen gone was there after it
// went.
func (dc *deletionCheck) sample(ctx context.Context) {
	goneNow := dc.seenGone(ctx)
	if ctx.Err() != nil {
		return
	}
	backups := dc.sim.Backups()
	dc.mu.Lock()
	defer dc.mu.Unlock()
	dc.samples++
	dc.countFinals(backups)
	for _, td := range dc.tracked {
		switch {
		case goneNow[td]:
			td.gone = true
			for _, b := range backups {
				if b.Owner == td.owner {
					td.kept = append(td.kept, b.ID)
				}
			}
			if td.delete && len(td.kept) > 0 {
				dc.problems = append(dc.problems, fmt.Sprintf("BackupConfig %s (Delete) gone while the service held %d of its backups: %v",
					td.key.Name, len(td.kept), td.kept))
			}
		case td.gone && td.delete:
			for _, b := range backups {
				if b.Owner == td.owner && !slices.Contains(td.kept, b.ID) {
					td.kept = append(td.kept, b.ID)
					dc.problems = append(dc.problems, fmt.Sprintf("backup %s (%s) of BackupConfig %s (Delete) appeared after it was gone",
						b.ID, b.Phase, td.key.Name))
				}
			}
		}
	}
}

// seenGone asks the API server about the deleted BackupConfigs not seen
// gone yet, and returns those it no longer has. Only the sampling
// goroutine, and finish after it stopped, write gone.
func (dc *deletionCheck) seenGone(ctx context.Context) map[*trackedDeletion]bool {
	dc.mu.Lock()
	pending := slices.Clone(dc.tracked)
	dc.mu.Unlock()
	goneNow := map[*trackedDeletion]bool{}
	for _, td := range pending {
		if td.gone {
			continue
		}
		current := &backupv1alpha1.BackupConfig{}
		err := k8sClient.Get(ctx, td.key, current)
		if apierrors.IsNotFound(err) || err == nil && current.UID != td.uid {
			goneNow[td] = true
		}
	}
	return goneNow
}

// countFinals records the SUCCEEDED final backups in backups, and a
// problem the first time one owner has two of one MyApp. dc.mu is held.
func (dc *deletionCheck) countFinals(backups []simulator.Backup) {
	for _, b := range backups {
		if b.Phase != simulator.PhaseSucceeded || b.Labels["backup.myapp.dev/trigger"] != string(backupv1alpha1.TriggerAppDeletion) {
			continue
		}
		k := b.Owner + " " + b.Labels["backup.myapp.dev/myapp-uid"]
		if dc.finals[k] == nil {
			dc.finals[k] = map[string]bool{}
		}
		if dc.finals[k][b.ID] {
			continue
		}
		dc.finals[k][b.ID] = true
		if len(dc.finals[k]) == 2 {
			dc.problems = append(dc.problems, fmt.Sprintf("two SUCCEEDED final backups of MyApp uid %s by %s",
				b.Labels["backup.myapp.dev/myapp-uid"], b.Owner))
		}
	}
}

// stillThere lists the deleted BackupConfigs the API server still has.
func (dc *deletionCheck) stillThere(ctx context.Context) []string {
	dc.mu.Lock()
	tracked := slices.Clone(dc.tracked)
	dc.mu.Unlock()
	var out []string
	for _, td := range tracked {
		current := &backupv1alpha1.BackupConfig{}
		if err := k8sClient.Get(ctx, td.key, current); client.IgnoreNotFound(err) != nil ||
			err == nil && current.UID == td.uid {
			out = append(out, "BackupConfig "+td.key.Name+" deleted but still there")
		}
	}
	return out
}

// deletionFigures is what a deletionCheck found over a sequence.
type deletionFigures struct {
	// deleteGone counts Delete BackupConfigs seen gone; retainGone the
	// Retain ones, retainedBackups the backups they kept.
	deleteGone, retainGone, retainedBackups int
	// finals counts the (owner, MyApp) pairs with a SUCCEEDED final backup.
	finals   int
	samples  int
	problems []string
}

// finish stops the sampler, takes a last look and checks that every
// Retain BackupConfig's backups are still in the service and no Delete
// one's is.
func (dc *deletionCheck) finish(ctx context.Context) deletionFigures {
	dc.stop()
	dc.sample(ctx)
	backups := dc.sim.Backups()
	dc.mu.Lock()
	defer dc.mu.Unlock()
	f := deletionFigures{finals: len(dc.finals), samples: dc.samples, problems: slices.Clone(dc.problems)}
	for _, td := range dc.tracked {
		if !td.gone {
			continue
		}
		if td.delete {
			f.deleteGone++
			continue
		}
		f.retainGone++
		for _, id := range td.kept {
			f.retainedBackups++
			if !slices.ContainsFunc(backups, func(b simulator.Backup) bool { return b.ID == id }) {
				f.problems = append(f.problems, fmt.Sprintf("backup %s of BackupConfig %s (Retain) is gone", id, td.key.Name))
			}
		}
	}
	return f
}

// scenarioBackupDuration is how long a backup runs in a scenario's
// simulator (newScenario).
const scenarioBackupDuration = 300 * time.Millisecond

// deleteBackupConfig deletes a BackupConfig whose MyApp lives, with
// deletionPolicy Delete half the time (set just before, unless it was
// created with it), and 0.5 to 1.5 s later a new BackupConfig, with Retain
// or Delete at random, takes its place on that MyApp.
func (d *decisions) deleteBackupConfig() string {
	s := d.s
	var live []*backupv1alpha1.BackupConfig
	for _, bc := range d.changeable() {
		if !d.deleted[bc.Spec.AppRef.Name] {
			live = append(live, bc)
		}
	}
	if len(live) == 0 {
		return "delete-bc: no BackupConfig of a live MyApp"
	}
	bc := live[d.rng.IntN(len(live))]
	app := bc.Spec.AppRef.Name
	if bc.Spec.DeletionPolicy != backupv1alpha1.DeletionPolicyDelete && d.rng.IntN(2) == 0 {
		update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.DeletionPolicy = backupv1alpha1.DeletionPolicyDelete })
	}
	d.deletions.deleted(bc)
	s.remove(bc)
	d.forget(bc)
	d.bcDeleted++
	time.Sleep(time.Duration(500+d.rng.IntN(1000)) * time.Millisecond)
	next := d.newBackupConfig(app)
	return fmt.Sprintf("delete BackupConfig %s (%s) of live MyApp %s, then %s (%s)", bc.Name, bc.Spec.DeletionPolicy, app,
		next.Name, next.Spec.DeletionPolicy)
}

// tearDown deletes a MyApp a BackupConfig holds for its final backup (half
// the time with backups taking 1 to 3 s instead of 300 ms, for the step)
// and, 0 to 400 ms later, while the MyApp is being deleted, deletes that
// BackupConfig (del; with Delete half the time, set just before the MyApp's
// deletion) or edits it: backupBeforeAppDeletion turned off, its schedule or
// its retention changed. A new MyApp takes the deleted one's place, and
// after a deletion, 0.5 to 1.5 s later, a new BackupConfig for it.
func (d *decisions) tearDown(del bool) string {
	s := d.s
	bcs := d.changeable()
	if len(bcs) == 0 {
		return "teardown: no BackupConfig to use"
	}
	bc := bcs[d.rng.IntN(len(bcs))]
	step := ""
	target := d.appNamed(bc.Spec.AppRef.Name)
	if d.deleted[target.Name] || !bc.Spec.BackupBeforeAppDeletion {
		target = d.liveApp("")
		tag := d.maybeStale()
		update(s, bc, func(b *backupv1alpha1.BackupConfig) {
			b.Spec.AppRef.Name = target.Name
			b.Spec.BackupBeforeAppDeletion = true
		})
		step = fmt.Sprintf("hold %s by %s%s, ", target.Name, bc.Name, tag)
	}
	if del && bc.Spec.DeletionPolicy != backupv1alpha1.DeletionPolicyDelete && d.rng.IntN(2) == 0 {
		update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.DeletionPolicy = backupv1alpha1.DeletionPolicyDelete })
		step += "policy Delete, "
	}
	// The step is about a MyApp held when it is deleted.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(tick) {
		current := &appsv1alpha1.MyApp{}
		if err := k8sClient.Get(s.t.Context(), client.ObjectKeyFromObject(target), current); err == nil &&
			slices.Contains(current.Finalizers, backupv1alpha1.FinalBackupFinalizer) {
			break
		}
		if time.Now().After(deadline) {
			step += "not held yet, "
			break
		}
	}
	if d.rng.IntN(2) == 0 {
		// Slow backups for the step: the final backup is still RUNNING when
		// the BackupConfig is deleted or edited, not done already.
		slow := time.Duration(1+d.rng.IntN(3)) * time.Second
		s.sim.SetBackupDuration(slow)
		defer s.sim.SetBackupDuration(scenarioBackupDuration)
		step += fmt.Sprintf("backups take %s, ", slow)
	}
	wanting := d.wantingFinal(target)
	d.releases.expect(target.UID, wanting)
	s.remove(target)
	d.deleted[target.Name] = true
	time.Sleep(time.Duration(d.rng.IntN(400)) * time.Millisecond)
	var what string
	if del {
		d.deletions.deleted(bc)
		if bc.Spec.DeletionPolicy == backupv1alpha1.DeletionPolicyDelete {
			d.releases.tookOut(bc.UID, time.Now())
		}
		s.remove(bc)
		d.forget(bc)
		d.bcDeletedTearing++
		what = fmt.Sprintf("delete BackupConfig %s (%s)", bc.Name, bc.Spec.DeletionPolicy)
	} else {
		switch d.rng.IntN(3) {
		case 0:
			d.releases.tookOut(bc.UID, time.Now())
			update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.BackupBeforeAppDeletion = false })
			what = "turn off the final backup of " + bc.Name
		case 1:
			schedule := []string{"*/2 * * * *", "*/5 * * * *", "", "* * * * *"}[d.rng.IntN(4)]
			update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Schedule = schedule })
			what = fmt.Sprintf("set the schedule of %s to %q", bc.Name, schedule)
		default:
			keep := int32(1 + d.rng.IntN(3))
			update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.Retention.KeepLast = keep })
			what = fmt.Sprintf("set keepLast of %s to %d", bc.Name, keep)
		}
		d.bcEditedTearing++
	}
	app := s.newMyApp(fmt.Sprintf("app-%d", len(d.apps)))
	s.create(app)
	d.apps = append(d.apps, app)
	step += fmt.Sprintf("delete MyApp %s (wanted by %d), %s while it is being deleted, create %s", target.Name, len(wanting), what, app.Name)
	if del {
		time.Sleep(time.Duration(500+d.rng.IntN(1000)) * time.Millisecond)
		next := d.newBackupConfig(app.Name)
		step += fmt.Sprintf(", %s (%s) for it", next.Name, next.Spec.DeletionPolicy)
	}
	return step
}

// newBackupConfig creates a BackupConfig of app as the sequence starts
// with them, but with Retain or Delete at random, under a fresh name.
func (d *decisions) newBackupConfig(app string) *backupv1alpha1.BackupConfig {
	policy := backupv1alpha1.DeletionPolicyRetain
	if d.rng.IntN(2) == 0 {
		policy = backupv1alpha1.DeletionPolicyDelete
	}
	bc := fixtures.NewBackupConfig(d.s.ns, fmt.Sprintf("bc-%d", d.nextBC), app, fixtures.WithFinalBackup(),
		fixtures.WithBackupDeletionPolicy(policy), fixtures.WithSchedule("* * * * *"))
	d.nextBC++
	d.s.create(bc)
	d.bcs = append(d.bcs, bc)
	return bc
}

// forget drops a deleted BackupConfig from those the sequence changes.
func (d *decisions) forget(bc *backupv1alpha1.BackupConfig) {
	d.bcs = slices.DeleteFunc(d.bcs, func(b *backupv1alpha1.BackupConfig) bool { return b.UID == bc.UID })
}

// appNamed returns the sequence's MyApp called name.
func (d *decisions) appNamed(name string) *appsv1alpha1.MyApp {
	for _, app := range d.apps {
		if app.Name == name {
			return app
		}
	}
	d.s.t.Fatalf("no MyApp %s in the sequence", name)
	return nil
}

// wantingFinal lists what the BackupConfigs want when target is deleted:
// those with the option on, referencing it, not being deleted. Nothing
// changes them until it is gone (changeable), except the tearDown step.
func (d *decisions) wantingFinal(target *appsv1alpha1.MyApp) []*backupv1alpha1.BackupConfig {
	s := d.s
	var live backupv1alpha1.BackupConfigList
	if err := k8sClient.List(s.t.Context(), &live, client.InNamespace(s.ns)); err != nil {
		s.t.Fatalf("listing BackupConfigs: %v", err)
	}
	var wanting []*backupv1alpha1.BackupConfig
	for i := range live.Items {
		bc := &live.Items[i]
		if bc.Spec.BackupBeforeAppDeletion && bc.Spec.AppRef.Name == target.Name && bc.DeletionTimestamp.IsZero() {
			wanting = append(wanting, bc)
		}
	}
	return wanting
}

// deleteBackupConfigFirst deletes a MyApp held for its final backup and its
// BackupConfig the way kubectl delete -f deletes a file that lists the
// BackupConfig first, or a GitOps prune deletes both: the BackupConfig,
// then the MyApp 0 to 30 ms later (audit 3, T1). The BackupConfig is
// pointed at a live MyApp with the final backup on if it is not already,
// with Delete half the time (a way out: its backups go with it), and it
// counts among those that want the MyApp's final backup: being deleted
// with its MyApp is no way out. A new MyApp takes the MyApp's place and,
// 0.5 to 1.5 s later, a new BackupConfig the BackupConfig's.
func (d *decisions) deleteBackupConfigFirst() string {
	s := d.s
	bcs := d.changeable()
	if len(bcs) == 0 {
		return "delete-bc-first: no BackupConfig to use"
	}
	bc := bcs[d.rng.IntN(len(bcs))]
	step := ""
	target := d.appNamed(bc.Spec.AppRef.Name)
	if d.deleted[target.Name] || !bc.Spec.BackupBeforeAppDeletion {
		target = d.liveApp("")
		tag := d.maybeStale()
		update(s, bc, func(b *backupv1alpha1.BackupConfig) {
			b.Spec.AppRef.Name = target.Name
			b.Spec.BackupBeforeAppDeletion = true
		})
		step = fmt.Sprintf("hold %s by %s%s, ", target.Name, bc.Name, tag)
	}
	if bc.Spec.DeletionPolicy != backupv1alpha1.DeletionPolicyDelete && d.rng.IntN(2) == 0 {
		update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.DeletionPolicy = backupv1alpha1.DeletionPolicyDelete })
		step += "policy Delete, "
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(tick) {
		current := &appsv1alpha1.MyApp{}
		if err := k8sClient.Get(s.t.Context(), client.ObjectKeyFromObject(target), current); err == nil &&
			slices.Contains(current.Finalizers, backupv1alpha1.FinalBackupFinalizer) {
			break
		}
		if time.Now().After(deadline) {
			step += "not held yet, "
			break
		}
	}
	// Counted before either deletion: the BackupConfig deleted first wants
	// the final backup as much as one deleted after its MyApp.
	wanting := d.wantingFinal(target)
	d.releases.expect(target.UID, wanting)
	d.deletions.deleted(bc)
	if bc.Spec.DeletionPolicy == backupv1alpha1.DeletionPolicyDelete {
		d.releases.tookOut(bc.UID, time.Now())
	}
	s.remove(bc)
	time.Sleep(time.Duration(d.rng.IntN(31)) * time.Millisecond)
	s.remove(target)
	d.deleted[target.Name] = true
	d.forget(bc)
	d.bcFirst++
	app := s.newMyApp(fmt.Sprintf("app-%d", len(d.apps)))
	s.create(app)
	d.apps = append(d.apps, app)
	time.Sleep(time.Duration(500+d.rng.IntN(1000)) * time.Millisecond)
	next := d.newBackupConfig(app.Name)
	return fmt.Sprintf("%sdelete BackupConfig %s (%s) then MyApp %s (wanted by %d), create %s, %s (%s) for it", step,
		bc.Name, bc.Spec.DeletionPolicy, target.Name, len(wanting), app.Name, next.Name, next.Spec.DeletionPolicy)
}
