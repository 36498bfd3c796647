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

package alerts

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

const (
	simToken = "alerts-token"
	timeout  = 60 * time.Second
	interval = 200 * time.Millisecond
)

var (
	cp         *controlplane.ControlPlane
	k8sClient  client.Client
	sim        *simulator.Server
	simURL     string
	metricsURL string

	// managerBin and managerArgs start the manager; a second one started
	// with them, on its own metrics address, is a standby replica.
	managerBin  string
	managerArgs []string
)

func TestMain(m *testing.M) {
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierEnvtest}, &cp, setupSuite))
}

// setupSuite starts the simulator and the manager binary, serving plain
// HTTP metrics on a loopback port for the test to scrape.
func setupSuite(cp *controlplane.ControlPlane) (func(), error) {
	var err error
	if k8sClient, err = client.New(cp.Config, client.Options{Scheme: fixtures.Scheme()}); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "myapp-alerts-")
	if err != nil {
		return nil, err
	}
	managerBin, err = fixtures.BuildManager(dir)
	if err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(dir, "token")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(tokenFile, []byte(simToken), 0o600); err != nil {
		return nil, err
	}
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	sim = simulator.New(simulator.Options{
		Token:            simToken,
		PropagationDelay: 300 * time.Millisecond,
		BackupDuration:   300 * time.Millisecond,
	})
	srv := httptest.NewServer(sim)
	simURL = srv.URL
	metricsAddr, err := controlplane.FreeAddress()
	if err != nil {
		return nil, err
	}
	metricsURL = "http://" + metricsAddr + "/metrics"
	managerArgs = []string{
		"--kubeconfig=" + kubeconfig,
		// Leader election on, as deployed: the leader exports
		// leader_election_master_status 1, a standby 0.
		"--leader-elect", "--leader-election-namespace=default",
		"--dns-url=" + srv.URL, "--dns-token-file=" + tokenFile,
		"--backup-url=" + srv.URL, "--backup-token-file=" + tokenFile,
		"--dns-default-target=192.0.2.10",
		"--dns-pending-poll-interval=200ms",
		"--backup-poll-interval=200ms",
		// The leader reads its owner ID claim back often, so another
		// installation's claim is found within the test.
		"--owner-id-claim-interval=200ms",
		"--health-probe-bind-address=0",
		"--metrics-secure=false",
	}
	manager := exec.Command(managerBin, slices.Concat(managerArgs, []string{"--metrics-bind-address=" + metricsAddr})...)
	logs, err := os.Create(filepath.Join(dir, "manager.log"))
	if err != nil {
		return nil, err
	}
	manager.Stdout, manager.Stderr = logs, logs
	manager.SysProcAttr = controlplane.KilledWithParent()
	if err := manager.Start(); err != nil {
		return nil, err
	}
	return func() {
		_ = manager.Process.Signal(syscall.SIGTERM)
		_ = manager.Wait()
		sim.Close()
		srv.Close()
		if os.Getenv("KEEP_MANAGER_LOG") == "" {
			_ = os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "manager log: %s\n", logs.Name())
		}
	}, nil
}
