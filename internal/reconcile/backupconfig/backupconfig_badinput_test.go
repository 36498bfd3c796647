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

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestBadInputSchedulesOnlyTheParserRefuses is the part of the bad-input
// family (issue 11, family 8; test/api/badinput_test.go has the specs the
// API server refuses) that only the controller can tell: the CRD checks
// that spec.schedule has five fields, not what they say, so these are
// accepted and must each end as Ready=False, InvalidSchedule, naming
// spec.schedule and the value, with no backup taken.
func TestBadInputSchedulesOnlyTheParserRefuses(t *testing.T) {
	schedules := []string{
		"61 * * * *",    // minute out of range
		"0 24 * * *",    // hour out of range
		"0 3 0 * *",     // day of month 0
		"0 3 * 13 *",    // month 13
		"0 3 * * 8",     // day of week 8
		"*/0 * * * *",   // a step of 0
		"a b c d e",     // words
		"0 0 30 2 *",    // February 30: parses, never fires
		"5-1 * * * *",   // a range backwards
		"0 3 * JAN-X *", // a month name that is none
	}
	g := NewWithT(t)
	e := newTestEnv(t)
	e.startManager()
	e.create(e.newApp("web"))
	bcs := make([]*backupv1alpha1.BackupConfig, len(schedules))
	for i, schedule := range schedules {
		bcs[i] = e.newBackupConfig(fmt.Sprintf("cron-%d", i), "web", fixtures.WithSchedule(schedule), fixtures.WithoutBackupOnChange())
		e.create(bcs[i])
	}
	for i, schedule := range schedules {
		t.Run(schedule, func(t *testing.T) {
			g := NewWithT(t)
			g.Eventually(func(g Gomega) metav1.Condition {
				return condition(e.fetchBackupConfig(bcs[i])(g), backupv1alpha1.ReadyCondition)
			}, eventually, tick).Should(And(
				HaveField("Status", metav1.ConditionFalse),
				HaveField("Reason", backupv1alpha1.InvalidScheduleReason),
				HaveField("Message", ContainSubstring(fmt.Sprintf("spec.schedule %q is not usable", schedule))),
			))
		})
	}
	g.Expect(e.sim.Backups()).To(BeEmpty(), "no backup is taken on a schedule that cannot be followed")
}
