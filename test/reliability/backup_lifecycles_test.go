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
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// scheduleStart is where a scheduled lifecycle's fake clock starts: a
// quarter past the hour after the real one, so an hourly schedule's first
// slot comes 45 minutes later. The clock stays ahead of the API server's:
// the controller measures how long ago a deletion began (the cleanup grace)
// between the API server's deletionTimestamp and its own clock, so a fake
// clock behind real time would hold every deletion.
func scheduleStart() time.Time {
	return time.Now().UTC().Truncate(time.Hour).Add(time.Hour + 15*time.Minute)
}

// scheduleLifecycle: a MyApp and an hourly BackupConfig (no on-change
// backups, no final backup) are created; the fake clock passes two slots,
// each of which must give exactly one scheduled backup; the BackupConfig is
// deleted (its backups with it), then the MyApp.
func scheduleLifecycle(s *scenario) {
	app := s.newMyApp("web")
	s.create(app)
	s.waitFor("the MyApp becomes Ready", s.readyAt(app))
	bc := s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyDelete)
	bc.Spec.Schedule = "0 * * * *"
	bc.Spec.BackupOnChange = ptr.To(false)
	bc.Spec.BackupBeforeAppDeletion = false
	s.create(bc)
	first := s.clock.Now().Truncate(time.Hour).Add(time.Hour)
	second, third := first.Add(time.Hour), first.Add(2*time.Hour)
	s.waitFor("the first slot is scheduled", scheduled(s, bc, first))
	s.clock.SetTime(first.Add(30 * time.Second))
	s.waitFor("the first slot is backed up", scheduled(s, bc, second, first))
	s.clock.SetTime(second.Add(30 * time.Second))
	s.waitFor("the second slot is backed up", scheduled(s, bc, third, first, second))
	s.remove(bc)
	s.waitFor("the BackupConfig is gone", gone(bc))
	s.remove(app)
	s.waitFor("the MyApp is gone", gone(app))
}

// scheduled holds once bc's next slot is next and every slot in done has a
// succeeded scheduled backup, the last of which status names. A fake clock
// moving wakes nothing, so it pokes bc now and then while it waits.
func scheduled(s *scenario, bc *backupv1alpha1.BackupConfig, next time.Time, done ...time.Time) func(context.Context) error {
	var poked time.Time
	return func(ctx context.Context) error {
		if time.Since(poked) > time.Second {
			poked = time.Now()
			if err := s.poke(ctx, bc); err != nil {
				return err
			}
		}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(bc), bc); err != nil {
			return err
		}
		if at := bc.Status.NextScheduleTime; at == nil || !at.UTC().Equal(next) {
			return fmt.Errorf("next slot %v, want %s", at, next)
		}
		var last simulator.Backup
		for _, slot := range done {
			suffix := "/" + slot.UTC().Format("20060102T1504Z")
			i := slices.IndexFunc(ownBackups(s, bc), func(b simulator.Backup) bool {
				return strings.HasSuffix(b.IdempotencyKey, suffix) && b.Phase == simulator.PhaseSucceeded
			})
			if i < 0 {
				return fmt.Errorf("no succeeded backup of the %s slot", slot.Format("15:04"))
			}
			last = ownBackups(s, bc)[i]
		}
		if len(done) > 0 {
			if lb := bc.Status.LastBackup; lb == nil || lb.ID != last.ID || lb.Phase != backupv1alpha1.BackupSucceeded {
				return fmt.Errorf("last backup %+v, want %s succeeded", lb, last.ID)
			}
		}
		return nil
	}
}

// retentionLifecycle: a MyApp and a BackupConfig keeping the last 2
// backups; four generations are backed up on change, so retention prunes
// the two oldest; then the BackupConfig and the MyApp are deleted.
func retentionLifecycle(s *scenario) {
	app := s.newMyApp("web")
	s.create(app)
	s.waitFor("the MyApp becomes Ready", s.readyAt(app))
	bc := s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyDelete)
	bc.Spec.Retention.KeepLast = 2
	bc.Spec.BackupBeforeAppDeletion = false
	s.create(bc)
	s.waitFor("the baseline backup succeeds", backedUp(bc, app))
	for _, image := range []string{"nginx:1.28", "nginx:1.29", "nginx:1.30"} {
		update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = image })
		s.waitFor("the backup of "+image+" succeeds", backedUp(bc, app))
	}
	s.waitFor("retention keeps the two newest backups", keptNewest(s, bc, app, 2))
	s.remove(bc)
	s.waitFor("the BackupConfig is gone", gone(bc))
	s.remove(app)
	s.waitFor("the MyApp is gone", gone(app))
}

// keptNewest holds once the service lists exactly n backups of bc, the
// on-change backups of app's n newest generations.
func keptNewest(s *scenario, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp, n int) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		var keys []string
		for _, b := range ownBackups(s, bc) {
			keys = append(keys, b.IdempotencyKey)
		}
		want := make([]string, 0, n)
		for g := app.Generation - int64(n) + 1; g <= app.Generation; g++ {
			want = append(want, backupOwner(bc)+"/change/"+string(app.UID)+"/"+strconv.FormatInt(g, 10))
		}
		slices.Sort(keys)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			return fmt.Errorf("backups %v, want %v", keys, want)
		}
		return nil
	}
}

// appRefLifecycle: two MyApps; a BackupConfig with a final backup backs up
// the first, then its appRef moves to the second, which it backs up and
// holds instead (the first is released); the first MyApp is deleted (no
// final backup), the second (its final backup), then the BackupConfig.
func appRefLifecycle(s *scenario) {
	web, api := s.newMyApp("web"), s.newMyApp("api")
	s.create(web)
	s.create(api)
	s.waitFor("MyApp web becomes Ready", s.readyAt(web))
	s.waitFor("MyApp api becomes Ready", s.readyAt(api))
	bc := s.newBackupConfig("backup", "web", backupv1alpha1.DeletionPolicyDelete)
	s.create(bc)
	s.waitFor("the baseline backup of web succeeds", backedUp(bc, web))
	update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.AppRef.Name = "api" })
	s.waitFor("the baseline backup of api succeeds", backedUp(bc, api))
	s.remove(web)
	s.waitFor("MyApp web is gone", gone(web))
	s.remove(api)
	s.waitFor("MyApp api is gone after its final backup", gone(api))
	s.remove(bc)
	s.waitFor("the BackupConfig is gone", gone(bc))
}

// poke writes an annotation on bc, so the controller reconciles it.
func (s *scenario) poke(ctx context.Context, bc *backupv1alpha1.BackupConfig) error {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"test.myapp.dev/poke":"%d"}}}`, time.Now().UnixNano())
	return client.IgnoreNotFound(k8sClient.Patch(ctx, bc.DeepCopy(), client.RawPatch("application/merge-patch+json", patch)))
}

// ownBackups lists the backups the scenario's storage holds for bc: the
// simulator's backup service, or its bucket on the S3 path.
func ownBackups(s *scenario, bc *backupv1alpha1.BackupConfig) []simulator.Backup {
	all := s.sim.Backups()
	if s.oracle.backupsOf != nil {
		// An error reads as no backups yet: the caller waits and asks
		// again.
		all, _, _ = s.oracle.backupsOf(s.t.Context())
	}
	var own []simulator.Backup
	for _, b := range all {
		if b.Owner == backupOwner(bc) {
			own = append(own, b)
		}
	}
	return own
}
