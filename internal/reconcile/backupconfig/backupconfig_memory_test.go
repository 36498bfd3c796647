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
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

func TestPatientBackupsHoldCallsBackDuringAWait(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "shop", Name: "web"}
	var m memory
	// No client behind it: a call that got through would panic.
	held := patientBackups{memory: &m, key: key}
	throttled := &external.Error{Kind: external.KindThrottled, Service: "backup", Operation: "start", StatusCode: 429,
		RetryAfter: time.Hour}

	m.rememberWait(key, throttled, throttled.RetryAfter)
	_, err := held.Start(ctx, backup.StartRequest{})
	g.Expect(err).To(MatchError(external.ErrThrottled))
	wait, ok := external.RetryAfter(err)
	g.Expect(ok).To(BeTrue())
	g.Expect(wait).To(BeNumerically("~", time.Hour, time.Minute))
	_, err = held.List(ctx, "")
	g.Expect(err).To(MatchError(ContainSubstring("not calling the backup service")))
	g.Expect(held.Delete(ctx, "bk-1", "owner")).To(MatchError(external.ErrThrottled))
	_, err = held.Get(ctx, "bk-1")
	g.Expect(err).To(MatchError(external.ErrThrottled))

	// A held-back call does not push the end of the wait out.
	m.rememberWait(key, err, 2*time.Hour)
	_, err = held.Get(ctx, "bk-1")
	wait, _ = external.RetryAfter(err)
	g.Expect(wait).To(BeNumerically("<=", time.Hour))

	// Other BackupConfigs are not held back, and neither is this one once
	// the wait is over or the BackupConfig is gone.
	g.Expect(m.pendingWait(types.NamespacedName{Namespace: "shop", Name: "other"})).To(Succeed())
	m.rememberWait(key, throttled, -time.Second)
	g.Expect(m.pendingWait(key)).To(Succeed())
	m.rememberWait(key, throttled, time.Hour)
	m.forget(key)
	g.Expect(m.pendingWait(key)).To(Succeed())
	// Errors that are not answers of the service ask for nothing.
	m.rememberWait(key, errors.New("connection refused"), time.Hour)
	g.Expect(m.pendingWait(key)).To(Succeed())
}

func TestHeldForCleanupGaugeKeepsItsLastCount(t *testing.T) {
	g := NewWithT(t)
	key := types.NamespacedName{Namespace: "gauge-test", Name: "web"}
	t.Cleanup(func() { backupsHeldForCleanup.DeleteLabelValues(key.Namespace, key.Name) })
	held := func() float64 {
		return testutil.ToFloat64(backupsHeldForCleanup.WithLabelValues(key.Namespace, key.Name))
	}
	s := &scope{key: key, bc: &backupv1alpha1.BackupConfig{Status: backupv1alpha1.BackupConfigStatus{
		LastBackup: &backupv1alpha1.BackupStatus{ID: "bk-7", Phase: backupv1alpha1.BackupSucceeded},
	}}}

	// Before the service has listed anything, the backup status names
	// counts.
	r := &Reconciler{}
	r.estimateHeldForCleanup(s)
	g.Expect(held()).To(Equal(1.0))

	// A listing counts them all, and its count stands while the service
	// cannot be listed again.
	r.countHeldForCleanup(s, 4)
	r.estimateHeldForCleanup(s)
	g.Expect(held()).To(Equal(4.0))

	// A restarted controller knows only status.
	r = &Reconciler{}
	r.estimateHeldForCleanup(s)
	g.Expect(held()).To(Equal(1.0))
}
