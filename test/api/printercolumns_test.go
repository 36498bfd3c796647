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
	"encoding/json"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestMyAppColumnsDoNotMislead is audit 2's S8: during a host move or a
// HostConflict, status.dns names the host the MyApp still holds, not
// spec.host. The columns of `kubectl get myapps` showed HOST new, DNS Active
// and READY False, as if the new host's record were active. They must show
// the held host beside spec.host, and DNSReady's reason rather than the old
// record's state. The test reads the CRD as served and asks the API server
// for the table kubectl prints, for a MyApp in HostConflict.
func TestMyAppColumnsDoNotMislead(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	c, err := cp.NewClient(client.Options{Scheme: fixtures.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	ns := fixtures.CreateNamespace(t, c, "columns")

	var crd apiextensionsv1.CustomResourceDefinition
	g.Expect(c.Get(ctx, client.ObjectKey{Name: "myapps.apps.myapp.dev"}, &crd)).To(Succeed())
	paths := map[string]string{}
	for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		if col.Priority == 0 {
			paths[col.JSONPath] = col.Name
		}
	}
	g.Expect(paths).To(HaveKey(".spec.host"))
	g.Expect(paths).To(HaveKey(".status.dns.name"), "the held host has its own column")
	g.Expect(paths).To(HaveKey(`.status.conditions[?(@.type=="DNSReady")].reason`), "DNSReady's reason is shown")
	g.Expect(paths).NotTo(HaveKey(".status.dns.state"), "the held record's state is not shown as if it were spec.host's")

	// A MyApp moved to a host another MyApp holds: it still holds its old
	// host, whose record is Active.
	app := fixtures.NewMyApp(ns, "web", fixtures.WithHost("new.example.com"))
	g.Expect(c.Create(ctx, app)).To(Succeed())
	now := metav1.Now()
	app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: "old.example.com", Type: "A", Value: "10.0.0.1",
		State: appsv1alpha1.DNSRecordState("Active")}
	app.Status.Conditions = []metav1.Condition{
		{Type: appsv1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: appsv1alpha1.DNSNotReadyReason,
			Message: "DNS is not ready", ObservedGeneration: app.Generation, LastTransitionTime: now},
		{Type: appsv1alpha1.DNSReadyCondition, Status: metav1.ConditionFalse, Reason: appsv1alpha1.HostConflictReason,
			Message: "new.example.com is held by another MyApp", ObservedGeneration: app.Generation, LastTransitionTime: now},
	}
	g.Expect(c.Status().Update(ctx, app)).To(Succeed())

	cs, err := kubernetes.NewForConfig(cp.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().AbsPath("/apis/apps.myapp.dev/v1alpha1/namespaces", ns, "myapps", "web").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	var table metav1.Table
	g.Expect(json.Unmarshal(raw, &table)).To(Succeed())
	g.Expect(table.Rows).To(HaveLen(1))
	row := map[string]string{}
	for i, col := range table.ColumnDefinitions {
		if col.Priority == 0 {
			row[col.Name] = fmt.Sprint(table.Rows[0].Cells[i])
		}
	}
	g.Expect(row).To(And(
		HaveKeyWithValue("Host", "new.example.com"),
		HaveKeyWithValue("DNS Host", "old.example.com"),
		HaveKeyWithValue("DNS", "HostConflict"),
		HaveKeyWithValue("Ready", "False"),
	), "kubectl get myapps shows %v", row)
	g.Expect(row).NotTo(ContainElement("Active"), "no default column reads Active for a MyApp whose host is not active: %v", row)
}
