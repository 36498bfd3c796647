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
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// The backup service reports times in milliseconds; status keeps seconds. A
// recorded backup must read back equal, or every poll writes status again.
func TestRecordedBackupSurvivesAStatusRoundTrip(t *testing.T) {
	g := NewWithT(t)
	started := time.Date(2026, 3, 1, 3, 0, 0, 123_000_000, time.UTC)
	completed := started.Add(1500 * time.Millisecond)
	for _, b := range []backup.Backup{
		{ID: "b-1", Phase: backup.PhaseRunning, StartedAt: started},
		{ID: "b-1", Phase: backup.PhaseSucceeded, StartedAt: started, CompletedAt: &completed},
	} {
		s := &scope{bc: &backupv1alpha1.BackupConfig{}}
		(&Reconciler{}).recordBackup(t.Context(), s, b, backupv1alpha1.TriggerSchedule)

		data, err := json.Marshal(s.bc.Status)
		g.Expect(err).NotTo(HaveOccurred())
		var readBack backupv1alpha1.BackupConfigStatus
		g.Expect(json.Unmarshal(data, &readBack)).To(Succeed())
		g.Expect(equality.Semantic.DeepEqual(readBack, s.bc.Status)).To(BeTrue(), "phase %s", b.Phase)
	}
}

func TestMissingBackupsCountOnTheControllersClock(t *testing.T) {
	g := NewWithT(t)
	key := types.NamespacedName{Namespace: "shop", Name: "web"}
	now := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)
	var m missingBackups
	polls, since := m.observe(key, "bk-1", now)
	g.Expect(polls).To(Equal(1))
	g.Expect(since).To(BeZero())
	polls, since = m.observe(key, "bk-1", now.Add(time.Minute))
	g.Expect(polls).To(Equal(2))
	g.Expect(since).To(Equal(time.Minute))
	// Another backup, or one found in between, starts the count again.
	polls, _ = m.observe(key, "bk-2", now.Add(2*time.Minute))
	g.Expect(polls).To(Equal(1))
	m.forget(key)
	polls, since = m.observe(key, "bk-2", now.Add(3*time.Minute))
	g.Expect(polls).To(Equal(1))
	g.Expect(since).To(BeZero())
}
