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
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// TestUndeployStrandsNoFinalizer runs the real `make undeploy` against
// config/default applied to the cluster, with the manager running as the
// ServiceAccount config/default creates (so it loses its permissions exactly
// when the target deletes them), and a MyApp with a DNS record and a
// BackupConfig that takes a backup before the app is deleted. The target
// must finish, leave no custom resource or CRD behind, and the cleanup must
// really have run: the record is gone and the final backup was taken.
// Deleting the CRDs, RBAC and manager in one go would strand the finalizers.
func TestUndeployStrandsNoFinalizer(t *testing.T) {
	g := NewWithT(t)
	d := deployWithApp(t)

	g.Expect(undeploy(t, d.kubeconfig, "20s")).To(Succeed(), "make undeploy finishes; left behind: %s", leftBehind(t, d.app))
	for _, name := range operatorCRDs {
		// A CRD is only gone once every custom resource of it is: none is
		// left Terminating.
		err := k8sClient.Get(t.Context(), client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "CRD %s is deleted, got %v", name, err)
	}
	g.Expect(ownedRecords(d.app)).To(BeEmpty(), "the MyApp's DNS record is deleted, not leaked")
	final := false
	for _, b := range sim.Backups() {
		final = final || (strings.HasSuffix(b.Owner, "/"+string(d.bc.UID)) && b.Phase == simulator.PhaseSucceeded &&
			b.Labels["backup.myapp.dev/trigger"] == string(backupv1alpha1.TriggerAppDeletion))
	}
	g.Expect(final).To(BeTrue(), "the final backup is taken before the MyApp goes")
}

// TestUndeployKeepsTheManagerUntilCleanupEnds shows what `make undeploy`
// does when a cleanup cannot finish, here because the DNS service refuses
// deletes: it gives up after UNDEPLOY_TIMEOUT and fails, leaving the
// manager, its permissions and the CRDs in place so the cleanup goes on;
// once the service is back, running it again finishes.
func TestUndeployKeepsTheManagerUntilCleanupEnds(t *testing.T) {
	g := NewWithT(t)
	d := deployWithApp(t)

	sim.SetFault(simulator.ServiceDNS, simulator.OpDelete, simulator.Fault{Status: http.StatusServiceUnavailable})
	t.Cleanup(func() { sim.ClearFault(simulator.ServiceDNS, simulator.OpDelete) })
	g.Expect(undeploy(t, d.kubeconfig, "3s")).NotTo(Succeed(), "make undeploy fails when the cleanup does not finish")
	for _, name := range operatorCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: name}, crd)).To(Succeed(), "CRD %s is kept", name)
		g.Expect(crd.DeletionTimestamp).To(BeNil(), "CRD %s is not being deleted", name)
	}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: "myapp-system", Name: "myapp-controller-manager"},
		&corev1.ServiceAccount{})).To(Succeed(), "the manager's ServiceAccount is kept")
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: "myapp-manager-rolebinding"},
		&rbacv1.ClusterRoleBinding{})).To(Succeed(), "the manager's permissions are kept")
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(d.app), d.app)).To(Succeed())
	g.Expect(d.app.DeletionTimestamp).NotTo(BeNil(), "the MyApp is being deleted")
	g.Expect(ownedRecords(d.app)).To(HaveLen(1), "the record waits for the DNS service")

	sim.ClearFault(simulator.ServiceDNS, simulator.OpDelete)
	g.Expect(undeploy(t, d.kubeconfig, "20s")).To(Succeed(), "make undeploy finishes; left behind: %s", leftBehind(t, d.app))
	g.Expect(ownedRecords(d.app)).To(BeEmpty(), "the MyApp's DNS record is deleted, not leaked")
}

// deployment is config/default applied, its manager running, and a MyApp
// with a record and a BackupConfig that backs it up before it is deleted.
type deployment struct {
	kubeconfig string
	app        *appsv1alpha1.MyApp
	bc         *backupv1alpha1.BackupConfig
}

func deployWithApp(t *testing.T) deployment {
	t.Helper()
	g := NewWithT(t)
	kustomize := tool(t, "kustomize")
	build := exec.Command(kustomize, "build", filepath.Join(controlplane.RepoRoot(), "config", "default"))
	manifests, err := build.Output()
	g.Expect(err).NotTo(HaveOccurred(), "kustomize build config/default")
	kubectl(t, manifests, "apply", "--server-side", "-f", "-")
	d := deployment{kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")}
	g.Expect(cp.WriteKubeconfig(d.kubeconfig)).To(Succeed())
	// Later tests need the CRDs an undeploy removes; registered first so
	// that it runs after the manager has stopped.
	t.Cleanup(func() { restoreCRDs(t, kustomize, d.kubeconfig) })

	// Pods under kwok run no container, so the manager runs as a process
	// with the deployed ServiceAccount's token and nothing else.
	sa := &corev1.ServiceAccount{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: "myapp-system", Name: "myapp-controller-manager"}, sa)).To(Succeed())
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	g.Expect(k8sClient.SubResource("token").Create(t.Context(), sa, tr)).To(Succeed())
	startManager(t, "deployed manager", tokenKubeconfig(t, tr.Status.Token),
		"--leader-elect", "--leader-election-namespace=myapp-system")

	ns := newNamespace(t)
	d.app = newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), d.app)).To(Succeed())
	d.bc = newBackupConfig(ns, "web-backup", "web")
	d.bc.Spec.BackupBeforeAppDeletion = true
	// Retain keeps the backups in the service, so the final one can be
	// seen after the BackupConfig is gone.
	d.bc.Spec.DeletionPolicy = backupv1alpha1.DeletionPolicyRetain
	g.Expect(k8sClient.Create(t.Context(), d.bc)).To(Succeed())
	eventuallyReady(t.Context(), g, d.app)
	eventuallyBackedUp(t.Context(), g, d.bc, backupv1alpha1.TriggerAppChange)
	g.Expect(ownedRecords(d.app)).To(HaveLen(1), "the MyApp holds its DNS record")
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(d.app), d.app)).To(Succeed())
	g.Expect(d.app.Finalizers).To(ContainElements(appsv1alpha1.DNSCleanupFinalizer, backupv1alpha1.FinalBackupFinalizer))
	return d
}

