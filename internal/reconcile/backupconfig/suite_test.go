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
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3/s3test"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

var (
	cp         *controlplane.ControlPlane
	testScheme = fixtures.Scheme()
)

func TestMain(m *testing.M) {
	// The managers' logs are shown only for a failing run.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierEnvtest}, &cp, func(*controlplane.ControlPlane) (func(), error) {
		// The S3 tests' versitygw, if one started, goes with the suite.
		return func() {
			if err := s3test.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping versitygw:", err)
			}
		}, nil
	}))
}

// Timeouts are generous because the machine running the tests may be busy;
// a passing run waits only as long as the controller needs.
const (
	eventually   = 30 * time.Second
	tick         = 50 * time.Millisecond
	consistently = time.Second

	simToken          = "backupconfig-test-token"
	simBackupDuration = 300 * time.Millisecond
	pollInterval      = 100 * time.Millisecond
	cleanupGrace      = 500 * time.Millisecond

	dnsCleanupFinalizer = appsv1alpha1.DNSCleanupFinalizer
)

// testEnv is one test's namespace, backup service and controller.
type testEnv struct {
	t       *testing.T
	ns      string
	c       client.Client
	sim     *simulator.Server
	simURL  string
	backups backup.Client
	// provider names the backup provider (providers_test.go), store reads
	// what it holds; s3 is set for the S3 provider.
	provider backuptest.Provider
	store    backupStore
	s3       *s3Store
	// clock is the running Reconciler's clock (see now).
	clock atomic.Pointer[clock.PassiveClock]
	// reconciler is the one the running manager uses, nil while none runs.
	reconciler *Reconciler
	stop       func()
	pokes      atomic.Int64
}

// newTestEnv creates a namespace and a simulated backup service for one test.
func newTestEnv(t *testing.T, simOpts ...func(*simulator.Options)) *testEnv {
	t.Helper()
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{Scheme: testScheme})
	g.Expect(err).NotTo(HaveOccurred())

	ns := fixtures.CreateNamespace(t, c, "bc")

	opts := simulator.Options{Token: simToken, BackupDuration: simBackupDuration}
	for _, o := range simOpts {
		o(&opts)
	}
	sim, url := simtest.Start(t, opts)
	e := &testEnv{t: t, ns: ns, c: c, sim: sim, simURL: url, provider: "http"}
	e.store = simulatorStore{sim: sim}
	e.setBackupClient()
	return e
}

// setBackupClient replaces the backup service client the next manager
// uses. By default it makes no retries of its own: the controller's retries
// are under test, and an outage should fail fast.
func (e *testEnv) setBackupClient(changes ...func(*external.Config)) {
	e.t.Helper()
	cfg := external.Config{
		BaseURL:        e.simURL,
		Token:          external.StaticTokenSource(simToken),
		AttemptTimeout: 2 * time.Second,
		MaxRetries:     -1,
	}
	for _, change := range changes {
		change(&cfg)
	}
	backups, err := httpbackup.New(cfg)
	NewWithT(e.t).Expect(err).NotTo(HaveOccurred())
	e.backups = backups
}

