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

package restore

import (
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/health"
	"github.com/myapp-operator/myapp-operator/internal/health/healthtest"
)

var restoreKind = backupv1alpha1.GroupVersion.WithKind("Restore")

// TestKstatusAndArgoCDReadEveryPhaseOfARestore: a Restore as its status is
// written at each phase (setConditions, observedGeneration as the
// controller sets it) reads the same in kstatus and in the shipped Argo CD
// check: in progress until it succeeded, current once it has, failed once
// it failed; and, for Argo CD, in progress before the controller has
// looked at it.
func TestKstatusAndArgoCDReadEveryPhaseOfARestore(t *testing.T) {
	tests := []struct {
		phase backupv1alpha1.RestorePhase
		want  status.Status
	}{
		{"", status.InProgressStatus},
		{backupv1alpha1.RestorePending, status.InProgressStatus},
		{backupv1alpha1.RestoreRestoring, status.InProgressStatus},
		{backupv1alpha1.RestoreSucceeded, status.CurrentStatus},
		{backupv1alpha1.RestoreFailed, status.FailedStatus},
	}
	for _, tc := range tests {
		t.Run(string(tc.phase), func(t *testing.T) {
			g := NewWithT(t)
			r := testRestore()
			if tc.phase != "" {
				r.Status.Phase = tc.phase
				r.Status.ObservedGeneration = r.Generation
				setConditions(r, "Reason", "The message.", statusNow)
			}
			if tc.phase != "" {
				// A Restore the controller has not looked at is stored with
				// status.observedGeneration 0 (the CRD's default), which
				// the typed object cannot show: kstatus is asked only of
				// the phases.
				g.Expect(healthtest.Kstatus(t, r, restoreKind).Status).To(Equal(tc.want))
			}
			argo := healthtest.ArgoCD(t, r, restoreKind)
			g.Expect(argo.Status).To(Equal(healthtest.ArgoCDFor[tc.want]), "Argo CD says %s: %s", argo.Status, argo.Message)
			if tc.phase == backupv1alpha1.RestoreFailed {
				g.Expect(argo.Status).To(Equal(health.Degraded))
				g.Expect(argo.Message).To(ContainSubstring("The message."))
			}
		})
	}
}
