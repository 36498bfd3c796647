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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestRestoreWorksWithOnlyTheGeneratedRole runs the manager binary as a
// user bound to nothing but config/rbac's generated ClusterRole, and
// restores a MyApp from a backup with its content, taken as a BackupConfig
// takes one, under the manager's default owner ID (the kube-system
// namespace's UID): the Restore succeeding, with the MyApp Ready, shows the
// manager registers the controller and the role grants everything it needs
// (the BackupConfig read, the MyApp created, the Restore's status patched).
func TestRestoreWorksWithOnlyTheGeneratedRole(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	user, err := cp.AddUser("myapp-restore-manager")
	g.Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	loadInto(t, "config/rbac/role.yaml", "ClusterRole", role)
	role.Name = "e2e-restore-manager-role"
	g.Expect(k8sClient.Create(t.Context(), role)).To(Succeed())
	g.Expect(k8sClient.Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: objectMeta("", "e2e-restore-manager-rolebinding"),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "myapp-restore-manager"}},
	})).To(Succeed())
	// Only this test's namespace, so the manager leaves the other tests'
	// objects alone.
	m := startManager(t, "restricted manager", user.Kubeconfig, "--watch-namespaces="+ns)

	kubeSystem := &corev1.Namespace{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: "kube-system"}, kubeSystem)).To(Succeed())
	backups, err := httpbackup.New(external.Config{BaseURL: simURL, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())
	from := newMyApp(ns, "web")
	from.UID = uuid.NewUUID()
	from.Spec.Image = "nginx:1.27"
	bcUID := string(uuid.NewUUID())
	owner := "backupconfig/" + bcUID
	key := owner + "/manual/" + string(from.UID) + "/1"
	content, err := backupcontent.EncodePayload(&backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{Trigger: "Manual", MyAppUID: string(from.UID), MyAppGeneration: 1,
			TakenAt: time.Now(), BackupConfig: backupcontent.ObjectIdentity{Namespace: ns, Name: "web-backup", UID: bcUID},
			OwnerID: string(kubeSystem.UID), Owner: owner, IdempotencyKey: key},
		MyApp: backupcontent.SnapshotApp(from),
	})
	g.Expect(err).NotTo(HaveOccurred())
	b, err := backups.Start(t.Context(), backup.StartRequest{App: ns + "-web", Owner: owner, IdempotencyKey: key,
		Labels: map[string]string{backup.LabelNamespace: ns, "backup.myapp.dev/myapp": "web"}, Payload: content})
	g.Expect(err).NotTo(HaveOccurred())

	r := &backupv1alpha1.Restore{}
	r.Namespace, r.Name = ns, "web-restore"
	r.Spec.Source.BackupID = b.ID
	g.Expect(k8sClient.Create(t.Context(), r)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(r), r)).To(Succeed())
		ready := fixtures.Condition(r.Status.Conditions, backupv1alpha1.ReadyCondition)
		g.Expect(r.Status.Phase).To(Equal(backupv1alpha1.RestoreSucceeded), "Ready: %s: %s", ready.Reason, ready.Message)
	}, timeout, interval).Should(Succeed(), "the Restore succeeds")
	app := &appsv1alpha1.MyApp{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, app)).To(Succeed())
	g.Expect(app.Spec.Image).To(Equal("nginx:1.27"))
	g.Expect(app.Annotations).To(HaveKeyWithValue(backupv1alpha1.RestoredFromUIDAnnotation, string(from.UID)))

	// Give the reflectors a moment to report anything they were refused.
	time.Sleep(time.Second)
	g.Expect(strings.ToLower(m.Logs())).NotTo(ContainSubstring("forbidden"), "no request was refused by RBAC")
}
