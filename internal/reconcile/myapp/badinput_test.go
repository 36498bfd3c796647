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

package myapp

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestBadInputOnlyTheDeploymentAPIRefuses is the part of the bad-input
// family (issue 11, family 8; test/api/badinput_test.go has the specs the
// API server refuses) that only the cluster can tell: the MyApp CRD embeds
// corev1.EnvVar and corev1.ResourceRequirements, whose rules live in the
// Deployment API's Go code rather than in a schema, so the MyApp is
// accepted and the Deployment is refused. Each must end as Ready=False,
// ChildWriteFailed, with a message naming the Deployment's field.
func TestBadInputOnlyTheDeploymentAPIRefuses(t *testing.T) {
	const container = "spec.template.spec.containers[0]."
	quantities := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	fieldRef := &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}
	cases := []struct {
		name      string
		mutate    func(*appsv1alpha1.MyApp)
		wantField string
	}{
		{"env-name-with-equals", func(a *appsv1alpha1.MyApp) {
			a.Spec.Env = []corev1.EnvVar{{Name: "A=B", Value: "1"}}
		}, container + "env[0].name"},
		{"env-name-empty", func(a *appsv1alpha1.MyApp) {
			a.Spec.Env = []corev1.EnvVar{{Name: "", Value: "1"}}
		}, container + "env[0].name"},
		{"env-value-from-nothing", func(a *appsv1alpha1.MyApp) {
			a.Spec.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{}}}
		}, container + "env[0].valueFrom"},
		{"env-value-from-two-sources", func(a *appsv1alpha1.MyApp) {
			a.Spec.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				FieldRef:        fieldRef,
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Key: "k"},
			}}}
		}, container + "env[0].valueFrom"},
		{"cpu-request-negative", func(a *appsv1alpha1.MyApp) {
			a.Spec.Resources.Requests = quantities("cpu", "-1")
		}, container + "resources.requests[cpu]"},
		{"memory-limit-negative", func(a *appsv1alpha1.MyApp) {
			a.Spec.Resources.Limits = quantities("memory", "-1Gi")
		}, container + "resources.limits[memory]"},
		{"resource-name-with-a-space", func(a *appsv1alpha1.MyApp) {
			a.Spec.Resources.Requests = quantities("foo bar", "1")
		}, container + "resources.requests[foo bar]"},
		{"extended-resource-without-limit", func(a *appsv1alpha1.MyApp) {
			a.Spec.Resources.Requests = quantities("example.com/widget", "2")
		}, container + "resources.limits"},
		{"extended-resource-over-limit", func(a *appsv1alpha1.MyApp) {
			a.Spec.Resources.Requests = quantities("example.com/widget", "2")
			a.Spec.Resources.Limits = quantities("example.com/widget", "1")
		}, container + "resources.requests: Invalid value: \"2\""},
		{"resource-claim-not-in-the-pod", func(a *appsv1alpha1.MyApp) {
			a.Spec.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		}, container + "resources.claims[0]"},
	}

	g := NewWithT(t)
	ns := newNamespace(t)
	apps := make([]*appsv1alpha1.MyApp, len(cases))
	for i, tc := range cases {
		apps[i] = newMyApp(ns, tc.name, tc.mutate)
		g.Expect(k8sClient.Create(t.Context(), apps[i])).To(Succeed(), "the API server accepts %s", tc.name)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cond := eventuallyReadyReason(t, g, apps[i], appsv1alpha1.ChildWriteFailedReason)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Message).To(ContainSubstring("Could not create Deployment " + tc.name))
			g.Expect(cond.Message).To(ContainSubstring(tc.wantField), "the condition names the field")
			g.Expect(cond.Message).To(ContainSubstring("fix the MyApp's spec"))
		})
	}
}

