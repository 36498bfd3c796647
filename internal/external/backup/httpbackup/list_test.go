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

package httpbackup_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

// labelMyApp is the label the BackupConfig controller stores the MyApp's
// name under, beside backup.LabelNamespace.
const labelMyApp = "backup.myapp.dev/myapp"

// seedBackups starts n backups through c, labelled as the BackupConfig
// controller labels them: backup i is of MyApp app<i%7> in namespace
// ns<i%40>. It returns how many are of each namespace and name.
func seedBackups(t *testing.T, c backup.Client, n int) map[[2]string]int {
	t.Helper()
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				ns, app := fmt.Sprintf("ns%d", i%40), fmt.Sprintf("app%d", i%7)
				req := start(ns+"-"+app, fmt.Sprintf("backupconfig/uid-%d", i%40), fmt.Sprintf("key-%06d", i))
				req.Labels = map[string]string{backup.LabelNamespace: ns, labelMyApp: app}
				if _, err := c.Start(t.Context(), req); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	counts := map[[2]string]int{}
	for i := range n {
		counts[[2]string{fmt.Sprintf("ns%d", i%40), fmt.Sprintf("app%d", i%7)}]++
	}
	return counts
}

// TestListingAmong20000Backups: the service's list is paged and the client
// follows the pages, so every one of 20,000 backups is listed, once and
// oldest first, although one answer may carry at most 4 MiB (an unpaged
// answer passed it at about 5,000 backups, and a storage Restore then
// waited for ever).
func TestListingAmong20000Backups(t *testing.T) {
	const total = 20000
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url)
	seedBackups(t, c, total)

	sim.ResetRequestCounts()
	begin := time.Now()
	all, err := c.List(t.Context(), "")
	took := time.Since(begin)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(HaveLen(total))
	seen := make(map[string]bool, total)
	for i, b := range all {
		g.Expect(seen[b.ID]).To(BeFalse(), "backup %s listed twice", b.ID)
		seen[b.ID] = true
		if i > 0 {
			g.Expect(b.StartedAt.Before(all[i-1].StartedAt)).To(BeFalse(), "listed oldest first")
		}
	}
	requests := sim.RequestCount(simulator.ServiceBackup, simulator.OpList)
	g.Expect(requests).To(Equal(total/simulator.DefaultBackupPageSize), "one request a page")
	t.Logf("listed %d backups in %d requests, %v", len(all), requests, took.Round(time.Millisecond))
}

// TestListingOneMyAppsBackupsReadsOnlyThose: a listing by the labels of one
// namespace and MyApp (a storage Restore's) among 20,000 backups answers
// exactly that MyApp's backups, and the service sends only those: one page.
func TestListingOneMyAppsBackupsReadsOnlyThose(t *testing.T) {
	const total = 20000
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url)
	counts := seedBackups(t, c, total)

	sim.ResetRequestCounts()
	begin := time.Now()
	mine, err := c.List(t.Context(), "", backup.InNamespace("ns3"),
		backup.WithLabels(map[string]string{backup.LabelNamespace: "ns3", labelMyApp: "app5"}))
	took := time.Since(begin)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mine).To(HaveLen(counts[[2]string{"ns3", "app5"}]))
	for _, b := range mine {
		g.Expect(b.Labels).To(HaveKeyWithValue(backup.LabelNamespace, "ns3"))
		g.Expect(b.Labels).To(HaveKeyWithValue(labelMyApp, "app5"))
	}
	requests := sim.RequestCount(simulator.ServiceBackup, simulator.OpList)
	g.Expect(requests).To(Equal(1), "%d backups fit one page", len(mine))
	t.Logf("listed the %d backups of ns3/app5 among %d in %d requests, %v", len(mine), total, requests,
		took.Round(time.Millisecond))
}
