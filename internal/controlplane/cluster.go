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
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// kwokStagesFile is written by hack/controlplane/build.sh next to the
	// binaries: kwok's own stages that make nodes Ready with a lease
	// heartbeat and pods Running right away.
	kwokStagesFile = "kwok-stages.yaml"

	// kwokNodeAnnotation marks the nodes kwok manages; nothing else in the
	// cluster carries it.
	kwokNodeAnnotation = "kwok.x-k8s.io/node"

	// FakeNodePrefix names the fake nodes: fake-node-0, fake-node-1, ...
	FakeNodePrefix = "fake-node-"

	// FakeNodePods is each fake node's pod capacity. A real node's default
	// of 110 would leave the replicas of the 111th MyApp pending; kwok's pods
	// cost nothing, so one node holds the 5,000 single-replica MyApps a local
	// cluster must hold, twice over.
	FakeNodePods = 10000
)

// LocalClusterControllerManagerQPS is kube-controller-manager's
// --kube-api-qps in the local clusters `make run` (cmd/devenv) and `make
// bench` (test/bench) start, burst twice that. At its default of 20 the
// cluster's own controllers, not the operator, set the pace: 1,000 bare
// Deployments took 240 s to become available (docs/benchmarks.md).
const LocalClusterControllerManagerQPS = 200

// ControllerManagerArgs is kube-controller-manager's command line in the
// cluster tier of the run directory dir: opts.ControllerManagerQPS, when
// set, is its --kube-api-qps and twice that its --kube-api-burst.
func ControllerManagerArgs(dir string, opts Options) []string {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		// No serving endpoint: nothing scrapes it, and a fixed port
		// would clash between parallel test packages.
		"--secure-port=0",
		"--controllers=*",
		"--use-service-account-credentials=false",
		// The run directory on the command line lets a sweep find it.
		"--cert-dir=" + filepath.Join(dir, "kube-controller-manager"),
	}
	if opts.ControllerManagerQPS > 0 {
		args = append(args,
			"--kube-api-qps="+strconv.Itoa(opts.ControllerManagerQPS),
			"--kube-api-burst="+strconv.Itoa(2*opts.ControllerManagerQPS))
	}
	return args
}

// startCluster adds kube-controller-manager, kube-scheduler and kwok to a
// running envtest tier, creates the fake nodes and waits until they are Ready.
func (cp *ControlPlane) startCluster(ctx context.Context, opts Options) error {
	kubeconfig := filepath.Join(cp.Dir, "kubeconfig")
	logs := filepath.Join(cp.Dir, "logs")
	bin := func(name string) string { return filepath.Join(opts.BinaryAssetsDirectory, name) }

	kwokAddr, err := FreeAddress()
	if err != nil {
		return err
	}
	controllerManagerArgs := ControllerManagerArgs(cp.Dir, opts)
	components := []struct {
		name string
		args []string
	}{{
		name: "kube-controller-manager",
		args: controllerManagerArgs,
	}, {
		name: "kube-scheduler",
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig,
			"--leader-elect=false",
			"--secure-port=0",
			"--cert-dir=" + filepath.Join(cp.Dir, "kube-scheduler"),
		},
	}, {
		name: "kwok",
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--config=" + bin(kwokStagesFile),
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--node-lease-duration-seconds=40",
			"--server-address=" + kwokAddr,
		},
	}}
	for _, c := range components {
		p, err := startProcess(c.name, bin(c.name), c.args, logs)
		if err != nil {
			return err
		}
		cp.mu.Lock()
		cp.processes = append(cp.processes, p)
		cp.mu.Unlock()
	}

	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		return err
	}
	for i := range opts.Nodes {
		if err := createFakeNode(ctx, c, FakeNodePrefix+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	return cp.waitForNodesReady(ctx, c, opts.Nodes)
}

// createFakeNode registers a node that kwok manages, with room for
// FakeNodePods pods and no taints, so the scheduler places pods on it.
func createFakeNode(ctx context.Context, c client.Client, name string) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   *resource.NewQuantity(FakeNodePods, resource.DecimalSI),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
	}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("creating fake node %s: %w", name, err)
	}
	node.Status.Capacity = capacity
	node.Status.Allocatable = capacity
	if err := c.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("setting capacity of fake node %s: %w", name, err)
	}
	return nil
}

// waitForNodesReady waits until n nodes report Ready, failing early with the
// component's log path if one of the components exits.
func (cp *ControlPlane) waitForNodesReady(ctx context.Context, c client.Client, n int) error {
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, p := range cp.processes {
			if done, err := p.exited(); done {
				return false, fmt.Errorf("%s exited early (%v); see %s", p.name, err,
					filepath.Join(cp.Dir, "logs", p.name+".log"))
			}
		}
		var nodes corev1.NodeList
		if err := c.List(ctx, &nodes); err != nil {
			return false, nil //nolint:nilerr // the API server may still be settling; keep polling
		}
		ready := 0
		for _, node := range nodes.Items {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d fake node(s) to become Ready: %w", n, err)
	}
	return nil
}

// FreeAddress asks the kernel for a free loopback port and returns it as
// host:port, for a component or test server to listen on.
func FreeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// Logs returns the log of a component ("etcd", "kube-apiserver",
// "kube-controller-manager", "kube-scheduler" or "kwok"), for a failing test
// to print.
func (cp *ControlPlane) Logs(component string) string {
	data, err := os.ReadFile(filepath.Join(cp.Dir, "logs", component+".log"))
	if err != nil {
		return err.Error()
	}
	return string(data)
}
