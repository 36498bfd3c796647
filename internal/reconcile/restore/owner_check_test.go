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

package restore

import (
	"net"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore/restoreplan"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestTheStorageSourcePassesOverBackupsItCannotCheck: two installations
// share the HTTP backup service and each backs up MyApp web of the same
// namespace. After this installation's backup, the other took two: one by
// an operator version that stored no content and no owner ID label (whose
// it is cannot be checked), and, newest, one in a content format this
// operator does not read, labelled with its owner ID. The storage Restore
// passes over both, restores this installation's backup, and names the one
// it could not check. (With the s3 provider an installation lists only its
// own prefix, so another's backup is never a candidate.)
func TestTheStorageSourcePassesOverBackupsItCannotCheck(t *testing.T) {
	g := NewWithT(t)
	e := newTestEnv(t, backuptest.HTTP)
	e.startMyApps()
	e.startRestores()
	ours := backedUpApp(e.ns, "web", "nginx:1.27")
	want := e.seed(seedOptions{app: ours})

	theirs := backedUpApp(e.ns, "web", "nginx:1.29")
	unchecked := e.seed(seedOptions{app: theirs, ownerID: "cluster-b", noContent: true,
		labels: map[string]string{backup.LabelNamespace: e.ns, labelMyApp: "web", labelTrigger: "Schedule"}})
	e.seed(seedOptions{app: theirs, ownerID: "cluster-b", content: gzipJSON(t, `{"formatVersion": 2}`),
		labels: map[string]string{backup.LabelNamespace: e.ns, labelMyApp: "web", backup.LabelOwnerID: "cluster-b"}})

	r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{
		Storage: &backupv1alpha1.StorageSource{AppName: "web"}})
	e.create(r)
	app := expectRestored(e, r, want, ours, "web")
	g.Expect(app.Spec.Image).To(Equal("nginx:1.27"))
	g.Eventually(func(g Gomega) string { return e.eventNote(g, r, eventBackupChosen) }, eventually, tick).Should(And(
		ContainSubstring("passed over newer backup "+unchecked.ID),
		ContainSubstring("whose owner cannot be checked"),
		ContainSubstring("1 newer backups of it were other installations'")))
}

// TestAnS3BackupIDOfAnotherNamespaceIsRefusedBeforeAnyRead: with the s3
// provider a backup's ID begins with the namespace it was taken in, so a
// Restore naming another namespace's backup fails with
// BackupOfAnotherNamespace from the ID alone: here the S3 endpoint does not
// even answer, and the Restore fails all the same, naming the namespace.
func TestAnS3BackupIDOfAnotherNamespaceIsRefusedBeforeAnyRead(t *testing.T) {
	g := NewWithT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	deadEndpoint := "http://" + l.Addr().String()
	g.Expect(l.Close()).To(Succeed())
	dead, err := s3.New(s3.Config{ReadContent: backupcontent.Identity, Endpoint: deadEndpoint, Bucket: "backups",
		Region: "us-east-1", PathStyle: true, OwnerID: ownerID,
		Credentials: s3.StaticCredentials("key", "secret"), CredentialsSource: "the test's keys",
		AttemptTimeout: time.Second, MaxRetries: 1, MinRetryWait: time.Millisecond, MaxRetryWait: 10 * time.Millisecond})
	g.Expect(err).NotTo(HaveOccurred())

	e := newTestEnv(t, backuptest.HTTP)
	e.startRestoresWith(e.cp.Config, dead)
	other := "bank/0c9d8e7f-1a2b-4c3d-8e9f-a0b1c2d3e4f5/manual/web/1"
	r := e.newRestore("steal", backupv1alpha1.RestoreSource{BackupID: other})
	e.create(r)
	got := e.waitForPhase(r, backupv1alpha1.RestoreFailed)
	ready := fixtures.Condition(got.Status.Conditions, readyCondition)
	g.Expect(ready.Reason).To(Equal(backupv1alpha1.BackupOfAnotherNamespaceReason))
	g.Expect(ready.Message).To(ContainSubstring("namespace bank"))
	g.Expect(got.Status.Backup).To(BeNil(), "status.backup never describes another namespace's backup")

	// The Restore's own namespace in the ID is not refused: it is read,
	// and the dead endpoint keeps it waiting.
	own := e.newRestore("own", backupv1alpha1.RestoreSource{BackupID: e.ns + "/0c9d8e7f-1a2b-4c3d-8e9f-a0b1c2d3e4f5/manual/web/1"})
	e.create(own)
	g.Consistently(func(g Gomega) backupv1alpha1.RestorePhase {
		cur := &backupv1alpha1.Restore{}
		g.Expect(e.c.Get(t.Context(), client.ObjectKeyFromObject(own), cur)).To(Succeed())
		return cur.Status.Phase
	}, 3*time.Second, 250*time.Millisecond).ShouldNot(Equal(backupv1alpha1.RestoreFailed))
}