// startManager runs the controller in a manager that sees only this test's
// namespace, until the test ends or stopManager is called.
func (e *testEnv) startManager(mutate ...func(*Reconciler)) *Reconciler {
	e.t.Helper()
	g := NewWithT(e.t)
	mgr, err := ctrl.NewManager(cp.Config, fixtures.ManagerOptions(ctrl.Options{
		Scheme: testScheme,
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		// Each test starts its own manager with the same controller name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}))
	g.Expect(err).NotTo(HaveOccurred())
	r := &Reconciler{Client: mgr.GetClient(), Backups: e.backups, BackupPollInterval: pollInterval,
		CleanupGrace: cleanupGrace, OwnerID: testOwnerID, RenderChildren: myapp.RenderChildren}
	for _, m := range mutate {
		m(r)
	}
	g.Expect(r.SetupWithManager(e.t.Context(), mgr)).To(Succeed())
	e.clock.Store(&r.Clock)

	stop := fixtures.StartManager(e.t.Context(), mgr)
	g.Expect(mgr.GetCache().WaitForCacheSync(e.t.Context())).To(BeTrue())
	e.reconciler = r
	stopped := false
	e.stop = func() {
		if stopped {
			return
		}
		stopped = true
		g.Expect(stop()).To(Succeed())
		e.reconciler = nil
	}
	e.t.Cleanup(e.stop)
	return r
}

// stopManager stops the controller, as a crash or a rollout would.
func (e *testEnv) stopManager() { e.stop() }

// poke changes an annotation, which makes the controller reconcile the
// BackupConfig now: the way a test wakes it after moving a fake clock.
func (e *testEnv) poke(bc *backupv1alpha1.BackupConfig) {
	e.t.Helper()
	n := e.pokes.Add(1)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"test.myapp.dev/poke":"%d"}}}`, n)
	NewWithT(e.t).Expect(e.c.Patch(e.t.Context(), bc, client.RawPatch("application/merge-patch+json", patch))).To(Succeed())
}

// newApp builds a MyApp in the test's namespace.
func (e *testEnv) newApp(name string, finalizers ...string) *appsv1alpha1.MyApp {
	return fixtures.NewMyApp(e.ns, name, fixtures.WithFinalizers(finalizers...))
}

// newBackupConfig builds a BackupConfig of app in the test's namespace.
func (e *testEnv) newBackupConfig(name, app string, opts ...fixtures.BackupConfigOption) *backupv1alpha1.BackupConfig {
	return fixtures.NewBackupConfig(e.ns, name, app, opts...)
}

// create creates objects and fails the test on error.
func (e *testEnv) create(objs ...client.Object) {
	e.t.Helper()
	for _, o := range objs {
		NewWithT(e.t).Expect(e.c.Create(e.t.Context(), o)).To(Succeed())
	}
}

// update re-reads obj, applies change and writes it back, retrying on
// conflicts with the controller's writes.
func update[T client.Object](e *testEnv, obj T, change func(T)) {
	e.t.Helper()
	NewWithT(e.t).Eventually(func() error {
		if err := e.c.Get(e.t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return e.c.Update(e.t.Context(), obj)
	}, eventually, tick).Should(Succeed())
}

// get re-reads obj; a Gomega-friendly fetch for Eventually.
func (e *testEnv) get(obj client.Object) func() error {
	return func() error { return e.c.Get(e.t.Context(), client.ObjectKeyFromObject(obj), obj) }
}

// fetchBackupConfig returns a function Eventually can poll for the current
// BackupConfig.
func (e *testEnv) fetchBackupConfig(bc *backupv1alpha1.BackupConfig) func(Gomega) *backupv1alpha1.BackupConfig {
	return func(g Gomega) *backupv1alpha1.BackupConfig {
		current := &backupv1alpha1.BackupConfig{}
		g.Expect(e.c.Get(e.t.Context(), client.ObjectKeyFromObject(bc), current)).To(Succeed())
		return current
	}
}

// waitForLastBackup waits until the BackupConfig's last backup has the
// given phase and trigger and returns the BackupConfig.
func (e *testEnv) waitForLastBackup(bc *backupv1alpha1.BackupConfig, phase backupv1alpha1.BackupPhase,
	trigger backupv1alpha1.BackupTrigger) *backupv1alpha1.BackupConfig {
	e.t.Helper()
	return e.waitForBackupAfter(bc, nil, phase, trigger)
}

// waitForBackupAfter is waitForLastBackup for a backup other than the last
// backup of previous.
func (e *testEnv) waitForBackupAfter(bc, previous *backupv1alpha1.BackupConfig, phase backupv1alpha1.BackupPhase,
	trigger backupv1alpha1.BackupTrigger) *backupv1alpha1.BackupConfig {
	e.t.Helper()
	var current *backupv1alpha1.BackupConfig
	NewWithT(e.t).Eventually(func(g Gomega) {
		current = e.fetchBackupConfig(bc)(g)
		g.Expect(current.Status.LastBackup).NotTo(BeNil())
		if previous != nil && previous.Status.LastBackup != nil {
			g.Expect(current.Status.LastBackup.ID).NotTo(Equal(previous.Status.LastBackup.ID))
		}
		g.Expect(current.Status.LastBackup.Trigger).To(Equal(trigger))
		g.Expect(current.Status.LastBackup.Phase).To(Equal(phase))
	}, eventually, tick).Should(Succeed())
	return current
}

// ownBackups lists the backups the provider holds of bc, oldest first.
func (e *testEnv) ownBackups(bc *backupv1alpha1.BackupConfig) []storedBackup {
	return ownStored(e.store.all(e.t), bc.UID)
}

// backupIDs lists the IDs of backups, in order.
func backupIDs(backups []storedBackup) []string {
	ids := make([]string, 0, len(backups))
	for _, b := range backups {
		ids = append(ids, b.ID)
	}
	return ids
}

// condition returns a condition of bc, or an empty one.
func condition(bc *backupv1alpha1.BackupConfig, conditionType string) metav1.Condition {
	return fixtures.Condition(bc.Status.Conditions, conditionType)
}

// eventReasons lists the reasons of the events recorded about bc.
func (e *testEnv) eventReasons(g Gomega, bc *backupv1alpha1.BackupConfig) []eventReason {
	return fixtures.EventReasons[eventReason](e.t.Context(), g, e.c, "BackupConfig", e.ns, bc.Name)
}
