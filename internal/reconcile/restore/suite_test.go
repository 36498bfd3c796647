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
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// The controller's tests run on the cluster tier: a restore succeeds once
// its MyApp is Ready, which takes a Deployment that becomes Available
// (kube-controller-manager and kwok's fake node), and the MyApp controller
// that registers its DNS record. Each test has its namespace, its simulator
// (the DNS service, and the backup service of the http backuptest.Provider) and its
// managers; the s3 provider's tests share one versitygw, a bucket each.

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	level := zapcore.DPanicLevel
	if os.Getenv("MYAPP_TEST_LOG") != "" {
		level = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(level)))
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierCluster}, &cp))
}

// Timeouts are generous because the machine running the tests may be busy;
// a passing run waits only as long as the controllers need.
const (
	eventually = 60 * time.Second
	tick       = 100 * time.Millisecond
	simToken   = "restore-test-token"
	// defaultTarget is where records point: kwok's Ingresses never get a
	// load-balancer address.
	defaultTarget = "192.0.2.10"
	ownerID       = "cluster-a"
	// pollInterval is the Restore's polls in the tests: short, so a test
	// that missed an event still ends in time, long enough that the watch
	// is what usually brings a Restore back.
	pollInterval = 500 * time.Millisecond
)

// testEnv is one test's namespace, services and managers.
type testEnv struct {
	t        *testing.T
	cp       *controlplane.ControlPlane
	ns       string
	c        client.Client // uncached, for the test's own reads and writes
	sim      *simulator.Server
	simURL   string
	provider backuptest.Provider
	// backups is the backup service as the controller and the seeds see
	// it: the simulator, or a bucket of the shared versitygw.
	backups backup.Client
	ownerID string
	// newBackupClient builds another client of the same storage, for
	// another owner ID (s3 files backups by owner ID; the simulator
	// ignores it).
	newBackupClient func(ownerID string, transport http.RoundTripper) backup.Client
	seq             atomic.Int64
	// sweepEvery, when set, runs the orphan sweep beside the MyApp
	// controller that startMyApps starts, at this interval.
	sweepEvery time.Duration
	// claimEvery, when set, runs the owner ID claim (myapp.OwnerIDClaim)
	// beside it, checked at this interval, as cluster claims: the MyApp
	// controller asks it before a takeover, the sweep before a sweep.
	claimEvery time.Duration
	cluster    string
}

// newTestEnv starts a simulator and, for s3, a bucket, and creates a
// namespace in the suite's cluster.
func newTestEnv(t *testing.T, p backuptest.Provider) *testEnv {
	t.Helper()
	return newTestEnvIn(t, cp, p, nil, "")
}

