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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig/backupplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// This file turns what the backup service answered (a backup started,
// listed, polled; a refusal; a failure) into status, with the events,
// metrics and log lines that go with it. It is the one place that writes
// status.lastBackup, the MyApp generation a backup covers, the schedule's
// next slot and the failure to show; the phases call it with the answer.
// Events are noted in the scope (event, eventFor) and sent once the pass
// is over (sendEvents).

// event notes an event about the BackupConfig, related to its MyApp.
func (s *scope) event(eventType string, reason eventReason, action, format string, args ...any) {
	s.notes = append(s.notes, note{related: s.app, eventType: eventType, reason: reason, action: action,
		message: fmt.Sprintf(format, args...)})
}

// eventFor notes an event about the BackupConfig, related to app.
func (s *scope) eventFor(app *appsv1alpha1.MyApp, eventType string, reason eventReason, action, format string,
	args ...any) {
	s.notes = append(s.notes, note{related: app, eventType: eventType, reason: reason, action: action,
		message: fmt.Sprintf(format, args...)})
}

// recordNewBackupAnswer folds the answer to step p into status: the slot
// skipped (one that came while no backup may be taken, or whose start the
// service refused), the list kept and a backup still RUNNING followed, or
// the backup started recorded. A failure ends the pass, reported as
// serviceError decides.
func (r *Reconciler) recordNewBackupAnswer(ctx context.Context, s *scope, p backupplan.NewBackupPlan,
	a newBackupAnswer) (ctrl.Result, error) {
	var tooLarge *contentTooLargeError
	switch {
	case p.Action == backupplan.NewSkipSlot:
		r.skipSlot(ctx, s)
	case errors.As(a.err, &tooLarge):
		return r.contentProblem(ctx, s, tooLarge)
	case a.err != nil && p.Action == backupplan.NewStartSlot && isRefusal(a.err):
		r.skipRefusedSlot(ctx, s, a.err)
	case a.err != nil:
		return r.serviceError(ctx, s, newStepAction[p.Action], a.err)
	case p.Action == backupplan.NewList:
		r.recordListed(ctx, s, a.listed, a.running)
	default:
		if p.Action == backupplan.NewStartSlot {
			r.advanceSchedule(s)
		}
		if p.Action == backupplan.NewStartManual {
			s.bc.Status.LastHandledBackupNow = a.manualValue
		}
		r.startedBackup(ctx, s, a.started, a.trigger, p.Attempt)
	}
	return ctrl.Result{}, nil
}

// recordFinalAnswer carries the rest of a final-backup plan out: the
// service's answer to a start, the attempts the list showed, and what the
// status, the events and the next pass say. done says the final backup
// succeeded, was given up and said so, or is not owed, and the hold may
// go.
func (r *Reconciler) recordFinalAnswer(ctx context.Context, s *scope, run finalRun, a finalAnswer) (ctrl.Result, bool,
	error) {
	p := run.p
	switch p.Action {
	case backupplan.FinalNone:
		return ctrl.Result{}, p.Release, nil
	case backupplan.FinalDone:
		r.recordFinalListed(ctx, s, run.attempts.succeeded)
		return ctrl.Result{}, true, nil
	case backupplan.FinalWaitOther, backupplan.FinalWaitApp:
		// One backup at a time: the one running was started just before the
		// deletion and covers nearly the same state; the final one follows.
		// Or the namespace is terminating and the MyApp's deletion, which
		// its watch reports, has not begun yet.
		s.readiness.finalBackupPending = true
		return pass.RequeueAfter(r.BackupPollInterval), false, nil
	case backupplan.FinalFollow:
		s.readiness.finalBackupPending = true
		// Started by a pass that died before recording it, if status does
		// not name it.
		r.recordFinalListed(ctx, s, run.attempts.running)
		return pass.RequeueAfter(r.BackupPollInterval), false, nil
	case backupplan.FinalFailed:
		// Out of attempts: a person decides between fixing the service and
		// releasing the MyApp without a final backup. Nothing to requeue for;
		// the spec change or deletion that decides brings the object back.
		r.reportFinalBackupFailed(ctx, s, run.attempts)
		return ctrl.Result{}, false, nil
	case backupplan.FinalAbandon:
		r.reportFinalBackupAbandoned(ctx, s, r.giveUpWhy(p.GiveUp, run.attempts))
		if !p.Release {
			// The status says so before the MyApp goes: the next pass, soon,
			// reads it and releases.
			return ctrl.Result{RequeueAfter: abandonReportDelay}, false, nil
		}
		return ctrl.Result{}, true, nil
	}
	s.readiness.finalBackupPending = true
	var tooLarge *contentTooLargeError
	if errors.As(a.err, &tooLarge) {
		result, err := r.contentProblem(ctx, s, tooLarge)
		return result, false, err
	}
	if a.err != nil {
		result, err := r.serviceError(ctx, s, "starting a backup", a.err)
		return result, false, err
	}
	r.startedBackup(ctx, s, *a.started, backupv1alpha1.TriggerAppDeletion, 0)
	// The service may answer with an earlier attempt that already finished,
	// which a listing did not show yet: nothing else would bring the
	// BackupConfig back to look again.
	return pass.RequeueAfter(r.BackupPollInterval), false, nil
}

