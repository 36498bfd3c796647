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
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3/s3test"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// The promises every backup provider keeps (schedules, on-change backups,
// retention, the final backups, the deletion policies) are tested from one
// table of providers, so they stay equal: the HTTP backup service (the
// simulator) and S3 (versitygw, a real S3 server, on loopback, one bucket
// per test, behind a fault proxy that can take it down). A test asks
// forEachProvider for its environments; what it reads of the stored backups
// it reads through the provider's store, around the client under test.

// testOwnerID is the installation's owner ID, as --owner-id sets it.
const testOwnerID = "backupconfig-test"

// s3Prefix is where in the test buckets the installations keep their
// backups, as --s3-prefix sets it.
const s3Prefix = "backups"

// storedBackup is a backup as a provider holds it.
type storedBackup struct {
	ID             string
	App            string
	Owner          string
	IdempotencyKey string
	Phase          backup.Phase
	Labels         map[string]string
	StartedAt      time.Time
	// Content is what the backup holds, nil when it was started without
	// any or has not succeeded.
	Content []byte
}

// backupStore is what a test reads of, and does to, a provider's storage,
// without the client under test.
type backupStore interface {
	// all lists every backup this test's storage holds, oldest first.
	all(t testing.TB) []storedBackup
	// setOutage makes the provider unreachable, or reachable again.
	setOutage(t testing.TB, down bool)
	// failStarts makes every start get no answer: before the provider
	// stored anything, or, with lostAnswer, after it stored the backup.
	failStarts(t testing.TB, lostAnswer bool)
	// clearFaults ends failStarts.
	clearFaults(t testing.TB)
}

// backupProvider is one backup provider as the tests see it.
type backupProvider struct {
	name backuptest.Provider
	// setUp gives e this provider's client (e.backups) and store (e.store).
	setUp func(e *testEnv)
}

func backupProviders() []backupProvider {
	setUp := map[backuptest.Provider]func(e *testEnv){
		backuptest.HTTP: func(e *testEnv) { e.store = simulatorStore{sim: e.sim} },
		backuptest.S3:   setUpS3,
	}
	out := make([]backupProvider, 0, len(setUp))
	for _, p := range backuptest.Providers() {
		out = append(out, backupProvider{name: p, setUp: setUp[p]})
	}
	return out
}

// forEachProvider runs test once per provider, each in its own subtest with
// its own environment.
func forEachProvider(t *testing.T, test func(t *testing.T, e *testEnv), simOpts ...func(*simulator.Options)) {
	for _, p := range backupProviders() {
		t.Run(string(p.name), func(t *testing.T) {
			test(t, newTestEnvOn(t, p, simOpts...))
		})
	}
}

// newTestEnvOn is newTestEnv with the backups kept by provider p.
func newTestEnvOn(t *testing.T, p backupProvider, simOpts ...func(*simulator.Options)) *testEnv {
	t.Helper()
	e := newTestEnv(t, simOpts...)
	e.provider = p.name
	p.setUp(e)
	return e
}

// simulatorStore reads the simulator, which serves the HTTP provider.
type simulatorStore struct {
	sim *simulator.Server
}

func (s simulatorStore) all(testing.TB) []storedBackup {
	listed := s.sim.Backups()
	out := make([]storedBackup, 0, len(listed))
	for _, b := range listed {
		out = append(out, storedBackup{
			ID: b.ID, App: b.App, Owner: b.Owner, IdempotencyKey: b.IdempotencyKey, Phase: backup.Phase(b.Phase),
			Labels: b.Labels, StartedAt: b.StartedAt,
		})
	}
	return out
}

func (s simulatorStore) setOutage(_ testing.TB, down bool) {
	s.sim.SetOutage(simulator.ServiceBackup, down)
}

func (s simulatorStore) failStarts(_ testing.TB, lostAnswer bool) {
	fault := simulator.Fault{Status: http.StatusServiceUnavailable}
	if lostAnswer {
		fault = simulator.Fault{ResetAfterCommit: true}
	}
	s.sim.SetFault(simulator.ServiceBackup, simulator.OpStart, fault)
}

