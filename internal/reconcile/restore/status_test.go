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
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore/restoreplan"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

var statusNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// The Restore of the status tests, and the installations whose backups it
// reads.
const thisRestore types.UID = "restore-uid"

const (
	ownOwnerID   = "cluster-a"
	otherOwnerID = "cluster-b"
)

func testRestore() *backupv1alpha1.Restore {
	return &backupv1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-restore", UID: thisRestore, Generation: 1},
		Spec: backupv1alpha1.RestoreSpec{Source: backupv1alpha1.RestoreSource{
			BackupConfigRef: &backupv1alpha1.BackupConfigReference{Name: "web-nightly"}}},
	}
}

func testPayload() *backupcontent.Payload {
	return &backupcontent.Payload{
		FormatVersion: backupcontent.PayloadFormatVersion,
		Metadata: backupcontent.PayloadMetadata{
			Trigger: "Schedule", MyAppUID: "old-uid", MyAppGeneration: 3, TakenAt: statusNow.Add(-time.Hour),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: "shop", Name: "web-nightly", UID: "bc-uid"},
			OwnerID:      ownOwnerID, Owner: "backupconfig/bc-uid", IdempotencyKey: "backupconfig/bc-uid/schedule/x",
		},
		MyApp: backupcontent.AppSnapshot{APIVersion: "apps.myapp.dev/v1alpha1", Kind: "MyApp", Namespace: "shop", Name: "web",
			Labels:      map[string]string{"team": "checkout", backupv1alpha1.RestoreNameLabel: "an-older-restore"},
			Annotations: map[string]string{"note": "kept"},
			Spec:        appsv1alpha1.MyAppSpec{Image: "nginx:1.27", Host: "web.example.com"}},
	}
}

// TestConditionsFollowThePhase: Ready, Reconciling and Stalled as kstatus
// reads them, for each phase.
func TestConditionsFollowThePhase(t *testing.T) {
	tests := []struct {
		phase                        backupv1alpha1.RestorePhase
		ready                        metav1.ConditionStatus
		wantReconciling, wantStalled bool
	}{
		{backupv1alpha1.RestorePending, metav1.ConditionFalse, true, false},
		{backupv1alpha1.RestoreRestoring, metav1.ConditionFalse, true, false},
		{backupv1alpha1.RestoreSucceeded, metav1.ConditionTrue, false, false},
		{backupv1alpha1.RestoreFailed, metav1.ConditionFalse, false, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.phase), func(t *testing.T) {
			g := NewWithT(t)
			r := testRestore()
			// Left over from an earlier phase: each must go when it no
			// longer applies.
			setConditions(r, "Earlier", "earlier", statusNow.Add(-time.Minute))
			r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: stalledCondition, Status: metav1.ConditionTrue, Reason: "Earlier"})
			r.Status.Phase = tc.phase
			setConditions(r, "Now", "now", statusNow)
			g.Expect(fixtures.Condition(r.Status.Conditions, readyCondition).Status).To(Equal(tc.ready))
			g.Expect(fixtures.Condition(r.Status.Conditions, readyCondition).Reason).To(Equal("Now"))
			for cond, want := range map[string]bool{reconcilingCondition: tc.wantReconciling, stalledCondition: tc.wantStalled} {
				c := fixtures.Condition(r.Status.Conditions, cond)
				if want {
					g.Expect(c.Status).To(Equal(metav1.ConditionTrue), cond)
					g.Expect(c.Reason).To(Equal("Now"), cond)
					g.Expect(c.ObservedGeneration).To(Equal(r.Generation), cond)
				} else {
					g.Expect(c.Type).To(BeEmpty(), "%s is absent", cond)
				}
			}
		})
	}
}

