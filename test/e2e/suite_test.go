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

// Package e2e runs the operator as users run it: the manager binary as a
// separate process against the cluster tier and the simulator, the
// deployment manifests applied with kustomize and kubectl.
package e2e

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

const (
	simToken = "e2e-token"
	timeout  = 60 * time.Second
	interval = 200 * time.Millisecond
)

var (
	cp         *controlplane.ControlPlane
	k8sClient  client.Client
	sim        *simulator.Server
	simURL     string
	managerBin string
	tokenFile  string
)

func TestMain(m *testing.M) {
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierCluster}, &cp, setupSuite))
}

// setupSuite builds the manager, starts the simulator and writes its token.
func setupSuite(cp *controlplane.ControlPlane) (func(), error) {
	var err error
	if k8sClient, err = client.New(cp.Config, client.Options{Scheme: fixtures.Scheme()}); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "myapp-e2e-")
	if err != nil {
		return nil, err
	}
	if managerBin, err = fixtures.BuildManager(dir); err != nil {
		return nil, err
	}
	tokenFile = filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(simToken), 0o600); err != nil {
		return nil, err
	}
	sim = simulator.New(simulator.Options{
		Token:            simToken,
		PropagationDelay: 300 * time.Millisecond,
		BackupDuration:   500 * time.Millisecond,
	})
	srv := httptest.NewServer(sim)
	simURL = srv.URL
	return func() {
		sim.Close()
		srv.Close()
		_ = os.RemoveAll(dir)
	}, nil
}

// startManager runs the manager with kubeconfig and the simulator, plus
// args, and stops it when the test ends.
func startManager(t *testing.T, name string, kubeconfig []byte, args ...string) *fixtures.ManagerProcess {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	all := managerArgsWithoutDNS(path, append([]string{"--dns-url=" + simURL, "--dns-token-file=" + tokenFile}, args...)...)
	return fixtures.StartManagerProcess(t, name, managerBin, all...)
}

// managerArgsWithoutDNS are the manager's arguments for a process outside
// the cluster with the simulator as its backup service and no DNS provider
// chosen, plus args.
func managerArgsWithoutDNS(kubeconfig string, args ...string) []string {
	return append([]string{
		"--kubeconfig=" + kubeconfig,
		"--backup-url=" + simURL, "--backup-token-file=" + tokenFile,
		"--dns-default-target=192.0.2.10",
		"--dns-pending-poll-interval=200ms",
		"--backup-poll-interval=200ms",
		"--health-probe-bind-address=0",
		"--metrics-bind-address=0",
	}, args...)
}

func newNamespace(t *testing.T) string {
	t.Helper()
	return fixtures.CreateNamespace(t, k8sClient, "e2e")
}

// newMyApp builds a MyApp with one replica, which a kwok node runs.
func newMyApp(namespace, name string) *appsv1alpha1.MyApp {
	return fixtures.NewMyApp(namespace, name, fixtures.WithReplicas(1))
}

// newBackupConfig builds a BackupConfig whose backups go with it.
func newBackupConfig(namespace, name, app string) *backupv1alpha1.BackupConfig {
	return fixtures.NewBackupConfig(namespace, name, app,
		fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyDelete))
}

// eventuallyBackedUp waits until the BackupConfig's last backup has the
// trigger and succeeded.
func eventuallyBackedUp(ctx context.Context, g *WithT, bc *backupv1alpha1.BackupConfig, trigger backupv1alpha1.BackupTrigger) {
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(bc), bc)).To(Succeed())
		g.Expect(bc.Status.LastBackup).NotTo(BeNil())
		g.Expect(bc.Status.LastBackup.Trigger).To(Equal(trigger))
		g.Expect(bc.Status.LastBackup.Phase).To(Equal(backupv1alpha1.BackupSucceeded))
	}, timeout, interval).Should(Succeed(), "BackupConfig %s takes a %s backup", bc.Name, trigger)
}

// eventuallyReady waits for every MyApp to be Ready at its generation.
func eventuallyReady(ctx context.Context, g *WithT, apps ...*appsv1alpha1.MyApp) {
	fixtures.EventuallyReady(ctx, g, k8sClient, timeout, apps...)
}

// kubectl runs the control plane's kubectl as the administrator.
func kubectl(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cp.Kubectl(), append([]string{"--kubeconfig=" + path}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
