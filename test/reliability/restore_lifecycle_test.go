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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// restoreLifecycle: a MyApp under deletionPolicy Orphan and a BackupConfig
// (Retain, with a final backup) of it; the baseline backup; the MyApp
// deleted (the final backup, its record left behind, marked orphaned); a
// Restore of the BackupConfig's newest backup brings it back under another
// UID, which takes the record over; the Restore succeeds and is deleted,
// and the restored MyApp stays, Ready, and is backed up by the
// BackupConfig. The scenario ends with the restored MyApp and its
// BackupConfig live, so that the oracle judges what the Restore left: the
// BackupConfig lifecycles already judge their deletion.
func restoreLifecycle(s *scenario) {
	app := fixtures.NewMyApp(s.ns, "web", fixtures.WithReplicas(1),
		fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
	s.create(app)
	s.waitFor("the MyApp becomes Ready", s.readyAt(app))
	bc := s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyRetain)
	s.create(bc)
	s.waitFor("the baseline backup succeeds", backedUp(bc, app))
	s.oracle.handOver(s.t, app)
	s.remove(app)
	s.waitFor("the MyApp is gone after its final backup", gone(app))

	rs := &backupv1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web-restore"},
		Spec: backupv1alpha1.RestoreSpec{Source: backupv1alpha1.RestoreSource{
			BackupConfigRef: &backupv1alpha1.BackupConfigReference{Name: bc.Name}}},
	}
	s.create(rs)
	restored := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: app.Name}}
	s.waitFor("the Restore succeeds with the restored MyApp Ready", restoreSucceeded(rs, restored))
	s.oracle.restoredBy(rs)
	s.remove(rs)
	s.waitFor("the Restore is gone", gone(rs))
	s.waitFor("the restored MyApp stays after its Restore is deleted", sameApp(restored, rs.Status.RestoredAppUID))
	s.waitFor("the BackupConfig backs up the restored MyApp", backedUp(bc, restored))
}

// restoreSucceeded holds once rs is Succeeded and app, the MyApp it
// restored, is Ready at its generation.
func restoreSucceeded(rs *backupv1alpha1.Restore, app *appsv1alpha1.MyApp) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(rs), rs); err != nil {
			return err
		}
		if rs.Status.Phase != backupv1alpha1.RestoreSucceeded {
			return fmt.Errorf("the Restore is %q (%+v)", rs.Status.Phase, rs.Status.Conditions)
		}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		return myAppReady(app)
	}
}

// sameApp holds while app exists with the UID uid and is Ready.
func sameApp(app *appsv1alpha1.MyApp, uid types.UID) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		if app.UID != uid {
			return fmt.Errorf("MyApp %s has UID %s, not the restored %s", app.Name, app.UID, uid)
		}
		return myAppReady(app)
	}
}
