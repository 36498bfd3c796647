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
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3/s3test"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// quietFor is how long no request must be counted before the controller's
// work on a step is taken to be done: a BackupConfig without a schedule
// and with nothing running schedules no pass of its own.
const quietFor = 2 * time.Second

// TestS3CostOfABackupAndARetentionPass counts, at the s3 provider's
// transport, what the BackupConfig controller asks of a real S3 server
// (versitygw on loopback) for each step of a BackupConfig's life with
// keepLast 3: the baseline backup of a new BackupConfig, a backup whose
// pass prunes the oldest, a pass with nothing to do, and the first pass
// after a restart (a new client, which has read no object yet). The
// requests by method and the bytes on the wire both ways are logged
// (docs/benchmarks-results.md has them), and the counts a step must not
// exceed are checked: one PUT per backup, one DELETE per pruned backup, no
// object read while the client remembers it.
func TestS3CostOfABackupAndARetentionPass(t *testing.T) {
	g := NewWithT(t)
	e := s3Only(t)
	var count s3test.Counter
	e.backups = e.newS3ClientThrough(count.Transport(), testOwnerID, e.s3.srv.AccessKey, e.s3.srv.SecretKey)
	e.startManager()
	app := e.newApp("cost")
	bc := e.newBackupConfig("cost", "cost", fixtures.WithKeepLast(3))

	// step runs act, waits for the controller to be done, and returns
	// what it cost.
	step := func(name string, act func()) s3test.Counts {
		t.Helper()
		before := count.Snapshot()
		act()
		quiet := waitQuiet(t, &count)
		cost := quiet.Sub(before)
		t.Logf("COST %-44s requests %d %v, sent %d B, received %d B", name, cost.Total(), cost.Requests, cost.Sent, cost.Received)
		return cost
	}

	baseline := step("the baseline backup of a new BackupConfig", func() {
		e.create(app, bc)
		e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	})
	g.Expect(baseline.Requests[http.MethodPut]).To(Equal(1), "one PUT per backup")
	g.Expect(baseline.Requests[http.MethodDelete]).To(BeZero())

	var backups []s3test.Counts
	current := e.fetchBackupConfig(bc)(g)
	for i := 2; i <= 4; i++ {
		backups = append(backups, step(fmt.Sprintf("an on-change backup, %d kept before", i-1), func() {
			update(e, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = fmt.Sprintf("cost:%d", i) })
			current = e.waitForBackupAfter(bc, current, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
		}))
	}
	for i, c := range backups {
		g.Expect(c.Requests[http.MethodPut]).To(Equal(1), "backup %d: one PUT", i+2)
		g.Expect(c.Requests[http.MethodGet]).To(BeNumerically("<=", 3), "backup %d: lists, no object read twice", i+2)
	}
	g.Expect(backups[2].Requests[http.MethodDelete]).To(Equal(1), "the fourth backup's pass prunes the first")
	g.Expect(e.ownBackups(bc)).To(HaveLen(3))

	idle := step("a pass with nothing to do", func() { e.poke(bc) })
	g.Expect(idle.Requests[http.MethodPut] + idle.Requests[http.MethodDelete]).To(BeZero())
	g.Expect(idle.Total()).To(BeNumerically("<=", 1), "one list, for retention")

	e.stopManager()
	var fresh s3test.Counter
	e.backups = e.newS3ClientThrough(fresh.Transport(), testOwnerID, e.s3.srv.AccessKey, e.s3.srv.SecretKey)
	// The new manager's first pass of the BackupConfig comes by itself,
	// from its cache's first list.
	e.startManager()
	restarted := waitQuiet(t, &fresh)
	t.Logf("COST %-44s requests %d %v, sent %d B, received %d B", "the first pass after a restart, 3 kept",
		restarted.Total(), restarted.Requests, restarted.Sent, restarted.Received)
	g.Expect(restarted.Requests[http.MethodPut] + restarted.Requests[http.MethodDelete]).To(BeZero())
	g.Expect(restarted.Total()).To(BeNumerically("<=", 1+3), "one list and one read of each object")
}

// waitQuiet returns c's counts once it has counted nothing for quietFor.
func waitQuiet(t *testing.T, c *s3test.Counter) s3test.Counts {
	t.Helper()
	last := c.Snapshot()
	since := time.Now()
	deadline := time.Now().Add(eventually)
	for time.Since(since) < quietFor {
		if time.Now().After(deadline) {
			t.Fatalf("the controller kept calling the S3 server for %s", eventually)
		}
		time.Sleep(100 * time.Millisecond)
		if now := c.Snapshot(); now.Total() != last.Total() {
			last, since = now, time.Now()
		}
	}
	return last
}
