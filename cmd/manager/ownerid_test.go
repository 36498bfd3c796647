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

package main

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// TestOwnerIDDefaultsToTheKubeSystemUID: without --owner-id the owner ID is
// the kube-system namespace's UID, so two clusters never share one by
// default; the flag wins; a namespace that cannot be read is an error naming
// the flag, never a shared fallback.
func TestOwnerIDDefaultsToTheKubeSystemUID(t *testing.T) {
	g := NewWithT(t)
	const uid = "5f0c1c2e-8a61-4a3c-9d0e-2b7c6f1e9a44"
	withNS := fake.NewClientBuilder().WithObjects(&corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: uid}}).Build()

	id, from, err := resolveOwnerID(t.Context(), withNS, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(id).To(Equal(uid))
	g.Expect(from).To(Equal(ownerIDFromNamespace))

	id, from, err = resolveOwnerID(t.Context(), withNS, "prod-eu")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(id).To(Equal("prod-eu"))
	g.Expect(from).To(Equal(ownerIDFromFlag))

	forbidden := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "kube-system", nil)
		},
	})
	_, _, err = resolveOwnerID(t.Context(), forbidden, "")
	g.Expect(err).To(MatchError(And(ContainSubstring("reading the kube-system namespace"), ContainSubstring("set --owner-id"))))
	id, _, err = resolveOwnerID(t.Context(), forbidden, "prod-eu")
	g.Expect(err).NotTo(HaveOccurred(), "with the flag the namespace is not read")
	g.Expect(id).To(Equal("prod-eu"))
}

// TestOwnerIDIsExported: the manager's registry serves
// myapp_operator_info{owner_id="<id>"} 1, for the ID in use only.
func TestOwnerIDIsExported(t *testing.T) {
	g := NewWithT(t)
	exportOwnerID("first")
	exportOwnerID("prod-eu")
	g.Expect(testutil.CollectAndCount(ownerInfo)).To(Equal(1), "one series, the ID in use")
	g.Expect(testutil.ToFloat64(ownerInfo.WithLabelValues("prod-eu"))).To(Equal(1.0))
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	names := make([]string, 0, len(families))
	for _, f := range families {
		names = append(names, f.GetName())
	}
	g.Expect(names).To(ContainElement("myapp_operator_info"), "served with the manager's metrics")
}
