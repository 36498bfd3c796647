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
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

const (
	simToken = "reliability-token"
	// defaultTarget is where records point: kwok's Ingresses never get a
	// load-balancer address.
	defaultTarget = "192.0.2.10"
	tick          = 100 * time.Millisecond
	// stepTimeout bounds one step of a scenario on a busy 2-core machine.
	stepTimeout = 60 * time.Second
	// orphanSweepInterval is how often the campaign's managers sweep the DNS
	// service for records of MyApps that are gone.
	orphanSweepInterval = 3 * time.Second
)

// scenario is one namespace, one simulator (both services) and the managers
// that run one after another on them, as replicas of the operator would.
type scenario struct {
	t   *testing.T
	ns  string
	sim *simulator.Server
	url string
	// manager is the one running now, nil between a crash and the restart.
	manager *managerRun
	oracle  *oracle
	// clientFor, when set, gives the client the controllers read and write
	// through, in place of the manager's (families 2 and 7 wrap it).
	clientFor func(mgr ctrl.Manager) client.Client
	// clock, when set, is the BackupConfig controller's clock in every
	// manager of the scenario, so schedules survive a restart.
	clock *clocktesting.FakeClock
	// alsoWatch are namespaces the managers watch besides ns (family 10's
	// MyApps waiting for a host from another namespace).
	alsoWatch []string
	// dnsFor, when set, gives the DNS client the managers use in place of
	// the simulator's (the webhook fault family); its transport is ext,
	// wrapped by the crash gate.
	dnsFor func(ext http.RoundTripper) dns.Client
	// cleanupGrace, when set, replaces the managers' short cleanup grace:
	// a scenario whose backup service lists backups late needs one that
	// covers the lag, as the BackupConfig Reconciler documents.
	cleanupGrace time.Duration
	// s3, when set (useS3), keeps the backups in a bucket through the s3
	// provider instead of the simulator's backup service.
	s3 *scenarioS3
}