// TestStatusPinsTheChoiceOnce: the pass that chooses writes the backup,
// its time and the target; a later pass's choice (from a stale copy,
// which the status write's lock then refuses) never replaces it.
func TestStatusPinsTheChoiceOnce(t *testing.T) {
	g := NewWithT(t)
	started := statusNow.Add(-2 * time.Hour)
	chosen := backup.Backup{ID: "bk-7", Phase: backup.PhaseSucceeded, StartedAt: started, Owner: "backupconfig/bc-uid",
		Labels: map[string]string{backup.LabelNamespace: "shop", labelMyApp: "web", labelMyAppUID: "old-uid",
			labelBackupConfig: "web-nightly", labelTrigger: "Schedule"}}
	s := newScope(testRestore(), ownOwnerID, statusNow)
	s.chosen, s.payload = &chosen, testPayload()
	s.outcome = restoreplan.Plan{Action: restoreplan.ActPin, Pin: true,
		Show: restoreplan.Show{Phase: backupv1alpha1.RestorePending, Reason: backupv1alpha1.RestorePendingReason}}
	setStatus(s)
	st := s.restore.Status
	g.Expect(st.Phase).To(Equal(backupv1alpha1.RestorePending))
	g.Expect(st.Backup).NotTo(BeNil())
	g.Expect(st.Backup.ID).To(Equal("bk-7"))
	g.Expect(st.Backup.StartTime.Time).To(Equal(started))
	g.Expect(st.Backup.TakenAt.Time).To(Equal(statusNow.Add(-time.Hour)))
	g.Expect(*st.Backup.MyApp).To(Equal(backupv1alpha1.RestoredObject{Namespace: "shop", Name: "web", UID: "old-uid"}))
	g.Expect(*st.Backup.BackupConfig).To(Equal(backupv1alpha1.RestoredObject{Namespace: "shop", Name: "web-nightly", UID: "bc-uid"}))
	g.Expect(st.TargetName).To(Equal("web"))
	g.Expect(st.StartTime.Time).To(Equal(statusNow))

	later := newScope(s.restore.DeepCopy(), ownOwnerID, statusNow.Add(time.Minute))
	later.chosen = &backup.Backup{ID: "bk-8", Phase: backup.PhaseSucceeded}
	later.outcome = restoreplan.Plan{Action: restoreplan.ActPin, Pin: true,
		Show: restoreplan.Show{Phase: backupv1alpha1.RestorePending, Reason: backupv1alpha1.RestorePendingReason}}
	setStatus(later)
	g.Expect(later.restore.Status.Backup.ID).To(Equal("bk-7"), "a choice in the status is never replaced")
	g.Expect(later.restore.Status.StartTime.Time).To(Equal(statusNow))
}

// TestStatusDescribesABackupFromItsLabelsUntilItsContentIsRead: a running
// backup is chosen before its content can be read; the BackupConfig
// controller's labels describe it meanwhile.
func TestStatusDescribesABackupFromItsLabelsUntilItsContentIsRead(t *testing.T) {
	g := NewWithT(t)
	chosen := backup.Backup{ID: "bk-9", Phase: backup.PhaseRunning, StartedAt: statusNow, Owner: "backupconfig/bc-uid",
		Labels: map[string]string{backup.LabelNamespace: "shop", labelMyApp: "web", labelMyAppUID: "old-uid",
			labelBackupConfig: "web-nightly", labelTrigger: "Manual"}}
	r := testRestore()
	r.Spec.Source = backupv1alpha1.RestoreSource{BackupID: "bk-9"}
	s := newScope(r, ownOwnerID, statusNow)
	s.chosen = &chosen
	// As resolveBackupID reads it: the labels say the namespace, so the
	// running backup is pinned.
	s.outcome = restoreplan.Make(restoreplan.Observation{Namespace: "shop",
		Source: &restoreplan.SourceRead{Found: true, Phase: restoreplan.BackupRunning, Namespace: "shop"}})
	setStatus(s)
	st := s.restore.Status
	g.Expect(st.Backup.Trigger).To(Equal("Manual"))
	g.Expect(*st.Backup.MyApp).To(Equal(backupv1alpha1.RestoredObject{Namespace: "shop", Name: "web", UID: "old-uid"}))
	g.Expect(*st.Backup.BackupConfig).To(Equal(backupv1alpha1.RestoredObject{Namespace: "shop", Name: "web-nightly", UID: "bc-uid"}))
	g.Expect(st.TargetName).To(Equal("web"))
	g.Expect(fixtures.Condition(st.Conditions, readyCondition).Reason).To(Equal(backupv1alpha1.BackupRunningReason))
	g.Expect(fixtures.Condition(st.Conditions, readyCondition).Message).To(ContainSubstring("Backup bk-9 is still running"))
}

