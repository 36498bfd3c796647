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

package myapp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

const (
	simToken = "test-token"
	// defaultTarget is where records point: kwok's Ingresses never get a
	// load-balancer address.
	defaultTarget = "192.0.2.10"
	// driftCheckInterval is long on purpose: every repair a test sees within
	// its timeout came from a watch, not from this timer.
	driftCheckInterval = time.Hour
	timeout            = 30 * time.Second
	interval           = 100 * time.Millisecond
)

var (
	cp         *controlplane.ControlPlane
	k8sClient  client.Client // uncached, for the tests' own reads and writes
	sim        *simulator.Server
	dnsClient  dns.Client
	reconciler *Reconciler
	// mgrCache is the manager's cache, for tests of what it holds.
	mgrCache cache.Cache
	writes   = &writeCounter{byNamespace: map[string]int{}, statusByNamespace: map[string]int{}, notFound: map[string]int{}, passes: map[client.ObjectKey]int{}}
	// warnings counts the Warning events the reconciler sends, which the
	// events API would otherwise fold into one Event with a series.
	warnings = &warningCounter{byObject: map[string]int{}}
	// dnsReads is the reconciler's DNS client; it counts reads by name, and
	// deletes and lists by owner.
	dnsReads *countingDNS
	// suiteClock is the reconciler's clock: real time, moved forward by a
	// test that wants a drift check to be due without waiting an hour.
	suiteClock = &offsetClock{}
)

func TestMain(m *testing.M) {
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierCluster}, &cp, setupSuite, setupRFC2136Backend, setupWebhookBackend))
}

// setupSuite starts the simulator and a manager running the MyApp
// controller, whose client counts the writes it makes.
func setupSuite(cp *controlplane.ControlPlane) (func(), error) {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	var err error
	if k8sClient, err = client.New(cp.Config, client.Options{Scheme: fixtures.Scheme()}); err != nil {
		return nil, err
	}

	sim = simulator.New(simulator.Options{Token: simToken, PropagationDelay: 300 * time.Millisecond})
	srv := httptest.NewServer(sim)
	dnsClient, err = httpdns.New(external.Config{
		BaseURL:      srv.URL,
		Token:        external.StaticTokenSource(simToken),
		MaxRetries:   1,
		MaxRetryWait: 100 * time.Millisecond,
	})
	if err != nil {
		return nil, err
	}
	dnsReads = newCountingDNS(dnsClient)

	// The HTTP backend's manager, with the cache cmd/manager configures
	// (labelled children only, no managedFields), for its MyApps only.
	mgr, stop, err := startManager(cp, "http", httpBackendCache(), func(mgr ctrl.Manager) *Reconciler {
		reconciler = &Reconciler{
			Base: pass.Base{
				Client:   interceptor.NewClient(noWatch{mgr.GetClient()}, writes.funcs()),
				Recorder: &countingRecorder{EventRecorder: mgr.GetEventRecorder("myapp-controller"), warnings: warnings},
				Clock:    suiteClock,
			},
			OwnerID: testOwnerID,
			DNS:     dnsReads,
			// As in the manager, where the orphan sweep runs by default.
			ReplaceLeakedRecords: true,
			DefaultTarget:        defaultTarget,
			PendingPollInterval:  200 * time.Millisecond,
			DriftCheckInterval:   driftCheckInterval,
		}
		return reconciler
	})
	if err != nil {
		return nil, err
	}
	mgrCache = mgr.GetCache()
	return func() {
		stop()
		sim.Close()
		srv.Close()
	}, nil
}

