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

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3/s3test"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestHelmChartInstallsTheS3Provider installs the chart with
// backupProvider: s3 against a real S3 server (versitygw on loopback), the
// keys in an existing Secret. Pods under kwok run no container, so the
// manager runs as a process with the arguments the installed Deployment
// gives its container and the Secrets it mounts written where it mounts
// them (the kubelet's part). A MyApp's BackupConfig then keeps its backup
// as an object under <prefix>/<ownerID>/<namespace>/<uid>/, holding the
// MyApp, and deletes it when it goes. The manager is given no API access to
// the keys' Secret: the chart's Role reads the token Secret only.
func TestHelmChartInstallsTheS3Provider(t *testing.T) {
	g := NewWithT(t)
	start := time.Now()
	srv, err := controlplane.StartS3(t.Context(), controlplane.S3Options{Buckets: []string{"e2e-backups"}})
	controlplane.RequireS3(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	const release = releaseName + "-s3"
	const ownerID = "e2e-s3"
	ns := newNamespace(t)
	g.Expect(k8sClient.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-keys"},
		StringData: map[string]string{"access-key-id": srv.AccessKey, "secret-access-key": srv.SecretKey},
	})).To(Succeed())

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())
	helm := func(args ...string) {
		t.Helper()
		cmd := exec.Command(tool(t, "helm"), append([]string{"--kubeconfig", kubeconfig, "--namespace", ns}, args...)...)
		cmd.Dir = controlplane.RepoRoot()
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The harness installed the CRDs; this release leaves them alone.
	helm("install", release, chartDir, "--set", "crd.enable=false", "--set", "ownerID="+ownerID,
		"--set", "backupProvider=s3", "--set", "s3.endpoint="+srv.Endpoint, "--set", "s3.bucket=e2e-backups",
		"--set", "s3.region="+srv.Region, "--set", "s3.pathStyle=true", "--set", "s3.prefix=team-a",
		"--set", "s3.credentialsSecret.name=s3-keys",
		"--set", "externalServices.dnsURL="+simURL,
		"--set", "externalServices.tokenSecret.create=true", "--set", "externalServices.tokenSecret.token="+simToken)
	t.Cleanup(func() { helm("uninstall", release, "--wait") })

	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: release + "-controller-manager"}, dep)).To(Succeed())
		g.Expect(dep.Status.AvailableReplicas).To(Equal(int32(2)))
	}, timeout, interval).Should(Succeed(), "the manager Deployment becomes available")
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.Args).To(ContainElements("--backup-provider=s3", "--s3-bucket=e2e-backups", "--s3-prefix=team-a"))
	g.Expect(c.Args).NotTo(ContainElement(HavePrefix("--backup-url")))
	readable := secretsTheManagerMayRead(t, ns, release)
	g.Expect(readable).NotTo(ContainElement("s3-keys"), "the keys are mounted; the manager may not read their Secret")
	g.Expect(readable).NotTo(ContainElement("*"), "nor any Secret")

	args := kubeletPart(t, ns, dep)
	managerKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(managerKubeconfig, cp.Kubeconfig(), 0o600)).To(Succeed())
	// A process outside the cluster names its kubeconfig and its lease's
	// namespace, and needs no ports; the MyApp's Ingress gets no address
	// under kwok, so the record points at a default target.
	args = append(args, "--kubeconfig="+managerKubeconfig, "--leader-election-namespace="+ns,
		"--health-probe-bind-address=0", "--metrics-bind-address=0",
		"--dns-default-target=192.0.2.10", "--dns-pending-poll-interval=200ms")
	fixtures.StartManagerProcess(t, "operator-s3", managerBin, args...)

	appNS := newNamespace(t)
	app := newMyApp(appNS, "web")
	bc := newBackupConfig(appNS, "web", "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	g.Expect(k8sClient.Create(t.Context(), bc)).To(Succeed())
	eventuallyReady(t.Context(), g, app)
	eventuallyBackedUp(t.Context(), g, bc, backupv1alpha1.TriggerAppChange)

	objects, err := s3test.Objects(t.Context(), srv, "e2e-backups")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects).To(HaveLen(1))
	folder := "team-a/" + ownerID + "/" + appNS + "/" + string(bc.UID) + "/"
	g.Expect(objects[0].Key).To(HavePrefix(folder))
	g.Expect(bc.Status.LastBackup.Location).To(Equal("s3://e2e-backups/" + objects[0].Key))
	g.Expect(objects[0].PayloadErr).NotTo(HaveOccurred())
	g.Expect(objects[0].Payload.MyApp.Spec.Host).To(Equal(app.Spec.Host))
	g.Expect(objects[0].Payload.Metadata.OwnerID).To(Equal(ownerID))
	g.Expect(objects[0].Payload.Children).To(HaveLen(3))

	// deletionPolicy Delete: the object goes with the BackupConfig.
	g.Expect(k8sClient.Delete(t.Context(), bc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(bc), bc))
	}, timeout, interval).Should(BeTrue(), "the BackupConfig's cleanup completes")
	objects, err = s3test.Objects(t.Context(), srv, "e2e-backups")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects).To(BeEmpty(), "its backup is deleted from the bucket")
	t.Logf("installed the chart with s3 and kept a backup in versitygw in %s", time.Since(start).Round(time.Millisecond))
}

