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

package controlplane

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func testScheme(g *WithT) *runtime.Scheme {
	s := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(s)).To(Succeed())
	g.Expect(apiextensionsv1.AddToScheme(s)).To(Succeed())
	return s
}

// startForTest starts a control plane in its own state root and stops it
// when the test ends, also when it fails.
func startForTest(t *testing.T, tier Tier) *ControlPlane {
	t.Helper()
	cp, err := Start(t.Context(), Options{Tier: tier, StateRoot: t.TempDir()})
	if err != nil {
		t.Fatalf("starting the %s tier: %v", tier, err)
	}
	t.Cleanup(func() {
		if t.Failed() && tier == TierCluster {
			for _, c := range []string{"kube-controller-manager", "kwok"} {
				t.Logf("%s log:\n%s", c, cp.Logs(c))
			}
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return cp
}

func TestEnvtestTier(t *testing.T) {
	g := NewWithT(t)
	cp := startForTest(t, TierEnvtest)
	ctx := t.Context()

	// The kubeconfig this package writes reaches the same API server.
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(path)).To(Succeed())
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: testScheme(g)})
	g.Expect(err).NotTo(HaveOccurred())

	for _, name := range []string{"myapps.apps.myapp.dev", "backupconfigs.backup.myapp.dev"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed(), "CRD %s is installed", name)
		g.Expect(crd.Status.Conditions).To(ContainElement(And(
			HaveField("Type", apiextensionsv1.Established),
			HaveField("Status", apiextensionsv1.ConditionTrue),
		)), "CRD %s is established", name)
	}

	// The envtest tier runs no controllers: a Deployment gets no ReplicaSet.
	// This is what the cluster tier exists for, so the difference is tested.
	dep := testDeployment("web", "default")
	g.Expect(c.Create(ctx, dep)).To(Succeed())
	g.Consistently(func(g Gomega) {
		var rs appsv1.ReplicaSetList
		g.Expect(c.List(ctx, &rs, client.InNamespace("default"))).To(Succeed())
		g.Expect(rs.Items).To(BeEmpty())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	// Stop ends every process of the run and removes its directory.
	dir := cp.Dir
	g.Expect(processesUsing(dir)).NotTo(BeEmpty())
	g.Expect(cp.Stop()).To(Succeed())
	g.Expect(processesUsing(dir)).To(BeEmpty())
	g.Expect(dir).NotTo(BeADirectory())
}

func TestClusterTier(t *testing.T) {
	g := NewWithT(t)
	cp := startForTest(t, TierCluster)
	ctx := t.Context()
	c, err := cp.NewClient(client.Options{Scheme: testScheme(g)})
	g.Expect(err).NotTo(HaveOccurred())

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-tier"}}
	g.Expect(c.Create(ctx, ns)).To(Succeed())

	// A Deployment owned by a ConfigMap becomes Available on the fake node.
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns.Name}}
	g.Expect(c.Create(ctx, owner)).To(Succeed())
	dep := testDeployment("web", ns.Name)
	dep.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
	}}
	g.Expect(c.Create(ctx, dep)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
		g.Expect(dep.Status.AvailableReplicas).To(Equal(int32(2)))
		g.Expect(dep.Status.Conditions).To(ContainElement(And(
			HaveField("Type", appsv1.DeploymentAvailable),
			HaveField("Status", corev1.ConditionTrue),
		)))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	var pods corev1.PodList
	g.Expect(c.List(ctx, &pods, client.InNamespace(ns.Name))).To(Succeed())
	g.Expect(pods.Items).To(HaveLen(2))
	for _, p := range pods.Items {
		g.Expect(p.Spec.NodeName).To(HavePrefix(FakeNodePrefix), "pod %s is scheduled", p.Name)
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s runs", p.Name)
	}

	// Deleting the owner removes the Deployment, its ReplicaSet and its pods
	// through garbage collection.
	g.Expect(c.Delete(ctx, owner)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := c.Get(ctx, client.ObjectKeyFromObject(dep), &appsv1.Deployment{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "deployment is garbage-collected, got %v", err)
		var rs appsv1.ReplicaSetList
		g.Expect(c.List(ctx, &rs, client.InNamespace(ns.Name))).To(Succeed())
		g.Expect(rs.Items).To(BeEmpty())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	// The cluster holds thousands of MyApps: more ClusterIP Services than
	// envtest's default /24 service range has addresses (it refused the
	// 254th), and a node with room for a pod per MyApp.
	for i := range 300 {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i), Namespace: ns.Name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		g.Expect(c.Create(ctx, svc)).To(Succeed(), "ClusterIP Service %d", i+1)
		g.Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
	}
	var nodes corev1.NodeList
	g.Expect(c.List(ctx, &nodes)).To(Succeed())
	podCapacity := int64(0)
	for _, n := range nodes.Items {
		podCapacity += n.Status.Allocatable.Pods().Value()
	}
	g.Expect(podCapacity).To(BeNumerically(">=", 5000), "the fake nodes have room for 5,000 single-replica MyApps")

	// Namespaces finish deleting, which envtest alone never does.
	g.Expect(c.Delete(ctx, ns)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{}))
	}, 60*time.Second, 200*time.Millisecond).Should(BeTrue(), "namespace is deleted")

	dir := cp.Dir
	g.Expect(len(processesUsing(dir))).To(BeNumerically(">=", 5), "etcd, apiserver, controller-manager, scheduler, kwok")
	g.Expect(cp.Stop()).To(Succeed())
	g.Expect(processesUsing(dir)).To(BeEmpty())
}