// TestAServiceFailureKeepsThePhase: a pass that the backup service failed
// says so, in the phase the Restore was in.
func TestAServiceFailureKeepsThePhase(t *testing.T) {
	g := NewWithT(t)
	r := testRestore()
	r.Status.Phase = backupv1alpha1.RestoreRestoring
	s := newScope(r, ownOwnerID, statusNow)
	s.outcome = restoreplan.Plan{Need: restoreplan.NeedBackup}
	s.serviceErr = &external.Error{Kind: external.KindTransient, Service: "backup", Operation: "get", Message: "connection refused"}
	setStatus(s)
	g.Expect(s.restore.Status.Phase).To(Equal(backupv1alpha1.RestoreRestoring))
	ready := fixtures.Condition(s.restore.Status.Conditions, readyCondition)
	g.Expect(ready.Reason).To(Equal(backupv1alpha1.BackupServiceUnavailableReason))
	g.Expect(fixtures.Condition(s.restore.Status.Conditions, reconcilingCondition).Status).To(Equal(metav1.ConditionTrue))

	fresh := newScope(testRestore(), ownOwnerID, statusNow)
	fresh.outcome = restoreplan.Plan{Need: restoreplan.NeedSource}
	fresh.serviceErr = &external.Error{Kind: external.KindInvalid, Service: "backup", Operation: "list", Message: "the bucket does not exist."}
	setStatus(fresh)
	g.Expect(fresh.restore.Status.Phase).To(Equal(backupv1alpha1.RestorePending), "a new Restore is Pending")
	ready = fixtures.Condition(fresh.restore.Status.Conditions, readyCondition)
	g.Expect(ready.Reason).To(Equal(backupv1alpha1.BackupServiceErrorReason))
	g.Expect(ready.Message).To(ContainSubstring("the bucket does not exist"), "the service's own words, without its retry counts")
}

// TestEveryRefusalSaysWhatToDo: each Failed reason's message names the
// object or backup at fault and says a Restore is not retried.
func TestEveryRefusalSaysWhatToDo(t *testing.T) {
	started := statusNow.Add(-time.Hour)
	for _, reason := range backupv1alpha1.RestoreFailureReasons {
		t.Run(reason, func(t *testing.T) {
			g := NewWithT(t)
			r := testRestore()
			r.Status.Backup = &backupv1alpha1.RestoreBackupStatus{ID: "bk-7"}
			r.Status.TargetName = "web"
			r.Status.RestoredAppUID = "new-uid"
			switch reason {
			case backupv1alpha1.NoBackupFoundReason:
				r.Spec.Source = backupv1alpha1.RestoreSource{Storage: &backupv1alpha1.StorageSource{AppName: "web"}}
			case backupv1alpha1.BackupNotFoundReason:
				r.Status.Backup = nil
				r.Spec.Source = backupv1alpha1.RestoreSource{BackupID: "bk-404"}
			case backupv1alpha1.RestoreTimedOutReason:
				r.Status.StartTime = &metav1.Time{Time: started}
			}
			s := newScope(r, ownOwnerID, statusNow)
			if reason == backupv1alpha1.HostConflictReason {
				s.app = &appsv1alpha1.MyApp{Status: appsv1alpha1.MyAppStatus{Conditions: []metav1.Condition{{
					Type: appsv1alpha1.DNSReadyCondition, Status: metav1.ConditionFalse, Reason: appsv1alpha1.HostConflictReason,
					Message: "The record is held by MyApp shop/other.",
				}}}}
			}
			s.obs.Content = &restoreplan.ContentRead{OwnerID: otherOwnerID}
			s.obs.App = &restoreplan.AppRead{Exists: true, UID: "live-uid"}
			s.contentDetail = "the detail"
			s.sourceDetail = ""
			s.appWriteErr = errors.New("spec.host: Invalid value")
			msg := refusalMessage(s, reason)
			g.Expect(msg).To(HaveSuffix("A Restore is not retried: create another one."))
			g.Expect(msg).NotTo(HavePrefix("The Restore stopped"), "every reason has its own message")
			switch reason {
			case backupv1alpha1.ForeignBackupReason:
				g.Expect(msg).To(ContainSubstring("owner ID " + otherOwnerID))
				g.Expect(msg).To(ContainSubstring("owner ID " + ownOwnerID))
			case backupv1alpha1.BackupConfigNotFoundReason, backupv1alpha1.NoSucceededBackupReason:
				g.Expect(msg).To(ContainSubstring("web-nightly"))
			case backupv1alpha1.NoBackupFoundReason:
				g.Expect(msg).To(ContainSubstring("shop/web"))
			case backupv1alpha1.BackupNotFoundReason:
				g.Expect(msg).To(ContainSubstring("bk-404"))
			case backupv1alpha1.TargetExistsReason:
				g.Expect(msg).To(ContainSubstring("live-uid"))
				g.Expect(msg).To(ContainSubstring("existingApp: Replace"))
			case backupv1alpha1.InvalidAppSpecReason:
				g.Expect(msg).To(ContainSubstring("spec.host: Invalid value"))
			case backupv1alpha1.RestoredAppDeletedReason:
				g.Expect(msg).To(ContainSubstring("new-uid"))
			case backupv1alpha1.HostConflictReason:
				g.Expect(msg).To(ContainSubstring("bk-7"))
				g.Expect(msg).To(ContainSubstring("shop/other"))
			case backupv1alpha1.RestoreTimedOutReason:
				g.Expect(msg).To(ContainSubstring("spec.timeout"))
				g.Expect(msg).To(ContainSubstring(started.Format(time.RFC3339)))
				g.Expect(msg).To(ContainSubstring("MyApp web, which it wrote, stays"))
			default:
				g.Expect(msg).To(ContainSubstring("bk-7"))
			}
		})
	}
}

