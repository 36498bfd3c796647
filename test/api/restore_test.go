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

package api_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

var restoreGVK = schema.GroupVersionKind{Group: "backup.myapp.dev", Version: "v1alpha1", Kind: "Restore"}

func validRestoreSpec() map[string]any {
	return map[string]any{"source": map[string]any{"backupConfigRef": map[string]any{"name": "web-nightly"}}}
}

// source returns a mutation that sets spec.source to src.
func source(src map[string]any) func(map[string]any) {
	return func(s map[string]any) { s["source"] = src }
}

// TestRestoreValidation: a Restore's source names exactly one backup, its
// names are names, and the API server says which field is wrong.
func TestRestoreValidation(t *testing.T) {
	const exactlyOne = "source must set exactly one of backupConfigRef, backupID and storage"
	cases := []validationCase{
		{"source is required", func(s map[string]any) { delete(s, "source") }, want("spec.source", "Required value")},
		{"an empty source names nothing", source(map[string]any{}), want("spec.source", exactlyOne)},
		{"two sources are ambiguous", source(map[string]any{"backupID": "bk-1", "storage": map[string]any{"appName": "web"}}),
			want("spec.source", exactlyOne)},
		{"all three sources are ambiguous", source(map[string]any{"backupID": "bk-1", "storage": map[string]any{"appName": "web"},
			"backupConfigRef": map[string]any{"name": "web-nightly"}}), want("spec.source", exactlyOne)},
		{"backupConfigRef needs a name", source(map[string]any{"backupConfigRef": map[string]any{}}),
			want("spec.source.backupConfigRef.name", "Required value")},
		{"backupConfigRef names a BackupConfig", source(map[string]any{"backupConfigRef": map[string]any{"name": "Web_Nightly"}}),
			want("spec.source.backupConfigRef.name", "must be the name of a BackupConfig")},
		{"backupID is not empty", source(map[string]any{"backupID": ""}),
			want("spec.source.backupID", "should be at least 1 chars long")},
		{"backupID has no spaces", source(map[string]any{"backupID": "bk 1"}),
			want("spec.source.backupID", "must not contain spaces or control characters")},
		{"backupID has no newlines", source(map[string]any{"backupID": "bk-1\n"}),
			want("spec.source.backupID", "must not contain spaces or control characters")},
		{"backupID is at most 1024 characters", source(map[string]any{"backupID": strings.Repeat("b", 1025)}),
			want("spec.source.backupID", "may not be more than 1024 bytes")},
		{"storage needs the MyApp's name", source(map[string]any{"storage": map[string]any{"namespace": "shop"}}),
			want("spec.source.storage.appName", "Required value")},
		{"storage.appName is a MyApp's name", source(map[string]any{"storage": map[string]any{"appName": "web.v2"}}),
			want("spec.source.storage.appName", "must be a MyApp's name")},
		{"storage.namespace is a namespace's name", source(map[string]any{"storage": map[string]any{"appName": "web", "namespace": "Shop"}}),
			want("spec.source.storage.namespace", "must be a namespace name")},
		{"storage.namespace is at most 63 characters", source(map[string]any{"storage": map[string]any{"appName": "web", "namespace": label(64)}}),
			want("spec.source.storage.namespace", "may not be more than 63 bytes")},
		{"target.name is a MyApp's name", set("target", map[string]any{"name": "1web"}),
			want("spec.target.name", "must be a MyApp's name")},
		{"target.name is at most 63 characters", set("target", map[string]any{"name": label(64)}),
			want("spec.target.name", "may not be more than 63 bytes")},
		{"existingApp is Fail or Replace", set("target", map[string]any{"existingApp": "Merge"}),
			want("spec.target.existingApp", `supported values: "Fail", "Replace"`)},
	}
	runValidationCases(t, restoreGVK, validRestoreSpec, cases)
}

// TestRestoreNameIsALabelValue: the Restore's name is the value of a label
// on the MyApp it creates, so it is at most 63 characters.
func TestRestoreNameIsALabelValue(t *testing.T) {
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	err = c.Create(t.Context(), newObject(restoreGVK, label(64), validRestoreSpec()))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "create is refused as invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("a Restore's name must be at most 63 characters"))
	g.Expect(c.Create(t.Context(), newObject(restoreGVK, label(63), validRestoreSpec()))).To(Succeed())
}

// TestRestoreDefaultsAndImmutability: existingApp defaults to Fail; the
// spec cannot change once the Restore exists, its metadata can.
func TestRestoreDefaultsAndImmutability(t *testing.T) {
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	obj := newObject(restoreGVK, "immutable", validRestoreSpec())
	g.Expect(c.Create(t.Context(), obj)).To(Succeed())
	g.Expect(obj.Object["spec"]).To(HaveKeyWithValue("target", HaveKeyWithValue("existingApp", "Fail")))
	g.Expect(obj.Object["status"]).To(HaveKeyWithValue("observedGeneration", BeNumerically("==", 0)))

	for name, change := range map[string]func(spec map[string]any){
		"the source":      func(s map[string]any) { s["source"] = map[string]any{"backupID": "bk-2"} },
		"the target name": func(s map[string]any) { s["target"] = map[string]any{"name": "web-copy", "existingApp": "Fail"} },
		"the policy":      func(s map[string]any) { s["target"] = map[string]any{"existingApp": "Replace"} },
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			current := &unstructured.Unstructured{}
			current.SetGroupVersionKind(restoreGVK)
			g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(obj), current)).To(Succeed())
			change(current.Object["spec"].(map[string]any))
			err := c.Update(t.Context(), current)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "the update is refused as invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("a Restore's spec cannot be changed: delete the Restore and create another"))
		})
	}

	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(restoreGVK)
	g.Expect(c.Get(t.Context(), client.ObjectKeyFromObject(obj), current)).To(Succeed())
	current.SetLabels(map[string]string{"team": "checkout"})
	g.Expect(c.Update(t.Context(), current)).To(Succeed(), "labels and annotations stay editable")
}

// TestRestoreSampleIsValid: the Restore sample, kept apart from the others
// (config/samples/restore) so that applying config/samples/ restores
// nothing, is accepted as written.
func TestRestoreSampleIsValid(t *testing.T) {
	g := NewWithT(t)
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, obj := range fixtures.MustLoadObjects(t, controlplane.RepoRoot()+"/config/samples/restore") {
		obj.SetNamespace("default")
		g.Expect(c.Create(t.Context(), obj)).To(Succeed(), "sample %s %s is accepted", obj.GetKind(), obj.GetName())
	}
}
