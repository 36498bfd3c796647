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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// One clock: the manager's is never compared with the backup provider's.
// Each test runs with the manager's clock an hour behind the provider's and
// an hour ahead of it (on S3, the manager is also the writer whose clock
// the object's metadata records).

// skewedClock is the real clock off by its value, as a manager's clock
// that drifted, or was set wrong, would be.
type skewedClock time.Duration

func (c skewedClock) Now() time.Time                  { return time.Now().Add(time.Duration(c)) }
func (c skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

var managerSkews = []time.Duration{-time.Hour, time.Hour}

// TestABackupStartedUnderASkewedClockIsCountedAsStarted, on each provider:
// the backup a pass starts is announced (BackupStarted) and counted
// (myapp_backupconfig_backups_started_total) once, whichever way the
// manager's clock is off.
func TestABackupStartedUnderASkewedClockIsCountedAsStarted(t *testing.T) {
	for _, skew := range managerSkews {
		t.Run(fmt.Sprintf("manager %v", skew), func(t *testing.T) {
			forEachProvider(t, func(t *testing.T, e *testEnv) {
				g := NewWithT(t)
				started := func() float64 {
					return testutil.ToFloat64(backupsStarted.WithLabelValues(string(backupv1alpha1.TriggerAppChange)))
				}
				before := started()
				e.startManager(func(r *Reconciler) { r.Clock = skewedClock(skew) })
				app := e.newApp("skewed")
				bc := e.newBackupConfig("skewed", "skewed")
				e.create(app, bc)
				e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
				g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, bc) }, eventually, tick).
					Should(ContainElement(eventBackupStarted), "no BackupStarted event for the backup the pass started")
				g.Expect(started()).To(Equal(before+1), "backups started, as the metric counts them")
			})
		})
	}
}

// TestRetentionKeepsTheNewestWhateverTheWritersClock, on each provider: a
// manager whose clock is an hour behind or ahead takes over (a failover to
// a replica that drifted) and backs a change up; retention keeps that
// backup, the newest as the provider stored it, and prunes the oldest.
func TestRetentionKeepsTheNewestWhateverTheWritersClock(t *testing.T) {
	for _, skew := range managerSkews {
		t.Run(fmt.Sprintf("manager %v", skew), func(t *testing.T) {
			forEachProvider(t, func(t *testing.T, e *testEnv) {
				g := NewWithT(t)
				e.startManager()
				app := e.newApp("drift")
				bc := e.newBackupConfig("drift", "drift", fixtures.WithKeepLast(2))
				e.create(app, bc)
				current := e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
				oldest := current.Status.LastBackup.ID
				update(e, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = "drift:2" })
				current = e.waitForBackupAfter(bc, current, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
				second := current.Status.LastBackup.ID
				e.stopManager()
				// More than a second later, so the newest is newer by any
				// provider's clock (S3's Last-Modified has whole seconds).
				time.Sleep(1100 * time.Millisecond)

				e.startManager(func(r *Reconciler) { r.Clock = skewedClock(skew) })
				update(e, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = "drift:3" })
				current = e.waitForBackupAfter(bc, current, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
				newest := current.Status.LastBackup.ID
				g.Eventually(func() []string { return backupIDs(e.ownBackups(current)) }, eventually, tick).
					Should(ConsistOf(second, newest), "kept, of %s, %s and the newest %s", oldest, second, newest)
				g.Consistently(func() []string { return backupIDs(e.ownBackups(current)) }, consistently, tick).
					Should(ConsistOf(second, newest))
			})
		})
	}
}
