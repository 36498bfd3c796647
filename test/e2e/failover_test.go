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

package e2e

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestLeaderFailover runs two managers with leader election. One leads and
// reconciles; killed without warning, the other takes over within the lease,
// and every MyApp ends with exactly one record for its current host, none
// duplicated or left behind.
func TestLeaderFailover(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	leaseArgs := []string{
		"--leader-elect",
		"--leader-election-namespace=" + ns,
		"--leader-election-id=e2e-failover",
		"--leader-election-lease-duration=4s",
		"--leader-election-renew-deadline=3s",
		"--leader-election-retry-period=500ms",
	}
	managers := []*fixtures.ManagerProcess{
		startManager(t, "manager-a", cp.Kubeconfig(), leaseArgs...),
		startManager(t, "manager-b", cp.Kubeconfig(), leaseArgs...),
	}

	var leader, standby *fixtures.ManagerProcess
	g.Eventually(func() bool {
		for i, m := range managers {
			if m.Leads() {
				leader, standby = m, managers[1-i]
				return true
			}
		}
		return false
	}, timeout, interval).Should(BeTrue(), "one manager leads")
	g.Expect(standby.Leads()).To(BeFalse(), "only one manager leads")

	apps := make([]*appsv1alpha1.MyApp, 0, 5)
	apps = append(apps, newMyApp(ns, "one"), newMyApp(ns, "two"), newMyApp(ns, "three"))
	for _, app := range apps {
		g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	}
	bc := newBackupConfig(ns, "two-backup", "two")
	g.Expect(k8sClient.Create(t.Context(), bc)).To(Succeed())
	eventuallyReady(t.Context(), g, apps...)
	eventuallyBackedUp(t.Context(), g, bc, backupv1alpha1.TriggerAppChange)

	// The leader dies; work keeps arriving while nobody leads.
	leader.Kill()
	killed := time.Now()
	more := []*appsv1alpha1.MyApp{newMyApp(ns, "four"), newMyApp(ns, "five")}
	for _, app := range more {
		g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(apps[0]), apps[0])).To(Succeed())
	movedFrom := apps[0].Spec.Host
	apps[0].Spec.Host = "moved." + ns + ".example.com"
	g.Expect(k8sClient.Update(t.Context(), apps[0])).To(Succeed())
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(apps[1]), apps[1])).To(Succeed())
	apps[1].Spec.Image = "nginx:1.28"
	g.Expect(k8sClient.Update(t.Context(), apps[1])).To(Succeed())

	g.Eventually(standby.Leads, 30*time.Second, interval).Should(BeTrue(), "the standby takes over")
	t.Logf("the standby took over %s after the leader was killed", time.Since(killed).Round(100*time.Millisecond))
	apps = append(apps, more...)
	eventuallyReady(t.Context(), g, apps...)

	// Exactly one record per MyApp, for its current host; the moved host's
	// old record is gone.
	for _, app := range apps {
		owned := 0
		for _, r := range sim.Records() {
			if strings.HasSuffix(r.Owner, "/"+string(app.UID)) {
				owned++
				g.Expect(r.Name).To(Equal(app.Spec.Host), "MyApp %s owns only its current host", app.Name)
			}
		}
		g.Expect(owned).To(Equal(1), "MyApp %s owns exactly one record", app.Name)
	}
	for _, r := range sim.Records() {
		g.Expect(r.Name).NotTo(Equal(movedFrom), "the record of the host moved away from is deleted")
	}

	// One backup per generation of the MyApp, both succeeded: the change made
	// while nobody led was neither lost nor backed up twice.
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(bc), bc)).To(Succeed())
		g.Expect(bc.Status.ObservedAppGeneration).To(Equal(apps[1].Generation))
		g.Expect(bc.Status.LastBackup).To(HaveField("Phase", backupv1alpha1.BackupSucceeded))
	}, timeout, interval).Should(Succeed())
	var keys []string
	for _, b := range sim.Backups() {
		if strings.HasSuffix(b.Owner, "/"+string(bc.UID)) {
			g.Expect(b.Phase).To(Equal(simulator.PhaseSucceeded))
			keys = append(keys, b.IdempotencyKey)
		}
	}
	g.Expect(keys).To(HaveLen(2), "a baseline backup and one for the image change, no more: %v", keys)
}