// startManager runs a MyApp controller in a manager of its own, with the
// cache cmd/manager configures narrowed by cacheOpts, until the returned stop
// is called. newReconciler builds the controller from the manager. Each DNS
// backend has one (see dns_backends_test.go).
func startManager(cp *controlplane.ControlPlane, name string, cacheOpts cache.Options,
	newReconciler func(ctrl.Manager) *Reconciler) (ctrl.Manager, func(), error) {
	mgr, err := ctrl.NewManager(cp.Config, fixtures.ManagerOptions(ctrl.Options{
		Cache: operatorCache(cacheOpts),
		// Every backend's manager runs a controller of the same name.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}))
	if err != nil {
		return nil, nil, err
	}
	if err := newReconciler(mgr).SetupWithManager(context.Background(), mgr); err != nil {
		return nil, nil, err
	}
	stop := fixtures.StartManager(context.Background(), mgr)
	return mgr, func() {
		if err := stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s manager: %v\n", name, err)
		}
	}, nil
}

// operatorCache adds to opts the cache options cmd/manager gives the
// manager: only the children the operator labelled, through its cache
// transform (CacheTransform), so every test here runs on what it keeps.
func operatorCache(opts cache.Options) cache.Options {
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	maps.Copy(opts.ByObject, CacheByObject())
	opts.DefaultTransform = CacheTransform()
	return opts
}

// zapLevel keeps the controller's log quiet unless MYAPP_TEST_LOG is set:
// the outage tests log an error per retry by design.
func zapLevel() zapcore.Level {
	if os.Getenv("MYAPP_TEST_LOG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.DPanicLevel
}

// noWatch adapts the manager's cached client to the interceptor, which wraps
// a client.WithWatch; the reconciler never watches through its client.
type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("watch is not supported by the reconciler's client")
}

// writeCounter counts the write requests the reconciler's client makes, by
// namespace, so a test can prove a steady state writes nothing; status
// writes on their own; the writes the API server answered with NotFound,
// which could never have succeeded; and the reconciler's reads of each
// MyApp, one per reconcile.
type writeCounter struct {
	mu                sync.Mutex
	byNamespace       map[string]int
	statusByNamespace map[string]int
	notFound          map[string]int
	passes            map[client.ObjectKey]int
	// lastReady and readyRewrites follow the Ready condition each status
	// write sends, by namespace: a write that repeats the last one (a pass
	// on a cache that had not caught up) is not a rewrite.
	lastReady     map[string]metav1.Condition
	readyRewrites map[string]int
}

// noteReady counts obj's status write as a rewrite of its Ready condition
// when the condition differs from the one last written, timestamps aside.
func (w *writeCounter) noteReady(obj client.Object) {
	app, ok := obj.(*appsv1alpha1.MyApp)
	if !ok {
		return
	}
	cond := ptr.Deref(conditionOf(app, appsv1alpha1.ReadyCondition), metav1.Condition{})
	cond.LastTransitionTime = metav1.Time{}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastReady == nil {
		w.lastReady, w.readyRewrites = map[string]metav1.Condition{}, map[string]int{}
	}
	if last, seen := w.lastReady[app.Namespace]; !seen || last != cond {
		w.readyRewrites[app.Namespace]++
	}
	w.lastReady[app.Namespace] = cond
}

// readyRewriteCount is how many status writes in namespace changed the
// Ready condition.
func (w *writeCounter) readyRewriteCount(namespace string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.readyRewrites[namespace]
}

func (w *writeCounter) add(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byNamespace[obj.GetNamespace()]++
}

func (w *writeCounter) addStatus(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byNamespace[obj.GetNamespace()]++
	w.statusByNamespace[obj.GetNamespace()]++
}

// result records a write's answer and hands it back.
func (w *writeCounter) result(obj client.Object, err error) error {
	if apierrors.IsNotFound(err) {
		w.mu.Lock()
		w.notFound[obj.GetNamespace()]++
		w.mu.Unlock()
	}
	return err
}

func (w *writeCounter) count(namespace string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byNamespace[namespace]
}

func (w *writeCounter) statusCount(namespace string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.statusByNamespace[namespace]
}

// notFoundCount is how many writes in namespace found their object gone.
func (w *writeCounter) notFoundCount(namespace string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.notFound[namespace]
}

// reconciles is how many times the reconciler has read the MyApp with key:
// each reconcile starts with that read.
func (w *writeCounter) reconciles(key client.ObjectKey) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.passes[key]
}

func (w *writeCounter) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*appsv1alpha1.MyApp); ok {
				w.mu.Lock()
				w.passes[key]++
				w.mu.Unlock()
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			w.add(obj)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			w.add(obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			w.add(obj)
			return w.result(obj, c.Patch(ctx, obj, patch, opts...))
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			w.add(obj)
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			w.addStatus(obj)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
			opts ...client.SubResourcePatchOption) error {
			w.addStatus(obj)
			w.noteReady(obj)
			return w.result(obj, c.SubResource(sub).Patch(ctx, obj, patch, opts...))
		},
	}
}

// countingRecorder passes events on and counts the Warning ones by the
// namespace/name of the object they regard and their reason.
type countingRecorder struct {
	recorder.EventRecorder
	warnings *warningCounter
}

