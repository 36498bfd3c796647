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
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// eventReason is the reason of an event. Warnings are for what a person may
// have to act on.
type eventReason string

// Event reasons.
const (
	eventBackupStarted          eventReason = "BackupStarted"
	eventBackupSucceeded        eventReason = "BackupSucceeded"
	eventBackupFailed           eventReason = "BackupFailed"
	eventBackupsPruned          eventReason = "BackupsPruned"
	eventBackupsDeleted         eventReason = "BackupsDeleted"
	eventBackupsRetained        eventReason = "BackupsRetained"
	eventFinalBackupFailed      eventReason = "FinalBackupFailed"
	eventMyAppReleased          eventReason = "MyAppReleased"
	eventInvalidSchedule        eventReason = "InvalidSchedule"
	eventBackupServiceFailed    eventReason = "BackupServiceFailed"
	eventScheduledBackupSkipped eventReason = "ScheduledBackupSkipped"
)

// Event actions, what the controller was doing.
const (
	actionStartBackup   = "StartBackup"
	actionPollBackup    = "PollBackup"
	actionDeleteBackups = "DeleteBackups"
	actionReleaseMyApp  = "ReleaseMyApp"
	actionSchedule      = "Schedule"
	actionCallService   = "CallBackupService"
)

// defaultKeepLast mirrors the API default, for objects stored before it.
const defaultKeepLast = 7

// reconcileSchedule parses spec.schedule and decides whether a slot is due.
// It starts nothing: reconcileNewBackup decides, once it knows whether a
// backup may be started at all.
func (r *Reconciler) reconcileSchedule(_ context.Context, s *scope) (ctrl.Result, error) {
	if s.bc.Spec.Schedule == "" {
		s.bc.Status.NextScheduleTime = nil
		return ctrl.Result{}, nil
	}
	sched, err := parseSchedule(s.bc.Spec.Schedule)
	if err == nil {
		var slot metav1.Time
		slot.Time, s.slotDue, err = dueSlot(sched, s.bc.Status.NextScheduleTime, s.now)
		s.bc.Status.NextScheduleTime = &slot
	}
	if err != nil {
		// No retry can fix a schedule; the spec change that fixes it brings
		// the BackupConfig back. Until then no new backup is started, so a
		// broken spec is noticed rather than half followed. Every other phase
		// still runs: a running backup is still followed, and a MyApp held
		// for a final backup must still be backed up or released, through
		// the documented ways out too. reconcileNormal reports the error at
		// the end of the pass.
		s.bc.Status.NextScheduleTime = nil
		s.slotDue = false
		s.readiness.invalidSchedule = err.Error()
		s.scheduleErr = reconcile.TerminalError(fmt.Errorf("spec.schedule %q: %w", s.bc.Spec.Schedule, err))
		if readyReason(s.base) != backupv1alpha1.InvalidScheduleReason {
			r.event(s, corev1.EventTypeWarning, eventInvalidSchedule, actionSchedule,
				"spec.schedule %q is not usable: %v", s.bc.Spec.Schedule, err)
		}
		return ctrl.Result{}, nil
	}
	s.schedule = sched
	return ctrl.Result{}, nil
}

// reconcileRunningBackup polls the last backup while it runs. The backup
// service emits no events, so a jittered poll is how completion is learned.
// A backup that runs longer than the backup timeout, or that the service
// keeps answering 404 for, is given up and recorded FAILED, so a wedged job
// blocks nothing for ever.
func (r *Reconciler) reconcileRunningBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	last := s.bc.Status.LastBackup
	if last == nil || last.Phase != backupv1alpha1.BackupRunning {
		r.missing.forget(s.key)
		return ctrl.Result{}, nil
	}
	b, err := s.backups.Get(ctx, last.ID)
	switch {
	case errors.Is(err, external.ErrNotFound):
		return r.missingBackup(ctx, s), nil
	case err != nil:
		return r.serviceError(ctx, s, "polling backup "+last.ID, err)
	}
	r.missing.forget(s.key)
	if b.Phase == backup.PhaseRunning && r.timedOut(s, b.StartedAt) {
		ctrl.LoggerFrom(ctx).Info("Backup did not finish in time, treating it as failed", "backupID", b.ID,
			"timeout", r.backupTimeout())
		b = r.timedOutBackup(s, b)
	}
	r.recordBackup(ctx, s, b, last.Trigger)
	if b.Phase == backup.PhaseRunning {
		return requeueAfter(r.pollInterval()), nil
	}
	return ctrl.Result{}, nil
}