func (s simulatorStore) clearFaults(testing.TB) {
	s.sim.ClearFault(simulator.ServiceBackup, simulator.OpStart)
}

// s3Store reads a bucket of the package's versitygw with the root keys.
type s3Store struct {
	srv    *controlplane.S3Server
	bucket string
	// base is <prefix>/<owner-id> of the installation under test.
	base  string
	proxy *s3test.FaultProxy
}

func (s s3Store) all(t testing.TB) []storedBackup {
	t.Helper()
	objects, err := s3test.Objects(t.Context(), s.srv, s.bucket)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]storedBackup, 0, len(objects))
	for _, o := range objects {
		id, ok := o.ID(s.base)
		if !ok {
			// Another installation's object: the tests of two
			// installations read it from their own store.
			continue
		}
		started, _ := time.Parse(time.RFC3339Nano, o.Metadata["myapp-started-at"])
		out = append(out, storedBackup{
			ID: id, App: o.App(), Owner: o.Owner(), IdempotencyKey: o.IdempotencyKey(),
			// The object is the backup: one that exists has succeeded.
			Phase:  backup.PhaseSucceeded,
			Labels: o.Labels(), StartedAt: started, Content: o.Content,
		})
	}
	slices.SortStableFunc(out, func(a, b storedBackup) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

func (s s3Store) setOutage(_ testing.TB, down bool) { s.proxy.SetDown(down) }

// failStarts drops the connections of PUTs, the provider's writes.
func (s s3Store) failStarts(_ testing.TB, lostAnswer bool) {
	if lostAnswer {
		s.proxy.LoseAnswers(http.MethodPut, -1)
		return
	}
	s.proxy.Fail(http.MethodPut, -1, 0, "")
}

func (s s3Store) clearFaults(testing.TB) { s.proxy.Clear() }

// packageS3 is the package's versitygw, started by the first S3 test and
// stopped by TestMain.
func packageS3(t testing.TB) *controlplane.S3Server {
	t.Helper()
	srv, err := s3test.Shared()
	controlplane.RequireS3(t, err)
	return srv
}

// setUpS3 gives e a bucket of its own, a fault proxy in front of the
// server, and an S3 client through it as the manager builds one: owner ID
// and prefix set, the keys of the server's root account, the clock the
// test's Reconciler reads.
func setUpS3(e *testEnv) {
	t := e.t
	t.Helper()
	srv := packageS3(t)
	bucket, err := s3test.NewBucket(t.Context(), srv, "bc")
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := s3test.NewFaultProxy(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	e.s3 = &s3Store{srv: srv, bucket: bucket, base: s3Prefix + "/" + testOwnerID, proxy: proxy}
	e.store = e.s3
	e.backups = e.newS3Client(testOwnerID, srv.AccessKey, srv.SecretKey)
}

// newS3Client returns a client of the test's bucket, through its proxy,
// for the installation ownerID, signed with the given keys.
func (e *testEnv) newS3Client(ownerID, accessKey, secretKey string) *s3.Client {
	e.t.Helper()
	return e.newS3ClientThrough(nil, ownerID, accessKey, secretKey)
}

// newS3ClientThrough is newS3Client with its requests sent through
// transport (nil: the default).
func (e *testEnv) newS3ClientThrough(transport http.RoundTripper, ownerID, accessKey, secretKey string) *s3.Client {
	e.t.Helper()
	c, err := s3.New(s3.Config{
		ReadContent: backupcontent.Identity,
		Transport:   transport,
		Endpoint:    e.s3.proxy.URL, Bucket: e.s3.bucket, Region: e.s3.srv.Region, PathStyle: true,
		Prefix: s3Prefix, OwnerID: ownerID,
		Credentials:       s3.StaticCredentials(accessKey, secretKey),
		CredentialsSource: "the test's keys",
		AttemptTimeout:    2 * time.Second,
		MaxRetries:        1,
		MinRetryWait:      time.Millisecond,
		MaxRetryWait:      20 * time.Millisecond,
		Now:               e.now,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// now is the clock of the running Reconciler, real time while none runs:
// the S3 provider stamps a backup's start with it, as the manager gives
// both the same clock.
func (e *testEnv) now() time.Time {
	if c := e.clock.Load(); c != nil {
		return (*c).Now()
	}
	return time.Now()
}

// ownStored lists the stored backups of the BackupConfig with uid.
func ownStored(all []storedBackup, uid types.UID) []storedBackup {
	owner := "backupconfig/" + string(uid)
	var out []storedBackup
	for _, b := range all {
		if b.Owner == owner {
			out = append(out, b)
		}
	}
	return out
}

// triggerOfStored is the trigger label of a stored backup.
func triggerOfStored(b storedBackup) string { return b.Labels[labelTrigger] }

// expectContentOf checks that a stored backup holds the content a restore
// reads: its MyApp, its metadata, its three children.
func expectContentOf(g Gomega, b storedBackup, e *testEnv, appName string) *backupcontent.Payload {
	if b.Content == nil {
		data, err := e.backups.Content(e.t.Context(), b.ID)
		g.Expect(err).NotTo(HaveOccurred())
		b.Content = data
	}
	p, err := backupcontent.DecodePayload(b.Content)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.MyApp.Name).To(Equal(appName))
	g.Expect(p.MyApp.Namespace).To(Equal(e.ns))
	g.Expect(p.Metadata.IdempotencyKey).To(Equal(b.IdempotencyKey))
	g.Expect(p.Metadata.Owner).To(Equal(b.Owner))
	g.Expect(p.Metadata.OwnerID).To(Equal(testOwnerID))
	g.Expect(p.Metadata.Trigger).To(Equal(triggerOfStored(b)))
	g.Expect(strings.TrimPrefix(b.Owner, "backupconfig/")).To(Equal(p.Metadata.BackupConfig.UID))
	kinds := make([]string, 0, len(p.Children))
	for _, c := range p.Children {
		kinds = append(kinds, c.GetKind())
	}
	g.Expect(kinds).To(Equal([]string{"Deployment", "Service", "Ingress"}))
	return p
}

// foreignOwner starts backups in the test's storage that are not any
// BackupConfig's of the installation under test: a retention or a deletion
// must leave them alone.
type foreignOwner struct {
	// what says whose they are, for a failure's message.
	what    string
	client  backup.Client
	owner   string
	ownerID string
}

// foreignOwners are, for the HTTP service, a team writing backups of its
// own and an earlier BackupConfig of the same name (another UID); for S3,
// that earlier BackupConfig and another installation sharing the bucket
// (another owner ID) whose BackupConfig has the same UID, as a cluster
// restored from an etcd snapshot would.
func (e *testEnv) foreignOwners(uidOfOther types.UID) []foreignOwner {
	earlier := foreignOwner{what: "an earlier BackupConfig", client: e.backups,
		owner: "backupconfig/00000000-0000-0000-0000-000000000000", ownerID: testOwnerID}
	if e.s3 == nil {
		return []foreignOwner{{what: "a team", client: e.backups, owner: "team-dba", ownerID: testOwnerID}, earlier}
	}
	other := e.newS3Client("other-cluster", e.s3.srv.AccessKey, e.s3.srv.SecretKey)
	return []foreignOwner{earlier, {what: "another installation", client: other,
		owner: "backupconfig/" + string(uidOfOther), ownerID: "other-cluster"}}
}

// start stores a backup of the MyApp app under key (which begins with the
// owner) with valid content, and returns its ID.
func (f foreignOwner) start(e *testEnv, app, key string) string {
	e.t.Helper()
	uid := strings.TrimPrefix(f.owner, "backupconfig/")
	payload, err := backupcontent.EncodePayload(&backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger: string(backupv1alpha1.TriggerManual), MyAppUID: "foreign-app", MyAppGeneration: 1,
			TakenAt:      time.Now().UTC(),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: e.ns, Name: "foreign", UID: uid},
			OwnerID:      f.ownerID, Owner: f.owner, IdempotencyKey: key,
		},
		MyApp: backupcontent.AppSnapshot{APIVersion: "apps.myapp.dev/v1alpha1", Kind: "MyApp", Namespace: e.ns, Name: app},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := f.client.Start(e.t.Context(), backup.StartRequest{
		App: serviceAppName(e.ns, app), Owner: f.owner, IdempotencyKey: key, Namespace: e.ns, Payload: payload,
		Labels: map[string]string{labelNamespace: e.ns},
	})
	if err != nil {
		e.t.Fatalf("starting the backup of %s: %v", f.what, err)
	}
	return b.ID
}

// allObjects lists every backup of the test's storage, of every
// installation: for S3, every object of the bucket by key.
func (e *testEnv) allObjects() []string {
	e.t.Helper()
	if e.s3 == nil {
		return backupIDs(e.store.all(e.t))
	}
	objects, err := s3test.Objects(e.t.Context(), e.s3.srv, e.s3.bucket)
	if err != nil {
		e.t.Fatal(err)
	}
	keys := make([]string, 0, len(objects))
	for _, o := range objects {
		keys = append(keys, o.Key)
	}
	return keys
}

// TestContentTooLargeIsReportedAndTakenOnceItFits, on each provider: a
// MyApp whose backup would hold more than a backup may (here its env,
// which the Deployment holds again, and an annotation of random text)
// turns Ready False with BackupContentTooLarge, Stalled, and a warning
// that says by how much and what to do; nothing is stored. Once the MyApp
// is smaller (the annotation removed, which changes no generation) the
// baseline backup owed is taken, once.
func TestContentTooLargeIsReportedAndTakenOnceItFits(t *testing.T) {
	forEachProvider(t, func(t *testing.T, e *testEnv) {
		g := NewWithT(t)
		e.startManager(func(r *Reconciler) { r.MaxRetryDelay = time.Second })
		noise := rand.NewChaCha8([32]byte{7})
		text := func(n int) string {
			raw := make([]byte, n*3/4)
			_, _ = noise.Read(raw)
			return base64.StdEncoding.EncodeToString(raw)
		}
		env := make([]corev1.EnvVar, 0, 100)
		for i := range 100 {
			env = append(env, corev1.EnvVar{Name: fmt.Sprintf("BLOB_%02d", i), Value: text(6300)})
		}
		app := fixtures.NewMyApp(e.ns, "huge", fixtures.WithEnv(env...))
		app.Annotations = map[string]string{"example.com/blob": text(240000)}
		bc := e.newBackupConfig("huge", "huge")
		e.create(app, bc)

		var ready metav1.Condition
		g.Eventually(func(g Gomega) string {
			ready = condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition)
			return ready.Reason
		}, eventually, tick).Should(Equal(backupv1alpha1.BackupContentTooLargeReason))
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Message).To(MatchRegexp(`^A backup of MyApp huge would hold \d+ bytes gzip'd, more than the 1048576 a backup may hold\. Make the MyApp smaller`))
		g.Expect(ready.Message).To(ContainSubstring("No backup is started until it fits"))
		current := e.fetchBackupConfig(bc)(g)
		g.Expect(condition(current, backupv1alpha1.StalledCondition).Reason).To(Equal(backupv1alpha1.BackupContentTooLargeReason))
		g.Expect(current.Status.ObservedGeneration).To(Equal(current.Generation), "looked at, and stalled")
		g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, bc) }, eventually, tick).
			Should(ContainElement(eventBackupContentTooLarge))
		g.Consistently(func() []storedBackup { return e.ownBackups(bc) }, consistently, tick).Should(BeEmpty())

		update(e, app, func(a *appsv1alpha1.MyApp) { a.Annotations = nil })
		g.Expect(app.Generation).To(Equal(int64(1)), "an annotation is no change of generation")
		current = e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
		g.Expect(condition(current, backupv1alpha1.ReadyCondition).Reason).To(Equal(backupv1alpha1.ReadyReason))
		g.Consistently(func() []storedBackup { return e.ownBackups(bc) }, consistently, tick).Should(HaveLen(1))
		p := expectContentOf(g, e.ownBackups(bc)[0], e, "huge")
		g.Expect(p.MyApp.Spec.Env).To(HaveLen(100))
	})
}
