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
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
)

// TestDefaultConfigDeploys applies config/default the way `make deploy`
// does and shows the manager Deployment becomes available: the API server
// accepts every object, and the pods pass the restricted Pod Security
// Standard the namespace enforces.
func TestDefaultConfigDeploys(t *testing.T) {
	g := NewWithT(t)
	kustomize := filepath.Join(controlplane.RepoRoot(), "bin", "kustomize")
	if _, err := os.Stat(kustomize); err != nil {
		t.Fatalf("%s is missing: run `make kustomize` (make test does)", kustomize)
	}
	build := exec.Command(kustomize, "build", filepath.Join(controlplane.RepoRoot(), "config", "default"))
	manifests, err := build.Output()
	g.Expect(err).NotTo(HaveOccurred(), "kustomize build config/default")

	out := kubectl(t, manifests, "apply", "--server-side", "-f", "-")
	g.Expect(out).To(ContainSubstring("deployment.apps/myapp-controller-manager serverside-applied"))

	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: "myapp-system", Name: "myapp-controller-manager"}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
		g.Expect(dep.Status.AvailableReplicas).To(Equal(int32(2)))
	}, timeout, interval).Should(Succeed(), "the manager Deployment becomes available")

	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
	g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	g.Expect(c.Resources.Limits).NotTo(BeEmpty())
	g.Expect(c.Args).To(ContainElement("--leader-elect"))
}

// TestManagerWorksWithOnlyTheGeneratedRole runs the manager as a user bound
// to nothing but config/rbac's generated ClusterRole and the leader-election
// Role: a MyApp becoming Ready shows the role grants everything the
// controllers need.
func TestManagerWorksWithOnlyTheGeneratedRole(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	user, err := cp.AddUser("myapp-manager")
	g.Expect(err).NotTo(HaveOccurred())

	role := &rbacv1.ClusterRole{}
	loadInto(t, "config/rbac/role.yaml", "ClusterRole", role)
	role.Name = "e2e-manager-role"
	g.Expect(k8sClient.Create(t.Context(), role)).To(Succeed())
	g.Expect(k8sClient.Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: objectMeta("", "e2e-manager-rolebinding"),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "myapp-manager"}},
	})).To(Succeed())
	leaderRole := &rbacv1.Role{}
	loadInto(t, "config/rbac/leader_election_role.yaml", "Role", leaderRole)
	leaderRole.Namespace = ns
	g.Expect(k8sClient.Create(t.Context(), leaderRole)).To(Succeed())
	g.Expect(k8sClient.Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: objectMeta(ns, "leader-election"),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leaderRole.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "myapp-manager"}},
	})).To(Succeed())

	m := startManager(t, "restricted manager", user.Kubeconfig, "--leader-elect", "--leader-election-namespace="+ns)

	app := newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	bc := newBackupConfig(ns, "web-backup", "web")
	bc.Spec.BackupBeforeAppDeletion = true
	g.Expect(k8sClient.Create(t.Context(), bc)).To(Succeed())
	eventuallyReady(t.Context(), g, app)
	eventuallyBackedUp(t.Context(), g, bc, backupv1alpha1.TriggerAppChange)

	// Deleting the MyApp needs both controllers' finalizer work: the final
	// backup, the DNS cleanup, and patching the MyApp's finalizers.
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app))
	}, timeout, interval).Should(BeTrue(), "the MyApp's cleanup completes")
	eventuallyBackedUp(t.Context(), g, bc, backupv1alpha1.TriggerAppDeletion)

	// Give the reflectors a moment to report anything they were refused.
	time.Sleep(time.Second)
	g.Expect(strings.ToLower(m.Logs())).NotTo(ContainSubstring("forbidden"), "no request was refused by RBAC")
}

// loadInto decodes the first object of the given kind in a repository file
// into obj.
func loadInto(t *testing.T, path, kind string, obj client.Object) {
	t.Helper()
	objs, err := controlplane.LoadFile(filepath.Join(controlplane.RepoRoot(), path))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if u.GetKind() == kind {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %s in %s", kind, path)
}

func objectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
