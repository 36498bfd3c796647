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

// Package healthtest reads an object as the tools that judge the health of
// resources they do not know read it: kstatus (Helm 4's --wait, Flux) and
// the Argo CD health check the project ships (config/health). Both
// controllers' tests use it, so each kind is checked the same way.
package healthtest

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/myapp-operator/myapp-operator/internal/health"
)

// ArgoCDFor is the Argo CD health each kstatus status must read as with the
// shipped check.
var ArgoCDFor = map[status.Status]string{
	status.CurrentStatus:     health.Healthy,
	status.InProgressStatus:  health.Progressing,
	status.FailedStatus:      health.Degraded,
	status.TerminatingStatus: health.Progressing,
}

// Kstatus is what kstatus makes of obj, of kind gvk, as it is stored.
func Kstatus(t testing.TB, obj runtime.Object, gvk schema.GroupVersionKind) *status.Result {
	t.Helper()
	u := &unstructured.Unstructured{Object: toUnstructured(t, obj)}
	u.SetGroupVersionKind(gvk)
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ArgoCD runs the shipped Argo CD health check of gvk's kind over obj.
func ArgoCD(t testing.TB, obj runtime.Object, gvk schema.GroupVersionKind) health.Result {
	t.Helper()
	checks, err := health.LoadArgoCDChecks(filepath.Join(moduleRoot(t), "config", "health", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := health.Run(checks[health.CheckKey(gvk.Group, gvk.Kind)], toUnstructured(t, obj))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func toUnstructured(t testing.TB, obj runtime.Object) map[string]any {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return content
}

// moduleRoot is the nearest directory above the test's working directory
// (its package's) that holds go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