// missingBackup handles a poll the service answered 404 for. The service is
// eventually consistent, and a proxy in front of it may answer 404 for a
// while, so the backup counts as gone only after missingBackupPolls polls in
// a row found it missing over at least backupVisibilityGrace, measured on
// the controller's own clock from the first of them. The service's start
// time plays no part, so a clock that differs from the service's cannot
// fail a live backup. Once gone it is recorded FAILED, and a failed
// on-change backup is retried like any other.
func (r *Reconciler) missingBackup(ctx context.Context, s *scope) ctrl.Result {
	last := s.bc.Status.LastBackup
	polls, missingFor := r.missing.observe(s.key, last.ID, s.now)
	if polls < missingBackupPolls || missingFor < backupVisibilityGrace {
		ctrl.LoggerFrom(ctx).V(1).Info("Backup not found in the backup service, polling again", "backupID", last.ID,
			"polls", polls, "missingFor", missingFor)
		return requeueAfter(r.pollInterval())
	}
	r.missing.forget(s.key)
	ctrl.LoggerFrom(ctx).Info("Backup disappeared from the backup service before it finished", "backupID", last.ID,
		"polls", polls, "missingFor", missingFor)
	r.recordBackup(ctx, s, backup.Backup{
		ID: last.ID, Phase: backup.PhaseFailed, StartedAt: timeOf(last.StartTime), CompletedAt: &s.now,
		Reason: fmt.Sprintf("the backup disappeared from the backup service before it finished "+
			"(not found by %d polls over %s)", polls, missingFor.Round(time.Second)),
	}, last.Trigger)
	return ctrl.Result{}
}

// timedOut reports whether a backup started at started has been running
// longer than the backup timeout, by the controller's clock. The timeout is
// hours, so a difference between the controller's and the service's clocks
// hardly matters.
func (r *Reconciler) timedOut(s *scope, started time.Time) bool {
	return !started.IsZero() && s.now.Sub(started) >= r.backupTimeout()
}

// timedOutBackup is b as the controller records it once it gave up on it.
func (r *Reconciler) timedOutBackup(s *scope, b backup.Backup) backup.Backup {
	b.Phase = backup.PhaseFailed
	b.CompletedAt = &s.now
	b.Reason = fmt.Sprintf("the backup did not finish within %s (--backup-timeout); it is treated as failed",
		r.backupTimeout())
	return b
}

// reconcileNewBackup starts a scheduled or on-change backup when one is due,
// and computes when the next slot wakes the controller.
func (r *Reconciler) reconcileNewBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	if s.scheduleErr != nil {
		// Nothing new is started while spec.schedule is unusable.
		return ctrl.Result{}, nil
	}
	app := s.app
	if s.bc.Spec.Suspend || app == nil || !app.DeletionTimestamp.IsZero() {
		if s.slotDue {
			// A slot that passes while no backup may be taken is skipped, not
			// saved up: resuming should not fire a backup by itself.
			ctrl.LoggerFrom(ctx).Info("Skipping scheduled backup", "slot", s.bc.Status.NextScheduleTime,
				"suspended", s.bc.Spec.Suspend, "appExists", app != nil)
			r.advanceSchedule(s)
		}
		return r.scheduleWakeup(s), nil
	}
	if last := s.bc.Status.LastBackup; last != nil && last.Phase == backupv1alpha1.BackupRunning {
		// One backup at a time; the poll of the running one comes back here,
		// and a due slot or a new generation is still due then.
		return ctrl.Result{}, nil
	}
	// A refused slot is reported until a backup is started again, or until
	// there is no schedule any more.
	if c := meta.FindStatusCondition(s.base.Status.Conditions, backupv1alpha1.ReadyCondition); c != nil &&
		c.Reason == backupv1alpha1.ScheduledBackupRefusedReason && s.schedule != nil {
		s.readiness.refusedSlot = c.Message
	}

	due := r.dueBackups(s)
	if !s.slotDue && !due.change && !due.retry {
		return soonest(due.later, r.scheduleWakeup(s)), nil
	}
	if result, stop, err := r.followRunningBackup(ctx, s); stop {
		return result, err
	}
	if s.slotDue {
		result, done, err := r.startScheduledBackup(ctx, s, &due)
		if done || err != nil {
			return result, err
		}
	}
	attempt := int32(1)
	if due.retry {
		attempt = max(s.bc.Status.LastBackup.Attempt, 1) + 1
	}
	b, err := r.requestBackup(ctx, s, backupv1alpha1.TriggerAppChange, changeRetryKey(s.owner, app, attempt))
	if err != nil {
		return r.serviceError(ctx, s, "starting a backup", err)
	}
	return soonest(r.startedBackup(ctx, s, b, backupv1alpha1.TriggerAppChange, attempt), r.scheduleWakeup(s)), nil
}