// recordFinalListed records a final backup the service listed, unless
// status names it already.
func (r *Reconciler) recordFinalListed(ctx context.Context, s *scope, b *backup.Backup) {
	if b == nil {
		return
	}
	if last := s.bc.Status.LastBackup; last == nil || last.ID != b.ID {
		r.recordBackup(ctx, s, *b, backupv1alpha1.TriggerAppDeletion)
	}
}

// abandonReportDelay is how soon the pass after a give-up's report comes.
const abandonReportDelay = time.Second

// giveUpWhy words why a final backup is given up.
func (r *Reconciler) giveUpWhy(why backupplan.GiveUp, attempts finalAttempts) string {
	switch why {
	case backupplan.GiveUpTimeLimit:
		return fmt.Sprintf("no final backup succeeded within %s of this BackupConfig's deletion", r.FinalBackupTeardownLimit)
	case backupplan.GiveUpAttempts:
		return fmt.Sprintf("the final backup failed %d times (last reason: %s)", attempts.failed,
			normalizeReason(attempts.lastFailure))
	}
	return "spec.suspend is set, so no final backup is started"
}

// reportFinalBackupAbandoned says that a BackupConfig being deleted, or a
// suspended one, gave its MyApp's final backup up: a Warning event (once), a
// log line, a metric and the Ready condition, which the pass writes before
// the MyApp is released.
func (r *Reconciler) reportFinalBackupAbandoned(ctx context.Context, s *scope, why string) {
	s.readiness.finalBackupAbandoned = why
	if s.readyWas == backupv1alpha1.FinalBackupAbandonedReason {
		return
	}
	finalBackupsAbandoned.Inc()
	ctrl.LoggerFrom(ctx).Info("Giving up the final backup, releasing the MyApp", "myapp", klog.KObj(s.app), "why", why)
	s.event(corev1.EventTypeWarning, eventFinalBackupAbandoned, actionStartBackup,
		"MyApp %s is released without a final backup: %s", s.app.Name, why)
}

// reportFinalBackupFailed says that the final backup failed for good and
// the MyApp stays held; the warning goes out when that trouble starts.
func (r *Reconciler) reportFinalBackupFailed(ctx context.Context, s *scope, attempts finalAttempts) {
	s.readiness.finalBackupFailures = attempts.failed
	s.readiness.finalBackupFailure = attempts.lastFailure
	if s.readyWas == backupv1alpha1.FinalBackupFailedReason {
		return
	}
	ctrl.LoggerFrom(ctx).Info("Final backup failed for good, holding the MyApp", "myapp", klog.KObj(s.app),
		"attempts", attempts.failed)
	s.event(corev1.EventTypeWarning, eventFinalBackupFailed, actionStartBackup,
		"The final backup of MyApp %s failed %d times (last reason: %s); the MyApp is held until "+
			"spec.backupBeforeAppDeletion is set to false or this BackupConfig is deleted",
		s.app.Name, attempts.failed, normalizeReason(attempts.lastFailure))
}

// newStepAction says what a step was doing, for the event of a failure.
var newStepAction = map[backupplan.NewBackupAction]string{
	backupplan.NewList:        "listing backups before starting one",
	backupplan.NewStartManual: "starting an on-demand backup",
	backupplan.NewStartSlot:   "starting a backup",
	backupplan.NewStartChange: "starting a backup",
}

