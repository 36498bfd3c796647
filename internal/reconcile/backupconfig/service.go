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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// finalBackupRecorded reports whether status records a SUCCEEDED final backup
// of app. The backup service reported it so, and an eventually consistent
// listing that does not show it yet must not hold the MyApp again.
func finalBackupRecorded(status backupv1alpha1.BackupConfigStatus, app *appsv1alpha1.MyApp) bool {
	last := status.LastBackup
	return last != nil && last.Trigger == backupv1alpha1.TriggerAppDeletion &&
		last.Phase == backupv1alpha1.BackupSucceeded && status.ObservedAppUID == app.UID
}

// finalAttempts is what the backup service holds of one BackupConfig's final
// backups of one MyApp.
type finalAttempts struct {
	succeeded   *backup.Backup
	running     *backup.Backup
	failed      int
	lastFailure string
}

// tally is the plan's view of the attempts (final_plan.go).
func (a finalAttempts) tally() finalTally {
	return finalTally{succeeded: a.succeeded != nil, running: a.running != nil, failed: a.failed, lastFailure: a.lastFailure}
}

// listFinalAttempts reads the final backup attempts from the backup service
// rather than from status, because the service is the one record a crash
// cannot leave behind. An attempt still RUNNING after the backup timeout
// counts as failed, so a wedged job does not hold the MyApp for ever.
func (r *Reconciler) listFinalAttempts(ctx context.Context, s *scope, owner string, appUID types.UID) (finalAttempts, error) {
	backups, err := s.backups.List(ctx, owner)
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

// isRefusal reports whether the backup service refused a request as such
// (a 4xx other than throttling), which repeating it cannot change.
func isRefusal(err error) bool {
	return errors.Is(err, external.ErrInvalid) || errors.Is(err, external.ErrConflict)
}

// recordCoverage sets status.observedAppGeneration and observedAppUID from
// what a backup was really started for. A backup this pass started covers
// the MyApp as the pass read it. One adopted by its idempotency key was
// started by an earlier pass, of the MyApp as it was then; its labels say
// which generation that was, and it never counts for a newer one, so a
// change made meanwhile still gets its own backup. Observed values only
// move forward.
//
// A scheduled backup covers a generation only once it succeeded. Started
// while a change was due with its slot, it serves that change too (one
// backup at a time); if it fails, the change is still owed, and dueBackups
// starts its on-change backup, retried until one succeeds, rather than
// leaving it to the next slot.
func (r *Reconciler) recordCoverage(s *scope, b backup.Backup, trigger backupv1alpha1.BackupTrigger, startedNow bool) {
	app := s.app
	if app == nil || (trigger == backupv1alpha1.TriggerSchedule || trigger == backupv1alpha1.TriggerManual) &&
		b.Phase != backup.PhaseSucceeded {
		return
	}
	uid, generation, ok := coveredApp(b)
	switch {
	case ok:
	case startedNow:
		uid, generation = app.UID, app.Generation
	default:
		return
	}
	if uid != app.UID {
		return
	}
	status := &s.bc.Status
	if status.ObservedAppUID == uid && status.ObservedAppGeneration >= generation {
		return
	}
	status.ObservedAppGeneration = generation
	status.ObservedAppUID = uid
}

// startBackup starts a backup with an idempotency key decided before the
// call, and records what the service answered.
func (r *Reconciler) startBackup(ctx context.Context, s *scope, trigger backupv1alpha1.BackupTrigger,
	key string) (ctrl.Result, error) {
	b, err := r.requestBackup(ctx, s, trigger, key)
	if err != nil {
		return r.serviceError(ctx, s, "starting a backup", err)
	}
	return r.startedBackup(ctx, s, b, trigger, 0), nil
}

// requestBackup asks the service to start a backup of the MyApp, unless
// this pass's list already shows the backup of key. That one was started
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
	ctrl.LoggerFrom(ctx).Info("Starting backup", "myapp", klog.KObj(app), "trigger", trigger, "idempotencyKey", key)
	return s.backups.Start(ctx, backup.StartRequest{
		App:            serviceAppName(app.Namespace, app.Name),
		Owner:          s.owner,
		IdempotencyKey: key,
		Labels:         backupLabels(s.bc, app, trigger),
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

// startedBackup records a backup the service answered a start with: started
// now, or adopted by its key. attempt numbers an on-change backup of one
// generation, zero for other triggers.
func (r *Reconciler) startedBackup(ctx context.Context, s *scope, b backup.Backup, trigger backupv1alpha1.BackupTrigger,
	attempt int32) ctrl.Result {
	startedNow := startedByThisPass(s, b)
	if startedNow {
		backupsStarted.WithLabelValues(string(trigger)).Inc()
		r.event(s, corev1.EventTypeNormal, eventBackupStarted, actionStartBackup,
			"Started backup %s of MyApp %s (trigger %s)", b.ID, s.app.Name, trigger)
	}
	s.readiness.refusedSlot = ""
	r.recordCoverage(s, b, trigger, startedNow)
	r.recordBackup(ctx, s, b, trigger)
	if attempt > 0 {
		s.bc.Status.LastBackup.Attempt = attempt
	}
	if b.Phase == backup.PhaseRunning {
		return pass.RequeueAfter(r.BackupPollInterval)
	}
	return ctrl.Result{}
}

// startedByThisPass reports whether the service started b for this pass,
// rather than answering with a backup an earlier pass started under the same
// key and could not record (a crash, a lost status write): only a backup that
// status does not name yet and that started after this pass began is new.
// The service keeps milliseconds, so the pass start is cut to those.
func startedByThisPass(s *scope, b backup.Backup) bool {
	if last := s.bc.Status.LastBackup; last != nil && last.ID == b.ID {
		return false
	}
	return !b.StartedAt.Before(s.now.Truncate(time.Millisecond))
}

// recordBackup writes a backup as the service reported it into
// status.lastBackup and, the first time it is seen finished, counts and
// announces the outcome.
func (r *Reconciler) recordBackup(ctx context.Context, s *scope, b backup.Backup, trigger backupv1alpha1.BackupTrigger) {
	prev := s.bc.Status.LastBackup
	seenFinished := prev != nil && prev.ID == b.ID && prev.Phase != backupv1alpha1.BackupRunning

	recorded := &backupv1alpha1.BackupStatus{
		ID:        b.ID,
		Phase:     phaseOf(b.Phase),
		Trigger:   trigger,
		Attempt:   changeAttempt(b.IdempotencyKey),
		Location:  b.Location,
		SizeBytes: b.SizeBytes,
		Reason:    b.Reason,
	}
	if prev != nil && prev.ID == b.ID && recorded.Attempt == 0 {
		// A backup the controller gave up on is recorded without a key.
		recorded.Attempt = prev.Attempt
	}
	if !b.StartedAt.IsZero() {
		recorded.StartTime = statusTime(b.StartedAt)
	}
	if b.CompletedAt != nil {
		recorded.CompletionTime = statusTime(*b.CompletedAt)
	}
	s.bc.Status.LastBackup = recorded
	if seenFinished || b.Phase == backup.PhaseRunning {
		return
	}

	log := ctrl.LoggerFrom(ctx)
	var duration float64
	if b.CompletedAt != nil && !b.StartedAt.IsZero() {
		duration = b.CompletedAt.Sub(b.StartedAt).Seconds()
	}
	backupDuration.WithLabelValues(string(trigger), string(recorded.Phase)).Observe(duration)
	s.readiness.backupOutcome = recorded.Phase
	switch b.Phase {
	case backup.PhaseSucceeded:
		backupsSucceeded.WithLabelValues(string(trigger)).Inc()
		s.bc.Status.LastSuccessfulBackupTime = recorded.CompletionTime
		if trigger == backupv1alpha1.TriggerSchedule {
			// Its labels say which generation it was started of.
			r.recordCoverage(s, b, trigger, false)
		}
		log.Info("Backup succeeded", "backupID", b.ID, "trigger", trigger, "location", b.Location, "sizeBytes", b.SizeBytes)
		r.event(s, corev1.EventTypeNormal, eventBackupSucceeded, actionPollBackup,
			"Backup %s succeeded: %d bytes stored at %s", b.ID, b.SizeBytes, b.Location)
	default:
		s.readiness.failedBackupRetry = failedBackupRetry(s.bc, s.now, r.FailedBackupRetryDelay)
		backupsFailed.WithLabelValues(string(trigger)).Inc()
		log.Info("Backup failed", "backupID", b.ID, "trigger", trigger, "reason", b.Reason)
		r.event(s, corev1.EventTypeWarning, eventBackupFailed, actionPollBackup,
			"Backup %s failed: %s. %s", b.ID, normalizeReason(b.Reason), tryAgain(trigger))
	}
}

// serviceError records a failed call to the backup service for the Ready
// condition and picks how to retry, as the MyApp controller does. When the
// service said how long to wait (a 429, or a 503 whose Retry-After was
// longer than the client would sleep), the BackupConfig comes back after
// exactly that wait (capped by the client; a pass.Wait, which ends the pass),
// and the client holds every call back until then: the rate limiter's
// backoff knows nothing of the wait and could retry sooner. Any other
// failure, a throttle without a wait included, goes back to the rate limiter
// as an error, for exponential backoff.
func (r *Reconciler) serviceError(ctx context.Context, s *scope, action string, err error) (ctrl.Result, error) {
	s.readiness.serviceErr = err
	if !isServiceReason(readyReason(s.base)) {
		// One event when the trouble starts, with the raw error a person
		// needs; the condition keeps a stable summary.
		r.event(s, corev1.EventTypeWarning, eventBackupServiceFailed, actionCallService, "%s: %v", action, err)
	}
	s.readiness.serviceRetryIn = backoffDelay(s.bc.Status.BackupFailures, r.MaxRetryDelay)
	if delay, ok := external.RetryAfter(err); ok {
		s.readiness.serviceRetryIn = delay
		ctrl.LoggerFrom(ctx).Info("Backup service asked to wait", "action", action, "retryAfter", delay)
		// Not jittered: the service named the time, and a jitter added on
		// top would only make the wait longer than it asked for.
		return ctrl.Result{}, pass.Wait(delay, fmt.Errorf("%s: %w", action, err))
	}
	return ctrl.Result{}, fmt.Errorf("%s: %w", action, err)
}

func isServiceReason(reason string) bool {
	switch reason {
	case backupv1alpha1.BackupServiceUnavailableReason, backupv1alpha1.BackupServiceUnauthorizedReason,
		backupv1alpha1.BackupServiceErrorReason, backupv1alpha1.CleanupBlockedReason:
		return true
	}
	return false
}

func phaseOf(p backup.Phase) backupv1alpha1.BackupPhase {
	switch p {
	case backup.PhaseSucceeded:
		return backupv1alpha1.BackupSucceeded
	case backup.PhaseFailed:
		return backupv1alpha1.BackupFailed
	default:
		return backupv1alpha1.BackupRunning
	}
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

// statusTime is t as status stores it: metav1.Time keeps whole seconds
// only, so a time with a fraction would never equal the one read back, and
// every poll would write an unchanged status again.
func statusTime(t time.Time) *metav1.Time {
	return &metav1.Time{Time: t.UTC().Truncate(time.Second)}
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
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

// changeAttempt reads the attempt number back from a change key, 0 for any
// other key.
func changeAttempt(key string) int32 {
	_, rest, ok := strings.Cut(key, "/change/")
	if !ok {
		return 0
	}
	parts := strings.Split(rest, "/")
	switch len(parts) {
	case 2:
		return 1
	case 3:
		n, err := strconv.ParseInt(parts[2], 10, 32)
		if err != nil || n < 2 {
			return 0
		}
		return int32(n)
	}
	return 0
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

// backupLabels are the labels a backup is started with.
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

// coveredApp reads from a backup's labels which MyApp, and which generation
// of it, the backup was started for. ok is false for a backup that does not
// say, such as one started before these labels existed.
func coveredApp(b backup.Backup) (uid types.UID, generation int64, ok bool) {
	uid = types.UID(b.Labels[labelMyAppUID])
	generation, err := strconv.ParseInt(b.Labels[labelMyAppGeneration], 10, 64)
	if uid == "" || err != nil {
		return "", 0, false
	}
	return uid, generation, true
}

// triggerOf reads a backup's trigger from its labels, for a backup adopted
// rather than started; Schedule when the label says nothing usable, as that
// trigger claims nothing about the MyApp.
func triggerOf(b backup.Backup) backupv1alpha1.BackupTrigger {
	switch t := backupv1alpha1.BackupTrigger(b.Labels[labelTrigger]); t {
	case backupv1alpha1.TriggerAppChange, backupv1alpha1.TriggerAppDeletion, backupv1alpha1.TriggerManual:
		return t
	}
	return backupv1alpha1.TriggerSchedule
}