// dueChange is what reconcileNewBackup owes the MyApp besides a schedule
// slot.
type dueChange struct {
	// change is set when the MyApp's generation has no backup started yet.
	change bool
	// retry is set when the on-change backup of this generation failed and
	// its retry is due.
	retry bool
	// later is when a retry that is not due yet comes back.
	later ctrl.Result
}

// dueBackups decides which on-change backup is due, with backupOnChange.
func (r *Reconciler) dueBackups(s *scope) dueChange {
	if s.bc.Spec.BackupOnChange != nil && !*s.bc.Spec.BackupOnChange {
		return dueChange{}
	}
	if !appBackedUp(s.bc.Status, s.app) {
		return dueChange{change: true}
	}
	if !changeBackupFailed(s.bc.Status) {
		return dueChange{}
	}
	if delay := r.retryDueIn(s); delay > 0 {
		return dueChange{later: ctrl.Result{RequeueAfter: delay}}
	}
	return dueChange{retry: true}
}

// followRunningBackup keeps one backup at a time even when status is stale
// (a pass that read the BackupConfig before its own last status write): the
// service is asked for a backup of this BackupConfig still running, and that
// one is followed instead of starting another. stop says the pass ends here:
// a running backup was adopted, or the service could not be asked.
func (r *Reconciler) followRunningBackup(ctx context.Context, s *scope) (result ctrl.Result, stop bool, err error) {
	backups, err := s.backups.List(ctx, s.owner)
	if err != nil {
		result, err = r.serviceError(ctx, s, "listing backups before starting one", err)
		return result, true, err
	}
	running := r.runningBackup(s, backups)
	if running == nil {
		return ctrl.Result{}, false, nil
	}
	ctrl.LoggerFrom(ctx).Info("Following a backup that is still running instead of starting another",
		"backupID", running.ID)
	s.readiness.refusedSlot = ""
	r.recordCoverage(s, *running, false)
	r.recordBackup(ctx, s, *running, triggerOf(*running))
	return requeueAfter(r.pollInterval()), true, nil
}

// startScheduledBackup starts the backup of the due slot. done says the
// pass is over; otherwise the on-change backup in due, which it may have
// updated, is started next.
func (r *Reconciler) startScheduledBackup(ctx context.Context, s *scope, due *dueChange) (ctrl.Result, bool, error) {
	slot := s.bc.Status.NextScheduleTime.Time
	b, err := r.requestBackup(ctx, s, backupv1alpha1.TriggerSchedule, scheduleKey(s.owner, s.app.UID, slot))
	switch {
	case isRefusal(err):
		r.skipRefusedSlot(ctx, s, slot, err)
		r.advanceSchedule(s)
	case err != nil:
		result, err := r.serviceError(ctx, s, "starting a backup", err)
		return result, true, err
	default:
		// A scheduled backup also records the MyApp's generation, so it
		// covers a pending change as well, unless it was adopted from an
		// earlier pass that started it before the change.
		r.advanceSchedule(s)
		result := r.startedBackup(ctx, s, b, backupv1alpha1.TriggerSchedule, 0)
		if b.Phase == backup.PhaseRunning || !r.dueBackups(s).change {
			return soonest(result, r.scheduleWakeup(s)), true, nil
		}
		// The adopted backup finished already, and no event would bring
		// the change back before the next slot: its backup starts now.
		*due = dueChange{change: true}
	}
	if !due.change && !due.retry {
		return soonest(due.later, r.scheduleWakeup(s)), true, nil
	}
	return ctrl.Result{}, false, nil
}

