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

// Package api_test proves that the API server, with the generated CRDs,
// refuses bad MyApps and BackupConfigs with messages that name the field,
// and fills in the documented defaults.
package api_test

import (
	"os"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierEnvtest}, &cp))
}

var (
	myAppGVK        = schema.GroupVersionKind{Group: "apps.myapp.dev", Version: "v1alpha1", Kind: "MyApp"}
	backupConfigGVK = schema.GroupVersionKind{Group: "backup.myapp.dev", Version: "v1alpha1", Kind: "BackupConfig"}
)

// validationCase mutates a valid spec and expects the create to be refused
// with every one of wantMessages in the error.
type validationCase struct {
	name         string
	mutate       func(spec map[string]any)
	wantMessages []string
}

func validMyAppSpec() map[string]any {
	return map[string]any{"image": "nginx:1.27", "host": "web.example.com"}
}

func validBackupConfigSpec() map[string]any {
	return map[string]any{"appRef": map[string]any{"name": "web"}}
}

func TestMyAppValidation(t *testing.T) {
	cases := []validationCase{
		{"image is required", func(s map[string]any) { delete(s, "image") }, []string{"spec.image", "Required value"}},
		{"image without spaces", func(s map[string]any) { s["image"] = "nginx 1.27" }, []string{"spec.image", "image must not contain spaces"}},
		{"host is required", func(s map[string]any) { delete(s, "host") }, []string{"spec.host", "Required value"}},
		{"host is a DNS name", func(s map[string]any) { s["host"] = "Web_App.example.com" }, []string{"spec.host", "lowercase fully qualified DNS name"}},
		{"host is fully qualified", func(s map[string]any) { s["host"] = "localhost" }, []string{"spec.host", "lowercase fully qualified DNS name"}},
		{"host labels are at most 63 characters", func(s map[string]any) {
			s["host"] = "a234567890123456789012345678901234567890123456789012345678901234.example.com"
		}, []string{"spec.host", "labels of at most 63 characters"}},
		{"host is not an IP address", func(s map[string]any) { s["host"] = "10.0.0.1" }, []string{"spec.host", "not an IP address"}},
		{"replicas at least 1", func(s map[string]any) { s["replicas"] = int64(0) }, []string{"spec.replicas", "greater than or equal to 1"}},
		{"replicas at most 1000", func(s map[string]any) { s["replicas"] = int64(1001) }, []string{"spec.replicas", "less than or equal to 1000"}},
		{"containerPort in range", func(s map[string]any) { s["containerPort"] = int64(70000) }, []string{"spec.containerPort", "less than or equal to 65535"}},
		{"servicePort in range", func(s map[string]any) { s["servicePort"] = int64(0) }, []string{"spec.servicePort", "greater than or equal to 1"}},
		{"deletionPolicy is Delete or Orphan", func(s map[string]any) { s["deletionPolicy"] = "Keep" }, []string{"spec.deletionPolicy", `supported values: "Delete", "Orphan"`}},
		{"env names are unique", func(s map[string]any) {
			s["env"] = []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"}}
		}, []string{"spec.env[1]", "Duplicate value"}},
		// The rest are specs the Deployment API would refuse, or, for
		// whitespace in the image, pods that could never be created.
		{"image without tabs", func(s map[string]any) { s["image"] = "nginx:1.27\t" }, []string{"spec.image", "image must not contain spaces or other whitespace"}},
		{"image without newlines", func(s map[string]any) { s["image"] = "nginx\n:1.27" }, []string{"spec.image", "image must not contain spaces or other whitespace"}},
		{"env value and valueFrom are exclusive", func(s map[string]any) {
			s["env"] = []any{
				map[string]any{"name": "OK", "value": "1"},
				map[string]any{"name": "POD", "value": "x", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
			}
		}, []string{"spec.env", "env entries must set value or valueFrom, not both"}},
		{"cpu request within its limit", func(s map[string]any) {
			s["resources"] = map[string]any{
				"requests": map[string]any{"cpu": "2", "memory": "64Mi"},
				"limits":   map[string]any{"cpu": "1500m", "memory": "128Mi"},
			}
		}, []string{"spec.resources", "resources.requests.cpu must not exceed resources.limits.cpu"}},
		{"memory request within its limit, integers too", func(s map[string]any) {
			s["resources"] = map[string]any{
				"requests": map[string]any{"memory": int64(2147483648)},
				"limits":   map[string]any{"memory": "1Gi"},
			}
		}, []string{"spec.resources", "resources.requests.memory must not exceed resources.limits.memory"}},
	}
	runValidationCases(t, myAppGVK, validMyAppSpec, cases)
}

func TestMyAppNameIsAServiceName(t *testing.T) {
	c, err := cp.NewClient(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web.v2", "1web", "a234567890123456789012345678901234567890123456789012345678901234"} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := c.Create(t.Context(), newObject(myAppGVK, name, validMyAppSpec()))
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "create is refused as invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("a MyApp's name must be a DNS label"))
		})
	}
}

