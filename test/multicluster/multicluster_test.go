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

// Package multicluster tests two installations of the operator, each with
// its own control plane, manager and owner ID, sharing one DNS service: the
// simulator, one BIND server over RFC 2136 (issue 22 item 2), and
// external-dns's webhook server with its inmemory provider (issue 35).
package multicluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

const (
	simToken      = "multicluster-token"
	defaultTarget = "192.0.2.10"
	zone          = "example.com"
	timeout       = 30 * time.Second
	poll          = 100 * time.Millisecond
	// sweepInterval is short, so each cluster sweeps several times within
	// a test: the first sweep comes within one interval of the start.
	sweepInterval = 2 * time.Second
)

// cluster is one installation: a control plane of its own and the owner ID
// its manager writes.
type cluster struct {
	ownerID string
	cp      *controlplane.ControlPlane
	c       client.Client
}

var clusters []*cluster

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// The managers' logs stay quiet unless MYAPP_TEST_LOG asks for them.
	logger := logr.Discard()
	if os.Getenv("MYAPP_TEST_LOG") != "" {
		logger = zap.New(zap.UseDevMode(true))
	}
	ctrl.SetLogger(logger)
	for _, id := range []string{"cluster-a", "cluster-b"} {
		cp, err := controlplane.Start(context.Background(), controlplane.Options{Tier: controlplane.TierEnvtest})
		if err != nil {
			fmt.Fprintf(os.Stderr, "starting the control plane of %s: %v\n", id, err)
			_ = stopAll()
			return 1
		}
		c, err := cp.NewClient(client.Options{Scheme: fixtures.Scheme()})
		if err != nil {
			fmt.Fprintf(os.Stderr, "a client for %s: %v\n", id, err)
			_ = cp.Stop()
			_ = stopAll()
			return 1
		}
		clusters = append(clusters, &cluster{ownerID: id, cp: cp, c: c})
	}
	code := m.Run()
	if err := stopAll(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the control planes: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func stopAll() error {
	errs := make([]error, 0, len(clusters))
	for _, cl := range clusters {
		errs = append(errs, cl.cp.Stop())
	}
	return errors.Join(errs...)
}

// startInstallation runs cl's manager against d until the test ends: the
// MyApp controller and the orphan sweep, as cmd/manager sets them up with
// the sweep on, under cl's owner ID.
func startInstallation(t *testing.T, cl *cluster, d dns.Client) {
	t.Helper()
	startInstallationAs(t, cl, d, cl.ownerID, nil)
}

// startInstallationAs runs cl's manager against d under ownerID, with the
// owner ID claim when claim is set (cmd/manager's default), until the test
// ends or the returned stop is called.
func startInstallationAs(t *testing.T, cl *cluster, d dns.Client, ownerID string, claim *myapp.OwnerIDClaim) (stop func()) {
	t.Helper()
	byObject := map[client.Object]cache.ByObject{}
	maps.Copy(byObject, myapp.CacheByObject())
	mgr, err := ctrl.NewManager(cl.cp.Config, fixtures.ManagerOptions(ctrl.Options{
		Cache: cache.Options{ByObject: byObject, DefaultTransform: myapp.CacheTransform()},
		// Both installations run a controller of the same name in this
		// process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&myapp.Reconciler{
		DNS:                  d,
		OwnerID:              ownerID,
		ReplaceLeakedRecords: true,
		DefaultTarget:        defaultTarget,
		PendingPollInterval:  200 * time.Millisecond,
		DriftCheckInterval:   2 * time.Second,
	}).SetupWithManager(t.Context(), mgr); err != nil {
		t.Fatal(err)
	}
	sweeper := &myapp.OrphanSweeper{DNS: d, OwnerID: ownerID, Interval: sweepInterval, Pace: 10 * time.Millisecond}
	if claim != nil {
		if err := claim.SetupWithManager(mgr); err != nil {
			t.Fatal(err)
		}
		sweeper.Claim = claim
	}
	if err := sweeper.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	stopManager := fixtures.StartManager(context.Background(), mgr)
	stop = sync.OnceFunc(func() {
		if err := stopManager(); err != nil {
			t.Errorf("the manager of %s: %v", cl.ownerID, err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// backend is one shared DNS service.
type backend struct {
	name string
	// start starts the service and returns how to make a client of it:
	// each installation has its own, as each cluster's manager does (the
	// webhook client's cached zone read is its own), and the test's reads
	// another.
	start func(t *testing.T) (newClient func() dns.Client)
}

func backends() []backend {
	return []backend{
		{name: "simulator", start: func(t *testing.T) func() dns.Client {
			_, url := simtest.Start(t, simulator.Options{Token: simToken, PropagationDelay: 100 * time.Millisecond})
			return func() dns.Client {
				d, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken),
					MaxRetries: 1, MaxRetryWait: 100 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
		}},
		{name: "bind", start: func(t *testing.T) func() dns.Client {
			bind, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{Zone: zone})
			controlplane.RequireBIND(t, err)
			t.Cleanup(func() {
				if err := bind.Close(); err != nil {
					t.Errorf("stopping named: %v", err)
				}
			})
			key, err := rfc2136.ParseKey(bind.Key())
			if err != nil {
				t.Fatal(err)
			}
			return func() dns.Client {
				d, err := rfc2136.New(rfc2136.Config{Server: bind.Addr, Zone: bind.Zone, Key: rfc2136.StaticKey(key), Timeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
		}},
		{name: "webhook", start: func(t *testing.T) func() dns.Client {
			srv, err := controlplane.StartWebhookServer(t.Context(), controlplane.WebhookOptions{
				Provider: controlplane.WebhookInMemory, Zone: zone})
			controlplane.RequireWebhookServer(t, err)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the webhook server's log:\n%s", srv.Log())
				}
				_ = srv.Close()
			})
			return func() dns.Client {
				// Reads come from the zone as read at most this long ago, as
				// --dns-webhook-read-interval sets it.
				d, err := webhook.New(webhook.Config{URL: srv.URL, Zone: zone, Timeout: 5 * time.Second,
					ReadInterval: 100 * time.Millisecond, RetryWait: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				return d
			}
		}},
	}
}

// TestTwoClustersShareOneDNSService: the same GitOps namespace and names in
// two clusters, each with its own owner ID, on one DNS service. Distinct
// hosts: each keeps its own record. The same host: the second is in
// HostConflict naming the first installation. A leak in one is swept by
// that one only; deleting a MyApp, sweeping and tearing down a namespace in
// one cluster never touch the other's records.
func TestTwoClustersShareOneDNSService(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			g := NewWithT(t)
			newClient := b.start(t)
			d := newClient()
			a, bb := clusters[0], clusters[1]
			for _, cl := range clusters {
				startInstallation(t, cl, newClient())
			}
			ns := "shop-" + b.name
			for _, cl := range clusters {
				g.Expect(cl.c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			}
			host := func(name string) string { return name + "." + ns + "." + zone }

			// Distinct hosts, same namespace and name: one record each.
			webA := create(t, g, a, ns, "web", host("web-a"))
			webB := create(t, g, bb, ns, "web", host("web-b"))
			expectOwner(t, g, d, host("web-a"), owner(a, webA))
			expectOwner(t, g, d, host("web-b"), owner(bb, webB))

			// The same host: the first keeps it, the second waits in
			// HostConflict naming the first installation.
			apiA := create(t, g, a, ns, "api", host("api"))
			expectOwner(t, g, d, host("api"), owner(a, apiA))
			apiB := create(t, g, bb, ns, "api", host("api"))
			g.Eventually(func(g Gomega) {
				cond := dnsReady(t, g, bb, apiB)
				g.Expect(cond.Reason).To(Equal(appsv1alpha1.HostConflictReason))
				g.Expect(cond.Message).To(ContainSubstring("of another installation (owner ID cluster-a)"))
			}, timeout, poll).Should(Succeed())

			// A leak in A (a finalizer removed by hand): A's sweep deletes
			// it, B's records stay.
			gone := create(t, g, a, ns, "gone", host("gone-a"))
			expectOwner(t, g, d, host("gone-a"), owner(a, gone))
			g.Expect(a.c.Patch(t.Context(), gone, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
			g.Expect(a.c.Delete(t.Context(), gone)).To(Succeed())
			expectOwner(t, g, d, host("gone-a"), "")
			// Several sweeps of both clusters pass over every record.
			g.Consistently(func(g Gomega) {
				g.Expect(ownerOf(t, g, d, host("web-a"))).To(Equal(owner(a, webA)))
				g.Expect(ownerOf(t, g, d, host("web-b"))).To(Equal(owner(bb, webB)))
				g.Expect(ownerOf(t, g, d, host("api"))).To(Equal(owner(a, apiA)))
			}, 2*sweepInterval, 200*time.Millisecond).Should(Succeed(), "two sweeps in each cluster leave every live record")

			// Deleting in B deletes B's record only.
			g.Expect(bb.c.Delete(t.Context(), webB)).To(Succeed())
			expectOwner(t, g, d, host("web-b"), "")
			g.Expect(ownerOf(t, g, d, host("web-a"))).To(Equal(owner(a, webA)))

			// Tearing down the namespace in A: envtest runs no namespace
			// controller, so its MyApps are deleted as that controller
			// would. A's records go; B's MyApp api, in conflict until now,
			// takes the freed host.
			g.Expect(a.c.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			g.Expect(a.c.DeleteAllOf(t.Context(), &appsv1alpha1.MyApp{}, client.InNamespace(ns))).To(Succeed())
			expectOwner(t, g, d, host("web-a"), "")
			expectOwner(t, g, d, host("api"), owner(bb, apiB))
			g.Consistently(func(g Gomega) {
				g.Expect(ownerOf(t, g, d, host("api"))).To(Equal(owner(bb, apiB)))
			}, 2*sweepInterval, 200*time.Millisecond).Should(Succeed(), "A's sweeps leave B's record")
		})
	}
}

// claimInterval is how often each installation reads its owner ID claim
// back in TestTwoClustersWithOneOwnerIDRefuseToSweep: well under the sweep
// interval, as in the manager (a minute against an hour).
const claimInterval = 200 * time.Millisecond

// TestTwoClustersWithOneOwnerIDRefuseToSweep (issue 32 item 5, T2): two
// clusters share one owner ID, as a cluster restored from another's etcd
// snapshot does. Each has a MyApp the other lacks, so each one's sweep
// would take the other's record for a leak. Each leader claims the ID in
// the DNS service; finding the other's claim, both refuse to sweep: over
// several sweep intervals both records stay, each installation says so
// with a Warning event naming the other cluster, and its claim reports the
// ID shared. Once the installations have distinct IDs, each sweeps again: a
// leak in the first is swept.
func TestTwoClustersWithOneOwnerIDRefuseToSweep(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			g := NewWithT(t)
			newClient := b.start(t)
			d := newClient()
			a, bb := clusters[0], clusters[1]
			const shared = "restored-from-snapshot"
			claims := map[*cluster]*myapp.OwnerIDClaim{}
			stops := map[*cluster]func(){}
			for _, cl := range clusters {
				own := newClient()
				claims[cl] = &myapp.OwnerIDClaim{DNS: own, OwnerID: shared, Cluster: cl.ownerID, Instance: cl.ownerID + "-manager",
					Interval: claimInterval}
				stops[cl] = startInstallationAs(t, cl, own, shared, claims[cl])
			}
			ns := "clone-" + b.name
			for _, cl := range clusters {
				g.Expect(cl.c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			}
			host := func(name string) string { return name + "." + ns + "." + zone }
			ownerAs := func(app *appsv1alpha1.MyApp) string {
				return "myapp-operator/" + shared + "/" + app.Namespace + "/" + app.Name + "/" + string(app.UID)
			}

			web := create(t, g, a, ns, "web", host("web"))
			api := create(t, g, bb, ns, "api", host("api"))
			expectOwner(t, g, d, host("web"), ownerAs(web))
			expectOwner(t, g, d, host("api"), ownerAs(api))
			g.Consistently(func(g Gomega) {
				g.Expect(ownerOf(t, g, d, host("web"))).To(Equal(ownerAs(web)), "B's sweep would take it for a leak")
				g.Expect(ownerOf(t, g, d, host("api"))).To(Equal(ownerAs(api)), "A's sweep would take it for a leak")
			}, 3*sweepInterval, 200*time.Millisecond).Should(Succeed(), "three sweep intervals in each cluster leave both records")
			for cl, other := range map[*cluster]*cluster{a: bb, bb: a} {
				g.Expect(claims[cl].Shared()).To(BeTrue(), "%s finds the ID shared", cl.ownerID)
				g.Eventually(func(g Gomega) {
					list := &eventsv1.EventList{}
					g.Expect(cl.c.List(t.Context(), list, client.InNamespace(metav1.NamespaceDefault))).To(Succeed())
					g.Expect(list.Items).To(ContainElement(SatisfyAll(
						HaveField("Reason", "OwnerIDShared"), HaveField("Type", corev1.EventTypeWarning),
						HaveField("Regarding.Name", "kube-system"), HaveField("Note", ContainSubstring("cluster "+other.ownerID))),
					))
				}, timeout, poll).Should(Succeed(), "%s says so in a Warning event naming %s", cl.ownerID, other.ownerID)
			}

			// B's MyApp goes (and its record with it), then B runs under
			// an ID of its own: A is alone with its ID again and sweeps.
			g.Expect(bb.c.Delete(t.Context(), api)).To(Succeed())
			expectOwner(t, g, d, host("api"), "")
			stops[bb]()
			own := newClient()
			startInstallationAs(t, bb, own, bb.ownerID, &myapp.OwnerIDClaim{DNS: own, OwnerID: bb.ownerID, Cluster: bb.ownerID,
				Interval: claimInterval})
			g.Eventually(claims[a].Shared, timeout, poll).Should(BeFalse(), "A alone with its ID")
			gone := create(t, g, a, ns, "gone", host("gone"))
			expectOwner(t, g, d, host("gone"), ownerAs(gone))
			g.Expect(a.c.Patch(t.Context(), gone, client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
			g.Expect(a.c.Delete(t.Context(), gone)).To(Succeed())
			expectOwner(t, g, d, host("gone"), "")
			g.Expect(ownerOf(t, g, d, host("web"))).To(Equal(ownerAs(web)))
			g.Expect(a.c.Delete(t.Context(), web)).To(Succeed())
			expectOwner(t, g, d, host("web"), "")
		})
	}
}

// create makes a MyApp in cl and returns it as created.
func create(t *testing.T, g *WithT, cl *cluster, ns, name, host string) *appsv1alpha1.MyApp {
	t.Helper()
	app := fixtures.NewMyApp(ns, name, fixtures.WithHost(host))
	g.Expect(cl.c.Create(t.Context(), app)).To(Succeed())
	return app
}

// owner is the owner identity app's records carry in cl.
func owner(cl *cluster, app *appsv1alpha1.MyApp) string {
	return "myapp-operator/" + cl.ownerID + "/" + app.Namespace + "/" + app.Name + "/" + string(app.UID)
}

// ownerOf is the owner of name's record, "" when there is none.
func ownerOf(t *testing.T, g Gomega, d dns.Client, name string) string {
	t.Helper()
	rec, err := d.Get(t.Context(), name)
	if errors.Is(err, external.ErrNotFound) {
		return ""
	}
	g.Expect(err).NotTo(HaveOccurred())
	return rec.Owner
}

// expectOwner waits until name's record has owner ("" for no record).
func expectOwner(t *testing.T, g *WithT, d dns.Client, name, want string) {
	t.Helper()
	g.Eventually(func(g Gomega) string { return ownerOf(t, g, d, name) }, timeout, poll).Should(Equal(want),
		"the owner of %s", name)
}

// dnsReady reads app's DNSReady condition in cl.
func dnsReady(t *testing.T, g Gomega, cl *cluster, app *appsv1alpha1.MyApp) metav1.Condition {
	t.Helper()
	got := &appsv1alpha1.MyApp{}
	g.Expect(cl.c.Get(t.Context(), client.ObjectKeyFromObject(app), got)).To(Succeed())
	return fixtures.Condition(got.Status.Conditions, appsv1alpha1.DNSReadyCondition)
}
