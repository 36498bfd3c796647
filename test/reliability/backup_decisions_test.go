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
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// decisionPairs is how many MyApps, each with a BackupConfig, a sequence
// drives; decisionSteps how many random steps it takes.
const (
	decisionPairs = 3
	decisionSteps = 20
	// decisionSettle bounds how long after the faults end every MyApp's
	// generation must have a SUCCEEDED backup: the schedule fires every
	// minute, and a failed change is retried after one or two minutes.
	decisionSettle = 3 * time.Minute
)

// TestBackupDecisions is family 9 (issue 26): seeded sequences of the
// backup decisions under the simulator's faults. Each MyApp has a
// BackupConfig backing it up on change and every minute; the sequence edits
// MyApps, makes backups fail, answers 503 for a while and delays the
// service's listings (its consistency delay), at random. Throughout, no
// BackupConfig may have two backups RUNNING at once. Once the faults end,
// every MyApp's generation must get a SUCCEEDED backup within
// decisionSettle, and the oracle must find nothing leaked, duplicated or
// wrong. With a slot every minute, the next slot covers a generation within
// the bound even if a failed change were not retried, so this family does
// not catch audit 2's F3; the package's phase, property and sequence tests
// do (internal/reconcile/backupconfig).
func TestBackupDecisions(t *testing.T) {
	for seed := range scale(1, 3) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			s := newScenario(t)
			s.startManager(newCrashGate(0))
			rng := rand.New(rand.NewPCG(uint64(seed), 26))
			apps := make([]*appsv1alpha1.MyApp, 0, decisionPairs)
			bcs := make([]*backupv1alpha1.BackupConfig, 0, decisionPairs)
			for i := range decisionPairs {
				app := s.newMyApp(fmt.Sprintf("app-%d", i))
				s.create(app)
				bc := fixtures.NewBackupConfig(s.ns, app.Name, app.Name,
					fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyRetain), fixtures.WithSchedule("* * * * *"))
				s.create(bc)
				apps = append(apps, app)
				bcs = append(bcs, bc)
			}
			for i := range apps {
				s.waitFor("BackupConfig "+bcs[i].Name+" backs up its MyApp", backedUp(bcs[i], apps[i]))
			}
			if t.Failed() {
				return
			}

			watch := watchRunning(t.Context(), s.sim)
			var steps []string
			for range decisionSteps {
				time.Sleep(time.Duration(500+rng.IntN(2000)) * time.Millisecond)
				switch k := rng.IntN(10); {
				case k < 4:
					app := apps[rng.IntN(len(apps))]
					update(s, app, func(a *appsv1alpha1.MyApp) {
						a.Spec.Replicas = ptr.To(1 + ptr.Deref(a.Spec.Replicas, 1)%3)
					})
					steps = append(steps, "edit "+app.Name)
				case k < 6:
					s.sim.FailBackups("disk full", 1)
					steps = append(steps, "fail-next-backup")
				case k < 8:
					s.sim.SetFault(simulator.ServiceBackup, simulator.AllOperations,
						simulator.Fault{Status: http.StatusServiceUnavailable, Count: 1 + rng.IntN(4)})
					steps = append(steps, "503s")
				default:
					d := time.Duration(rng.IntN(3)) * time.Second
					s.sim.SetConsistencyDelay(simulator.ServiceBackup, d)
					steps = append(steps, "listing-delay "+d.String())
				}
			}
			s.sim.FailBackups("", 0)
			s.sim.ClearFaults()
			s.sim.SetConsistencyDelay(simulator.ServiceBackup, 0)
			healed := time.Now()

			deadline := healed.Add(decisionSettle)
			var owed, owedAtHeal []string
			for {
				owed = owedGenerations(t.Context(), s, apps)
				if owedAtHeal == nil {
					owedAtHeal = append([]string{}, owed...)
				}
				if len(owed) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Second)
			}
			// Measured here, not after the oracle settles: settling takes its
			// quiet period, and up to settleTimeout (45 s) when it finds a
			// problem, which the campaign's seed-2 on b50733c printed as
			// covered-after=1m8s.
			coveredAfter := time.Since(healed).Round(time.Second)
			twice := watch()
			r := s.oracle.settle(t)
			slotOnly := coveredBySlotOnly(t.Context(), s, apps, bcs)
			t.Logf("RESULT family=9 case=seed-%d pairs=%d steps=%d covered-after=%s owed=%d two-running=%d slot-only=%d clean=%v",
				seed, decisionPairs, decisionSteps, coveredAfter, len(owed), twice, len(slotOnly), r.Clean())
			if len(owedAtHeal) > 0 {
				t.Logf("generations without a SUCCEEDED backup when the faults ended: %v", owedAtHeal)
			}
			if len(slotOnly) > 0 {
				t.Logf("generations covered by a SUCCEEDED scheduled backup, with no on-change backup left: %v", slotOnly)
			}
			if len(owed) > 0 {
				t.Errorf("%s after the faults ended, generations without a SUCCEEDED backup: %v (steps: %v)",
					decisionSettle, owed, steps)
			}
			if twice > 0 {
				t.Errorf("%d samples saw a BackupConfig with two backups RUNNING (steps: %v)", twice, steps)
			}
			if !r.Clean() {
				t.Errorf("the oracle: %s (steps: %v)", r, steps)
			}
		})
	}
}