func newScenario(t *testing.T) *scenario {
	t.Helper()
	ns := fixtures.CreateNamespace(t, k8sClient, "rel")
	sim, url := simtest.Start(t, simulator.Options{
		Token:            simToken,
		PropagationDelay: 300 * time.Millisecond,
		BackupDuration:   300 * time.Millisecond,
	})
	s := &scenario{t: t, ns: ns, sim: sim, url: url}
	s.oracle = newOracle(ns, sim)
	traceMyApps(t, ns)
	t.Cleanup(func() {
		// Leave the namespace to the cluster's namespace controller; no
		// manager runs any more, so its objects are stripped of finalizers
		// first to let it go.
		s.stopManager()
		stripFinalizers(ns)
		// Not t.Context(): it is cancelled before cleanups run.
		_ = k8sClient.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	return s
}

// managerRun is one manager process's worth of controllers, in-process.
type managerRun struct {
	gate   *crashGate
	cancel context.CancelFunc
	done   chan error
	ext    *http.Transport
}

// startManager starts the controllers (MyApp, BackupConfig, Restore) behind
// gate, watching only the scenario's namespace.
func (s *scenario) startManager(gate *crashGate) {
	s.t.Helper()
	g := NewWithT(s.t)
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gate.Wrap("api", rt) })
	namespaces := map[string]cache.Config{s.ns: {}}
	for _, ns := range s.alsoWatch {
		namespaces[ns] = cache.Config{}
	}
	mgr, err := ctrl.NewManager(cfg, fixtures.ManagerOptions(ctrl.Options{
		Scheme:                  testScheme,
		Cache:                   cache.Options{DefaultNamespaces: namespaces},
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		GracefulShutdownTimeout: ptr.To(2 * time.Second),
	}))
	g.Expect(err).NotTo(HaveOccurred())
	controllerClient := mgr.GetClient()
	if s.clientFor != nil {
		controllerClient = s.clientFor(mgr)
	}

	ext := http.DefaultTransport.(*http.Transport).Clone()
	extConfig := func(service string) external.Config {
		return external.Config{
			BaseURL:        s.url,
			Token:          external.StaticTokenSource(simToken),
			AttemptTimeout: 2 * time.Second,
			MaxRetries:     1,
			MaxRetryWait:   100 * time.Millisecond,
			MaxRetryAfter:  5 * time.Second,
			Transport:      gate.Wrap(service, ext),
		}
	}
	var dnsClient dns.Client
	if s.dnsFor != nil {
		dnsClient = s.dnsFor(gate.Wrap("dns", ext))
	} else {
		dnsClient, err = httpdns.New(extConfig("dns"))
		g.Expect(err).NotTo(HaveOccurred())
	}
	var backupClient backup.Client
	if s.s3 != nil {
		backupClient, err = s.s3.newBackupClient(gate.Wrap("backup", ext), s.now)
	} else {
		backupClient, err = httpbackup.New(extConfig("backup"))
	}
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect((&myapp.Reconciler{
		Base: pass.Base{
			Client:   controllerClient,
			Recorder: mgr.GetEventRecorder("myapp-controller"),
		},
		DNS:     dnsClient,
		OwnerID: ownerID,
		// As cmd/manager sets it whenever the orphan sweep runs.
		ReplaceLeakedRecords: true,
		DefaultTarget:        defaultTarget,
		PendingPollInterval:  200 * time.Millisecond,
		DriftCheckInterval:   time.Hour,
	}).SetupWithManager(s.t.Context(), mgr)).To(Succeed())
	// cmd/manager runs the orphan sweep by default (hourly); here it runs
	// every few seconds, so what it repairs is repaired within a scenario.
	g.Expect((&myapp.OrphanSweeper{
		DNS:      dnsClient,
		OwnerID:  ownerID,
		Interval: orphanSweepInterval,
		Pace:     10 * time.Millisecond,
	}).SetupWithManager(mgr)).To(Succeed())
	ctx, cancel := context.WithCancel(s.t.Context())
	bcReconciler := &backupconfig.Reconciler{
		Base: pass.Base{
			Client:   controllerClient,
			Recorder: mgr.GetEventRecorder("backupconfig-controller"),
		},
		Backups:            backupClient,
		OwnerID:            ownerID,
		RenderChildren:     myapp.RenderChildren,
		BackupPollInterval: 200 * time.Millisecond,
		CleanupGrace:       cmp.Or(s.cleanupGrace, 500*time.Millisecond),
	}
	if s.clock != nil {
		bcReconciler.Clock = s.clock
	}
	g.Expect(bcReconciler.SetupWithManager(ctx, mgr)).To(Succeed())
	// As cmd/manager wires it: the same backup client (so its calls go
	// through the gate like the BackupConfig controller's), the same owner
	// ID, and the client the other controllers write through; with no
	// Restore in a scenario it reads nothing and writes nothing.
	g.Expect((&restore.Reconciler{
		Base: pass.Base{
			Client:   controllerClient,
			Recorder: mgr.GetEventRecorder("restore-controller"),
		},
		Backups:            backupClient,
		OwnerID:            ownerID,
		BackupPollInterval: 200 * time.Millisecond,
		AppPollInterval:    200 * time.Millisecond,
	}).SetupWithManager(ctx, mgr)).To(Succeed())

	run := &managerRun{gate: gate, cancel: cancel, done: make(chan error, 1), ext: ext}
	go func() { run.done <- mgr.Start(ctx) }()
	s.manager = run
}

// now is the clock of the scenario's BackupConfig controllers, which the s3
// provider stamps a backup's start with, as cmd/manager gives both the
// same clock.
func (s *scenario) now() time.Time {
	if s.clock != nil {
		return s.clock.Now()
	}
	return time.Now()
}

// stopManager stops the running manager, if any. After a crash every call it
// makes already fails, so this is the process dying, not a shutdown.
func (s *scenario) stopManager() {
	if s.manager == nil {
		return
	}
	s.manager.cancel()
	select {
	case err := <-s.manager.done:
		if err != nil {
			s.t.Logf("the manager stopped with: %v", err)
		}
	case <-time.After(30 * time.Second):
		s.t.Errorf("the manager did not stop within 30s")
	}
	s.manager.ext.CloseIdleConnections()
	s.manager = nil
}

// restartIfCrashed replaces a crashed manager with a fresh one that does not
// crash, and reports whether it did.
func (s *scenario) restartIfCrashed() bool {
	if s.manager == nil || !s.manager.gate.Crashed() {
		return false
	}
	s.stopManager()
	s.startManager(newCrashGate(0))
	return true
}

