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

package backupconfig

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
)

var statusNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestSetReadyCondition(t *testing.T) {
	unavailable := &external.Error{Kind: external.KindTransient, Service: "backup", Operation: "start", StatusCode: 503}
	unauthorized := &external.Error{Kind: external.KindUnauthorized, Service: "backup", Operation: "list", StatusCode: 403}
	throttled := &external.Error{Kind: external.KindThrottled, Service: "backup", Operation: "start", StatusCode: 429,
		RetryAfter: 90 * time.Second}
	tests := []struct {
		name         string
		schedule     string
		onChange     *bool
		readiness    readiness
		wantStatus   metav1.ConditionStatus
		wantReason   string
		wantMessages []string
	}{
		{
			name:         "ready on change and schedule",
			schedule:     "0 3 * * *",
			wantStatus:   metav1.ConditionTrue,
			wantReason:   backupv1alpha1.ReadyReason,
			wantMessages: []string{"when its spec changes", `on schedule "0 3 * * *"`},
		},
		{
			name:         "ready without any trigger says so",
			onChange:     ptr.To(false),
			wantStatus:   metav1.ConditionTrue,
			wantReason:   backupv1alpha1.ReadyReason,
			wantMessages: []string{"no backups are taken"},
		},
		{
			name:         "missing app names it and says what to do",
			readiness:    readiness{appMissing: true},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.AppNotFoundReason,
			wantMessages: []string{`MyApp "web"`, "spec.appRef.name"},
		},
		{
			name:         "quiet for a Restore names it",
			schedule:     "0 3 * * *",
			readiness:    readiness{waitingForRestore: "web-restore"},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.WaitingForRestoreReason,
			wantMessages: []string{"Restore web-restore", `MyApp "web"`, "no backup of it starts"},
		},
		{
			name:         "a service failure wins over the quiet period",
			readiness:    readiness{waitingForRestore: "web-restore", serviceErr: unavailable},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.BackupServiceUnavailableReason,
			wantMessages: []string{"No backups can be started"},
		},
		{
			name:         "invalid schedule wins over a missing app",
			schedule:     "99 * * * *",
			readiness:    readiness{invalidSchedule: "end of range (99) above maximum (59): 99", appMissing: true},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.InvalidScheduleReason,
			wantMessages: []string{`"99 * * * *"`, "above maximum"},
		},
		{
			name:         "service unavailable without raw error text",
			readiness:    readiness{serviceErr: unavailable},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.BackupServiceUnavailableReason,
			wantMessages: []string{"retries with backoff"},
		},
		{
			name:         "service asking to wait says the operator waits, without the wait",
			readiness:    readiness{serviceErr: throttled},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.BackupServiceUnavailableReason,
			wantMessages: []string{"asked the operator to wait", "not sooner"},
		},
		{
			name:         "service refusing the token points at the token",
			readiness:    readiness{serviceErr: unauthorized},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.BackupServiceUnauthorizedReason,
			wantMessages: []string{"--backup-token-file"},
		},
		{
			name: "a provider's own words name the cause and the way out, instead of the token",
			readiness: readiness{serviceErr: unauthorized, serviceCause: "the S3 server does not know the access key ID " +
				"(the files in /etc/s3): correct the access key in the credentials Secret"},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.BackupServiceUnauthorizedReason,
			wantMessages: []string{"The S3 server does not know the access key ID (the files in /etc/s3): correct", "retries with backoff"},
		},
		{
			name:         "content too large says by how much and what to do, before a service failure",
			readiness:    readiness{contentTooLarge: &contentTooLargeError{app: "web", size: 1200000}, serviceErr: unavailable},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.BackupContentTooLargeReason,
			wantMessages: []string{"1200000 bytes gzip'd, more than the 1048576", "Make the MyApp smaller"},
		},
		{
			name: "a final backup too large names the ways to let the MyApp go",
			readiness: readiness{deleting: true, finalBackupPending: true,
				contentTooLarge: &contentTooLargeError{app: "web", size: 1200000}},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.FinalBackupInProgressReason,
			wantMessages: []string{"more than the 1048576", "spec.backupBeforeAppDeletion to false or delete this BackupConfig"},
		},
		{
			name:         "final backup in progress",
			readiness:    readiness{finalBackupPending: true},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.FinalBackupInProgressReason,
			wantMessages: []string{"final backup"},
		},
		{
			name:         "final backup under suspend says the MyApp is released without one",
			readiness:    readiness{finalBackupPending: true, suspended: true},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.FinalBackupSuspendedReason,
			wantMessages: []string{"spec.suspend", "no final backup is started", "released without one"},
		},
		{
			name:         "final backup failed for good names the way out",
			readiness:    readiness{finalBackupFailures: 3, finalBackupFailure: "disk full", serviceErr: unavailable},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.FinalBackupFailedReason,
			wantMessages: []string{"failed 3 times", "disk full", "spec.backupBeforeAppDeletion to false"},
		},
		{
			name:         "suspended",
			readiness:    readiness{suspended: true},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.SuspendedReason,
			wantMessages: []string{"spec.suspend to false"},
		},
		{
			name:         "cleanup in progress",
			readiness:    readiness{deleting: true},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.CleanupInProgressReason,
			wantMessages: []string{"being deleted"},
		},
		{
			name: "cleanup names the backups kept for Restores and the Restores",
			readiness: readiness{deleting: true, keptForRestores: []keptBackup{
				{id: "b-1", restore: "from-monday"}, {id: "b-2", restore: "from-tuesday"}}},
			wantStatus: metav1.ConditionFalse,
			wantReason: backupv1alpha1.CleanupInProgressReason,
			wantMessages: []string{`backup b-1 while Restore "from-monday" restores from it`,
				`backup b-2 while Restore "from-tuesday"`, "deleting a Restore releases its backup"},
		},
		{
			name:         "cleanup blocked offers Retain",
			readiness:    readiness{deleting: true, serviceErr: unavailable, appMissing: true},
			wantStatus:   metav1.ConditionFalse,
			wantReason:   backupv1alpha1.CleanupBlockedReason,
			wantMessages: []string{"unavailable", "spec.deletionPolicy to Retain"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bc := &backupv1alpha1.BackupConfig{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 4},
				Spec: backupv1alpha1.BackupConfigSpec{
					AppRef: backupv1alpha1.AppReference{Name: "web"}, Schedule: tt.schedule, BackupOnChange: tt.onChange,
				},
			}
			tt.readiness.appName = "web"
			setReadyCondition(bc, tt.readiness, bc.Generation, statusNow)

			cond := condition(bc, backupv1alpha1.ReadyCondition)
			g.Expect(cond.Status).To(Equal(tt.wantStatus))
			g.Expect(cond.Reason).To(Equal(tt.wantReason))
			g.Expect(cond.ObservedGeneration).To(Equal(int64(4)))
			for _, m := range tt.wantMessages {
				g.Expect(cond.Message).To(ContainSubstring(m))
			}
			// Raw errors, with their HTTP statuses and waits, stay out of the
			// status.
			g.Expect(cond.Message).NotTo(ContainSubstring("HTTP"))
			g.Expect(cond.Message).NotTo(ContainSubstring("1m30s"))
		})
	}
}

