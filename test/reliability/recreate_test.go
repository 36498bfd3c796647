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
	"math/rand/v2"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
		s.waitFor("the MyApp is created again", func(ctx context.Context) error {
			if time.Now().After(outageEnds) {
				for _, svc := range down {
					s.sim.SetOutage(svc, false)
				}
			}
			next.ResourceVersion = ""
			err := k8sClient.Create(ctx, next)
			if apierrors.IsAlreadyExists(err) {
				return err // the old incarnation is still being cleaned up
			}
			return err
		})
		for _, svc := range down {
			s.sim.SetOutage(svc, false)
		}
		if t.Failed() {
			break // the oracle below counts what is wrong
		}
		t.Logf("round %d: %v down, MyApp %s replaced by %s", i, down, app.UID, next.UID)
		app = next
		uids = append(uids, app.UID)
		if i%2 == 0 {
			s.waitFor("the new MyApp becomes Ready", s.readyAt(app))
			if t.Failed() {
				break
			}
		}
	}
	s.waitFor("the newest MyApp becomes Ready", s.readyAt(app))
	r := s.oracle.settle(t, settleTimeout)
	var tally tally
	tally.add(r, true)
	t.Logf("RESULT family=4 rounds=%d incarnations=%d %s", rounds, len(uids), tally)
	judge(t, r, "same-name recreate")
}