func TestBackupConfigValidation(t *testing.T) {
	cases := []validationCase{
		{"appRef is required", func(s map[string]any) { delete(s, "appRef") }, []string{"spec.appRef", "Required value"}},
		{"appRef.name is required", func(s map[string]any) { s["appRef"] = map[string]any{} }, []string{"spec.appRef.name", "Required value"}},
		{"appRef.name is an object name", func(s map[string]any) { s["appRef"] = map[string]any{"name": "My App"} }, []string{"spec.appRef.name", "must be a valid object name"}},
		// A MyApp's name is a DNS label, so a name that cannot be one would
		// only ever read AppNotFound.
		{"appRef.name has no dots", func(s map[string]any) { s["appRef"] = map[string]any{"name": "web.v2"} }, []string{"spec.appRef.name", "DNS label"}},
		{"appRef.name starts with a letter", func(s map[string]any) { s["appRef"] = map[string]any{"name": "1web"} }, []string{"spec.appRef.name", "DNS label"}},
		{"appRef.name at most 63 characters", func(s map[string]any) {
			s["appRef"] = map[string]any{"name": "a234567890123456789012345678901234567890123456789012345678901234"}
		}, []string{"spec.appRef.name", "63"}},
		{"schedule has 5 fields", func(s map[string]any) { s["schedule"] = "0 3 * *" }, []string{"spec.schedule", "5-field cron expression"}},
		{"schedule is cron, not prose", func(s map[string]any) { s["schedule"] = "every day" }, []string{"spec.schedule", "5-field cron expression"}},
		{"schedule has no seconds field", func(s map[string]any) { s["schedule"] = "0 0 3 * * *" }, []string{"spec.schedule", "5-field cron expression"}},
		{"keepLast at least 1", func(s map[string]any) { s["retention"] = map[string]any{"keepLast": int64(0)} }, []string{"spec.retention.keepLast", "greater than or equal to 1"}},
		{"keepLast at most 100", func(s map[string]any) { s["retention"] = map[string]any{"keepLast": int64(101)} }, []string{"spec.retention.keepLast", "less than or equal to 100"}},
		{"deletionPolicy is Delete or Retain", func(s map[string]any) { s["deletionPolicy"] = "Orphan" }, []string{"spec.deletionPolicy", `supported values: "Delete", "Retain"`}},
	}
	runValidationCases(t, backupConfigGVK, validBackupConfigSpec, cases)
}

func runValidationCases(t *testing.T, gvk schema.GroupVersionKind, valid func() map[string]any, cases []validationCase) {
	c, err := cp.NewClient(client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			spec := valid()
			tc.mutate(spec)
			err := c.Create(t.Context(), newObject(gvk, "invalid", spec))
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "create is refused as invalid, got %v", err)
			for _, msg := range tc.wantMessages {
				g.Expect(err.Error()).To(ContainSubstring(msg))
			}
		})
	}
}

// TestMyAppAcceptsWhatTheDeploymentAccepts keeps the rules above from
// refusing good specs: requests at or below their limits, in any notation,
// requests without limits, and env entries with one source each.
func TestMyAppAcceptsWhatTheDeploymentAccepts(t *testing.T) {
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	spec := validMyAppSpec()
	spec["image"] = "registry.example.com:5000/team/web@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	spec["resources"] = map[string]any{
		"requests": map[string]any{"cpu": "500m", "memory": "128Mi", "ephemeral-storage": "1Gi", "example.com/widget": int64(1)},
		"limits":   map[string]any{"cpu": int64(1), "memory": "134217728", "example.com/widget": "1"},
	}
	spec["env"] = []any{
		map[string]any{"name": "GREETING", "value": "hello"},
		map[string]any{"name": "EMPTY"},
		map[string]any{"name": "POD", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.name"}}},
	}
	g.Expect(c.Create(t.Context(), newObject(myAppGVK, "accepted", spec))).To(Succeed())
}

func TestMyAppDefaults(t *testing.T) {
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	obj := newObject(myAppGVK, "defaults", validMyAppSpec())
	g.Expect(c.Create(t.Context(), obj)).To(Succeed())

	spec := obj.Object["spec"].(map[string]any)
	g.Expect(spec).To(HaveKeyWithValue("replicas", BeNumerically("==", 1)))
	g.Expect(spec).To(HaveKeyWithValue("containerPort", BeNumerically("==", 8080)))
	g.Expect(spec).To(HaveKeyWithValue("servicePort", BeNumerically("==", 80)))
	g.Expect(spec).To(HaveKeyWithValue("deletionPolicy", "Delete"))
}

func TestBackupConfigDefaults(t *testing.T) {
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	spec := validBackupConfigSpec()
	spec["schedule"] = "0 3 * * *"
	obj := newObject(backupConfigGVK, "defaults", spec)
	g.Expect(c.Create(t.Context(), obj)).To(Succeed())

	spec = obj.Object["spec"].(map[string]any)
	g.Expect(spec).To(HaveKeyWithValue("backupOnChange", true))
	g.Expect(spec).To(HaveKeyWithValue("deletionPolicy", "Retain"))
	g.Expect(spec).To(HaveKeyWithValue("retention", HaveKeyWithValue("keepLast", BeNumerically("==", 7))))
	g.Expect(spec).To(HaveKeyWithValue("schedule", "0 3 * * *"))
}

func TestSamplesAreValid(t *testing.T) {
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, obj := range fixtures.MustLoadObjects(t, controlplane.RepoRoot()+"/config/samples") {
		obj.SetNamespace("default")
		g.Expect(c.Create(t.Context(), obj)).To(Succeed(), "sample %s %s is accepted", obj.GetKind(), obj.GetName())
	}
}

func newObject(gvk schema.GroupVersionKind, name string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetGroupVersionKind(gvk)
	obj.SetName(name)
	obj.SetNamespace("default")
	return obj
}
