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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// TestSameNameRecreateDuringOutage is family 4. One MyApp name is deleted
// and created again N times, with a BackupConfig taking a final backup of
// every incarnation. Each deletion starts during an outage of the DNS
// service, the backup service or both, so its cleanup is blocked; the test
// keeps trying to create the next incarnation all along and ends the outage
// after a random moment, so the new MyApp lands the instant the old one's
// finalizers are gone. Every other round waits for the new MyApp to be Ready
// first; the others delete it at once, mid-creation. In the end the newest
// MyApp owns the one record for the host, every old one's record is gone,
// and no backup is duplicated.
func TestSameNameRecreateDuringOutage(t *testing.T) {
	rounds := scale(4, 100)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	s := newScenario(t)
	s.startManager(newCrashGate(0))
	app := s.newMyApp("web")
	s.create(app)
	s.create(s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyDelete))
	s.waitFor("the first MyApp becomes Ready", s.readyAt(app))

	outages := [][]simulator.Service{
		{simulator.ServiceDNS}, {simulator.ServiceBackup}, {simulator.ServiceDNS, simulator.ServiceBackup},
	}
	uids := []types.UID{app.UID}
	for i := range rounds {
		down := outages[i%len(outages)]
		for _, svc := range down {
			s.sim.SetOutage(svc, true)
		}
		s.remove(app)
		outageEnds := time.Now().Add(time.Duration(rng.IntN(800)) * time.Millisecond)
		next := s.newMyApp("web")
		err := s.tryFor(func(ctx context.Context) error {
			if time.Now().After(outageEnds) {
				for _, svc := range down {
					s.sim.SetOutage(svc, false)
				}
			}
			next.ResourceVersion = ""
			// AlreadyExists while the old incarnation is being cleaned up.
			return k8sClient.Create(ctx, next)
		})
		for _, svc := range down {
			s.sim.SetOutage(svc, false)
		}
		if err != nil {
			// The old incarnation is stuck: the oracle below counts it.
			t.Logf("round %d: MyApp %s is not gone: %v", i, app.UID, err)
			break
		}
		t.Logf("round %d: %v down, MyApp %s replaced by %s", i, down, app.UID, next.UID)
		app = next
		uids = append(uids, app.UID)
		if i%2 == 0 {
			// Not an assertion: the oracle below counts a MyApp that never
			// becomes Ready, and what keeps it from it.
			if err := s.tryFor(s.readyAt(app)); err != nil {
				t.Logf("round %d: the new MyApp %s does not become Ready: %v", i, app.UID, err)
				break
			}
		}
	}
	r := s.oracle.settle(t)
	var tally tally
	tally.add(t, r, true)
	t.Logf("RESULT family=4 case=recreate-during-outages rounds=%d incarnations=%d %s", rounds, len(uids), tally)
	judge(t, r, "same-name recreate")
}

// TestDeleteRightAfterCreate isolates what family 4 found (B1 in
// docs/reliability.md): N MyApps, each deleted the moment it is created, with
// both services up. A deletion that the API server decides on before the
// MyApp controller's finalizer lands removes the MyApp with that finalizer
// on it (kubernetes/kubernetes#77988); the controller's next pass, from a
// cache that has not seen the deletion yet, then registers a record nobody
// will delete. The oracle counts those records as leaks.
func TestDeleteRightAfterCreate(t *testing.T) {
	n := scale(20, 200)
	s := newScenario(t)
	s.startManager(newCrashGate(0))
	for i := range n {
		app := s.newMyApp(fmt.Sprintf("app-%03d", i))
		s.create(app)
		// The controller adds its finalizer within tens of milliseconds of
		// the create; deleting across that span hits the race window.
		time.Sleep(time.Duration(i%10) * 5 * time.Millisecond)
		s.remove(app)
	}
	r := s.oracle.settle(t)
	var tally tally
	tally.add(t, r, true)
	t.Logf("RESULT family=4 case=delete-right-after-create myapps=%d %s", n, tally)
	judge(t, r, "delete right after create")
}