func TestSetReadyConditionKeepsTransitionTimeWhileStatusStays(t *testing.T) {
	g := NewWithT(t)
	bc := &backupv1alpha1.BackupConfig{Spec: backupv1alpha1.BackupConfigSpec{AppRef: backupv1alpha1.AppReference{Name: "web"}}}
	setReadyCondition(bc, readiness{appName: "web", appMissing: true}, bc.Generation, statusNow)
	setReadyCondition(bc, readiness{appName: "web", suspended: true}, bc.Generation, statusNow.Add(time.Hour))
	cond := condition(bc, backupv1alpha1.ReadyCondition)
	g.Expect(cond.Reason).To(Equal(backupv1alpha1.SuspendedReason))
	g.Expect(cond.LastTransitionTime.Time).To(Equal(statusNow))
}

func TestSetBackupSucceededCondition(t *testing.T) {
	succeeded := metav1.Condition{Type: backupv1alpha1.BackupSucceededCondition, Status: metav1.ConditionTrue, Reason: backupv1alpha1.BackupSucceededReason}
	tests := []struct {
		name       string
		last       *backupv1alpha1.BackupStatus
		existing   *metav1.Condition
		wantStatus metav1.ConditionStatus
		wantReason string
		wantInMsg  string
	}{
		{name: "no backup yet", wantStatus: metav1.ConditionUnknown, wantReason: backupv1alpha1.NoBackupYetReason},
		{
			name:       "first backup running",
			last:       &backupv1alpha1.BackupStatus{ID: "bk-1", Phase: backupv1alpha1.BackupRunning},
			wantStatus: metav1.ConditionUnknown, wantReason: backupv1alpha1.BackupRunningReason,
		},
		{
			name:       "a running backup keeps the previous outcome",
			last:       &backupv1alpha1.BackupStatus{ID: "bk-2", Phase: backupv1alpha1.BackupRunning},
			existing:   &succeeded,
			wantStatus: metav1.ConditionTrue, wantReason: backupv1alpha1.BackupSucceededReason,
		},
		{
			name:       "succeeded",
			last:       &backupv1alpha1.BackupStatus{ID: "bk-1", Phase: backupv1alpha1.BackupSucceeded},
			wantStatus: metav1.ConditionTrue, wantReason: backupv1alpha1.BackupSucceededReason,
		},
		{
			name:       "failed quotes the service, normalised",
			last:       &backupv1alpha1.BackupStatus{ID: "bk-1", Phase: backupv1alpha1.BackupFailed, Reason: "disk\n  full."},
			existing:   &succeeded,
			wantStatus: metav1.ConditionFalse, wantReason: backupv1alpha1.BackupFailedReason, wantInMsg: "failed: disk full. The next trigger",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bc := &backupv1alpha1.BackupConfig{Status: backupv1alpha1.BackupConfigStatus{LastBackup: tt.last}}
			if tt.existing != nil {
				bc.Status.Conditions = []metav1.Condition{*tt.existing}
			}
			setBackupSucceededCondition(bc, bc.Generation, statusNow)
			cond := condition(bc, backupv1alpha1.BackupSucceededCondition)
			g.Expect(cond.Status).To(Equal(tt.wantStatus))
			g.Expect(cond.Reason).To(Equal(tt.wantReason))
			g.Expect(cond.Message).To(ContainSubstring(tt.wantInMsg))
		})
	}
}
