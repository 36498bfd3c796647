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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// rolledOut is a Deployment of two replicas that has rolled out, with
// changes applied by each option.
func rolledOut(opts ...func(*appsv1.Deployment)) *appsv1.Deployment {
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2, ReadyReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}},
		},
	}
	for _, o := range opts {
		o(dep)
	}
	return dep
}

func TestDeploymentRolledOut(t *testing.T) {
	cases := []struct {
		name string
		dep  *appsv1.Deployment
		want bool
	}{
		{"rolled out", rolledOut(), true},
		{"no deployment", nil, false},
		{"new generation not seen yet", rolledOut(func(d *appsv1.Deployment) { d.Generation = 3 }), false},
		{"old pods still running during a rollout", rolledOut(func(d *appsv1.Deployment) { d.Status.Replicas = 3 }), false},
		{"not all pods updated", rolledOut(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }), false},
		{"not all pods available", rolledOut(func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 1 }), false},
		{"Available false", rolledOut(func(d *appsv1.Deployment) {
			d.Status.Conditions[0].Status = corev1.ConditionFalse
		}), false},
		{"no Available condition", rolledOut(func(d *appsv1.Deployment) { d.Status.Conditions = nil }), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(deploymentRolledOut(tc.dep)).To(Equal(tc.want))
		})
	}
}

func TestSetReadyCondition(t *testing.T) {
	cases := []struct {
		name       string
		dep        *appsv1.Deployment
		dnsReady   *bool
		wantStatus metav1.ConditionStatus
		wantReason string
		wantInMsg  string
	}{
		{"deployment rolling out", rolledOut(func(d *appsv1.Deployment) { d.Status.UpdatedReplicas = 1 }), ptr.To(true),
			metav1.ConditionFalse, appsv1alpha1.DeploymentUnavailableReason, "Deployment web is rolling out"},
		{"deployment missing", nil, ptr.To(true), metav1.ConditionFalse, appsv1alpha1.DeploymentUnavailableReason, "rolling out"},
		{"record not reported yet", rolledOut(), nil, metav1.ConditionFalse, appsv1alpha1.DNSNotReadyReason, "not active yet"},
		{"record pending", rolledOut(), ptr.To(false), metav1.ConditionFalse, appsv1alpha1.DNSNotReadyReason, "propagating"},
		{"all good", rolledOut(), ptr.To(true), metav1.ConditionTrue, appsv1alpha1.AvailableReason, "available at web.example.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			app := &appsv1alpha1.MyApp{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 4},
				Spec:       appsv1alpha1.MyAppSpec{Host: "web.example.com"},
			}
			if tc.dnsReady != nil {
				reason, msg := appsv1alpha1.RecordActiveReason, "active"
				if !*tc.dnsReady {
					reason, msg = appsv1alpha1.RecordPendingReason, "propagating"
				}
				setDNSCondition(app, *tc.dnsReady, reason, msg)
			}
			setReadyCondition(app, tc.dep)
			cond := conditionOf(app, appsv1alpha1.ReadyCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(tc.wantStatus))
			g.Expect(cond.Reason).To(Equal(tc.wantReason))
			g.Expect(cond.Message).To(ContainSubstring(tc.wantInMsg))
			g.Expect(cond.ObservedGeneration).To(Equal(int64(4)))
		})
	}
}

// TestReadyConditionIgnoresRolloutCounters: while a Deployment rolls out, its
// counters change with every pod; the Ready condition must not, or each
// change costs a status write. The counts are in status.readyReplicas.
func TestReadyConditionIgnoresRolloutCounters(t *testing.T) {
	g := NewWithT(t)
	stages := []*appsv1.Deployment{
		nil,
		rolledOut(func(d *appsv1.Deployment) { d.Status = appsv1.DeploymentStatus{} }),
		rolledOut(func(d *appsv1.Deployment) {
			d.Status.UpdatedReplicas, d.Status.AvailableReplicas, d.Status.ReadyReplicas = 2, 0, 0
		}),
		rolledOut(func(d *appsv1.Deployment) { d.Status.AvailableReplicas, d.Status.ReadyReplicas = 1, 1 }),
		rolledOut(func(d *appsv1.Deployment) { d.Status.Replicas, d.Status.UpdatedReplicas = 3, 1 }),
	}
	var first *metav1.Condition
	for i, dep := range stages {
		app := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 4}}
		setReadyCondition(app, dep)
		cond := conditionOf(app, appsv1alpha1.ReadyCondition)
		g.Expect(cond).To(HaveField("Reason", appsv1alpha1.DeploymentUnavailableReason), "stage %d", i)
		if first == nil {
			first = cond
			continue
		}
		g.Expect(cond.Message).To(Equal(first.Message), "stage %d rewrites the condition", i)
	}
}

func TestReadyReplicasSummary(t *testing.T) {
	g := NewWithT(t)
	app := &appsv1alpha1.MyApp{Spec: appsv1alpha1.MyAppSpec{Replicas: ptr.To[int32](3)}}
	setReplicaStatus(app, rolledOut(func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 2 }))
	g.Expect(app.Status.ReadyReplicas).To(Equal(int32(2)))
	g.Expect(app.Status.ReadyReplicasSummary).To(Equal("2/3"), "ready of the replicas the spec wants")

	setReplicaStatus(app, nil)
	g.Expect(app.Status.ReadyReplicasSummary).To(Equal("0/3"))
}

// settledStatusWrites waits until the namespace's status writes stop, and
// returns how many there were.
func settledStatusWrites(g *WithT, ns string) int {
	g.Eventually(func() int {
		before := writes.statusCount(ns)
		time.Sleep(time.Second)
		return writes.statusCount(ns) - before
	}, timeout, 0).Should(BeZero())
	return writes.statusCount(ns)
}

// TestRolloutRewritesTheReadyConditionOnlyOnReasonChanges follows one
// MyApp from create to Ready and through an image rollout of four pods. Each
// Deployment counter change used to rewrite the Ready condition, and so the
// status; now the condition is written only when it means something else
// (rolling out, waiting for DNS, available). status.readyReplicas still
// follows the pods, so the total of status writes is logged, not bounded.
func TestRolloutRewritesTheReadyConditionOnlyOnReasonChanges(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	app.Spec.Replicas = ptr.To[int32](4)
	createReadyMyApp(t, g, app)
	created := settledStatusWrites(g, ns)
	createdRewrites := writes.readyRewriteCount(ns)
	t.Logf("to converge: %d status writes, %d Ready rewrites", created, createdRewrites)
	g.Expect(createdRewrites).To(BeNumerically("<=", 3), "Ready: rolling out, then maybe waiting for DNS, then available")
	g.Expect(app.Status.ReadyReplicasSummary).To(Equal("4/4"))

	app.Spec.Image = "nginx:1.28"
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	eventuallyReady(t, g, app)
	rolled := settledStatusWrites(g, ns) - created
	rolledRewrites := writes.readyRewriteCount(ns) - createdRewrites
	t.Logf("to roll out a new image: %d status writes, %d Ready rewrites", rolled, rolledRewrites)
	g.Expect(rolledRewrites).To(Equal(2), "Ready: rolling out, then available")
	g.Expect(app.Status.ReadyReplicasSummary).To(Equal("4/4"))
}
