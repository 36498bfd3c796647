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
	"cmp"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// The conditions are of the types every kind of the project carries.
const (
	readyCondition       = backupv1alpha1.ReadyCondition
	reconcilingCondition = backupv1alpha1.ReconcilingCondition
	stalledCondition     = backupv1alpha1.StalledCondition
)

// eventReason is the reason of an event, as in every controller of the
// project (pass.EventReason). A Restore's failure goes out as a Warning
// whose reason is the Ready condition's.
type eventReason = pass.EventReason

// Event reasons of the steps of a restore.
const (
	eventBackupChosen        eventReason = "BackupChosen"
	eventMyAppCreated        eventReason = "MyAppCreated"
	eventMyAppFound          eventReason = "MyAppFound"
	eventMyAppSpecReplaced   eventReason = "MyAppSpecReplaced"
	eventRestoreSucceeded    eventReason = "RestoreSucceeded"
	eventBackupServiceFailed eventReason = "BackupServiceFailed"
	eventAppWriteFailed      eventReason = eventReason(backupv1alpha1.AppWriteFailedReason)
)

// Actions of the events, in the events.k8s.io API's sense: what the
// controller did, or tried to.
const (
	actionChoose     = "ChooseBackup"
	actionReadBackup = "ReadBackup"
	actionCreate     = "CreateMyApp"
	actionReplace    = "ReplaceSpec"
	actionFollow     = "FollowMyApp"
	actionRefuse     = "Refuse"
)

// event records an event about the Restore, related to the MyApp it writes
// when the pass read it.
func (r *Reconciler) event(s *scope, eventType string, reason eventReason, action, note string, args ...any) {
	pass.Eventf(r.Recorder, s.restore, s.app, eventType, reason, action, note, args...)
}

// setStatus writes what the pass came to into the Restore's status: the
// backup chosen (only ever the first time), what its content says of it,
// the target, the MyApp written, the phase and the conditions.
func setStatus(s *scope) {
	st := &s.restore.Status
	phase, reason := s.outcome.Show.Phase, s.outcome.Show.Reason
	if s.serviceErr != nil {
		phase, reason = st.Phase, pass.BackupServiceReasons.For(s.serviceErr)
	}
	phase = cmp.Or(phase, st.Phase, backupv1alpha1.RestorePending)
	reason = cmp.Or(reason, backupv1alpha1.RestorePendingReason)

	if st.StartTime == nil {
		// The start of spec.timeout, on this controller's clock only.
		st.StartTime = pass.StatusTime(s.now)
	}
	if s.outcome.Pin && st.Backup == nil && s.chosen != nil {
		st.Backup = chosenBackup(*s.chosen)
	}
	if st.Backup != nil {
		describeFromContent(st.Backup, s.payload)
		if st.TargetName == "" {
			st.TargetName = s.targetName()
		}
	}
	if s.restoredUID != "" {
		st.RestoredAppUID = s.restoredUID
	}
	if phase.Finished() && st.CompletionTime == nil {
		st.CompletionTime = pass.StatusTime(s.now)
	}
	st.Phase = phase
	setConditions(s.restore, reason, readyMessage(s, reason), s.now)
}

// setConditions sets Ready, and the kstatus conditions that follow it:
// Reconciling (True, with Ready's reason) while the Restore is in progress,
// Stalled (True, with Ready's reason) once it failed, each absent otherwise.
func setConditions(restore *backupv1alpha1.Restore, reason, message string, now time.Time) {
	conditions := &restore.Status.Conditions
	set := func(condType string, status metav1.ConditionStatus) {
		pass.SetCondition(conditions, condType, status, reason, message, restore.Generation, now)
	}
	switch restore.Status.Phase {
	case backupv1alpha1.RestoreSucceeded:
		set(readyCondition, metav1.ConditionTrue)
		meta.RemoveStatusCondition(conditions, reconcilingCondition)
		meta.RemoveStatusCondition(conditions, stalledCondition)
	case backupv1alpha1.RestoreFailed:
		set(readyCondition, metav1.ConditionFalse)
		meta.RemoveStatusCondition(conditions, reconcilingCondition)
		set(stalledCondition, metav1.ConditionTrue)
	default:
		set(readyCondition, metav1.ConditionFalse)
		set(reconcilingCondition, metav1.ConditionTrue)
		meta.RemoveStatusCondition(conditions, stalledCondition)
	}
}

