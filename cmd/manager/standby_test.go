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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/apiproxy"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// countingProxy is an apiproxy.Proxy between one manager and the API
// server, with what the standby tests ask of its counts.
type countingProxy struct{ *apiproxy.Proxy }

func startCountingProxy(t *testing.T, cfg *rest.Config) countingProxy {
	t.Helper()
	p, err := apiproxy.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return countingProxy{p}
}

// writeKubeconfig writes a kubeconfig that reaches the API server through
// the proxy.
func (p countingProxy) writeKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(p.Kubeconfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// watched lists the resources watched so far.
func (p countingProxy) watched() []string {
	var out []string
	counts, _ := p.Counts()
	for req := range counts {
		if req.Verb == "watch" {
			out = append(out, req.Resource)
		}
	}
	return out
}

// writes lists the writes made so far, as "verb resource (n)".
func (p countingProxy) writes() []string {
	var out []string
	counts, _ := p.Counts()
	for req, n := range counts {
		if apiproxy.IsWrite(req.Verb) {
			out = append(out, fmt.Sprintf("%s (%d)", req, n))
		}
	}
	return out
}

// requestsFor lists every request made on one resource, as "verb".
func (p countingProxy) requestsFor(resource string) []string {
	var out []string
	counts, _ := p.Counts()
	for req := range counts {
		if req.Resource == resource {
			out = append(out, req.Verb)
		}
	}
	return out
}

// holdLease creates the Lease name in namespace held by another identity,
// with a lease of leaseSeconds, and renews it every interval until the
// returned function is called.
func holdLease(t *testing.T, c client.Client, namespace, name string, leaseSeconds int32, interval time.Duration) (release func()) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("another-manager"),
			LeaseDurationSeconds: ptr.To(leaseSeconds),
			AcquireTime:          &now,
			RenewTime:            &now,
		},
	}
	if err := c.Create(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			// A failed renewal is tried again at the next tick; the lease
			// outlasts several of them.
			l := &coordinationv1.Lease{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(lease), l); err != nil {
				continue
			}
			l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
			_ = c.Update(ctx, l)
		}
	}()
	release = func() { cancel(); <-done }
	t.Cleanup(release)
	return release
}

// standbyArgs are the flags of a manager that the test starts against the
// proxy's kubeconfig, as the deployment runs it but with short intervals.
func standbyArgs(t *testing.T, kubeconfig, simURL, tokenFile string, more ...string) []string {
	t.Helper()
	return append([]string{
		"--kubeconfig=" + kubeconfig,
		"--health-probe-bind-address=" + freeAddr(t),
		"--metrics-bind-address=0",
		"--dns-url=" + simURL, "--dns-token-file=" + tokenFile,
		"--backup-url=" + simURL, "--backup-token-file=" + tokenFile,
		// A standby must not sweep either: with a one-second interval the
		// sweep would list the DNS service within the test's wait.
		"--dns-orphan-sweep-interval=1s",
		// No Ingress controller gives an address: the record points here.
		"--dns-default-target=192.0.2.10",
	}, more...)
}

// simulatorRequests is the number of requests the simulator served, DNS and
// backup together.
func simulatorRequests(sim *simulator.Server) int {
	return simtest.RequestTotal(sim, simulator.ServiceDNS) + simtest.RequestTotal(sim, simulator.ServiceBackup)
}

// eventuallyReconciled waits until the manager has reconciled app: its
// finalizer, its three children and its DNS record.
func eventuallyReconciled(t *testing.T, g *WithT, c client.Client, sim *simulator.Server, app *appsv1alpha1.MyApp) {
	t.Helper()
	g.Eventually(func(g Gomega) {
		got := &appsv1alpha1.MyApp{}
		g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(app), got)).To(Succeed())
		g.Expect(got.Finalizers).To(ContainElement(appsv1alpha1.DNSCleanupFinalizer))
		key := client.ObjectKeyFromObject(app)
		g.Expect(c.Get(t.Context(), key, &appsv1.Deployment{})).To(Succeed())
		g.Expect(c.Get(t.Context(), key, &corev1.Service{})).To(Succeed())
		g.Expect(c.Get(t.Context(), key, &networkingv1.Ingress{})).To(Succeed())
		records := sim.Records()
		owners := make([]string, 0, len(records))
		for _, rec := range records {
			owners = append(owners, rec.Owner)
		}
		g.Expect(owners).To(ContainElement(HaveSuffix("/" + string(got.UID))))
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed(), "MyApp %s is reconciled", app.Name)
}

// The watches a warm standby has started before it is elected: both
// controllers' primary kinds and every child kind of the MyApp controller.
var warmWatches = []string{"myapps", "backupconfigs", "deployments", "services", "ingresses"}

