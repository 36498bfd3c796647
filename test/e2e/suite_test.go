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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/harness"
)

const (
	simToken = "e2e-token"
	timeout  = 60 * time.Second
	interval = 200 * time.Millisecond
)

var (
	cp         *harness.ControlPlane
	k8sClient  client.Client
	sim        *simulator.Server
	simURL     string
	managerBin string
	tokenFile  string
)

func TestMain(m *testing.M) {
	os.Exit(harness.RunMain(m, harness.Options{Tier: harness.TierCluster}, &cp, setupSuite))
}

// setupSuite builds the manager, starts the simulator and writes its token.
func setupSuite(cp *harness.ControlPlane) (func(), error) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = appsv1alpha1.AddToScheme(scheme)
	_ = backupv1alpha1.AddToScheme(scheme)
	_ = apiextensionsv1.AddToScheme(scheme)
	var err error
	if k8sClient, err = client.New(cp.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "myapp-e2e-")
	if err != nil {
		return nil, err
	}
	if managerBin, err = harness.BuildManager(dir); err != nil {
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
func startManager(t *testing.T, name string, kubeconfig []byte, args ...string) *harness.ManagerProcess {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	all := append([]string{
		"--kubeconfig=" + path,
		"--dns-url=" + simURL, "--dns-token-file=" + tokenFile,
		"--backup-url=" + simURL, "--backup-token-file=" + tokenFile,
		"--dns-default-target=192.0.2.10",
		"--dns-pending-poll-interval=200ms",
		"--backup-poll-interval=200ms",
		"--health-probe-bind-address=0",
		"--metrics-bind-address=0",
	}, args...)
	return harness.StartManagerProcess(t, name, managerBin, all...)
}

func newNamespace(t *testing.T) string {
	t.Helper()
	return harness.CreateNamespace(t, k8sClient, "e2e")
}

func newMyApp(namespace, name string) *appsv1alpha1.MyApp {
	return &appsv1alpha1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1alpha1.MyAppSpec{
			Replicas: ptr.To[int32](1),
			Image:    "nginx:1.27",
			Host:     name + "." + namespace + ".example.com",
		},
	}
}

func newBackupConfig(namespace, name, app string) *backupv1alpha1.BackupConfig {
	return &backupv1alpha1.BackupConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: backupv1alpha1.BackupConfigSpec{
			AppRef:         backupv1alpha1.AppReference{Name: app},
			DeletionPolicy: backupv1alpha1.DeletionPolicyDelete,
		},
	}
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
	for _, app := range apps {
		g.Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app)).To(Succeed())
			g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
			ready := false
			for _, c := range app.Status.Conditions {
				ready = ready || (c.Type == appsv1alpha1.ReadyCondition && c.Status == metav1.ConditionTrue)
			}
			g.Expect(ready).To(BeTrue())
		}, timeout, interval).Should(Succeed(), "MyApp %s/%s becomes Ready", app.Namespace, app.Name)
	}
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
