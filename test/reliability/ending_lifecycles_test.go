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
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// The lifecycles of issue 40's B3 and B4 under family 1's crash gate:
// a Restore whose MyApp can never become Ready ends with the right reason
// and ends its BackupConfig's quiet period, and a BackupConfig with a
// final backup deleted before its MyApp, at any interval, leaves a backup
// of the MyApp's last spec or says why not.

// labelFollowsRestore is the label of the first backup a BackupConfig
// takes after the Restore it waited for ended (docs/spec/restore.md).
const labelFollowsRestore = "backup.myapp.dev/follows-restore"

// endingLifecycles are the lifecycles of this file, as family 1 runs them.
// The 60-second interval runs in the full campaign only: make test's
// sample would wait a minute for each of its points.
func endingLifecycles() []lifecycle {
	gaps := []struct {
		name     string
		after    time.Duration
		waitGone bool
		fullOnly bool
	}{
		{name: "0s"},
		{name: "3500ms", after: 3500 * time.Millisecond},
		{name: "6s", after: 6 * time.Second},
		{name: "60s", after: time.Minute, fullOnly: true},
		{name: "waited", waitGone: true},
	}
	out := make([]lifecycle, 0, 1+len(gaps))
	out = append(out, lifecycle{name: "restore-hostconflict", run: restoreHostConflictLifecycle})
	for _, gap := range gaps {
		out = append(out, lifecycle{name: "bcfirst-" + gap.name, fullOnly: gap.fullOnly,
			run: func(s *scenario) { backupConfigFirstLifecycle(s, gap.after, gap.waitGone) }})
	}
	return out
}

// restoreHostConflictLifecycle: MyApp web, Ready, and its BackupConfig's
// baseline backup; a BackupConfig of the MyApp web-copy, which does not
// exist yet; a Restore of web's backup into web-copy, whose host web
// holds, so web-copy can never become Ready: the Restore must fail with
// HostConflict (well within its short spec.timeout, so a RestoreTimedOut
// would mean the conflict was missed). Meanwhile web-copy's BackupConfig
// is quiet; once the Restore has ended it backs web-copy up (the first
// backup labelled as following the Restore) and backs up a spec change.
// The failed Restore, web-copy and its BackupConfig are then deleted, so
// the oracle judges what is left as of any scenario: web Ready, no record
// or backup leaked.
func restoreHostConflictLifecycle(s *scenario) {
	app := s.newMyApp("web")
	s.create(app)
	s.waitFor("the MyApp becomes Ready", s.readyAt(app))
	bc := s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyRetain)
	s.create(bc)
	s.waitFor("the baseline backup succeeds", backedUp(bc, app))

	copyBC := fixtures.NewBackupConfig(s.ns, "copy-backup", "web-copy",
		fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyRetain))
	s.create(copyBC)
	rs := &backupv1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "copy-restore"},
		Spec: backupv1alpha1.RestoreSpec{
			Source:  backupv1alpha1.RestoreSource{BackupConfigRef: &backupv1alpha1.BackupConfigReference{Name: bc.Name}},
			Target:  backupv1alpha1.RestoreTarget{Name: "web-copy"},
			Timeout: &metav1.Duration{Duration: 3 * time.Minute},
		},
	}
	s.create(rs)
	s.waitFor("the Restore fails with HostConflict", restoreFailedWith(rs, backupv1alpha1.HostConflictReason))

	copyApp := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web-copy"}}
	s.waitFor("the copy's BackupConfig backs the copy up once the Restore has failed", backedUp(copyBC, copyApp))
	s.waitFor("the first backup after the Restore says it follows it", s.followsRestore(copyBC, rs.Name))
	update(s, copyApp, func(a *appsv1alpha1.MyApp) { a.Spec.Image = "nginx:1.28" })
	s.waitFor("the copy's BackupConfig backs up a spec change", backedUp(copyBC, copyApp))

	s.remove(rs)
	s.waitFor("the failed Restore is gone", gone(rs))
	s.remove(copyApp)
	s.waitFor("the copy is gone", gone(copyApp))
	s.remove(copyBC)
	s.waitFor("the copy's BackupConfig is gone", gone(copyBC))
}

// restoreFailedWith holds once rs is Failed with reason; a Restore that
// succeeded, or failed for another reason, is an error that no wait mends.
func restoreFailedWith(rs *backupv1alpha1.Restore, reason string) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(rs), rs); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(rs.Status.Conditions, backupv1alpha1.ReadyCondition)
		if rs.Status.Phase != backupv1alpha1.RestoreFailed || ready == nil || ready.Reason != reason {
			return fmt.Errorf("the Restore is %q, Ready %+v; want Failed with %s", rs.Status.Phase, ready, reason)
		}
		return nil
	}
}