// TestStandbyIsWarm runs the manager binary as the deployment does
// (--leader-elect, --warm-standby on by default) while another identity
// holds its Lease. Before it is elected it has started every watch of both
// controllers, MyApps, BackupConfigs, Deployments, Services and Ingresses,
// and made no write, no DNS call and no backup call, though a MyApp and a
// BackupConfig wait for it and its orphan sweep is due every second. Once
// the Lease is no longer renewed and expires, it takes over and reconciles
// the MyApp that was waiting and one created while it stood by. With
// --warm-standby=false the child watches start only at election, and the
// first expectation fails.
func TestStandbyIsWarm(t *testing.T) {
	g := NewWithT(t)
	bin := buildManager(t)
	sim, simURL := simtest.Start(t, simulator.Options{Token: "standby-test-token"})
	tokenFile := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(tokenFile, []byte("standby-test-token\n"), 0o600)).To(Succeed())
	c, err := cp.NewClient(client.Options{Scheme: fixtures.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	ns := fixtures.CreateNamespace(t, c, "standby")

	const leaseName = "standby-test"
	// Renewed every 300ms, a lease of 5s outlasts a loaded machine's
	// stalls, so the manager cannot take it before the test lets it go.
	release := holdLease(t, c, ns, leaseName, 5, 300*time.Millisecond)
	waiting := fixtures.NewMyApp(ns, "waiting")
	g.Expect(c.Create(t.Context(), waiting)).To(Succeed())
	g.Expect(c.Create(t.Context(), fixtures.NewBackupConfig(ns, "waiting", "waiting"))).To(Succeed())

	proxy := startCountingProxy(t, cp.Config)
	standby := fixtures.StartManagerProcess(t, "standby", bin, standbyArgs(t, proxy.writeKubeconfig(t), simURL, tokenFile,
		"--leader-elect",
		"--leader-election-namespace="+ns,
		"--leader-election-id="+leaseName,
		"--leader-election-lease-duration=5s",
		"--leader-election-renew-deadline=4s",
		"--leader-election-retry-period=250ms",
	)...)

	g.Eventually(proxy.watched, 30*time.Second, 100*time.Millisecond).Should(ContainElements(warmWatches),
		"the standby watches every kind both controllers need before it is elected")
	// It keeps asking for the Lease, which tells it is still standing by.
	g.Eventually(func() []string { return proxy.requestsFor("leases") }, 10*time.Second, 100*time.Millisecond).
		Should(ContainElement("get"))
	g.Consistently(func(g Gomega) {
		g.Expect(proxy.writes()).To(BeEmpty(), "a standby writes nothing")
		g.Expect(simulatorRequests(sim)).To(BeZero(), "a standby calls neither the DNS nor the backup service")
		g.Expect(standby.Leads()).To(BeFalse())
	}, 3*time.Second, 100*time.Millisecond).Should(Succeed())

	created := fixtures.NewMyApp(ns, "created")
	g.Expect(c.Create(t.Context(), created)).To(Succeed())
	g.Consistently(proxy.writes, time.Second, 100*time.Millisecond).Should(BeEmpty(),
		"a MyApp created while the manager stands by is not reconciled yet")
	g.Expect(simulatorRequests(sim)).To(BeZero())

	release()
	g.Eventually(standby.Leads, 30*time.Second, 100*time.Millisecond).Should(BeTrue(), "the standby takes the expired lease")
	eventuallyReconciled(t, g, c, sim, waiting)
	eventuallyReconciled(t, g, c, sim, created)
	lease := &coordinationv1.Lease{}
	g.Expect(c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
	g.Expect(lease.Spec.HolderIdentity).NotTo(HaveValue(Equal("another-manager")))
}

// TestWarmStandbyWithoutLeaderElection: with --leader-elect=false, the
// default, --warm-standby changes nothing. The manager never asks for a
// Lease, reconciles at once, and watches what it watched before.
func TestWarmStandbyWithoutLeaderElection(t *testing.T) {
	bin := buildManager(t)
	for _, warm := range []string{"true", "false"} {
		t.Run("--warm-standby="+warm, func(t *testing.T) {
			g := NewWithT(t)
			sim, simURL := simtest.Start(t, simulator.Options{Token: "no-election-token"})
			tokenFile := filepath.Join(t.TempDir(), "token")
			g.Expect(os.WriteFile(tokenFile, []byte("no-election-token\n"), 0o600)).To(Succeed())
			c, err := cp.NewClient(client.Options{Scheme: fixtures.Scheme()})
			g.Expect(err).NotTo(HaveOccurred())
			ns := fixtures.CreateNamespace(t, c, "no-election")
			app := fixtures.NewMyApp(ns, "web")
			g.Expect(c.Create(t.Context(), app)).To(Succeed())

			proxy := startCountingProxy(t, cp.Config)
			m := fixtures.StartManagerProcess(t, "manager", bin, standbyArgs(t, proxy.writeKubeconfig(t), simURL, tokenFile,
				// Only the MyApps of this test's namespace: the other
				// tests' MyApps are not this manager's to reconcile.
				"--watch-namespaces="+ns, "--warm-standby="+warm)...)
			eventuallyReconciled(t, g, c, sim, app)
			g.Expect(proxy.watched()).To(ContainElements(warmWatches))
			g.Expect(proxy.requestsFor("leases")).To(BeEmpty(), "no leader election, no Lease")
			g.Expect(m.Leads()).To(BeFalse(), "nothing to acquire")
		})
	}
}