// chosenBackup is status.backup for a backup as the service lists it. Its
// labels describe it until its content is read (describeFromContent).
func chosenBackup(b backup.Backup) *backupv1alpha1.RestoreBackupStatus {
	st := &backupv1alpha1.RestoreBackupStatus{ID: b.ID, Trigger: b.Labels[labelTrigger]}
	if !b.StartedAt.IsZero() {
		st.StartTime = pass.StatusTime(b.StartedAt)
	}
	if b.CompletedAt != nil {
		st.CompletionTime = pass.StatusTime(*b.CompletedAt)
	}
	if ns, name := b.Labels[backup.LabelNamespace], b.Labels[labelMyApp]; ns != "" && name != "" {
		st.MyApp = &backupv1alpha1.RestoredObject{Namespace: ns, Name: name, UID: types.UID(b.Labels[labelMyAppUID])}
		if bc := b.Labels[labelBackupConfig]; bc != "" {
			st.BackupConfig = &backupv1alpha1.RestoredObject{Namespace: ns, Name: bc,
				UID: types.UID(strings.TrimPrefix(b.Owner, backupConfigOwner("")))}
		}
	}
	return st
}

// describeFromContent fills in what the content says of a backup: it is
// what the Restore creates the MyApp from, so it has the last word over
// the labels.
func describeFromContent(st *backupv1alpha1.RestoreBackupStatus, p *backupcontent.Payload) {
	if p == nil {
		return
	}
	m := p.Metadata
	st.TakenAt = pass.StatusTime(m.TakenAt)
	st.Trigger = m.Trigger
	st.MyApp = &backupv1alpha1.RestoredObject{Namespace: p.MyApp.Namespace, Name: p.MyApp.Name, UID: types.UID(m.MyAppUID)}
	st.BackupConfig = &backupv1alpha1.RestoredObject{Namespace: m.BackupConfig.Namespace, Name: m.BackupConfig.Name,
		UID: types.UID(m.BackupConfig.UID)}
}