// kubeletPart does for the installed Deployment what the kubelet would: it
// writes the items of each Secret the container mounts as files, resolves
// the environment it takes from ConfigMaps, and returns the container's
// arguments with the mount paths and $(VAR)s replaced accordingly.
func kubeletPart(t *testing.T, ns string, dep *appsv1.Deployment) []string {
	t.Helper()
	g := NewWithT(t)
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		dir := t.TempDir()
		mounts[m.MountPath+"/"] = dir + "/"
		for _, v := range pod.Volumes {
			switch {
			case v.Name != m.Name:
			case v.Secret != nil:
				secret := &corev1.Secret{}
				g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: v.Secret.SecretName}, secret)).To(Succeed())
				for _, item := range v.Secret.Items {
					g.Expect(secret.Data).To(HaveKey(item.Key), "Secret %s", secret.Name)
					g.Expect(os.WriteFile(filepath.Join(dir, item.Path), secret.Data[item.Key], 0o600)).To(Succeed())
				}
			case v.ConfigMap != nil:
				cm := &corev1.ConfigMap{}
				g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: v.ConfigMap.Name}, cm)).To(Succeed())
				for _, item := range v.ConfigMap.Items {
					g.Expect(os.WriteFile(filepath.Join(dir, item.Path), []byte(cm.Data[item.Key]), 0o600)).To(Succeed())
				}
			}
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		ref := e.ValueFrom.ConfigMapKeyRef
		cm := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: ref.Name}, cm)).To(Succeed())
		env[e.Name] = cm.Data[ref.Key]
	}
	args := make([]string, 0, len(c.Args)+8)
	for _, arg := range c.Args {
		for from, to := range mounts {
			arg = strings.ReplaceAll(arg, from, to)
		}
		for name, value := range env {
			arg = strings.ReplaceAll(arg, "$("+name+")", value)
		}
		args = append(args, arg)
	}
	return args
}

// secretsTheManagerMayRead lists the Secrets the release's Roles in ns
// name, "*" for a rule on every Secret.
func secretsTheManagerMayRead(t *testing.T, ns, release string) []string {
	t.Helper()
	var roles rbacv1.RoleList
	g := NewWithT(t)
	g.Expect(k8sClient.List(t.Context(), &roles, client.InNamespace(ns))).To(Succeed())
	var names []string
	for _, r := range roles.Items {
		if !strings.HasPrefix(r.Name, release) {
			continue
		}
		for _, rule := range r.Rules {
			for _, res := range rule.Resources {
				if res == "secrets" {
					names = append(names, rule.ResourceNames...)
					if len(rule.ResourceNames) == 0 {
						names = append(names, "*")
					}
				}
			}
		}
	}
	return names
}
