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

package backupconfig

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// switchableStaleBackupConfig serves reads of one BackupConfig from an
// older copy while one is set, as a cache lagging behind a spec change.
type switchableStaleBackupConfig struct {
	client.Client
	stale atomic.Pointer[backupv1alpha1.BackupConfig]
}

func (c *switchableStaleBackupConfig) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if stale := c.stale.Load(); stale != nil {
		if bc, ok := obj.(*backupv1alpha1.BackupConfig); ok && key == client.ObjectKeyFromObject(stale) {
			stale.DeepCopyInto(bc)
			return nil
		}
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestStaleAppRefKeepsTheReferencedMyAppsHold: a pass that reads a
// BackupConfig from before its appRef moved must not release the MyApp it
// references now. The hold is the only thing between that MyApp's deletion
// and its final backup. Family 2 of the reliability campaign (stale reads,
// scenario appref) found the stale pass taking it off (B2b in
// docs/reliability.md).
func TestStaleAppRefKeepsTheReferencedMyAppsHold(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	stale := &switchableStaleBackupConfig{}
	e.startManager(func(r *Reconciler) {
		stale.Client = r.Client
		r.Client = stale
	})
	web, api := e.newApp("web"), e.newApp("api")
	bc := e.newBackupConfig("backup", "web", fixtures.WithFinalBackup())
	e.create(web, api, bc)
	held := func(app *appsv1alpha1.MyApp) func(Gomega) []string {
		return func(g Gomega) []string {
			g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			return app.Finalizers
		}
	}
	g.Eventually(held(web), eventually, tick).Should(ContainElement(backupv1alpha1.FinalBackupFinalizer))
	before := e.fetchBackupConfig(bc)(g)

	update(e, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.AppRef.Name = "api" })
	g.Eventually(held(api), eventually, tick).Should(ContainElement(backupv1alpha1.FinalBackupFinalizer))
	g.Eventually(held(web), eventually, tick).ShouldNot(ContainElement(backupv1alpha1.FinalBackupFinalizer))

	// A pass on the old appRef puts the hold back on web (it still wants
	// web, as far as it knows); it must leave api's alone.
	stale.stale.Store(before)
	e.poke(bc)
	g.Eventually(held(web), eventually, tick).Should(ContainElement(backupv1alpha1.FinalBackupFinalizer))
	g.Consistently(held(api), 2*time.Second, tick).Should(ContainElement(backupv1alpha1.FinalBackupFinalizer))

	// Caught up, the controller releases web again and keeps api.
	stale.stale.Store(nil)
	e.poke(bc)
	g.Eventually(held(web), eventually, tick).ShouldNot(ContainElement(backupv1alpha1.FinalBackupFinalizer))
	g.Expect(held(api)(g)).To(ContainElement(backupv1alpha1.FinalBackupFinalizer))
}