// readyMessage is the Ready condition's message for reason: what the
// Restore is doing or why it stopped, and what a person can do about it.
// It names objects and IDs, never a raw error with its attempt counts, so
// it does not change from one retry to the next.
func readyMessage(s *scope, reason string) string {
	id, target := s.backupID(), s.targetName()
	if s.serviceCause != "" && (reason == backupv1alpha1.BackupServiceUnavailableReason ||
		reason == backupv1alpha1.BackupServiceUnauthorizedReason || reason == backupv1alpha1.BackupServiceErrorReason) {
		// The provider's words: the cause and the endpoint.
		return pass.Capitalize(strings.TrimRight(s.serviceCause, ".")) + ". The Restore retries, after the wait " +
			"the service asks for when it names one, else with backoff."
	}
	switch reason {
	case backupv1alpha1.RestorePendingReason:
		if id == "" {
			return "The Restore is choosing its backup."
		}
		return fmt.Sprintf("The Restore chose backup %s; it checks the backup and the target MyApp next.", id) +
			uncheckedMessage(s, " It passed over newer")
	case backupv1alpha1.BackupRunningReason:
		return fmt.Sprintf("Backup %s is still running; the Restore goes on once it has succeeded.", id)
	case backupv1alpha1.TargetBusyReason:
		return fmt.Sprintf("Restore %s is writing MyApp %s; this Restore waits until it has finished, then finds the "+
			"MyApp it left (spec.target.existingApp decides what happens to it).", s.obs.App.BusyWith, target)
	case backupv1alpha1.TargetBeingDeletedReason:
		return fmt.Sprintf("MyApp %s is being deleted; the Restore creates it from backup %s once it is gone.", target, id)
	case backupv1alpha1.AppWriteFailedReason:
		return fmt.Sprintf("Writing MyApp %s failed; the Restore retries with backoff, and its events have the error.", target)
	case backupv1alpha1.WaitingForAppReason:
		return waitingMessage(s)
	case backupv1alpha1.RestoreSucceededReason:
		if s.obs.App != nil && s.obs.App.Suspended {
			return fmt.Sprintf("MyApp %s was restored from backup %s and reports itself Suspended, as spec.suspend "+
				"says: the operator writes nothing for it until spec.suspend is false.", target, id)
		}
		return fmt.Sprintf("MyApp %s was restored from backup %s and is Ready, its DNS record for %s active.",
			target, id, s.app.Spec.Host)
	case backupv1alpha1.BackupServiceUnavailableReason:
		return "The backup service is unavailable or throttling requests; the Restore retries, after the wait the " +
			"service asks for when it names one."
	case backupv1alpha1.BackupServiceUnauthorizedReason:
		return "The backup service rejected the operator's credentials; check the token or keys the manager is " +
			"given. The Restore retries with backoff."
	case backupv1alpha1.BackupServiceErrorReason:
		return fmt.Sprintf("The backup service refused a request: %s. The Restore retries with backoff.",
			serviceMessage(s.serviceErr))
	}
	return refusalMessage(s, reason)
}

// again ends every refusal's message.
const again = " A Restore is not retried: create another one."

// refusalMessage is the Ready message of a Restore that failed: the words
// of the source's, the backup's or the target's refusal, by reason.
func refusalMessage(s *scope, reason string) string {
	for _, words := range []func(*scope, string) (string, bool){sourceRefusal, backupRefusal, targetRefusal} {
		if msg, ok := words(s, reason); ok {
			return msg + again
		}
	}
	return fmt.Sprintf("The Restore stopped: %s.", reason)
}

// sourceRefusal words a source that names no backup to restore.
func sourceRefusal(s *scope, reason string) (string, bool) {
	ns := s.restore.Namespace
	switch reason {
	case backupv1alpha1.BackupConfigNotFoundReason:
		return fmt.Sprintf("BackupConfig %s does not exist in namespace %s. Name an existing one, or restore from "+
			"spec.source.backupID or spec.source.storage.", s.restore.Spec.Source.BackupConfigRef.Name, ns), true
	case backupv1alpha1.NoSucceededBackupReason:
		return fmt.Sprintf("BackupConfig %s has no succeeded backup (%s).", s.restore.Spec.Source.BackupConfigRef.Name,
			s.sourceDetail), true
	case backupv1alpha1.NoBackupFoundReason:
		storage := s.restore.Spec.Source.Storage
		msg := fmt.Sprintf("The backup storage holds no succeeded backup of MyApp %s/%s taken by this installation "+
			"(owner ID %s)", cmp.Or(storage.Namespace, ns), storage.AppName, s.obs.OwnerID)
		if s.outcome.Foreign > 0 {
			msg += fmt.Sprintf("; %d of it were taken by other installations", s.outcome.Foreign)
		}
		return msg + ". Check the namespace and the name, and that the manager runs with the --owner-id the " +
			"backups were taken under." + uncheckedMessage(s, " It passed over"), true
	case backupv1alpha1.BackupNotFoundReason:
		if s.sourceDetail != "" {
			return pass.Capitalize(s.sourceDetail) + ".", true
		}
		if s.obs.Pinned != "" {
			return fmt.Sprintf("Backup %s, which this Restore chose, no longer exists in the backup service.", s.backupID()), true
		}
		return fmt.Sprintf("The backup service has no backup %s.", s.restore.Spec.Source.BackupID), true
	}
	return "", false
}