// appBackedUp reports whether a backup was started of the MyApp as it is:
// of its generation, and of this MyApp rather than an earlier one of the
// same name, whose generation may well be the same. A status written before
// observedAppUID existed has no UID and counts as not backed up, since it
// cannot tell the two apart. That costs at most one backup per
// BackupConfig, and none when the last backup was the on-change backup of
// this generation: its change key is the same, so the service answers with
// that backup instead of starting another.
func appBackedUp(status backupv1alpha1.BackupConfigStatus, app *appsv1alpha1.MyApp) bool {
	return status.ObservedAppUID == app.UID && status.ObservedAppGeneration == app.Generation
}

// changeBackupFailed reports whether the last backup was an on-change backup
// that failed. With appBackedUp it is one of the MyApp as it is, so it is
// tried again: the next edit, the other trigger, may never come.
func changeBackupFailed(status backupv1alpha1.BackupConfigStatus) bool {
	last := status.LastBackup
	return last != nil && last.Trigger == backupv1alpha1.TriggerAppChange && last.Phase == backupv1alpha1.BackupFailed
}

// retryDueIn is how long a retry of the failed on-change backup in
// status.lastBackup still waits: the retry delay after the first failure,
// doubled for each further one, up to maxFailedBackupRetryDelay, counted
// from when the failed attempt finished.
func (r *Reconciler) retryDueIn(s *scope) time.Duration {
	last := s.bc.Status.LastBackup
	delay := r.failedBackupRetryDelay()
	for i := int32(1); i < last.Attempt && delay < maxFailedBackupRetryDelay; i++ {
		delay *= 2
	}
	delay = min(delay, maxFailedBackupRetryDelay)
	finished := timeOf(last.CompletionTime)
	if finished.IsZero() {
		finished = timeOf(last.StartTime)
	}
	return finished.Add(delay).Sub(s.now)
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

// isRefusal reports whether the backup service refused a request as such
// (a 4xx other than throttling), which repeating it cannot change.
func isRefusal(err error) bool {
	return errors.Is(err, external.ErrInvalid) || errors.Is(err, external.ErrConflict)
}

// skipRefusedSlot gives up on a schedule slot whose start the service
// refused: retrying the same request would be refused for ever and keep
// every later slot and change from being backed up. The slot is skipped, an
// event carries the service's answer, and the Ready condition says so until
// a backup is started again.
func (r *Reconciler) skipRefusedSlot(ctx context.Context, s *scope, slot time.Time, err error) {
	when := slot.UTC().Format(time.RFC3339)
	ctrl.LoggerFrom(ctx).Info("Skipping scheduled backup the backup service refused to start", "slot", when,
		"reason", err.Error())
	r.event(s, corev1.EventTypeWarning, eventScheduledBackupSkipped, actionStartBackup,
		"Skipped the scheduled backup of %s: the backup service refused to start it: %v", when, err)
	s.readiness.refusedSlot = fmt.Sprintf("The backup service refused to start the scheduled backup of %s, so that "+
		"time was skipped; the %s event has its answer. The next scheduled time or change tries again.",
		when, eventScheduledBackupSkipped)
}

// recordCoverage sets status.observedAppGeneration and observedAppUID from
// what a backup was really started for. A backup this pass started covers
// the MyApp as the pass read it. One adopted by its idempotency key was
// started by an earlier pass, of the MyApp as it was then; its labels say
// which generation that was, and it never counts for a newer one, so a
// change made meanwhile still gets its own backup. Observed values only
// move forward.
func (r *Reconciler) recordCoverage(s *scope, b backup.Backup, startedNow bool) {
	app := s.app
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

// advanceSchedule moves status.nextScheduleTime past every slot up to now, so
// however many slots were missed, one backup (or none) covers them all.
func (r *Reconciler) advanceSchedule(s *scope) {
	s.bc.Status.NextScheduleTime = &metav1.Time{Time: s.schedule.Next(s.now)}
	s.slotDue = false
}

// scheduleWakeup sleeps until the next slot, just after it, instead of
// polling the clock.
func (r *Reconciler) scheduleWakeup(s *scope) ctrl.Result {
	next := s.bc.Status.NextScheduleTime
	if next == nil || s.slotDue {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: next.Sub(s.now) + wait.Jitter(scheduleWakeSlack, 1)}
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

// requestBackup asks the service to start a backup of the MyApp.
func (r *Reconciler) requestBackup(ctx context.Context, s *scope, trigger backupv1alpha1.BackupTrigger,
	key string) (backup.Backup, error) {
	app := s.app
	ctrl.LoggerFrom(ctx).Info("Starting backup", "myapp", klog.KObj(app), "trigger", trigger, "idempotencyKey", key)
	return s.backups.Start(ctx, backup.StartRequest{
		App:            serviceAppName(app.Namespace, app.Name),
		Owner:          s.owner,
		IdempotencyKey: key,
		Labels:         backupLabels(s.bc, app, trigger),
	})
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
	r.recordCoverage(s, b, startedNow)
	r.recordBackup(ctx, s, b, trigger)
	if attempt > 0 {
		s.bc.Status.LastBackup.Attempt = attempt
	}
	if b.Phase == backup.PhaseRunning {
		return requeueAfter(r.pollInterval())
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
	switch b.Phase {
	case backup.PhaseSucceeded:
		backupsSucceeded.WithLabelValues(string(trigger)).Inc()
		s.bc.Status.LastSuccessfulBackupTime = recorded.CompletionTime
		log.Info("Backup succeeded", "backupID", b.ID, "trigger", trigger, "location", b.Location, "sizeBytes", b.SizeBytes)
		r.event(s, corev1.EventTypeNormal, eventBackupSucceeded, actionPollBackup,
			"Backup %s succeeded: %d bytes stored at %s", b.ID, b.SizeBytes, b.Location)
	default:
		backupsFailed.WithLabelValues(string(trigger)).Inc()
		log.Info("Backup failed", "backupID", b.ID, "trigger", trigger, "reason", b.Reason)
		r.event(s, corev1.EventTypeWarning, eventBackupFailed, actionPollBackup,
			"Backup %s failed: %s. %s", b.ID, normalizeReason(b.Reason), tryAgain(trigger))
	}
}

// reconcileRetention deletes this BackupConfig's backups that retention no
// longer keeps: successful backups beyond the newest spec.retention.keepLast,
// and failed ones by the rule of expiredFailures. Only backups listed under
// its own owner are candidates, and the service refuses to delete anyone
// else's anyway.
func (r *Reconciler) reconcileRetention(ctx context.Context, s *scope) (ctrl.Result, error) {
	if last := s.bc.Status.LastBackup; last != nil && last.Phase == backupv1alpha1.BackupRunning {
		// Pruning waits for the running backup, so it never counts one that
		// may yet fail among the kept.
		return ctrl.Result{}, nil
	}
	keep := int(s.bc.Spec.Retention.KeepLast)
	if keep < 1 {
		keep = defaultKeepLast
	}
	backups, err := s.backups.List(ctx, s.owner)
	if err != nil {
		return r.serviceError(ctx, s, "listing backups for retention", err)
	}
	var succeeded, failed []backup.Backup
	for _, b := range backups {
		if b.Owner != s.owner {
			continue
		}
		switch {
		case b.Phase == backup.PhaseSucceeded:
			succeeded = append(succeeded, b)
		case r.countsAsFailed(s, b) && !r.neededAttempt(s, b):
			failed = append(failed, b)
		}
	}
	byStart := func(list []backup.Backup) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].StartedAt.Before(list[j].StartedAt) })
	}
	byStart(succeeded)
	byStart(failed)
	var expired []backup.Backup
	if len(succeeded) > keep {
		expired = append(expired, succeeded[:len(succeeded)-keep]...)
	}
	expiredFailed := expiredFailures(succeeded, failed, keep)
	expired = append(expired, expiredFailed...)
	if len(expired) == 0 {
		return ctrl.Result{}, nil
	}

	log := ctrl.LoggerFrom(ctx)
	log.Info("Deleting backups beyond retention", "count", len(expired), "failed", len(expiredFailed), "keepLast", keep)
	deleted, err := r.deleteBackups(ctx, s, expired)
	backupsDeleted.WithLabelValues(deleteCauseRetention).Add(float64(deleted))
	if deleted > 0 {
		r.event(s, corev1.EventTypeNormal, eventBackupsPruned, actionDeleteBackups,
			"Deleted %d backups beyond retention: successful ones older than the newest %d (spec.retention.keepLast), "+
				"failed ones older than the newest successful one or beyond the newest %d failures", deleted, keep, keep)
	}
	if err != nil {
		return r.serviceError(ctx, s, "deleting backups beyond retention", err)
	}
	return ctrl.Result{}, nil
}