func (r *countingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if obj, ok := regarding.(client.Object); ok && eventtype == corev1.EventTypeWarning {
		r.warnings.add(obj.GetNamespace()+"/"+obj.GetName(), reason)
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

type warningCounter struct {
	mu       sync.Mutex
	byObject map[string]int
}

func (w *warningCounter) add(key, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byObject[key+"/"+reason]++
}

// count is how many Warning events with reason were sent about app.
func (w *warningCounter) count(app *appsv1alpha1.MyApp, reason string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byObject[app.Namespace+"/"+app.Name+"/"+reason]
}

// countingDNS counts the reconciler's record reads by name, and its deletes
// and lists by owner, so a test sees the calls for its own MyApp, not for
// every MyApp in the suite.
type countingDNS struct {
	dns.Client
	mu      sync.Mutex
	gets    map[string]int
	deletes map[string]int
	lists   map[string]int
}

func newCountingDNS(c dns.Client) *countingDNS {
	return &countingDNS{Client: c, gets: map[string]int{}, deletes: map[string]int{}, lists: map[string]int{}}
}

func (c *countingDNS) Get(ctx context.Context, name string) (dns.Record, error) {
	c.mu.Lock()
	c.gets[name]++
	c.mu.Unlock()
	return c.Client.Get(ctx, name)
}

func (c *countingDNS) Delete(ctx context.Context, name, owner string) error {
	c.mu.Lock()
	c.deletes[owner]++
	c.mu.Unlock()
	return c.Client.Delete(ctx, name, owner)
}

func (c *countingDNS) List(ctx context.Context, owner string) ([]dns.Record, error) {
	c.mu.Lock()
	c.lists[owner]++
	c.mu.Unlock()
	return c.Client.List(ctx, owner)
}

func (c *countingDNS) getsOf(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[name]
}

func (c *countingDNS) deletesBy(owner string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deletes[owner]
}

func (c *countingDNS) listsBy(owner string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists[owner]
}

// offsetClock is the real clock moved forward by what tests added.
type offsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// step moves the clock forward by d.
func (c *offsetClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// newNamespace creates a namespace of its own for a test.
func newNamespace(t *testing.T) string {
	t.Helper()
	return fixtures.CreateNamespace(t, k8sClient, "myapp")
}

// newMyApp builds a MyApp with two replicas, served on <name>.<ns>.example.com.
func newMyApp(namespace, name string, opts ...fixtures.MyAppOption) *appsv1alpha1.MyApp {
	return fixtures.NewMyApp(namespace, name, append([]fixtures.MyAppOption{fixtures.WithReplicas(2)}, opts...)...)
}

// createReadyMyApp creates app and waits until it is Ready.
func createReadyMyApp(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) {
	t.Helper()
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	eventuallyReady(t, g, app)
}

// eventuallyReady waits until app is Ready at its generation.
func eventuallyReady(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) {
	t.Helper()
	fixtures.EventuallyReady(t.Context(), g, k8sClient, timeout, app)
}

// eventuallyGone waits until the object with key is deleted; msgAndArgs
// describe it in a failure.
func eventuallyGone(t *testing.T, g *WithT, key client.ObjectKey, obj client.Object, within time.Duration, msgAndArgs ...any) {
	t.Helper()
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), key, obj))
	}, within, interval).Should(BeTrue(), msgAndArgs...)
}

// eventuallyDNSReason waits until app's DNSReady condition has reason.
func eventuallyDNSReason(t *testing.T, g *WithT, app *appsv1alpha1.MyApp, reason string) {
	t.Helper()
	g.Eventually(func() string {
		_ = k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)
		return ptr.Deref(conditionOf(app, appsv1alpha1.DNSReadyCondition), metav1.Condition{}).Reason
	}, timeout, interval).Should(Equal(reason))
}

// conditionOf returns app's condition of the type, or nil.
func conditionOf(app *appsv1alpha1.MyApp, condType string) *metav1.Condition {
	return meta.FindStatusCondition(app.Status.Conditions, condType)
}

// recordsNamed returns the simulator's records with the given name.
func recordsNamed(name string) []simulator.Record {
	var out []simulator.Record
	for _, r := range sim.Records() {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// eventReasons lists the reasons of the events about the named object.
func eventReasons(t *testing.T, namespace, name string) []eventReason {
	return fixtures.EventReasons[eventReason](t.Context(), NewWithT(t), k8sClient, "", namespace, name)
}