// waitFor polls cond until it holds, restarting a crashed manager on the
// way, and fails the test with what if it does not within stepTimeout.
func (s *scenario) waitFor(what string, cond func(ctx context.Context) error) {
	s.t.Helper()
	if err := s.tryFor(cond); err != nil {
		s.t.Errorf("%s: not within %s: %v", what, stepTimeout, err)
	}
}

// tryFor is waitFor that leaves the verdict to the caller, and to the oracle:
// it returns the condition's last error when it did not hold in time.
func (s *scenario) tryFor(cond func(ctx context.Context) error) error {
	ctx := s.t.Context()
	deadline := time.Now().Add(stepTimeout)
	for {
		if s.restartIfCrashed() {
			// A fresh deadline: the step starts again on the new manager.
			deadline = time.Now().Add(stepTimeout)
		}
		err := cond(ctx)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(tick):
		}
	}
}

// newMyApp builds a MyApp with one replica served on <name>.<ns>.example.com.
func (s *scenario) newMyApp(name string) *appsv1alpha1.MyApp {
	return fixtures.NewMyApp(s.ns, name, fixtures.WithReplicas(1))
}

// newBackupConfig builds a BackupConfig of app with a final backup and
// the given deletion policy.
func (s *scenario) newBackupConfig(name, app string, policy backupv1alpha1.DeletionPolicy) *backupv1alpha1.BackupConfig {
	return fixtures.NewBackupConfig(s.ns, name, app, fixtures.WithBackupDeletionPolicy(policy), fixtures.WithFinalBackup())
}

// create creates obj, failing the test on error, and tells the oracle about
// BackupConfigs whose backups are meant to outlive them.
func (s *scenario) create(obj client.Object) {
	s.t.Helper()
	if err := k8sClient.Create(s.t.Context(), obj); err != nil {
		s.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	if bc, ok := obj.(*backupv1alpha1.BackupConfig); ok && bc.Spec.DeletionPolicy == backupv1alpha1.DeletionPolicyRetain {
		s.oracle.retain(bc.UID)
	}
}

// update re-reads obj, applies change and writes it back, retrying on
// conflicts with the controllers' writes.
func update[T client.Object](s *scenario, obj T, change func(T)) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("updating %s", obj.GetName()), func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return k8sClient.Update(ctx, obj)
	})
}

// remove deletes obj; it is fine if it is gone already.
func (s *scenario) remove(obj client.Object) {
	s.t.Helper()
	if err := k8sClient.Delete(s.t.Context(), obj); client.IgnoreNotFound(err) != nil {
		s.t.Fatalf("deleting %s: %v", obj.GetName(), err)
	}
}

// readyAt waits until app is Ready at its current generation.
func (s *scenario) readyAt(app *appsv1alpha1.MyApp) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		return myAppReady(app)
	}
}

// gone holds once obj no longer exists.
func gone(obj client.Object) func(context.Context) error {
	return func(ctx context.Context) error {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		default:
			return fmt.Errorf("%s still exists (finalizers %v)", obj.GetName(), obj.GetFinalizers())
		}
	}
}

// stripFinalizers removes every finalizer from the MyApps and BackupConfigs
// left in ns, so a scenario's namespace can go after its manager has.
func stripFinalizers(ns string) {
	// A test's cleanup calls it, when t.Context() is already cancelled.
	ctx := context.Background()
	var apps appsv1alpha1.MyAppList
	var bcs backupv1alpha1.BackupConfigList
	var objs []client.Object
	if k8sClient.List(ctx, &apps, client.InNamespace(ns)) == nil {
		for i := range apps.Items {
			objs = append(objs, &apps.Items[i])
		}
	}
	if k8sClient.List(ctx, &bcs, client.InNamespace(ns)) == nil {
		for i := range bcs.Items {
			objs = append(objs, &bcs.Items[i])
		}
	}
	for _, o := range objs {
		if len(o.GetFinalizers()) > 0 {
			_ = k8sClient.Patch(ctx, o, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
		}
	}
}

var errNotReady = errors.New("not ready")