// TestBadInputOnlyTheDNSServiceRefuses covers hosts the CRD accepts, since
// they are good DNS names, that a DNS backend cannot hold: the RFC 2136
// backend serves one zone, and keeps each record's owner at a name 13
// characters longer than the record's. Each must end as DNSReady=False,
// DNSRequestRejected, pointing at spec.host.
func TestBadInputOnlyTheDNSServiceRefuses(t *testing.T) {
	controlplane.RequireBIND(t, rfc2136Err)
	var route fixtures.MyAppOption
	for _, b := range dnsBackends() {
		if b.name == rfc2136Backend {
			route = b.route
		}
	}
	g := NewWithT(t)
	ns := newNamespace(t)
	// 4 labels of 60 and "example.com": 252 characters, within the 253 a
	// DNS name may have, over the 240 the owner record leaves.
	long := strings.Repeat(strings.Repeat("a", 59)+".", 4) + "x." + bind.Zone
	hosts := map[string]string{
		"outside-the-zone":              "web." + ns + ".example.org",
		"too-long-for-the-owner-record": long[len(long)-252:],
	}
	apps := map[string]*appsv1alpha1.MyApp{}
	for name, host := range hosts {
		apps[name] = newMyApp(ns, name, route, fixtures.WithHost(host))
		g.Expect(k8sClient.Create(t.Context(), apps[name])).To(Succeed(), "the API server accepts %s", host)
	}
	for name, app := range apps {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			eventuallyDNSReason(t, g, app, appsv1alpha1.DNSRequestRejectedReason)
			cond := conditionOf(app, appsv1alpha1.DNSReadyCondition)
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Message).To(ContainSubstring("spec.host"), "the condition names the field")
			g.Expect(conditionOf(app, appsv1alpha1.ReadyCondition).Status).To(Equal(metav1.ConditionFalse))
		})
	}
}

// TestAMyAppIsDeletableWhateverItsHost (audit G2, issue 32): a host the
// DNS backend refuses (RFC 2136: outside its zone, or too long for the
// owner record beside it) can hold no record, so a deletion that cannot
// read it has nothing to wait for there. On each backend, a MyApp with
// such a host is deleted within a pass, and its namespace with it: the
// README promises a MyApp never hangs a namespace.
func TestAMyAppIsDeletableWhateverItsHost(t *testing.T) {
	for _, b := range dnsBackends() {
		t.Run(b.name, func(t *testing.T) {
			if b.name != "http" {
				b.require(t)
			}
			g := NewWithT(t)
			ns := newNamespace(t)
			// 250 characters in labels of 59 and under the backend's
			// zone: a good DNS name, over the 240 RFC 2136 leaves.
			long := strings.Repeat(strings.Repeat("a", 59)+".", 4) + "x." + "example.com"
			hosts := map[string]string{
				"outside-the-zone": "web." + ns + ".example.org",
				"long":             long[len(long)-250:],
			}
			apps := map[string]*appsv1alpha1.MyApp{}
			for name, host := range hosts {
				apps[name] = newMyApp(ns, name, b.route, fixtures.WithHost(host))
				g.Expect(k8sClient.Create(t.Context(), apps[name])).To(Succeed(), "the API server accepts %s", host)
			}
			for _, app := range apps {
				g.Eventually(func(g Gomega) {
					g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
					g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition)).NotTo(BeNil(), "the DNS phase ran")
				}, timeout, interval).Should(Succeed())
			}

			g.Expect(k8sClient.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			for name, app := range apps {
				// The namespace controller deletes the MyApp when it comes
				// to it; from then on, one pass removes its finalizer.
				g.Eventually(func() bool {
					got := &appsv1alpha1.MyApp{}
					err := k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), got)
					return err != nil || !got.DeletionTimestamp.IsZero()
				}, time.Minute, interval).Should(BeTrue(), "the namespace controller deletes MyApp %s", name)
				eventuallyGone(t, g, client.ObjectKeyFromObject(app), &appsv1alpha1.MyApp{}, 10*time.Second,
					"MyApp %s (host %s) is deleted", name, hosts[name])
			}
			eventuallyGone(t, g, client.ObjectKey{Name: ns}, &corev1.Namespace{}, time.Minute, "its namespace is deleted")
		})
	}
}