func TestSweepStaleRuns(t *testing.T) {
	g := NewWithT(t)
	root := t.TempDir()

	// A run whose owner has exited, with a component still running.
	stale := filepath.Join(root, "run-stale")
	g.Expect(os.MkdirAll(stale, 0o755)).To(Succeed())
	dead := exec.Command("true")
	g.Expect(dead.Run()).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(stale, ownerFile), []byte(strconv.Itoa(dead.Process.Pid)+" 1"), 0o644)).To(Succeed())
	orphan := startSleeper(t, filepath.Join(stale, "data"))

	// A run whose owner is alive (this test) must be left alone.
	live := filepath.Join(root, "run-live")
	g.Expect(os.MkdirAll(live, 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(live, ownerFile), []byte(ownerRecord(os.Getpid())), 0o644)).To(Succeed())
	kept := startSleeper(t, filepath.Join(live, "data"))

	g.Expect(sweepStaleRuns(root)).To(Succeed())

	g.Eventually(orphan).Should(BeClosed(), "the stale run's process is killed")
	g.Expect(stale).NotTo(BeADirectory())
	g.Consistently(kept, 500*time.Millisecond).ShouldNot(BeClosed(), "the live run's process keeps running")
	g.Expect(live).To(BeADirectory())
}

// startSleeper starts a process that names dir on its command line, as every
// control-plane component names its run directory, and returns a channel
// closed when it exits.
func startSleeper(t *testing.T, dir string) chan struct{} {
	t.Helper()
	// The test binary re-runs itself as the helper process below, with dir
	// as an argument like a component's flag value.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--", dir)
	cmd.Env = append(os.Environ(), "HARNESS_HELPER_PROCESS=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return done
}

func TestKilledOwnerTakesItsControlPlaneAlong(t *testing.T) {
	g := NewWithT(t)
	// A helper process starts a control plane and is then killed with
	// SIGKILL, as `go test -timeout` or the OOM killer would: no deferred
	// Stop and no signal handler runs.
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "HARNESS_HELPER_PROCESS=controlplane", "HARNESS_HELPER_STATE="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmd.Start()).To(Succeed())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var dir string
	_, err = fmt.Fscanln(stdout, &dir)
	g.Expect(err).NotTo(HaveOccurred(), "the helper reports its run directory")
	// The reaper is a shell that forks `sleep 1` every second, and until the
	// child has exec'd it carries the reaper's command line: a look in that
	// moment finds four processes (CI saw [etcd, kube-apiserver, reaper,
	// reaper+1]), so the count is taken until the fork has become a sleep.
	g.Eventually(func() []int { return processesUsing(dir) }, 5*time.Second, 10*time.Millisecond).
		Should(HaveLen(3), "etcd, kube-apiserver and the reaper run")

	g.Expect(cmd.Process.Kill()).To(Succeed())
	g.Eventually(func() []int { return processesUsing(dir) }, 10*time.Second, 100*time.Millisecond).
		Should(BeEmpty(), "every process of the run dies with its owner")
}

// TestHelperProcess is not a test: it is the process startSleeper and
// TestKilledOwnerTakesItsControlPlaneAlong start.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv("HARNESS_HELPER_PROCESS") {
	case "1":
		time.Sleep(5 * time.Minute)
	case "controlplane":
		cp, err := Start(t.Context(), Options{StateRoot: os.Getenv("HARNESS_HELPER_STATE")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cp.Dir)
		time.Sleep(5 * time.Minute)
	default:
		t.Skip("helper process for other tests")
	}
	os.Exit(0)
}

func testDeployment(name, namespace string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}