// undeploy runs `make undeploy` against the test cluster as its
// administrator, waiting up to wait for the custom resources' cleanup.
func undeploy(t *testing.T, kubeconfig, wait string) error {
	t.Helper()
	// A stranded finalizer makes kubectl wait for ever: the deadline turns
	// that into a failure.
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	mk := exec.CommandContext(ctx, "make", "undeploy", "ignore-not-found=true", "UNDEPLOY_TIMEOUT="+wait,
		"KUBECTL="+cp.Kubectl()+" --kubeconfig="+kubeconfig, "KUSTOMIZE="+tool(t, "kustomize"))
	mk.Dir = controlplane.RepoRoot()
	mk.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	// make's children (the kubectl waiting) go with it at the deadline.
	mk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	mk.Cancel = func() error { return syscall.Kill(-mk.Process.Pid, syscall.SIGKILL) }
	mk.WaitDelay = 5 * time.Second
	out, err := mk.CombinedOutput()
	t.Logf("make undeploy UNDEPLOY_TIMEOUT=%s: %v\n%s", wait, err, out)
	return err
}

// leftBehind describes the custom resources still present, with their
// finalizers, and the DNS records app still owns.
func leftBehind(t *testing.T, app *appsv1alpha1.MyApp) string {
	var parts []string
	for _, list := range []client.ObjectList{&appsv1alpha1.MyAppList{}, &backupv1alpha1.BackupConfigList{}} {
		if err := k8sClient.List(t.Context(), list); err != nil {
			continue
		}
		for _, o := range objectsOf(list) {
			parts = append(parts, fmt.Sprintf("%T %s/%s (deleting: %t, finalizers %v)",
				o, o.GetNamespace(), o.GetName(), o.GetDeletionTimestamp() != nil, o.GetFinalizers()))
		}
	}
	for _, r := range ownedRecords(app) {
		parts = append(parts, fmt.Sprintf("DNS record %s (%s)", r.Name, r.State))
	}
	return strings.Join(parts, "; ")
}

// ownedRecords are the simulator's DNS records owned by app.
func ownedRecords(app *appsv1alpha1.MyApp) []simulator.Record {
	var owned []simulator.Record
	for _, r := range sim.Records() {
		if strings.HasSuffix(r.Owner, "/"+string(app.UID)) {
			owned = append(owned, r)
		}
	}
	return owned
}

// tokenKubeconfig is the administrator's kubeconfig with its credentials
// replaced by a bearer token.
func tokenKubeconfig(t *testing.T, token string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(cp.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Contexts {
		c.AuthInfo = "token"
	}
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{"token": {Token: token}}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// restoreCRDs installs the CRDs again once the undeploy's deletion of them
// has finished. If the undeploy stranded custom resources, their
// finalizers are removed first, or the CRDs would never go.
func restoreCRDs(t *testing.T, kustomize, kubeconfig string) {
	// A cleanup runs it, when t.Context() is already cancelled.
	ctx := context.Background()
	for _, list := range []client.ObjectList{&appsv1alpha1.MyAppList{}, &backupv1alpha1.BackupConfigList{}} {
		if err := k8sClient.List(ctx, list); err != nil {
			continue
		}
		for _, o := range objectsOf(list) {
			if len(o.GetFinalizers()) > 0 {
				patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
				o.SetFinalizers(nil)
				_ = k8sClient.Patch(ctx, o, patch)
			}
		}
	}
	g := NewWithT(t)
	g.Eventually(func() bool {
		for _, name := range operatorCRDs {
			if !apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})) {
				return false
			}
		}
		return true
	}, timeout, interval).Should(BeTrue(), "the CRDs finish deleting")
	apply := exec.Command("sh", "-c", `"$0" build config/crd | "$1" --kubeconfig="$2" apply --server-side -f -`,
		kustomize, cp.Kubectl(), kubeconfig)
	apply.Dir = controlplane.RepoRoot()
	out, err := apply.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "reinstalling the CRDs: %s", out)
	g.Eventually(func(g Gomega) {
		for _, name := range operatorCRDs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			established := false
			for _, c := range crd.Status.Conditions {
				established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
			}
			g.Expect(established).To(BeTrue(), "CRD %s is established", name)
		}
	}, timeout, interval).Should(Succeed())
}

func objectsOf(list client.ObjectList) []client.Object {
	var objs []client.Object
	switch l := list.(type) {
	case *appsv1alpha1.MyAppList:
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	case *backupv1alpha1.BackupConfigList:
		for i := range l.Items {
			objs = append(objs, &l.Items[i])
		}
	}
	return objs
}
