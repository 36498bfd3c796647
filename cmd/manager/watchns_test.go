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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestWatchNamespacesKeepsTwoInstallsApart: two managers on one cluster,
// each with --watch-namespaces naming its own tenant's namespace, each
// reconcile only their own MyApps and BackupConfigs; objects in a namespace
// neither watches are never touched, and neither manager's log names the
// other's namespace. The two share one --owner-id, as one values file
// installed twice would, so the owner ID cannot tell their records apart:
// with the orphan sweep running every second, neither deletes a record of
// a namespace it does not watch, not even one whose MyApp is absent, which
// a sweep that judged every record of its owner ID would take for a leak.
func TestWatchNamespacesKeepsTwoInstallsApart(t *testing.T) {
	g := NewWithT(t)
	bin := buildManager(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())
	sim, simURL := simtest.Start(t, simulator.Options{Token: "watch-test-token"})
	tokenFile := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(tokenFile, []byte("watch-test-token\n"), 0o600)).To(Succeed())

	c, err := cp.NewClient(client.Options{Scheme: fixtures.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	tenantA, tenantB, other := fixtures.CreateNamespace(t, c, "tenant-a"), fixtures.CreateNamespace(t, c, "tenant-b"),
		fixtures.CreateNamespace(t, c, "other")

	start := func(name, ownerID, namespaces string) *fixtures.ManagerProcess {
		return fixtures.StartManagerProcess(t, name, bin,
			"--kubeconfig="+kubeconfig,
			"--health-probe-bind-address="+freeAddr(t),
			"--metrics-bind-address="+freeAddr(t),
			"--dns-url="+simURL, "--dns-token-file="+tokenFile,
			"--backup-url="+simURL, "--backup-token-file="+tokenFile,
			// The sweep runs often, so it gets several chances to judge
			// the other install's records while the test watches.
			"--dns-orphan-sweep-interval=1s",
			"--owner-id="+ownerID,
			// No Ingress controller gives an address: the record points here.
			"--dns-default-target=192.0.2.10",
			"--watch-namespaces="+namespaces,
		)
	}
	const sharedID = "shared-id"
	installA, installB := start("install-a", sharedID, tenantA), start("install-b", sharedID, " "+tenantB+" ,")

	// A record of this owner ID whose MyApp is absent, in a namespace
	// neither install watches: neither may judge it.
	unjudged := "gone." + other + ".example.com"
	unjudgedOwner := "myapp-operator/" + sharedID + "/" + other + "/gone/0b7a4f60-0000-4000-8000-00000000cafe"
	seed, err := httpdns.New(external.Config{BaseURL: simURL, Token: external.StaticTokenSource("watch-test-token")})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = seed.Upsert(t.Context(), extdns.Record{
		Name: unjudged, Type: extdns.TypeA, Value: "192.0.2.10", TTL: 300, Owner: unjudgedOwner})
	g.Expect(err).NotTo(HaveOccurred())

	apps := map[string]*appsv1alpha1.MyApp{}
	configs := map[string]*backupv1alpha1.BackupConfig{}
	for _, ns := range []string{tenantA, tenantB, other} {
		apps[ns] = fixtures.NewMyApp(ns, "web")
		configs[ns] = fixtures.NewBackupConfig(ns, "web", "web")
		g.Expect(c.Create(t.Context(), apps[ns])).To(Succeed())
		g.Expect(c.Create(t.Context(), configs[ns])).To(Succeed())
	}

	for _, ns := range []string{tenantA, tenantB} {
		g.Eventually(func(g Gomega) {
			app := &appsv1alpha1.MyApp{}
			g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(apps[ns]), app)).To(Succeed())
			g.Expect(app.Finalizers).To(ContainElement(appsv1alpha1.DNSCleanupFinalizer))
			g.Expect(app.Status.Conditions).NotTo(BeEmpty())
			bc := &backupv1alpha1.BackupConfig{}
			g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(configs[ns]), bc)).To(Succeed())
			g.Expect(bc.Status.Conditions).NotTo(BeEmpty())
		}, 60*time.Second, 100*time.Millisecond).Should(Succeed(), "namespace %s is reconciled", ns)
	}
	// Each install's record is written under its own owner ID, and both
	// survive several sweeps of both installs.
	recordOwners := func() []string {
		owners := make([]string, 0, len(sim.Records()))
		for _, rec := range sim.Records() {
			owners = append(owners, rec.Owner)
		}
		return owners
	}
	ownsRecord := func(ns string) gomegatypes.GomegaMatcher {
		return ContainElement(And(HavePrefix("myapp-operator/"+sharedID+"/"), ContainSubstring("/"+ns+"/")))
	}
	g.Eventually(recordOwners, 60*time.Second, 100*time.Millisecond).Should(And(
		ownsRecord(tenantA), ownsRecord(tenantB)), "each install wrote its record")
	g.Consistently(recordOwners, 4*time.Second, 100*time.Millisecond).Should(And(
		ownsRecord(tenantA), ownsRecord(tenantB), ContainElement(unjudgedOwner)),
		"no sweep deletes a record of a namespace it does not watch")
	g.Consistently(func(g Gomega) {
		app := &appsv1alpha1.MyApp{}
		g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(apps[other]), app)).To(Succeed())
		g.Expect(app.Finalizers).To(BeEmpty())
		g.Expect(app.Status.Conditions).To(BeEmpty())
		bc := &backupv1alpha1.BackupConfig{}
		g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(configs[other]), bc)).To(Succeed())
		g.Expect(bc.Finalizers).To(BeEmpty())
		g.Expect(bc.Status.Conditions).To(BeEmpty())
	}, 3*time.Second, 100*time.Millisecond).Should(Succeed(), "a namespace no install watches is left alone")

	for _, tc := range []struct {
		install   *fixtures.ManagerProcess
		own       string
		notTheirs []string
	}{{installA, tenantA, []string{tenantB, other}}, {installB, tenantB, []string{tenantA, other}}} {
		logs := tc.install.Logs()
		g.Expect(logs).To(ContainSubstring(tc.own), "%s works in its namespace", tc.install.Name())
		for _, ns := range tc.notTheirs {
			g.Expect(strings.Contains(logs, `"`+ns+`"`)).To(BeFalse(), "%s never names namespace %s", tc.install.Name(), ns)
		}
	}
}