// backupRefusal words a backup this Restore must not, or cannot, restore.
func backupRefusal(s *scope, reason string) (string, bool) {
	id, ns := s.backupID(), s.restore.Namespace
	switch reason {
	case backupv1alpha1.BackupNotSucceededReason:
		why := "no reason given"
		if s.chosen != nil && s.chosen.Reason != "" {
			why = strings.TrimRight(s.chosen.Reason, ".")
		}
		return fmt.Sprintf("Backup %s failed (%s), so it holds nothing to restore. Restore another backup.", id, why), true
	case backupv1alpha1.BackupHasNoContentReason:
		return fmt.Sprintf("Backup %s holds no content to restore from (%s): it was taken by an operator version "+
			"that stored none. Restore a later backup.", id, s.contentDetail), true
	case backupv1alpha1.UnsupportedBackupFormatReason, backupv1alpha1.InvalidBackupContentReason:
		return fmt.Sprintf("The content of backup %s cannot be restored: %s.", id, strings.TrimRight(s.contentDetail, ".")), true
	case backupv1alpha1.ForeignBackupReason:
		return fmt.Sprintf("Backup %s was taken by the installation with owner ID %s, not by this one (owner ID %s): "+
			"its DNS records and backups are that installation's. Restore it there, or run this installation with "+
			"--owner-id %s if it replaces that one.", id, s.obs.Content.OwnerID, s.obs.OwnerID, s.obs.Content.OwnerID), true
	case backupv1alpha1.BackupOfAnotherNamespaceReason:
		if s.obs.Pinned == "" && s.obs.IDNamespace != "" && s.obs.IDNamespace != ns {
			return fmt.Sprintf("Backup %s is of namespace %s, as its ID says, and a Restore in namespace %s restores "+
				"only backups of MyApps of %s. Create the Restore in namespace %s.",
				s.restore.Spec.Source.BackupID, s.obs.IDNamespace, ns, ns, s.obs.IDNamespace), true
		}
		if s.obs.SourceNamespace != "" && s.obs.SourceNamespace != ns {
			return fmt.Sprintf("spec.source.storage.namespace is %s, and a Restore in namespace %s restores only "+
				"backups of MyApps of %s. Create the Restore in %s, or leave the field empty.",
				s.obs.SourceNamespace, ns, ns, s.obs.SourceNamespace), true
		}
		return fmt.Sprintf("Backup %s is of a MyApp of another namespace, and a Restore in namespace %s restores only "+
			"backups of MyApps of %s. Create the Restore in the namespace the backup was taken in.", id, ns, ns), true
	}
	return "", false
}

// targetRefusal words a Restore stopped at its target MyApp, or by its
// deadline.
func targetRefusal(s *scope, reason string) (string, bool) {
	id, target, ns := s.backupID(), s.targetName(), s.restore.Namespace
	switch reason {
	case backupv1alpha1.TargetExistsReason:
		return fmt.Sprintf("MyApp %s already exists in namespace %s (UID %s) and spec.target.existingApp is Fail. "+
			"Delete it, restore under another spec.target.name, or set existingApp: Replace to replace its spec.",
			target, ns, s.obs.App.UID), true
	case backupv1alpha1.InvalidAppSpecReason:
		return fmt.Sprintf("The API server refused MyApp %s as backup %s holds it: %s.", target, id,
			apiMessage(s.appWriteErr)), true
	case backupv1alpha1.RestoredAppDeletedReason:
		return fmt.Sprintf("MyApp %s, which this Restore wrote (UID %s), was deleted before it was Ready.", target,
			s.restore.Status.RestoredAppUID), true
	case backupv1alpha1.HostConflictReason:
		msg := fmt.Sprintf("MyApp %s was written from backup %s, but cannot become Ready: the DNS record of its "+
			"host is held by another owner", target, id)
		if c := meta.FindStatusCondition(s.app.Status.Conditions, appsv1alpha1.DNSReadyCondition); c != nil {
			msg += " (" + strings.TrimRight(c.Message, ".") + ")"
		}
		return msg + ". The MyApp stays and takes the host once its holder lets it go; delete the holder, or " +
			"restore under another spec.host.", true
	case backupv1alpha1.RestoreTimedOutReason:
		return timedOutMessage(s), true
	}
	return "", false
}