// newTestEnvIn is newTestEnv on the control plane c, sharing the services
// of shared when it is set (a second cluster on the same services), in the
// namespace ns when it is set (a new one of the test's name otherwise).
func newTestEnvIn(t *testing.T, c *controlplane.ControlPlane, p backuptest.Provider, shared *testEnv, ns string) *testEnv {
	t.Helper()
	g := NewWithT(t)
	k8s, err := c.NewClient(client.Options{Scheme: fixtures.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	e := &testEnv{t: t, cp: c, c: k8s, provider: p, ownerID: ownerID}
	if shared != nil {
		e.sim, e.simURL, e.newBackupClient = shared.sim, shared.simURL, shared.newBackupClient
	} else {
		e.sim, e.simURL = simtest.Start(t, simulator.Options{Token: simToken, PropagationDelay: 200 * time.Millisecond,
			BackupDuration: 100 * time.Millisecond})
		e.newBackupClient = e.simulatorBackups
		if p == backuptest.S3 {
			e.newBackupClient = s3Backups(t)
		}
	}
	e.backups = e.newBackupClient(ownerID, nil)
	if ns == "" {
		ns = fixtures.CreateNamespace(t, k8s, "restore")
	} else {
		createNamedNamespace(t, k8s, ns)
	}
	e.ns = ns
	return e
}

// simulatorBackups is a client of the simulator's backup service.
func (e *testEnv) simulatorBackups(_ string, transport http.RoundTripper) backup.Client {
	b, err := httpbackup.New(external.Config{BaseURL: e.simURL, Token: external.StaticTokenSource(simToken),
		AttemptTimeout: 2 * time.Second, MaxRetries: 1, MaxRetryWait: 100 * time.Millisecond, Transport: transport})
	NewWithT(e.t).Expect(err).NotTo(HaveOccurred())
	return b
}

var (
	s3Once   sync.Once
	s3Server *controlplane.S3Server
	s3Err    error
	s3Seq    atomic.Int64
)

// s3Backups starts the shared versitygw on first use (skipping the test
// when it is not built) and returns a maker of clients of a new bucket.
func s3Backups(t *testing.T) func(string, http.RoundTripper) backup.Client {
	t.Helper()
	s3Once.Do(func() {
		// Not t.Context(): the server outlives this test, and goes with the
		// test binary (it dies with its parent).
		s3Server, s3Err = controlplane.StartS3(context.Background(), controlplane.S3Options{})
	})
	controlplane.RequireS3(t, s3Err)
	bucket := fmt.Sprintf("restore-%d-%d", time.Now().UnixNano()%1e6, s3Seq.Add(1))
	if err := s3Server.CreateBucket(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	return func(owner string, transport http.RoundTripper) backup.Client {
		c, err := s3.New(s3.Config{
			ReadContent: backupcontent.Identity,
			Endpoint:    s3Server.Endpoint, Bucket: bucket, Region: s3Server.Region, PathStyle: true, OwnerID: owner,
			Credentials:       s3.StaticCredentials(s3Server.AccessKey, s3Server.SecretKey),
			CredentialsSource: "the test's keys",
			AttemptTimeout:    5 * time.Second, MaxRetries: 1,
			MinRetryWait: time.Millisecond, MaxRetryWait: 20 * time.Millisecond,
			Transport: transport,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

// managerOptions are the manager's options as cmd/manager sets its cache,
// for one namespace.
func managerOptions(ns string) ctrl.Options {
	byObject := map[client.Object]cache.ByObject{}
	maps.Copy(byObject, myapp.CacheByObject())
	return fixtures.ManagerOptions(ctrl.Options{
		Cache: cache.Options{ByObject: byObject, DefaultTransform: myapp.CacheTransform(),
			DefaultNamespaces: map[string]cache.Config{ns: {}}},
		// Each test starts controllers of the same names.
		Controller:              config.Controller{SkipNameValidation: ptr.To(true)},
		GracefulShutdownTimeout: ptr.To(2 * time.Second),
	})
}

// startMyApps runs the MyApp controller on the namespace until the test
// ends, under the env's owner ID, with the simulator as its DNS service, as
// cmd/manager would.
func (e *testEnv) startMyApps() {
	e.t.Helper()
	g := NewWithT(e.t)
	mgr, err := ctrl.NewManager(e.cp.Config, managerOptions(e.ns))
	g.Expect(err).NotTo(HaveOccurred())
	d, err := httpdns.New(external.Config{BaseURL: e.simURL, Token: external.StaticTokenSource(simToken),
		MaxRetries: 1, MaxRetryWait: 100 * time.Millisecond})
	g.Expect(err).NotTo(HaveOccurred())
	var takeovers myapp.TakeoverGuard
	var sweepGuard myapp.SweepGuard
	if e.claimEvery > 0 {
		claim := &myapp.OwnerIDClaim{DNS: d, OwnerID: e.ownerID, Cluster: e.cluster, Instance: e.cluster + "-manager",
			Interval: e.claimEvery}
		g.Expect(claim.SetupWithManager(mgr)).To(Succeed())
		takeovers, sweepGuard = claim, claim
	}
	g.Expect((&myapp.Reconciler{
		DNS:                  d,
		OwnerID:              e.ownerID,
		ReplaceLeakedRecords: true,
		DefaultTarget:        defaultTarget,
		PendingPollInterval:  200 * time.Millisecond,
		DriftCheckInterval:   time.Hour,
		Takeovers:            takeovers,
	}).SetupWithManager(e.t.Context(), mgr)).To(Succeed())
	if e.sweepEvery > 0 {
		g.Expect((&myapp.OrphanSweeper{DNS: d, OwnerID: e.ownerID, Interval: e.sweepEvery,
			Pace: 10 * time.Millisecond, Claim: sweepGuard}).SetupWithManager(mgr)).To(Succeed())
	}
	e.run(mgr)
}

// startRestores runs the Restore controller on the namespace until the
// test ends.
func (e *testEnv) startRestores() {
	e.t.Helper()
	e.startRestoresWith(e.cp.Config, e.backups)
}

// startRestoresWith is startRestores through cfg and backups, until the
// returned stop is called if that comes first.
func (e *testEnv) startRestoresWith(cfg *rest.Config, backups backup.Client) (stop func()) {
	e.t.Helper()
	g := NewWithT(e.t)
	mgr, err := ctrl.NewManager(cfg, managerOptions(e.ns))
	g.Expect(err).NotTo(HaveOccurred())
	r := &Reconciler{Backups: backups, OwnerID: e.ownerID, BackupPollInterval: pollInterval, AppPollInterval: pollInterval}
	g.Expect(r.SetupWithManager(e.t.Context(), mgr)).To(Succeed())
	return e.run(mgr)
}

// run starts mgr until the test ends or stop is called.
func (e *testEnv) run(mgr ctrl.Manager) (stop func()) {
	stopManager := fixtures.StartManager(context.Background(), mgr)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if err := stopManager(); err != nil && !errors.Is(err, context.Canceled) {
				e.t.Logf("a manager stopped with: %v", err)
			}
		})
	}
	e.t.Cleanup(stop)
	return stop
}

// seedOptions describe a backup a test seeds, as a BackupConfig would
// take it.
type seedOptions struct {
	// app is the MyApp backed up; its UID is the backed-up UID.
	app *appsv1alpha1.MyApp
	// bcName and bcUID name the BackupConfig that takes it; a new UID
	// when empty.
	bcName string
	bcUID  types.UID
	// ownerID is the installation's, in the content; the env's when empty.
	ownerID string
	// content replaces the encoded payload, for content a restore must
	// refuse; noContent starts the backup without any.
	content   []byte
	noContent bool
	// labels are the backup's labels instead of the BackupConfig
	// controller's.
	labels map[string]string
}

// seed starts a backup as the BackupConfig controller would, with its
// content, through the env's backup client, and waits until it succeeded.
func (e *testEnv) seed(o seedOptions) backup.Backup {
	e.t.Helper()
	return e.seedWith(e.backups, o)
}

// seedWith is seed through the client c.
func (e *testEnv) seedWith(c backup.Client, o seedOptions) backup.Backup {
	e.t.Helper()
	g := NewWithT(e.t)
	app := o.app
	if o.bcName == "" {
		o.bcName = app.Name + "-backups"
	}
	if o.bcUID == "" {
		o.bcUID = uuid.NewUUID()
	}
	if o.ownerID == "" {
		o.ownerID = e.ownerID
	}
	owner := backupConfigOwner(o.bcUID)
	key := fmt.Sprintf("%s/manual/%s/%d", owner, app.UID, e.seq.Add(1))
	labels := o.labels
	if labels == nil {
		labels = map[string]string{
			backup.LabelNamespace: app.Namespace, labelMyApp: app.Name, labelMyAppUID: string(app.UID),
			labelBackupConfig: o.bcName, labelTrigger: "Manual", backup.LabelOwnerID: o.ownerID,
		}
	}
	payload := o.content
	if payload == nil && !o.noContent {
		var err error
		payload, err = backupcontent.EncodePayload(&backupcontent.Payload{
			Metadata: backupcontent.PayloadMetadata{
				Trigger: "Manual", MyAppUID: string(app.UID), MyAppGeneration: max(app.Generation, 1),
				TakenAt:      time.Now(),
				BackupConfig: backupcontent.ObjectIdentity{Namespace: app.Namespace, Name: o.bcName, UID: string(o.bcUID)},
				OwnerID:      o.ownerID, Owner: owner, IdempotencyKey: key,
			},
			MyApp: backupcontent.SnapshotApp(app),
		})
		g.Expect(err).NotTo(HaveOccurred())
	}
	b, err := c.Start(e.t.Context(), backup.StartRequest{App: app.Namespace + "-" + app.Name, Owner: owner,
		IdempotencyKey: key, Labels: labels, Namespace: app.Namespace, Payload: payload})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) backup.Phase {
		got, err := c.Get(e.t.Context(), b.ID)
		g.Expect(err).NotTo(HaveOccurred())
		b = got
		return got.Phase
	}, eventually, tick).Should(Equal(backup.PhaseSucceeded))
	return b
}

// backedUpApp is a MyApp as it was when backed up, with a UID of its own,
// in namespace ns: it need not exist.
func backedUpApp(ns, name, image string) *appsv1alpha1.MyApp {
	app := fixtures.NewMyApp(ns, name, fixtures.WithReplicas(1))
	app.UID = uuid.NewUUID()
	app.Generation = 1
	app.Spec.Image = image
	// The API server's defaults, as a MyApp read back from it has them.
	app.Spec.ContainerPort, app.Spec.ServicePort, app.Spec.DeletionPolicy = 8080, 80, appsv1alpha1.DeletionPolicyDelete
	return app
}

// newRestore builds a Restore in the env's namespace.
func (e *testEnv) newRestore(name string, source backupv1alpha1.RestoreSource, opts ...func(*backupv1alpha1.Restore)) *backupv1alpha1.Restore {
	r := &backupv1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       backupv1alpha1.RestoreSpec{Source: source},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// create creates objects and fails the test on error.
func (e *testEnv) create(objs ...client.Object) {
	e.t.Helper()
	for _, o := range objs {
		NewWithT(e.t).Expect(e.c.Create(e.t.Context(), o)).To(Succeed(), "creating %s", o.GetName())
	}
}

// waitForPhase waits until the Restore is in phase and returns it.
func (e *testEnv) waitForPhase(r *backupv1alpha1.Restore, phase backupv1alpha1.RestorePhase) *backupv1alpha1.Restore {
	e.t.Helper()
	got := &backupv1alpha1.Restore{}
	NewWithT(e.t).Eventually(func(g Gomega) {
		g.Expect(e.c.Get(e.t.Context(), client.ObjectKeyFromObject(r), got)).To(Succeed())
		ready := fixtures.Condition(got.Status.Conditions, readyCondition)
		g.Expect(got.Status.Phase).To(Equal(phase), "Ready: %s: %s", ready.Reason, ready.Message)
	}, eventually, tick).Should(Succeed(), "Restore %s reaches %s", r.Name, phase)
	return got
}

// getApp reads a MyApp of the env's namespace; nil when there is none.
func (e *testEnv) getApp(name string) *appsv1alpha1.MyApp {
	e.t.Helper()
	app := &appsv1alpha1.MyApp{}
	err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, app)
	if client.IgnoreNotFound(err) != nil {
		e.t.Fatal(err)
	}
	if err != nil {
		return nil
	}
	return app
}

// record is the DNS record of host in the simulator, nil when none.
func (e *testEnv) record(host string) *simulator.Record {
	for _, r := range e.sim.Records() {
		if r.Name == host {
			return &r
		}
	}
	return nil
}

// eventReasons lists the reasons of the events about the Restore.
func (e *testEnv) eventReasons(g Gomega, r *backupv1alpha1.Restore) []eventReason {
	return fixtures.EventReasons[eventReason](e.t.Context(), g, e.c, "Restore", e.ns, r.Name)
}

// gzipJSON is content that is gzip'd JSON but not necessarily a payload.
func gzipJSON(t testing.TB, doc string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