// skipSlot moves the schedule past a slot that came while no backup may
// be taken: it is skipped, not saved up, so resuming never fires a backup
// by itself.
func (r *Reconciler) skipSlot(ctx context.Context, s *scope) {
	ctrl.LoggerFrom(ctx).Info("Skipping scheduled backup", "slot", s.bc.Status.NextScheduleTime,
		"suspended", s.bc.Spec.Suspend, "appExists", s.app != nil)
	if s.bc.Spec.Suspend && s.bc.Status.NextScheduleTime != nil {
		s.event(corev1.EventTypeNormal, eventScheduledBackupSkipped, "Skip",
			"The backup scheduled for %s is skipped because spec.suspend is set; it is not caught up on resume",
			s.bc.Status.NextScheduleTime.UTC().Format(time.RFC3339))
	}
	r.advanceSchedule(s)
}

// recordListed keeps what the service listed of this BackupConfig's
// backups for the pass (a start the list answers needs no call), and
// follows a backup still RUNNING instead of starting another: status may
// be stale (a pass that read the BackupConfig before its own last status
// write), and one backup runs at a time.
func (r *Reconciler) recordListed(ctx context.Context, s *scope, listed []backup.Backup, running *backup.Backup) {
	s.listed = listed
	if running == nil {
		return
	}
	ctrl.LoggerFrom(ctx).Info("Following a backup that is still running instead of starting another",
		"backupID", running.ID)
	s.readiness.refusedSlot = ""
	r.recordCoverage(s, *running, triggerOf(*running), false)
	r.recordBackup(ctx, s, *running, triggerOf(*running))
}

// skipRefusedSlot gives up on a schedule slot whose start the service
// refused: retrying the same request would be refused for ever and keep
// every later slot and change from being backed up. The slot is skipped, an
// event carries the service's answer, and the Ready condition says so until
// a backup is started again.
func (r *Reconciler) skipRefusedSlot(ctx context.Context, s *scope, err error) {
	when := s.bc.Status.NextScheduleTime.UTC().Format(time.RFC3339)
	ctrl.LoggerFrom(ctx).Info("Skipping scheduled backup the backup service refused to start", "slot", when,
		"reason", err.Error())
	s.event(corev1.EventTypeWarning, eventScheduledBackupSkipped, actionStartBackup,
		"Skipped the scheduled backup of %s: the backup service refused to start it: %v", when, err)
	s.readiness.refusedSlot = fmt.Sprintf("The backup service refused to start the scheduled backup of %s, so that "+
		"time was skipped; the %s event has its answer. The next scheduled time or change tries again.",
		when, eventScheduledBackupSkipped)
	r.advanceSchedule(s)
}

// advanceSchedule moves status.nextScheduleTime past every slot up to now, so
// however many slots were missed, one backup (or none) covers them all.
func (r *Reconciler) advanceSchedule(s *scope) {
	s.bc.Status.NextScheduleTime = &metav1.Time{Time: s.schedule.Next(s.now)}
	s.slotDue = false
}

// startedBackup records a backup the service answered a start with: started
// now, or adopted by its key. attempt numbers an on-change backup of one
// generation, or the failed change attempts a scheduled or backup-now
// backup carries; zero for others.
func (r *Reconciler) startedBackup(ctx context.Context, s *scope, b backup.Backup, trigger backupv1alpha1.BackupTrigger,
	attempt int32) {
	startedNow := startedByThisPass(s, b)
	if startedNow {
		backupsStarted.WithLabelValues(string(trigger)).Inc()
		// The first backup of a restored MyApp names its Restore in a
		// label (startLabels).
		if restore := b.Labels[labelFollowsRestore]; restore != "" {
			s.event(corev1.EventTypeNormal, eventBackupStarted, actionStartBackup,
				"Started backup %s of MyApp %s (trigger %s), its first since Restore %s restored it", b.ID, s.app.Name,
				trigger, restore)
		} else {
			s.event(corev1.EventTypeNormal, eventBackupStarted, actionStartBackup,
				"Started backup %s of MyApp %s (trigger %s)", b.ID, s.app.Name, trigger)
		}
	}
	s.readiness.refusedSlot = ""
	r.recordCoverage(s, b, trigger, startedNow)
	r.recordBackup(ctx, s, b, trigger)
	if attempt > 0 {
		s.bc.Status.LastBackup.Attempt = attempt
	}
}

// startedByThisPass reports whether the service started b for this pass,
// rather than answering with a backup an earlier pass started under the same
// key and could not record (a crash, a lost status write): the service
// stores the token of the start that created a backup, and this pass's
// starts send its own, which no other pass has. No clock is compared, so a
// service whose clock is behind or ahead of the manager's changes nothing.
func startedByThisPass(s *scope, b backup.Backup) bool {
	if last := s.bc.Status.LastBackup; last != nil && last.ID == b.ID {
		return false
	}
	return b.StartToken != "" && b.StartToken == s.startToken
}