// timedOutMessage says how long the Restore had, and what it was waiting
// for when its deadline passed.
func timedOutMessage(s *scope) string {
	msg := fmt.Sprintf("The Restore did not finish within spec.timeout (%s) of its start at %s.",
		timeoutOf(s.restore), s.restore.Status.StartTime.UTC().Format(time.RFC3339))
	if c := meta.FindStatusCondition(s.base.Status.Conditions, readyCondition); c != nil {
		msg += fmt.Sprintf(" It was %s: %s", c.Reason, c.Message)
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
	}
	if s.restore.Status.RestoredAppUID != "" {
		msg += fmt.Sprintf(" MyApp %s, which it wrote, stays.", s.targetName())
	}
	return msg
}

// waitingMessage says what a restored MyApp still lacks.
func waitingMessage(s *scope) string {
	msg := fmt.Sprintf("MyApp %s was written from backup %s; the Restore waits for it to be Ready with its DNS "+
		"record active.", s.targetName(), s.backupID())
	if s.app == nil {
		return msg
	}
	if c := meta.FindStatusCondition(s.app.Status.Conditions, appsv1alpha1.ReadyCondition); c != nil &&
		c.Status != metav1.ConditionTrue {
		msg += fmt.Sprintf(" Its Ready condition says %s: %s", c.Reason, c.Message)
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
	}
	return msg
}

// chosenMessage is the note of the event of a backup being chosen.
func chosenMessage(s *scope) string {
	b := chosenBackup(*s.chosen)
	describeFromContent(b, s.payload)
	msg := fmt.Sprintf("Chose backup %s", b.ID)
	if b.MyApp != nil {
		msg += fmt.Sprintf(" of MyApp %s/%s", b.MyApp.Namespace, b.MyApp.Name)
		if b.MyApp.UID != "" {
			msg += fmt.Sprintf(" (UID %s)", b.MyApp.UID)
		}
	}
	if b.TakenAt != nil {
		msg += ", taken at " + b.TakenAt.UTC().Format(time.RFC3339)
	}
	if name := s.targetName(); name != "" {
		msg += ", to restore as MyApp " + name
	}
	if s.outcome.Foreign > 0 {
		msg += fmt.Sprintf("; %d newer backups of it were other installations'", s.outcome.Foreign)
	}
	return msg + uncheckedMessage(s, ". It passed over newer")
}

// uncheckedMessage names the storage candidates the plan passed over
// because whose they are cannot be checked, each with why its content
// cannot be read, after lead; "" when it passed over none.
func uncheckedMessage(s *scope, lead string) string {
	ids := s.outcome.Unchecked
	if len(ids) == 0 {
		return ""
	}
	named := make([]string, 0, len(ids))
	for _, id := range ids {
		why := strings.TrimRight(s.candidateContent[id].detail, ".")
		if c := s.candidate(id); c != nil && c.Content != nil {
			why = c.Content.Problem + ": " + why
		}
		named = append(named, fmt.Sprintf("%s (%s)", id, why))
	}
	noun := "backup"
	if len(ids) > 1 {
		noun = "backups"
	}
	return fmt.Sprintf("%s %s %s, whose owner cannot be checked: the backup service shows no owner ID for it "+
		"(label %s) and its content cannot be read, so another installation sharing the service may have taken it.",
		lead, noun, strings.Join(named, ", "), backup.LabelOwnerID)
}

// apiMessage is the API server's explanation of a refused write.
func apiMessage(err error) string {
	if err == nil {
		return "no reason given"
	}
	return strings.TrimRight(err.Error(), ".")
}
