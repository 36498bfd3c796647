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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// A BackupConfig whose cleanup failed many times in a row (the backup
// service down while events kept coming) is retried within
// pass.DefaultMaxRetryDelay of the service's return, as a MyApp is, not after
// the workqueue's default cap of 1000 seconds: nothing else brings a
// deleted BackupConfig back once the events stop.
func TestCleanupResumesSoonAfterManyFailedPasses(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t)
	e.startManager()
	app := e.newApp("erp")
	bc := e.newBackupConfig("erp", "erp", fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyDelete))
	e.create(app, bc)
	current := e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)

	e.sim.SetOutage(simulator.ServiceBackup, true)
	t.Cleanup(func() { e.sim.SetOutage(simulator.ServiceBackup, false) })
	g.Expect(e.c.Delete(t.Context(), current)).To(Succeed())

	// Every event starts a pass at once, whatever the backoff; each pass
	// fails its list of the backups to delete and doubles the backoff. 20
	// failures put the next retry past the cap: 5ms doubled 19 times is 43
	// minutes.
	const failures = 20
	lists := func() int { return e.sim.RequestCount(simulator.ServiceBackup, simulator.OpList) }
	start := lists()
	for lists()-start < failures {
		before := lists()
		e.poke(current)
		g.Eventually(lists, eventually, tick).Should(BeNumerically(">", before), "a pass fails")
	}

	e.sim.SetOutage(simulator.ServiceBackup, false)
	// Nothing but the retry brings the BackupConfig back: no event comes.
	g.Eventually(func() bool { return apierrors.IsNotFound(e.get(bc)()) }, pass.DefaultMaxRetryDelay+15*time.Second, tick).
		Should(BeTrue(), "the BackupConfig goes within the retry cap once the service is back")
}