// TestTheRestoredMyAppCarriesTheMark: the backed-up spec, labels and
// annotations, with the restore's mark over any mark an earlier restore
// left in the backup, and no owner reference.
func TestTheRestoredMyAppCarriesTheMark(t *testing.T) {
	g := NewWithT(t)
	s3ID := "shop/0c9d8e7f-1a2b-4c3d-8e9f-a0b1c2d3e4f5/schedule/6f1c0a52-0d3e-4d7a-9a43-5b1e2c7d9f10/20260101T0000Z"
	app := restoredApp(testRestore(), "web-copy", s3ID, testPayload())
	g.Expect(app.Namespace).To(Equal("shop"))
	g.Expect(app.Name).To(Equal("web-copy"))
	g.Expect(app.Spec).To(Equal(testPayload().MyApp.Spec))
	g.Expect(app.OwnerReferences).To(BeEmpty(), "deleting the Restore must not delete what it restored")
	g.Expect(app.Finalizers).To(BeEmpty())
	g.Expect(app.Labels).To(Equal(map[string]string{
		"team":                          "checkout",
		backupv1alpha1.RestoreNameLabel: "web-restore",
		backupv1alpha1.BackupIDLabel:    backupv1alpha1.BackupIDLabelValue(s3ID),
	}))
	g.Expect(app.Annotations).To(Equal(map[string]string{
		"note":                                   "kept",
		backupv1alpha1.RestoreUIDAnnotation:      string(thisRestore),
		backupv1alpha1.BackupIDAnnotation:        s3ID,
		backupv1alpha1.RestoredFromUIDAnnotation: "old-uid",
	}))
	for k, v := range app.Labels {
		g.Expect(content.IsLabelValue(v)).To(BeEmpty(), "label %s=%s is a valid label value", k, v)
	}
}

