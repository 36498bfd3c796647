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

package restore

import (
	"fmt"
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// A crash at every write of a Restore, as test/reliability's family 1 does
// for the MyApp and BackupConfig lifecycles, with the same crash gate
// (fixtures.CrashGate). A reference run numbers the writes the Restore
// controller makes; then, for each write k, the restore runs again in a
// fresh namespace on a fresh simulator, the Restore controller's manager
// dies right after write k (every later call it makes, to the API server and
// the backup service, fails, and it is stopped), a newer backup lands while
// it is down, and a fresh manager takes over. Each run must end as the reference did: the backup chosen before the
// crash, one MyApp created from it and marked by the Restore, Succeeded.

// crashRun is one run of the lifecycle: a BackupConfig with a backup, a
// Restore of its latest, the Restore controller behind gate.
type crashRun struct {
	e       *testEnv
	bc      *backupv1alpha1.BackupConfig
	first   backup.Backup
	restore *backupv1alpha1.Restore
	stop    func()
}

// startCrashRun seeds the backup, starts the Restore controller behind
// gate and creates the Restore.
func startCrashRun(t *testing.T, gate *fixtures.CrashGate) *crashRun {
	t.Helper()
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	run := &crashRun{e: e, bc: fixtures.NewBackupConfig(e.ns, "web-nightly", "web")}
	e.create(run.bc)
	run.first = e.seed(seedOptions{app: backedUpApp(e.ns, "web", "nginx:1.27"), bcName: run.bc.Name, bcUID: run.bc.UID})
	run.stop = run.startRestores(gate)
	run.restore = e.newRestore("web-restore", backupv1alpha1.RestoreSource{
		BackupConfigRef: &backupv1alpha1.BackupConfigReference{Name: run.bc.Name}})
	e.create(run.restore)
	return run
}

// startRestores runs the Restore controller with every call to the API
// server and the backup service through gate.
func (run *crashRun) startRestores(gate *fixtures.CrashGate) func() {
	cfg := rest.CopyConfig(run.e.cp.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gate.Wrap("api", rt) })
	backups := run.e.newBackupClient(ownerID, gate.Wrap("backup", http.DefaultTransport.(*http.Transport).Clone()))
	return run.e.startRestoresWith(cfg, backups)
}

// settle waits for the Restore to succeed from the backup want and checks
// what it must have done, whatever crashed on the way.
func (run *crashRun) settle(t *testing.T, want backup.Backup) {
	t.Helper()
	g := NewWithT(t)
	e := run.e
	got := e.waitForPhase(run.restore, backupv1alpha1.RestoreSucceeded)
	g.Expect(got.Status.Backup.ID).To(Equal(want.ID), "the backup chosen is the one stored before the crash, or the newest after it")
	app := e.getApp("web")
	g.Expect(app).NotTo(BeNil())
	g.Expect(app.Annotations).To(HaveKeyWithValue(backupv1alpha1.BackupIDAnnotation, want.ID), "the MyApp is the chosen backup's")
	g.Expect(got.Status.RestoredAppUID).To(Equal(app.UID))
	g.Expect(app.Annotations).To(HaveKeyWithValue(backupv1alpha1.RestoreUIDAnnotation, string(got.UID)))
	reasons := e.eventReasons(g, run.restore)
	for _, r := range reasons {
		g.Expect(string(r)).NotTo(Equal(backupv1alpha1.TargetExistsReason), "the Restore never took its own MyApp for another's")
	}
}

func TestACrashAtEveryWriteOfARestore(t *testing.T) {
	var writes []string
	t.Run("reference", func(t *testing.T) {
		gate := &fixtures.CrashGate{}
		run := startCrashRun(t, gate)
		run.settle(t, run.first)
		writes = gate.Writes()
		for i, w := range writes {
			t.Logf("write %2d: %s", i+1, w)
		}
	})
	if len(writes) == 0 {
		t.Fatal("the reference run made no writes")
	}
	survived := 0
	for k := 1; k <= len(writes); k++ {
		t.Run(fmt.Sprintf("write-%02d", k), func(t *testing.T) {
			gate := &fixtures.CrashGate{CrashAt: k}
			run := startCrashRun(t, gate)
			g := NewWithT(t)
			g.Eventually(func(g Gomega) {
				if gate.Crashed() {
					return
				}
				got := &backupv1alpha1.Restore{}
				g.Expect(run.e.c.Get(t.Context(), client.ObjectKeyFromObject(run.restore), got)).To(Succeed())
				g.Expect(got.Status.Phase).To(Equal(backupv1alpha1.RestoreSucceeded))
			}, eventually, tick).Should(Succeed(), "the manager reaches write %d or the Restore succeeds", k)
			crashed := gate.Crashed()
			run.stop()
			want := run.first
			if crashed {
				// A newer backup lands while no manager runs. A Restore whose
				// choice was stored before the crash must not choose again;
				// one whose choice was not chooses the newest, after it.
				atCrash := &backupv1alpha1.Restore{}
				g.Expect(run.e.c.Get(t.Context(), client.ObjectKeyFromObject(run.restore), atCrash)).To(Succeed())
				newer := run.e.seed(seedOptions{app: backedUpApp(run.e.ns, "web", "nginx:1.28"), bcName: run.bc.Name, bcUID: run.bc.UID})
				if atCrash.Status.Backup == nil {
					t.Logf("no backup was chosen before the crash (Ready: %+v)", fixtures.Condition(atCrash.Status.Conditions, readyCondition))
					want = newer
				}
				run.startRestores(&fixtures.CrashGate{})
			}
			run.settle(t, want)
			if !t.Failed() {
				survived++
			}
			t.Logf("crash after write %d (%s): crashed=%t", k, describeWrite(writes, k), crashed)
			if w := gate.Writes(); len(w) > 0 && crashed {
				t.Logf("the write it crashed after: %s", w[len(w)-1])
			}
		})
	}
	t.Logf("RESULT restore crash points=%d survived=%d", len(writes), survived)
}

func describeWrite(writes []string, k int) string {
	if k < 1 || k > len(writes) {
		return "not in the reference run"
	}
	return writes[k-1]
}
