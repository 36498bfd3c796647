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
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/health"
	"github.com/myapp-operator/myapp-operator/internal/health/healthtest"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// myAppKind is the kind healthtest reads the objects of this package as.
var myAppKind = appsv1alpha1.GroupVersion.WithKind("MyApp")

// eventuallyKstatus waits until kstatus reads app as want, and the shipped
// Argo CD check as its counterpart, and returns the
// MyApp as it was then.
func eventuallyKstatus(t *testing.T, g *WithT, app *appsv1alpha1.MyApp, want status.Status) *appsv1alpha1.MyApp {
	t.Helper()
	var res *status.Result
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		res = healthtest.Kstatus(t, app, myAppKind)
		g.Expect(res.Status).To(Equal(want), "kstatus says %s: %s", res.Status, res.Message)
		argo := healthtest.ArgoCD(t, app, myAppKind)
		g.Expect(argo.Status).To(Equal(healthtest.ArgoCDFor[want]), "Argo CD says %s: %s", argo.Status, argo.Message)
	}, timeout, interval).Should(Succeed())
	return app
}

// expectProgress checks the abnormal-true conditions: the one named is True
// at the current generation with reason, the other is absent; an empty
// condType means both are absent.
func expectProgress(g *WithT, app *appsv1alpha1.MyApp, condType, reason string) {
	for _, c := range []string{string(status.ConditionReconciling), string(status.ConditionStalled)} {
		cond := conditionOf(app, c)
		if c != condType {
			g.Expect(cond).To(BeNil(), "%s is absent", c)
			continue
		}
		g.Expect(cond).NotTo(BeNil(), "%s is set", c)
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(cond.Reason).To(Equal(reason))
		g.Expect(cond.ObservedGeneration).To(Equal(app.Generation), "%s carries its own observedGeneration", c)
		g.Expect(cond.Message).NotTo(BeEmpty())
	}
}

// TestKstatusReadsEveryStageOfAMyApp: kstatus, which Helm 4's --wait, Flux
// and Argo CD use for resources they do not know, reads a MyApp right at
// every stage: InProgress while it converges (with Reconciling saying why),
// Current once Ready, InProgress right after an edit until the controller
// has looked at the new generation, Failed (Stalled) when only a change can
// help, and Terminating while it is deleted.
func TestKstatusReadsEveryStageOfAMyApp(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)

	// Converging: the DNS service is down, so the record cannot be written.
	sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { sim.SetOutage(simulator.ServiceDNS, false) })
	app := newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	// Just created, before any pass: the API server shows a generation not
	// observed yet (status.observedGeneration defaults to 0), never an object
	// without status, which kstatus would take for Current.
	// Read as JSON, as Helm reads it: the typed object drops a zero
	// observedGeneration.
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind("MyApp"))
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), stored)).To(Succeed())
	if _, found, _ := unstructured.NestedInt64(stored.Object, "status", "observedGeneration"); found {
		res, err := status.Compute(stored)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Status).To(Equal(status.InProgressStatus), "a new MyApp is not Current")
	} else {
		// The controller's first pass may already have written the status.
		g.Expect(stored.Object).To(HaveKey("status"), "a new MyApp has a status from the start")
	}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		cond := conditionOf(app, string(status.ConditionReconciling))
		g.Expect(cond).NotTo(BeNil())
		g.Expect(cond.Reason).To(Equal(appsv1alpha1.DNSServiceUnavailableReason))
	}, timeout, interval).Should(Succeed())
	g.Expect(healthtest.Kstatus(t, app, myAppKind).Status).To(Equal(status.InProgressStatus))
	g.Expect(healthtest.ArgoCD(t, app, myAppKind).Status).To(Equal(health.Progressing))
	expectProgress(g, app, string(status.ConditionReconciling), appsv1alpha1.DNSServiceUnavailableReason)

	// Ready: Current, and neither abnormal condition is left.
	sim.SetOutage(simulator.ServiceDNS, false)
	eventuallyReady(t, g, app)
	app = eventuallyKstatus(t, g, app, status.CurrentStatus)
	expectProgress(g, app, "", "")

	// Right after an edit: the stored object still carries the old
	// generation's Ready, and kstatus must not take it.
	app.Spec.Image = "nginx:1.28"
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	g.Expect(healthtest.Kstatus(t, app, myAppKind).Status).To(Equal(status.InProgressStatus), "the new generation is not observed yet")
	g.Expect(healthtest.ArgoCD(t, app, myAppKind).Status).To(Equal(health.Progressing))
	eventuallyReady(t, g, app)
	eventuallyKstatus(t, g, app, status.CurrentStatus)

	// A spec the Deployment API refuses: Failed, for this generation.
	app.Spec.Env = []corev1.EnvVar{{Name: "BOGUS", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.bogus"},
	}}}
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	app = eventuallyKstatus(t, g, app, status.FailedStatus)
	expectProgress(g, app, string(status.ConditionStalled), appsv1alpha1.ChildWriteFailedReason)
	g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation), "a stalled spec has been looked at")

	// Fixing it brings it back to Current.
	app.Spec.Env = nil
	g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	app = eventuallyKstatus(t, g, app, status.CurrentStatus)
	expectProgress(g, app, "", "")

	// A host another MyApp holds: Failed, until that one lets go.
	intruder := newMyApp(ns, "intruder", fixtures.WithHost(app.Spec.Host))
	g.Expect(k8sClient.Create(t.Context(), intruder)).To(Succeed())
	intruder = eventuallyKstatus(t, g, intruder, status.FailedStatus)
	expectProgress(g, intruder, string(status.ConditionStalled), appsv1alpha1.HostConflictReason)

	// Deleting: Terminating.
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(func(g Gomega) status.Status {
		if err := k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app); err != nil {
			return status.NotFoundStatus
		}
		return healthtest.Kstatus(t, app, myAppKind).Status
	}, timeout, interval).Should(BeElementOf(status.TerminatingStatus, status.NotFoundStatus))
	// With the holder gone, the intruder gets the host and is Current.
	eventuallyKstatus(t, g, intruder, status.CurrentStatus)
}

// TestKubectlWaitReadyNeverReturnsOnTheOldGeneration: `kubectl wait
// --for=condition=Ready` right after an edit returns only on a Ready that
// the controller set for the new generation, since every condition carries
// its own observedGeneration (kubernetes#97408).
func TestKubectlWaitReadyNeverReturnsOnTheOldGeneration(t *testing.T) {
	g := NewWithT(t)
	app := newMyApp(newNamespace(t), "web")
	createReadyMyApp(t, g, app)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())

	for i, image := range []string{"nginx:1.28", "nginx:1.29"} {
		app.Spec.Image = image
		g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
		edited := app.Generation
		// -o prints the object as it was when the wait was satisfied.
		out, err := exec.Command(cp.Kubectl(), "--kubeconfig="+kubeconfig, "wait", "--for=condition=Ready",
			"--timeout=60s", "-n", app.Namespace, "myapps.apps.myapp.dev/"+app.Name,
			`-o=jsonpath={.metadata.generation} {.status.conditions[?(@.type=="Ready")].observedGeneration} {.status.conditions[?(@.type=="Ready")].status}`,
		).CombinedOutput()
		g.Expect(err).NotTo(HaveOccurred(), "edit %d: %s", i, out)
		g.Expect(strings.TrimSpace(string(out))).To(Equal(fmt.Sprintf("%d %d True", edited, edited)),
			"edit %d: kubectl wait returned on the Ready of generation %d", i, edited)
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
	}
}
