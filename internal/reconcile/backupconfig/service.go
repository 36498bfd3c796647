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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
)

// finalAttempts is what the backup service holds of one BackupConfig's final
// backups of one MyApp.
type finalAttempts struct {
	succeeded   *backup.Backup
	running     *backup.Backup
	failed      int
	lastFailure string
}

// listFinalAttempts reads the final backup attempts from the backup service
// rather than from status, because the service is the one record a crash
// cannot leave behind. An attempt still RUNNING after the backup timeout
// counts as failed, so a wedged job does not hold the MyApp for ever.
func (r *Reconciler) listFinalAttempts(ctx context.Context, s *scope, owner string, appUID types.UID) (finalAttempts, error) {
	backups, err := s.listOwn(ctx, owner)
	if err != nil {
		return finalAttempts{}, err
	}
	prefix := finalKeyPrefix(owner, appUID)
	var attempts finalAttempts
	for i := range backups {
		b := &backups[i]
		if b.Owner != owner || !strings.HasPrefix(b.IdempotencyKey, prefix) {
			continue
		}
		switch {
		case b.Phase == backup.PhaseSucceeded:
			attempts.succeeded = b
		case b.Phase == backup.PhaseRunning && r.timedOut(s, b.StartedAt):
			attempts.failed++
			attempts.lastFailure = r.timedOutBackup(s, *b).Reason
		case b.Phase == backup.PhaseRunning:
			attempts.running = b
		case b.Phase == backup.PhaseFailed:
			attempts.failed++
			attempts.lastFailure = b.Reason
		}
	}
	return attempts, nil
}

// Event actions, what the controller was doing.
const (
	actionStartBackup   = "StartBackup"
	actionPollBackup    = "PollBackup"
	actionDeleteBackups = "DeleteBackups"
	actionReleaseMyApp  = "ReleaseMyApp"
	actionSchedule      = "Schedule"
	actionCallService   = "CallBackupService"
)

// timedOut reports whether a backup started at started has been running
// longer than the backup timeout, by the controller's clock. The timeout is
// hours, so a difference between the controller's and the service's clocks
// hardly matters.
func (r *Reconciler) timedOut(s *scope, started time.Time) bool {
	return !started.IsZero() && s.now.Sub(started) >= r.BackupTimeout
}

// timedOutBackup is b as the controller records it once it gave up on it.
func (r *Reconciler) timedOutBackup(s *scope, b backup.Backup) backup.Backup {
	b.Phase = backup.PhaseFailed
	b.CompletedAt = &s.now
	b.Reason = fmt.Sprintf("the backup did not finish within %s (--backup-timeout); it is treated as failed",
		r.BackupTimeout)
	return b
}

// runningBackup returns a backup of this BackupConfig that the service lists
// as RUNNING and that has not run out of time, or nil.
func (r *Reconciler) runningBackup(s *scope, backups []backup.Backup) *backup.Backup {
	for i := range backups {
		b := &backups[i]
		if b.Owner == s.owner && b.Phase == backup.PhaseRunning && !r.timedOut(s, b.StartedAt) {
			return b
		}
	}
	return nil
}

// askForFinal asks the service for the final backup the plan starts, if
// any: attempt p.Attempt, keyed by the MyApp's UID and the attempt, so a
// crash or a lost answer never starts a second one.
func (r *Reconciler) askForFinal(ctx context.Context, s *scope, p backupplan.FinalPlan) finalAnswer {
	if p.Need != backupplan.NeedNothing || p.Action != backupplan.FinalStart {
		return finalAnswer{}
	}
	b, err := r.requestBackup(ctx, s, backupv1alpha1.TriggerAppDeletion, finalKey(s.owner, s.app.UID, p.Attempt))
	return finalAnswer{started: &b, err: err}
}

// askBackupService asks the service what step p needs: this
// BackupConfig's backups, or a start; a skipped slot asks nothing. The
// answer goes into status through recordNewBackupAnswer (record.go).
func (r *Reconciler) askBackupService(ctx context.Context, s *scope, p backupplan.NewBackupPlan) newBackupAnswer {
	var a newBackupAnswer
	switch p.Action {
	case backupplan.NewSkipSlot, backupplan.NewNothing:
	case backupplan.NewList:
		listed, err := s.listOwn(ctx, s.owner)
		a.listed, a.err = append([]backup.Backup{}, listed...), err
		a.running = r.runningBackup(s, listed)
	default:
		var key string
		a.trigger, key, a.manualValue = r.startOf(s, p)
		a.started, a.err = r.requestBackup(ctx, s, a.trigger, key)
	}
	return a
}

// startOf is the trigger and idempotency key of a start step, and for a
// backup-now start the annotation's value it answers.
func (r *Reconciler) startOf(s *scope, p backupplan.NewBackupPlan) (backupv1alpha1.BackupTrigger, string, string) {
	switch p.Action {
	case backupplan.NewStartManual:
		value := s.bc.Annotations[backupv1alpha1.BackupNowAnnotation]
		return backupv1alpha1.TriggerManual, manualKey(s.owner, s.app.UID, value), value
	case backupplan.NewStartSlot:
		return backupv1alpha1.TriggerSchedule, scheduleKey(s.owner, s.app.UID, s.bc.Status.NextScheduleTime.Time), ""
	}
	return backupv1alpha1.TriggerAppChange, changeRetryKey(s.owner, s.app, p.Attempt), ""
}