// expiredFailures is the retention rule for failed backups, both lists
// oldest first: a failed backup older than the newest successful one is
// deleted, since that success supersedes it, and of the failures after it
// only the newest keep stay, for a person to look into. Failures cannot pile
// up in the service however long a backup target stays broken.
func expiredFailures(succeeded, failed []backup.Backup, keep int) []backup.Backup {
	var expired []backup.Backup
	if len(succeeded) > 0 {
		newest := succeeded[len(succeeded)-1].StartedAt
		for len(failed) > 0 && failed[0].StartedAt.Before(newest) {
			expired = append(expired, failed[0])
			failed = failed[1:]
		}
	}
	if len(failed) > keep {
		expired = append(expired, failed[:len(failed)-keep]...)
	}
	return expired
}

// countsAsFailed reports whether b failed, or ran out of time and is treated
// as failed.
func (r *Reconciler) countsAsFailed(s *scope, b backup.Backup) bool {
	return b.Phase == backup.PhaseFailed || b.Phase == backup.PhaseRunning && r.timedOut(s, b.StartedAt)
}

// neededAttempt reports whether b is a failed final backup attempt of the
// MyApp that still exists: the attempts are counted from the service's
// listing, so pruning one would start it again.
func (r *Reconciler) neededAttempt(s *scope, b backup.Backup) bool {
	return s.app != nil && strings.HasPrefix(b.IdempotencyKey, finalKeyPrefix(s.owner, s.app.UID))
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

// serviceError records a failed call to the backup service for the Ready
// condition and picks how to retry, as the MyApp controller does. When the
// service said how long to wait (a 429, or a 503 whose Retry-After was
// longer than the client would sleep), the BackupConfig comes back after
// exactly that wait (capped by the client), and the client holds every call
// back until then: the rate limiter's backoff knows nothing of the wait and
// could retry sooner. Any
// other failure, a throttle without a wait included, goes back to the rate
// limiter as an error, for exponential backoff.
func (r *Reconciler) serviceError(ctx context.Context, s *scope, action string, err error) (ctrl.Result, error) {
	s.readiness.serviceErr = err
	if !isServiceReason(readyReason(s.base)) {
		// One event when the trouble starts, with the raw error a person
		// needs; the condition keeps a stable summary.
		r.event(s, corev1.EventTypeWarning, eventBackupServiceFailed, actionCallService, "%s: %v", action, err)
	}
	if delay, ok := external.RetryAfter(err); ok {
		ctrl.LoggerFrom(ctx).Info("Backup service asked to wait", "action", action, "retryAfter", delay)
		// Not jittered: the service named the time, and a jitter added on
		// top would only make the wait longer than it asked for.
		return ctrl.Result{RequeueAfter: delay}, nil
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

// event records an event about the BackupConfig, related to its MyApp.
func (r *Reconciler) event(s *scope, eventType string, reason eventReason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(s.bc, s.related(), eventType, string(reason), action, note, args...)
}

// eventFor records an event about the BackupConfig, related to a given MyApp.
func (r *Reconciler) eventFor(bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp, eventType string,
	reason eventReason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(bc, app, eventType, string(reason), action, note, args...)
}

func readyReason(bc *backupv1alpha1.BackupConfig) string {
	if c := meta.FindStatusCondition(bc.Status.Conditions, backupv1alpha1.ReadyCondition); c != nil {
		return c.Reason
	}
	return ""
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
