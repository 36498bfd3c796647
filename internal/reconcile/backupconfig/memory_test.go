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
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

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
