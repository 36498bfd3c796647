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
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// readerPollInterval is how often the tests' reader of a name asks the
// DNS service for it, as a resolver hammering it would.
const readerPollInterval = 100 * time.Millisecond

// nameReader polls the DNS service for one name every readerPollInterval
// until stopped, counting the reads that found no active record (none, or
// one still propagating, which a resolver does not answer yet): a name
// handed over must never be one of them.
type nameReader struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	// reads and absent count the polls and those that found nothing;
	// owners are the owners seen, each once, in order.
	reads, absent int
	owners        []string
}

func (e *testEnv) readName(host string) *nameReader {
	r := &nameReader{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		tick := time.NewTicker(readerPollInterval)
		defer tick.Stop()
		for {
			r.read(e, host)
			select {
			case <-r.stop:
				// One read after halt was called, so that what the test
				// saw the service hold before it stopped the reader is
				// among the owners: without it a hand-over that landed
				// in the last 100 ms went unseen (a CI run failed so).
				r.read(e, host)
				return
			case <-tick.C:
			}
		}
	}()
	e.t.Cleanup(r.halt)
	return r
}

// read polls the name once.
func (r *nameReader) read(e *testEnv, host string) {
	rec := e.record(host)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	switch {
	case rec == nil || rec.State != simulator.StateActive:
		r.absent++
	case len(r.owners) == 0 || r.owners[len(r.owners)-1] != rec.Owner:
		r.owners = append(r.owners, rec.Owner)
	}
}

func (r *nameReader) halt() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}

// expectNeverAbsent stops the reader and checks that every read found the
// record, first the old MyApp's and at last the restored MyApp's.
func (r *nameReader) expectNeverAbsent(g Gomega, oldUID, newUID types.UID) {
	r.halt()
	r.mu.Lock()
	defer r.mu.Unlock()
	// The hand-over itself may take less than a second; what shows the
	// reader read across it is that it saw both owners.
	g.Expect(r.reads).To(BeNumerically(">=", 2), "the reader polled the name")
	g.Expect(r.absent).To(BeZero(), "reads that found no record, of %d (owners seen: %v)", r.reads, r.owners)
	g.Expect(r.owners).NotTo(BeEmpty())
	g.Expect(r.owners[0]).To(HaveSuffix("/" + string(oldUID)))
	g.Expect(r.owners[len(r.owners)-1]).To(HaveSuffix("/" + string(newUID)))
}

// runOldApp creates a MyApp under policy, waits until it is Ready with its
// record registered, and takes a backup of it.
func (e *testEnv) runOldApp(g Gomega, policy appsv1alpha1.DeletionPolicy) (*appsv1alpha1.MyApp, string) {
	e.t.Helper()
	live := fixtures.NewMyApp(e.ns, "web", fixtures.WithReplicas(1), fixtures.WithAppDeletionPolicy(policy))
	e.create(live)
	fixtures.EventuallyReady(e.t.Context(), g, e.c, eventually, live)
	g.Expect(e.record(live.Spec.Host)).NotTo(BeNil())
	return live, e.seed(seedOptions{app: live}).ID
}

// TestARestoredMyAppTakesOverTheRecordAnOrphanDeletionLeft: a MyApp deleted
// under deletionPolicy Orphan leaves its record, marked orphaned; restored
// from its backup, the new MyApp (another UID, marked restored from the
// old one) takes the record over with a transfer. A reader polling the
// name every 100 ms never finds it absent, with and without the orphan
// sweep running every 2 s.
func TestARestoredMyAppTakesOverTheRecordAnOrphanDeletionLeft(t *testing.T) {
	for _, sweep := range []time.Duration{0, 2 * time.Second} {
		t.Run("sweep="+sweep.String(), func(t *testing.T) {
			g := NewWithT(t)
			e := newTestEnv(t, backuptest.HTTP)
			e.sweepEvery = sweep
			e.startMyApps()
			e.startRestores()
			old, backupID := e.runOldApp(g, appsv1alpha1.DeletionPolicyOrphan)
			reader := e.readName(old.Spec.Host)

			g.Expect(e.c.Delete(t.Context(), old)).To(Succeed())
			g.Eventually(func() *appsv1alpha1.MyApp { return e.getApp("web") }, eventually, tick).Should(BeNil())
			g.Expect(e.record(old.Spec.Host)).To(HaveField("Owner", HavePrefix("myapp-operator-orphaned/")))

			r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{BackupID: backupID})
			e.create(r)
			b, err := e.backups.Get(t.Context(), backupID)
			g.Expect(err).NotTo(HaveOccurred())
			restored := expectRestored(e, r, b, old, "web")
			g.Expect(e.record(old.Spec.Host)).To(HaveField("Owner", HavePrefix("myapp-operator-orphaned/")),
				"the restored MyApp keeps the backed-up deletionPolicy Orphan")
			// Sweeps come and go after the take-over too.
			time.Sleep(2 * sweep)
			reader.expectNeverAbsent(g, old.UID, restored.UID)
			g.Expect(fixtures.EventReasons[string](t.Context(), g, e.c, "MyApp", e.ns, "web")).To(
				ContainElement("DNSRecordAdopted"))
		})
	}
}

// TestARestoredMyAppTakesOverTheRecordAForceDeletedNamespaceLeft: a MyApp
// whose finalizer was removed by hand during a DNS outage (what a
// force-deleted namespace does) leaves its record under its live owner,
// which the orphan sweep, running every 2 s, would delete. Restored while
// that record still exists, the new MyApp takes it over with a transfer,
// never the leak's delete and create (leak replacement is on), and the
// sweep spares it: a reader polling every 100 ms never finds the name
// absent.
func TestARestoredMyAppTakesOverTheRecordAForceDeletedNamespaceLeft(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.sweepEvery = 2 * time.Second
	e.startMyApps()
	e.startRestores()
	old, backupID := e.runOldApp(g, appsv1alpha1.DeletionPolicyDelete)
	reader := e.readName(old.Spec.Host)

	// The outage keeps the record from the finalizer and from the sweep
	// until the restored MyApp exists.
	e.sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { e.sim.SetOutage(simulator.ServiceDNS, false) })
	g.Expect(e.c.Delete(t.Context(), old)).To(Succeed())
	g.Expect(e.c.Patch(t.Context(), old, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
	g.Eventually(func() *appsv1alpha1.MyApp { return e.getApp("web") }, eventually, tick).Should(BeNil())
	g.Expect(e.record(old.Spec.Host)).To(HaveField("Owner", HaveSuffix("/"+string(old.UID))))

	r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{BackupID: backupID})
	e.create(r)
	g.Eventually(func() *appsv1alpha1.MyApp { return e.getApp("web") }, eventually, tick).ShouldNot(BeNil())
	// Two sweeps' worth of the outage with the restored MyApp in place,
	// then the service comes back to the sweep and the MyApp together.
	time.Sleep(2 * e.sweepEvery)
	e.sim.SetOutage(simulator.ServiceDNS, false)

	b, err := e.backups.Get(t.Context(), backupID)
	g.Expect(err).NotTo(HaveOccurred())
	restored := expectRestored(e, r, b, old, "web")
	// Several sweeps after the take-over: the record stays the restored
	// MyApp's.
	time.Sleep(2 * e.sweepEvery)
	g.Expect(e.record(old.Spec.Host)).To(HaveField("Owner", HaveSuffix("/"+string(restored.UID))))
	reader.expectNeverAbsent(g, old.UID, restored.UID)
}
