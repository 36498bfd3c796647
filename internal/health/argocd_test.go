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

package health

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

const checksFile = "../../config/health/argocd-cm.yaml"

func cond(t string, status metav1.ConditionStatus, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: "R" + t, Message: "m", ObservedGeneration: gen}
}

// TestArgoCDChecksReadEveryStage runs the shipped checks over objects at
// every stage the controllers write (the controllers' kstatus tests run them
// over real ones too): the table of what each stage must read as.
func TestArgoCDChecksReadEveryStage(t *testing.T) {
	g := NewWithT(t)
	checks, err := LoadArgoCDChecks(checksFile)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(checks).To(HaveKey(CheckKey(appsv1alpha1.GroupVersion.Group, "MyApp")))
	g.Expect(checks).To(HaveKey(CheckKey(backupv1alpha1.GroupVersion.Group, "BackupConfig")))
	g.Expect(checks).To(HaveKey(CheckKey(backupv1alpha1.GroupVersion.Group, "Restore")))
	g.Expect(checks).To(HaveLen(3))

	now := metav1.Now()
	tests := []struct {
		name    string
		change  func(*appsv1alpha1.MyApp)
		want    string
		message string
	}{
		{"never reconciled", func(*appsv1alpha1.MyApp) {}, Progressing, "observe generation 2"},
		{"an edit not observed yet", func(a *appsv1alpha1.MyApp) {
			a.Status.ObservedGeneration = 1
			a.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionTrue, 1)}
		}, Progressing, "observe generation 2"},
		{"converging", func(a *appsv1alpha1.MyApp) {
			a.Status.ObservedGeneration = 2
			a.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionFalse, 2), cond("Reconciling", metav1.ConditionTrue, 2)}
		}, Progressing, "RReconciling: m"},
		{"stalled", func(a *appsv1alpha1.MyApp) {
			a.Status.ObservedGeneration = 2
			a.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionFalse, 2), cond("Stalled", metav1.ConditionTrue, 2)}
		}, Degraded, "RStalled: m"},
		{"ready", func(a *appsv1alpha1.MyApp) {
			a.Status.ObservedGeneration = 2
			a.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionTrue, 2)}
		}, Healthy, "m"},
		{"ready for an older generation only", func(a *appsv1alpha1.MyApp) {
			a.Status.ObservedGeneration = 2
			a.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionTrue, 1)}
		}, Progressing, "RReady"},
		{"not ready, nothing abnormal", func(a *appsv1alpha1.MyApp) {
			a.Status.ObservedGeneration = 2
			a.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionFalse, 2)}
		}, Progressing, "RReady: m"},
		{"suspended", func(a *appsv1alpha1.MyApp) {
			a.Spec.Suspend = true
			a.Status.ObservedGeneration = 2
		}, Suspended, "spec.suspend"},
		{"deleting", func(a *appsv1alpha1.MyApp) {
			a.DeletionTimestamp = &now
			a.Status.ObservedGeneration = 2
			a.Status.Conditions = []metav1.Condition{cond("Ready", metav1.ConditionTrue, 2)}
		}, Progressing, "deleted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			app := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2}}
			tc.change(app)
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
			g.Expect(err).NotTo(HaveOccurred())
			for key, script := range checks {
				res, err := Run(script, obj)
				g.Expect(err).NotTo(HaveOccurred(), key)
				g.Expect(res.Status).To(Equal(tc.want), key)
				g.Expect(res.Message).To(ContainSubstring(tc.message), key)
			}
		})
	}
}

// TestRunRefusesAnUnknownStatus: a script that returns something Argo CD
// does not know fails the test rather than passing for Unknown.
func TestRunRefusesAnUnknownStatus(t *testing.T) {
	g := NewWithT(t)
	_, err := Run(`hs = {}; hs.status = "Fine"; return hs`, map[string]any{})
	g.Expect(err).To(MatchError(ContainSubstring(`"Fine"`)))
	_, err = Run(`return nil`, map[string]any{})
	g.Expect(err).To(HaveOccurred())
}