// owedGenerations lists the MyApps whose current generation has no
// SUCCEEDED backup in the service, by the labels every backup carries.
func owedGenerations(ctx context.Context, s *scenario, apps []*appsv1alpha1.MyApp) []string {
	covered := map[string]bool{}
	for _, b := range s.sim.Backups() {
		if b.Phase == simulator.PhaseSucceeded {
			covered[b.Labels["backup.myapp.dev/myapp-uid"]+"/"+b.Labels["backup.myapp.dev/myapp-generation"]] = true
		}
	}
	var owed []string
	for _, app := range apps {
		current := &appsv1alpha1.MyApp{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), current); err != nil {
			owed = append(owed, app.Name+": "+err.Error())
			continue
		}
		if !covered[string(current.UID)+"/"+strconv.FormatInt(current.Generation, 10)] {
			owed = append(owed, fmt.Sprintf("%s generation %d", app.Name, current.Generation))
		}
	}
	return owed
}

// coveredBySlotOnly lists the MyApps whose current generation has a
// SUCCEEDED backup of its BackupConfig but no on-change backup left: none
// was started (a slot due while the edit waited started first), or it failed
// and retention deleted it once the slot's backup succeeded. The README
// allows both ("a successful scheduled backup ends the retries"; "every
// failed backup older than the newest successful one goes"); the oracle
// before this count did not (the campaign's seed-2 on b50733c).
func coveredBySlotOnly(ctx context.Context, s *scenario, apps []*appsv1alpha1.MyApp,
	bcs []*backupv1alpha1.BackupConfig) []string {
	backups := s.sim.Backups()
	var only []string
	for i, app := range apps {
		current := &appsv1alpha1.MyApp{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), current); err != nil {
			continue
		}
		owner := backupOwner(bcs[i])
		generation := strconv.FormatInt(current.Generation, 10)
		change, succeeded := false, false
		for _, b := range backups {
			if b.Owner != owner || b.Labels["backup.myapp.dev/myapp-uid"] != string(current.UID) ||
				b.Labels["backup.myapp.dev/myapp-generation"] != generation {
				continue
			}
			change = change || b.IdempotencyKey == fmt.Sprintf("%s/change/%s/%s", owner, current.UID, generation)
			succeeded = succeeded || b.Phase == simulator.PhaseSucceeded &&
				b.Labels["backup.myapp.dev/trigger"] == string(backupv1alpha1.TriggerSchedule)
		}
		if succeeded && !change {
			only = append(only, fmt.Sprintf("%s generation %s", app.Name, generation))
		}
	}
	return only
}

// watchRunning samples the service's backups every 100 ms until the
// returned function is called, which returns how many samples saw one owner
// with two backups RUNNING.
func watchRunning(ctx context.Context, sim *simulator.Server) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	twice := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			running := map[string]int{}
			for _, b := range sim.Backups() {
				if b.Phase == simulator.PhaseRunning {
					running[b.Owner]++
				}
			}
			for _, n := range running {
				if n > 1 {
					mu.Lock()
					twice++
					mu.Unlock()
				}
			}
		}
	}()
	return func() int {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return twice
	}
}