// newStartToken returns a token no other pass has: 128 random bits.
func newStartToken() string {
	var b [16]byte
	// crypto/rand.Read never fails (Go 1.24 and later).
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// recordCoverage sets status.observedAppGeneration and observedAppUID from
// what a backup was really started for. A backup this pass started covers
// the MyApp as the pass read it. One adopted by its idempotency key was
// started by an earlier pass, of the MyApp as it was then; its labels say
// which generation that was, and it never counts for a newer one, so a
// change made meanwhile still gets its own backup. Observed values only
// move forward.
//
// A scheduled or backup-now backup covers a generation only once it
// succeeded. Started while a change was due with its slot, it serves that
// change too (one backup at a time); if it fails, the change is still
// owed, and its on-change backup starts, retried until one succeeds,
// rather than waiting for the next slot.
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
		// A backup the controller gave up on is recorded without a key, and
		// a scheduled or backup-now backup's key carries no attempts.
		recorded.Attempt = prev.Attempt
	}
	if !b.StartedAt.IsZero() {
		recorded.StartTime = pass.StatusTime(b.StartedAt)
	}
	if b.CompletedAt != nil {
		recorded.CompletionTime = pass.StatusTime(*b.CompletedAt)
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
		if trigger == backupv1alpha1.TriggerSchedule || trigger == backupv1alpha1.TriggerManual {
			// Its labels say which generation it was started of.
			r.recordCoverage(s, b, trigger, false)
		}
		log.Info("Backup succeeded", "backupID", b.ID, "trigger", trigger, "location", b.Location, "sizeBytes", b.SizeBytes)
		s.event(corev1.EventTypeNormal, eventBackupSucceeded, actionPollBackup,
			"Backup %s succeeded: %d bytes stored at %s", b.ID, b.SizeBytes, b.Location)
	default:
		s.readiness.failedBackup = recorded
		backupsFailed.WithLabelValues(string(trigger)).Inc()
		log.Info("Backup failed", "backupID", b.ID, "trigger", trigger, "reason", b.Reason)
		s.event(corev1.EventTypeWarning, eventBackupFailed, actionPollBackup,
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
	s.readiness.serviceCause = pass.BackupServiceCause(s.backups, err)
	if !isServiceReason(s.readyWas) {
		// One event when the trouble starts, with the raw error a person
		// needs; the condition keeps a stable summary.
		s.event(corev1.EventTypeWarning, eventBackupServiceFailed, actionCallService, "%s: %v", action, err)
	}
	var failures int32
	if f := s.bc.Status.BackupFailures; f != nil {
		failures = f.Count
	}
	s.readiness.serviceRetryIn = pass.BackoffDelay(failures, r.MaxRetryDelay)
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

// isRefusal reports whether the backup service refused a request as such
// (a 4xx other than throttling), which repeating it cannot change.
func isRefusal(err error) bool {
	return errors.Is(err, external.ErrInvalid) || errors.Is(err, external.ErrConflict)
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

// tryAgain says what happens after a failed backup of a trigger.
func tryAgain(trigger backupv1alpha1.BackupTrigger) string {
	switch trigger {
	case backupv1alpha1.TriggerAppChange:
		return "It is retried with backoff until a backup of this generation succeeds"
	case backupv1alpha1.TriggerAppDeletion:
		return "The final backup is tried again while attempts remain"
	default:
		return "The next trigger tries again"
	}
}

// maxReasonLength bounds the service's failure reason inside a condition
// message, so an unusually chatty service cannot bloat the object.
const maxReasonLength = 200

// normalizeReason makes a reason given by the backup service fit a
// condition message: one line, bounded, never empty.
func normalizeReason(reason string) string {
	reason = strings.Join(strings.Fields(reason), " ")
	reason = strings.TrimRight(reason, ".")
	if reason == "" {
		return "the backup service gave no reason"
	}
	if len(reason) > maxReasonLength {
		reason = reason[:maxReasonLength] + "…"
	}
	return reason
}

// finalRun is what a final-backup loop read and decided.
type finalRun struct {
	o        backupplan.FinalObservation
	p        backupplan.FinalPlan
	attempts finalAttempts
}
