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

package reliability

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestOracleCountsEachRestoreProblem plants, with no manager running, each
// problem the oracle's Restore checks count, and one hand-over done right
// that they must not count: the restore lifecycle of family 1 passes only
// if these checks can fail.
func TestOracleCountsEachRestoreProblem(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	s := newScenario(t)
	dnsClient, err := httpdns.New(external.Config{BaseURL: s.url, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())

	// deleted is a MyApp deleted under Orphan (it never existed in the
	// cluster: only its UID and record matter) whose record the oracle is
	// told to expect handed over.
	deleted := func(name string) *appsv1alpha1.MyApp {
		app := fixtures.NewMyApp(s.ns, name, fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
		app.UID = types.UID("old-" + name)
		_, err := dnsClient.Upsert(ctx, dns.Record{Name: app.Spec.Host, Type: dns.TypeA, Value: defaultTarget, TTL: 60,
			Owner: orphanedRecordOwner(app)})
		g.Expect(err).NotTo(HaveOccurred())
		s.oracle.handOver(t, app)
		return app
	}
	// restoredFrom creates a live MyApp on old's host, marked as restored
	// from old.
	restoredFrom := func(name string, old *appsv1alpha1.MyApp) *appsv1alpha1.MyApp {
		app := fixtures.NewMyApp(s.ns, name, fixtures.WithAppDeletionPolicy(appsv1alpha1.DeletionPolicyOrphan))
		app.Spec.Host = old.Spec.Host
		app.Annotations = map[string]string{backupv1alpha1.RestoredFromUIDAnnotation: string(old.UID)}
		s.create(app)
		return app
	}
	// transfer hands old's record to owner, as a restore does.
	transfer := func(old *appsv1alpha1.MyApp, owner string) {
		_, err := dnsClient.Transfer(ctx, old.Spec.Host, orphanedRecordOwner(old), owner)
		g.Expect(err).NotTo(HaveOccurred())
	}

	// Right: the record transferred to the one MyApp restored from it.
	right := deleted("right")
	rightApp := restoredFrom("right-restored", right)
	transfer(right, wantedRecordOwner(rightApp))

	// Lost: nothing restored from it (a restore mismatch), and its record
	// is gone (not handed over).
	lost := deleted("lost")
	g.Expect(dnsClient.Delete(ctx, lost.Spec.Host, orphanedRecordOwner(lost))).To(Succeed())

	// Kept: restored, but the record is still the deleted MyApp's.
	kept := deleted("kept")
	restoredFrom("kept-restored", kept)

	// Recreated: the record deleted and registered again by the restored
	// MyApp, not transferred.
	recreated := deleted("recreated")
	recreatedApp := restoredFrom("recreated-restored", recreated)
	g.Expect(dnsClient.Delete(ctx, recreated.Spec.Host, orphanedRecordOwner(recreated))).To(Succeed())
	time.Sleep(10 * time.Millisecond)
	_, err = dnsClient.Upsert(ctx, dns.Record{Name: recreated.Spec.Host, Type: dns.TypeA, Value: defaultTarget, TTL: 60,
		Owner: wantedRecordOwner(recreatedApp)})
	g.Expect(err).NotTo(HaveOccurred())

	// Elsewhere: the record transferred to an owner that is not the
	// restored MyApp (it also counts as a leak: it belongs to no MyApp).
	elsewhere := deleted("elsewhere")
	restoredFrom("elsewhere-restored", elsewhere)
	transfer(elsewhere, "myapp-operator/"+ownerID+"/"+s.ns+"/stranger/0000")

	// Twice: two live MyApps restored from one (a duplicate), the record
	// transferred to one of them.
	twice := deleted("twice")
	twiceApp := restoredFrom("twice-restored", twice)
	restoredFrom("twice-again", twice)
	transfer(twice, wantedRecordOwner(twiceApp))

	// Restores seen Succeeded: one whose MyApp is gone, one whose MyApp
	// is another incarnation, one whose MyApp lacks the mark, and one done
	// right.
	outcome := func(name, target string, appUID types.UID) *backupv1alpha1.Restore {
		return &backupv1alpha1.Restore{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name, UID: types.UID("uid-" + name)},
			Status: backupv1alpha1.RestoreStatus{
				Phase: backupv1alpha1.RestoreSucceeded, TargetName: target, RestoredAppUID: appUID,
				Backup: &backupv1alpha1.RestoreBackupStatus{ID: "backup-of-" + name,
					MyApp: &backupv1alpha1.RestoredObject{Namespace: s.ns, Name: target, UID: "old-" + types.UID(target)}},
			},
		}
	}
	s.oracle.restoredBy(outcome("gone", "gone-app", "0000"))
	other := fixtures.NewMyApp(s.ns, "other-app")
	s.create(other)
	s.oracle.restoredBy(outcome("other", other.Name, "0000"))
	unmarked := fixtures.NewMyApp(s.ns, "unmarked-app")
	s.create(unmarked)
	s.oracle.restoredBy(outcome("unmarked", unmarked.Name, unmarked.UID))
	marked := outcome("marked", "marked-app", "")
	markedApp := fixtures.NewMyApp(s.ns, "marked-app")
	markedApp.Annotations = map[string]string{
		backupv1alpha1.RestoreUIDAnnotation:      string(marked.UID),
		backupv1alpha1.BackupIDAnnotation:        marked.Status.Backup.ID,
		backupv1alpha1.RestoredFromUIDAnnotation: string(marked.Status.Backup.MyApp.UID),
	}
	s.create(markedApp)
	marked.Status.RestoredAppUID = markedApp.UID
	s.oracle.restoredBy(marked)

	// Restores still there: one nobody reconciled (not Succeeded), and one
	// Succeeded whose MyApp is gone.
	newRestore := func(name string) *backupv1alpha1.Restore {
		rs := &backupv1alpha1.Restore{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
			Spec:       backupv1alpha1.RestoreSpec{Source: backupv1alpha1.RestoreSource{BackupID: "some-backup"}},
		}
		s.create(rs)
		return rs
	}
	newRestore("pending")
	succeeded := newRestore("succeeded")
	succeeded.Status = backupv1alpha1.RestoreStatus{Phase: backupv1alpha1.RestoreSucceeded, TargetName: "vanished",
		RestoredAppUID: "0000"}
	g.Expect(k8sClient.Status().Update(ctx, succeeded)).To(Succeed())

	// Records become ACTIVE after the propagation delay.
	time.Sleep(time.Second)
	r, err := s.oracle.check(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r).To(And(
		// lost; gone-app, other-app, unmarked-app; pending, succeeded.
		HaveField("RestoreMismatches", 6),
		// twice.
		HaveField("DuplicateRestoredApps", 1),
		// lost, kept, recreated, elsewhere.
		HaveField("RecordsNotHandedOver", 4),
	), "%v", r.Problems)
	g.Expect(r.Problems).To(ContainElement(ContainSubstring("unmarked-app, restored by Restore " + s.ns + "/unmarked, does not carry its mark")))
	g.Expect(r.Problems).To(ContainElement(ContainSubstring("record " + recreated.Spec.Host + " was deleted and created again")))
	g.Expect(r.Problems).NotTo(ContainElement(ContainSubstring(right.Spec.Host)), "the hand-over done right")
	g.Expect(r.Problems).NotTo(ContainElement(ContainSubstring(s.ns+"/marked-app, restored")), "the Restore done right")
}