// requestBackup asks the service to start a backup of the MyApp, with its
// content (content.go), unless this pass's list already shows the backup of
// key. It is the one place that starts a backup, whatever the trigger. That one was started
// by an earlier pass that never read the answer (a crash, a reply lost or
// spoiled after the service committed the start), and may have finished
// since: Start would only answer with it again, and while the service
// spoils its answers, never readably, so the change it backs up would wait
// for the fault to end. The list answers the same question.
func (r *Reconciler) requestBackup(ctx context.Context, s *scope, trigger backupv1alpha1.BackupTrigger,
	key string) (backup.Backup, error) {
	app := s.app
	if b, ok := listedWithKey(s.listed, s.owner, key); ok {
		ctrl.LoggerFrom(ctx).Info("Recording a backup the service lists under this start's key instead of starting it",
			"myapp", klog.KObj(app), "trigger", trigger, "idempotencyKey", key, "backupID", b.ID, "phase", b.Phase)
		return b, nil
	}
	content, err := r.backupContent(s, trigger, key)
	if err != nil {
		return backup.Backup{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Starting backup", "myapp", klog.KObj(app), "trigger", trigger, "idempotencyKey", key,
		"contentBytes", len(content))
	labels := startLabels(s, trigger)
	// Whose backup it is, readable without its content: a Restore from
	// storage passes over another installation's by it, unread.
	labels[backup.LabelOwnerID] = r.OwnerID
	return s.backups.Start(ctx, backup.StartRequest{
		App:            serviceAppName(app.Namespace, app.Name),
		Owner:          s.owner,
		IdempotencyKey: key,
		Labels:         labels,
		StartToken:     s.startToken,
		Namespace:      s.bc.Namespace,
		Payload:        content,
	})
}

// listedWithKey returns the backup of owner that backups lists under key.
func listedWithKey(backups []backup.Backup, owner, key string) (backup.Backup, bool) {
	for _, b := range backups {
		if b.Owner == owner && b.IdempotencyKey == key {
			return b, true
		}
	}
	return backup.Backup{}, false
}

func containsBackup(backups []backup.Backup, id string) bool {
	for _, b := range backups {
		if b.ID == id {
			return true
		}
	}
	return false
}

func countOwned(backups []backup.Backup, owner string) int {
	n := 0
	for _, b := range backups {
		if b.Owner == owner {
			n++
		}
	}
	return n
}

// deleteBackups deletes backups on behalf of this BackupConfig and returns
// how many are gone. A backup the service says belongs to someone else is
// left alone: it is not this BackupConfig's to delete.
func (r *Reconciler) deleteBackups(ctx context.Context, s *scope, backups []backup.Backup) (int, error) {
	log := ctrl.LoggerFrom(ctx)
	deleted := 0
	for _, b := range backups {
		log.V(1).Info("Deleting backup", "backupID", b.ID)
		err := s.backups.Delete(ctx, b.ID, s.owner)
		switch {
		case errors.Is(err, external.ErrConflict):
			log.Info("Not deleting a backup of another owner", "backupID", b.ID)
		case err != nil:
			return deleted, err
		default:
			deleted++
		}
	}
	return deleted, nil
}

// Labels stored with every backup, for people and tools reading the backup
// service. Ownership is the owner field and identity the idempotency key; the
// controller reads labels back only for a backup it adopts rather than
// starts (an earlier pass started it and could not record it): the MyApp's
// UID and generation say which change the backup covers, and the trigger
// what it was started for.
const (
	labelBackupConfig    = "backup.myapp.dev/backupconfig"
	labelNamespace       = "backup.myapp.dev/namespace"
	labelMyApp           = "backup.myapp.dev/myapp"
	labelMyAppUID        = "backup.myapp.dev/myapp-uid"
	labelMyAppGeneration = "backup.myapp.dev/myapp-generation"
	labelTrigger         = "backup.myapp.dev/trigger"
)

// ownerFor is the BackupConfig's identity in the backup service. It is built
// from the UID, not the name, so a BackupConfig re-created under the same
// name never lists, prunes or deletes the backups of the one before it.
func ownerFor(bc *backupv1alpha1.BackupConfig) string {
	return "backupconfig/" + string(bc.UID)
}

// The idempotency keys below are derived only from state that survives a
// restart, so a pass that starts a backup and dies before recording it is
// followed by a pass that derives the same key and adopts the same backup.
// Every key begins with the owner, so keys of two BackupConfigs never meet.

// changeKey names the backup of one generation of one MyApp. The MyApp's UID
// keeps a re-created MyApp's generation 1 apart from the old one's.
func changeKey(owner string, app *appsv1alpha1.MyApp) string {
	return fmt.Sprintf("%s/change/%s/%d", owner, app.UID, app.Generation)
}

// changeRetryKey names one attempt at the backup of a generation: the first
// is changeKey itself, a retry after a failure adds the attempt number, which
// status.lastBackup.attempt keeps across restarts.
func changeRetryKey(owner string, app *appsv1alpha1.MyApp, attempt int32) string {
	if attempt <= 1 {
		return changeKey(owner, app)
	}
	return fmt.Sprintf("%s/%d", changeKey(owner, app), attempt)
}

// scheduleKey names the backup of one schedule slot, the one stored in
// status.nextScheduleTime before the backup was started, of one MyApp. The
// MyApp is part of it because the service refuses a key used again for
// another app: after an answer lost at a slot and a change of spec.appRef,
// the slot's next start must be a new backup, not a refused one.
func scheduleKey(owner string, appUID types.UID, slot time.Time) string {
	return fmt.Sprintf("%s/schedule/%s/%s", owner, appUID, slot.UTC().Format("20060102T1504Z"))
}

// manualKey names the on-demand backup asked for with one value of the
// backup-now annotation: a retry, or a pass that could not record the
// start, gets the same backup back, never a second one. The value is
// hashed, so any value makes a key of bounded length and safe characters.
func manualKey(owner string, appUID types.UID, value string) string {
	sum := sha256.Sum256([]byte(value))
	return fmt.Sprintf("%s/manual/%s/%s", owner, appUID, hex.EncodeToString(sum[:12]))
}

// finalKeyPrefix is shared by every final backup attempt for one MyApp.
func finalKeyPrefix(owner string, appUID types.UID) string {
	return fmt.Sprintf("%s/final/%s/", owner, appUID)
}

// finalKey names one attempt at the final backup of a MyApp. The attempt
// number is one more than the failed attempts the service lists, so it too
// can be derived again after a restart.
func finalKey(owner string, appUID types.UID, attempt int) string {
	return finalKeyPrefix(owner, appUID) + strconv.Itoa(attempt)
}

// maxServiceAppName is the longest app name the backup service accepts: one
// DNS label.
const maxServiceAppName = 63

// serviceAppName names a MyApp in the backup service, which wants one DNS
// label. "<namespace>-<name>" keeps apps of the same name in two namespaces
// apart in the service's storage layout. That plain form is used only when it
// can be read back one way: the namespace has no '-', so the first '-' ends
// it, and the name has no '.', the one character replaced. Every other name,
// and one too long, ends in a hash of "<namespace>/<name>", so "web.v2" and
// "web-v2", or namespace "a-b" with app "c" and namespace "a" with app "b-c",
// stay apart.
func serviceAppName(namespace, name string) string {
	full := namespace + "-" + strings.ReplaceAll(name, ".", "-")
	if len(full) <= maxServiceAppName && !strings.Contains(namespace, "-") && !strings.Contains(name, ".") {
		return full
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return strings.TrimRight(full[:min(len(full), maxServiceAppName-len(suffix))], "-") + suffix
}

// followsRestore is the name of the Restore that created the MyApp when the
// backup this pass starts is the first of it (the status has not seen this
// incarnation of the MyApp yet), "" otherwise.
func followsRestore(s *scope) string {
	app := s.app
	if app == nil || s.bc.Status.ObservedAppUID == app.UID ||
		app.Annotations[backupv1alpha1.RestoreUIDAnnotation] == "" {
		return ""
	}
	return app.Labels[backupv1alpha1.RestoreNameLabel]
}

// backupLabels are the labels a backup is started with.
// startLabels are the labels of a backup this pass starts: backupLabels,
// and for the first backup of a restored MyApp the Restore's name.
func startLabels(s *scope, trigger backupv1alpha1.BackupTrigger) map[string]string {
	labels := backupLabels(s.bc, s.app, trigger)
	if restore := followsRestore(s); restore != "" {
		labels[labelFollowsRestore] = restore
	}
	return labels
}

func backupLabels(bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp, trigger backupv1alpha1.BackupTrigger) map[string]string {
	return map[string]string{
		labelBackupConfig:    bc.Name,
		labelNamespace:       bc.Namespace,
		labelMyApp:           app.Name,
		labelMyAppUID:        string(app.UID),
		labelMyAppGeneration: strconv.FormatInt(app.Generation, 10),
		labelTrigger:         string(trigger),
	}
}

// newBackupAnswer is what the backup service answered one step
// (askBackupService): what it listed, or the backup it started (or had
// started under the same key), with the trigger and, for a backup-now
// start, the annotation's value; or why it could not.
type newBackupAnswer struct {
	listed []backup.Backup
	// running is a backup of this BackupConfig the list shows RUNNING
	// and not timed out, nil for none.
	running     *backup.Backup
	started     backup.Backup
	trigger     backupv1alpha1.BackupTrigger
	manualValue string
	err         error
}

// finalAnswer is what the backup service answered the start of a final
// backup (askForFinal); started is nil when none was asked for.
type finalAnswer struct {
	started *backup.Backup
	err     error
}
