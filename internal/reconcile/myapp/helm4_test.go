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
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// helm4 is the path of a Helm 4 binary: $HELM4, or bin/helm4 (`make
// helm4`).
func helm4(t *testing.T) string {
	if p := os.Getenv("HELM4"); p != "" {
		return p
	}
	p := filepath.Join(controlplane.RepoRoot(), "bin", "helm4")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no Helm 4 binary: run `make helm4` or set HELM4")
	}
	return p
}

// TestHelm4WaitReturnsOnlyOnceTheMyAppIsReady: Helm 4's --wait judges
// custom resources with kstatus (HIP-0022). A release holding a MyApp whose
// DNS record cannot be written yet is not done until the MyApp is Ready.
func TestHelm4WaitReturnsOnlyOnceTheMyAppIsReady(t *testing.T) {
	g := NewWithT(t)
	helm := helm4(t)
	ns := newNamespace(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())

	chart := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(chart, "Chart.yaml"),
		[]byte("apiVersion: v2\nname: web\nversion: 0.1.0\n"), 0o600)).To(Succeed())
	g.Expect(os.Mkdir(filepath.Join(chart, "templates"), 0o700)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(chart, "templates", "myapp.yaml"), []byte(`apiVersion: apps.myapp.dev/v1alpha1
kind: MyApp
metadata:
  name: web
spec:
  image: nginx:1.27
  replicas: 2
  host: web.`+ns+`.example.com
`), 0o600)).To(Succeed())

	// The DNS service is down for the first seconds of the release.
	const outage = 4 * time.Second
	sim.SetOutage(simulator.ServiceDNS, true)
	t.Cleanup(func() { sim.SetOutage(simulator.ServiceDNS, false) })
	time.AfterFunc(outage, func() { sim.SetOutage(simulator.ServiceDNS, false) })

	start := time.Now()
	out, err := exec.Command(helm, "install", "web", chart, "--kubeconfig="+kubeconfig, "--namespace="+ns,
		"--wait=watcher", "--timeout=90s").CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "%s", out)
	g.Expect(time.Since(start)).To(BeNumerically(">=", outage), "helm waited out the outage")

	app := &appsv1alpha1.MyApp{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, app)).To(Succeed())
	ready := conditionOf(app, appsv1alpha1.ReadyCondition)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(BeEquivalentTo("True"), "Ready when helm returned")
	g.Expect(ready.ObservedGeneration).To(Equal(app.Generation))
}