func TestBackupIDLabelValue(t *testing.T) {
	g := NewWithT(t)
	g.Expect(backupv1alpha1.BackupIDLabelValue("bk-000042")).To(Equal("bk-000042"), "a label value is kept as it is")
	long := "shop/uid/" + strings.Repeat("x", 100)
	v := backupv1alpha1.BackupIDLabelValue(long)
	g.Expect(content.IsLabelValue(v)).To(BeEmpty())
	g.Expect(v).To(HavePrefix("sha256-"))
	g.Expect(backupv1alpha1.BackupIDLabelValue(long+"y")).NotTo(Equal(v), "two IDs, two values")
	g.Expect(backupv1alpha1.BackupIDLabelValue(long)).To(Equal(v), "the same ID, the same value")
}

// TestNewestSucceeded: "latest" is the succeeded backup that started last,
// whatever the order of the listing; running and failed ones never count.
func TestNewestSucceeded(t *testing.T) {
	g := NewWithT(t)
	at := func(id string, minutes int, phase backup.Phase) backup.Backup {
		return backup.Backup{ID: id, Phase: phase, StartedAt: statusNow.Add(time.Duration(minutes) * time.Minute)}
	}
	list := []backup.Backup{at("b3", 3, backup.PhaseRunning), at("b1", 1, backup.PhaseSucceeded),
		at("b4", 4, backup.PhaseFailed), at("b2", 2, backup.PhaseSucceeded), at("b2a", 2, backup.PhaseSucceeded)}
	b, ok := newestSucceeded(list)
	g.Expect(ok).To(BeTrue())
	g.Expect(b.ID).To(Equal("b2a"), "the later start, then the later ID")
	_, ok = newestSucceeded([]backup.Backup{at("b3", 3, backup.PhaseRunning)})
	g.Expect(ok).To(BeFalse())
}

// TestStorageCandidates: backups whose labels name the MyApp, or say
// nothing, newest first; none of another MyApp or namespace.
func TestStorageCandidates(t *testing.T) {
	g := NewWithT(t)
	b := func(id string, minutes int, labels map[string]string) backup.Backup {
		return backup.Backup{ID: id, Phase: backup.PhaseSucceeded, StartedAt: statusNow.Add(time.Duration(minutes) * time.Minute), Labels: labels}
	}
	ours := map[string]string{backup.LabelNamespace: "shop", labelMyApp: "web"}
	list := []backup.Backup{
		b("old", 1, ours), b("new", 5, ours), b("unlabelled", 3, nil),
		b("other-app", 6, map[string]string{backup.LabelNamespace: "shop", labelMyApp: "api"}),
		b("other-ns", 7, map[string]string{backup.LabelNamespace: "dev", labelMyApp: "web"}),
		{ID: "running", Phase: backup.PhaseRunning, StartedAt: statusNow.Add(9 * time.Minute), Labels: ours},
	}
	candidates := storageCandidates(list, "shop", "web")
	ids := make([]string, 0, len(candidates))
	for _, c := range candidates {
		ids = append(ids, c.ID)
	}
	g.Expect(ids).To(Equal([]string{"new", "unlabelled", "old"}))
}

// TestDecodeContent: content this operator cannot restore names why, by
// reason.
func TestDecodeContent(t *testing.T) {
	g := NewWithT(t)
	good, err := backupcontent.EncodePayload(testPayload())
	g.Expect(err).NotTo(HaveOccurred())
	p, problem, _ := decodeContent(good)
	g.Expect(problem).To(BeEmpty())
	g.Expect(p.MyApp.Name).To(Equal("web"))

	_, problem, detail := decodeContent(gzipJSON(t, `{"formatVersion": 2}`))
	g.Expect(problem).To(Equal(backupv1alpha1.UnsupportedBackupFormatReason))
	g.Expect(detail).To(ContainSubstring("formatVersion 2"))

	_, problem, _ = decodeContent([]byte("not gzip"))
	g.Expect(problem).To(Equal(backupv1alpha1.InvalidBackupContentReason))

	other := testPayload()
	other.MyApp.APIVersion = "apps.myapp.dev/v1beta9"
	data, err := backupcontent.EncodePayload(other)
	g.Expect(err).NotTo(HaveOccurred())
	_, problem, detail = decodeContent(data)
	g.Expect(problem).To(Equal(backupv1alpha1.InvalidBackupContentReason))
	g.Expect(detail).To(ContainSubstring("v1beta9"))
}