// TestTheMessagesNameTheBackupsPassedOver: a storage candidate passed over
// because whose it is cannot be checked is named, with why its content
// cannot be read, when nothing is left to restore and when an older one is
// chosen; a backupID refused for the namespace its ID names says which.
func TestTheMessagesNameTheBackupsPassedOver(t *testing.T) {
	g := NewWithT(t)
	r := testRestore()
	r.Spec.Source = backupv1alpha1.RestoreSource{Storage: &backupv1alpha1.StorageSource{AppName: "web"}}
	s := newScope(r, ownOwnerID, statusNow)
	s.obs.Source = &restoreplan.SourceRead{Storage: true, Namespace: "shop", Candidates: []restoreplan.Candidate{
		{ID: "bk-9", Content: &restoreplan.ContentRead{Problem: backupv1alpha1.BackupHasNoContentReason}},
		{ID: "bk-3", OwnerID: ownOwnerID, Namespace: "shop"},
	}}
	s.candidates = []backup.Backup{{ID: "bk-9"}, {ID: "bk-3", Labels: map[string]string{backup.LabelNamespace: "shop"}}}
	s.candidateContent = map[string]candidateContent{"bk-9": {detail: "backup bk-9 was started without content."}}
	const named = "bk-9 (BackupHasNoContent: backup bk-9 was started without content), whose owner cannot be checked"

	s.outcome = restoreplan.Refuse(backupv1alpha1.NoBackupFoundReason)
	s.outcome.Unchecked = []string{"bk-9"}
	msg := refusalMessage(s, backupv1alpha1.NoBackupFoundReason)
	g.Expect(msg).To(ContainSubstring("It passed over backup " + named))
	g.Expect(msg).To(ContainSubstring(backup.LabelOwnerID))
	g.Expect(msg).To(HaveSuffix("A Restore is not retried: create another one."))

	s.outcome = restoreplan.Plan{Action: restoreplan.ActPin, Pin: true, Candidate: "bk-3", Unchecked: []string{"bk-9"},
		Show: restoreplan.Show{Phase: backupv1alpha1.RestorePending, Reason: backupv1alpha1.RestorePendingReason}}
	s.takeChoice(s.outcome)
	g.Expect(s.chosen.ID).To(Equal("bk-3"))
	g.Expect(readyMessage(s, backupv1alpha1.RestorePendingReason)).To(And(
		ContainSubstring("The Restore chose backup bk-3"), ContainSubstring("It passed over newer backup "+named)))
	g.Expect(chosenMessage(s)).To(ContainSubstring("It passed over newer backup " + named))

	byID := testRestore()
	byID.Spec.Source = backupv1alpha1.RestoreSource{BackupID: "bank/bc-uid/manual/web/1"}
	s = newScope(byID, ownOwnerID, statusNow)
	s.obs.IDNamespace = "bank"
	g.Expect(refusalMessage(s, backupv1alpha1.BackupOfAnotherNamespaceReason)).To(And(
		ContainSubstring("Backup bank/bc-uid/manual/web/1 is of namespace bank"),
		ContainSubstring("Create the Restore in namespace bank.")))
}