// followsRestore holds once a succeeded backup of bc carries the label
// naming the Restore it waited for.
func (s *scenario) followsRestore(bc *backupv1alpha1.BackupConfig, restore string) func(context.Context) error {
	return func(context.Context) error {
		if slices.ContainsFunc(s.sim.Backups(), func(b simulator.Backup) bool {
			return b.Owner == backupOwner(bc) && b.Phase == simulator.PhaseSucceeded && b.Labels[labelFollowsRestore] == restore
		}) {
			return nil
		}
		return fmt.Errorf("no succeeded backup of %s labelled %s=%s", bc.Name, labelFollowsRestore, restore)
	}
}

// backupConfigFirstLifecycle: MyApp web and its BackupConfig (Retain, a
// final backup), the baseline backup taken and the MyApp held; the MyApp
// changed, then the BackupConfig deleted at once and the MyApp after the
// interval after (or once the BackupConfig is gone, when waitGone). Once
// both are gone, the service must hold a succeeded backup of the MyApp
// (its UID) whose content holds its last spec, or the BackupConfig must
// have said why not: a FinalBackupAbandoned warning event and Ready
// condition (docs/spec/backupconfig.md, "A BackupConfig deleted while its
// MyApp lives takes the final backup first").
func backupConfigFirstLifecycle(s *scenario, after time.Duration, waitGone bool) {
	app := s.newMyApp("web")
	s.create(app)
	s.waitFor("the MyApp becomes Ready", s.readyAt(app))
	bc := s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyRetain)
	s.create(bc)
	s.waitFor("the baseline backup succeeds and the MyApp is held", func(ctx context.Context) error {
		if err := backedUp(bc, app)(ctx); err != nil {
			return err
		}
		if !slices.Contains(app.Finalizers, backupv1alpha1.FinalBackupFinalizer) {
			return errors.New("the MyApp is not held yet")
		}
		return nil
	})
	// The last spec: no wait for its on-change backup, so the deletion
	// may come before it.
	update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = "nginx:1.28" })
	uid, last := app.UID, *app.Spec.DeepCopy()

	s.remove(bc)
	if waitGone {
		s.waitFor("the BackupConfig is gone before its MyApp is deleted", gone(bc))
	} else {
		s.pause(after)
	}
	s.remove(app)
	s.waitFor("the MyApp and its BackupConfig are gone", func(ctx context.Context) error {
		return errors.Join(gone(app)(ctx), gone(bc)(ctx))
	})
	s.waitFor("a backup of the MyApp's last spec exists, or a warning says why not", func(ctx context.Context) error {
		held, err := s.backedUpWithSpec(ctx, bc, uid, last)
		if err != nil || held || gaveUp(bc) {
			return err
		}
		return fmt.Errorf("no succeeded backup by %s of MyApp %s holds its last spec (image %s), and no %s warning",
			bc.Name, uid, last.Image, backupv1alpha1.FinalBackupAbandonedReason)
	})
}

// backedUpWithSpec reports whether the simulator holds a succeeded backup
// by bc of the MyApp uid whose content holds spec. It reads the content,
// not the generation label: the API server raises a MyApp's
// metadata.generation by one when its deletion begins, with no change of
// spec, so a final backup taken after that is labelled with the next
// generation and holds the same spec (B10 in docs/reliability.md).
func (s *scenario) backedUpWithSpec(ctx context.Context, bc *backupv1alpha1.BackupConfig, uid types.UID,
	spec appsv1alpha1.MyAppSpec) (bool, error) {
	backups, err := httpbackup.New(external.Config{BaseURL: s.url, Token: external.StaticTokenSource(simToken)})
	if err != nil {
		return false, err
	}
	for _, b := range s.sim.Backups() {
		if b.Owner != backupOwner(bc) || b.Phase != simulator.PhaseSucceeded ||
			b.Labels["backup.myapp.dev/myapp-uid"] != string(uid) {
			continue
		}
		data, err := backups.Content(ctx, b.ID)
		if err != nil {
			return false, fmt.Errorf("reading the content of backup %s: %w", b.ID, err)
		}
		p, err := backupcontent.DecodePayload(data)
		if err != nil {
			return false, fmt.Errorf("decoding the content of backup %s: %w", b.ID, err)
		}
		if equality.Semantic.DeepEqual(p.MyApp.Spec, spec) {
			return true, nil
		}
	}
	return false, nil
}

// pause waits for d, restarting a crashed manager on the way, as a user
// who waits between two commands while the operator goes on.
func (s *scenario) pause(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		s.restartIfCrashed()
		select {
		case <-s.t.Context().Done():
			return
		case <-time.After(min(tick, time.Until(end))):
		}
	}
}
