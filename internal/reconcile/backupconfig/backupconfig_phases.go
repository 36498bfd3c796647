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

// Event reasons. Warnings are for what a person may have to act on.
const (
	eventBackupStarted       = "BackupStarted"
	eventBackupSucceeded     = "BackupSucceeded"
	eventBackupFailed        = "BackupFailed"
	eventBackupsPruned       = "BackupsPruned"
	eventBackupsDeleted      = "BackupsDeleted"
	eventBackupsRetained     = "BackupsRetained"
	eventFinalBackupFailed   = "FinalBackupFailed"
	eventMyAppReleased       = "MyAppReleased"
	eventInvalidSchedule     = "InvalidSchedule"
	eventBackupServiceFailed = "BackupServiceFailed"
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
		if readyReason(s.base) != InvalidScheduleReason {
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
func (r *Reconciler) reconcileRunningBackup(ctx context.Context, s *scope) (ctrl.Result, error) {
	last := s.bc.Status.LastBackup
	if last == nil || last.Phase != backupv1alpha1.BackupRunning {
		return ctrl.Result{}, nil
	}
	b, err := s.backups.Get(ctx, last.ID)
	switch {
	case errors.Is(err, external.ErrNotFound):
		if last.StartTime != nil && s.now.Sub(last.StartTime.Time) < backupVisibilityGrace {
			// The service may not show a backup it just started yet.
			return requeueAfter(r.pollInterval()), nil
		}
		ctrl.LoggerFrom(ctx).Info("Backup disappeared from the backup service before it finished", "backupID", last.ID)
		r.recordBackup(ctx, s, backup.Backup{
			ID: last.ID, Phase: backup.PhaseFailed, StartedAt: timeOf(last.StartTime), CompletedAt: &s.now,
			Reason: "the backup disappeared from the backup service before it finished",
		}, last.Trigger)
		return ctrl.Result{}, nil
	case err != nil:
		return r.serviceError(ctx, s, "polling backup "+last.ID, err)
	}
	r.recordBackup(ctx, s, b, last.Trigger)
	if b.Phase == backup.PhaseRunning {
		return requeueAfter(r.pollInterval()), nil
	}
	return ctrl.Result{}, nil
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

	onChange := s.bc.Spec.BackupOnChange == nil || *s.bc.Spec.BackupOnChange
	switch {
	case s.slotDue:
		// A scheduled backup also records the MyApp's generation, so it
		// covers a pending change as well.
		result, err := r.startBackup(ctx, s, backupv1alpha1.TriggerSchedule, scheduleKey(s.owner, s.bc.Status.NextScheduleTime.Time))
		if err != nil || s.readiness.serviceErr != nil {
			return result, err
		}
		r.advanceSchedule(s)
		return soonest(result, r.scheduleWakeup(s)), nil
	case onChange && !appBackedUp(s.bc.Status, app):
		result, err := r.startBackup(ctx, s, backupv1alpha1.TriggerAppChange, changeKey(s.owner, app))
		if err != nil || s.readiness.serviceErr != nil {
			return result, err
		}
		return soonest(result, r.scheduleWakeup(s)), nil
	}
	return r.scheduleWakeup(s), nil
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
	app := s.app
	ctrl.LoggerFrom(ctx).Info("Starting backup", "myapp", klog.KObj(app), "trigger", trigger, "idempotencyKey", key)
	b, err := s.backups.Start(ctx, backup.StartRequest{
		App:            serviceAppName(app.Namespace, app.Name),
		Owner:          s.owner,
		IdempotencyKey: key,
		Labels:         backupLabels(s.bc, app, trigger),
	})
	if err != nil {
		return r.serviceError(ctx, s, "starting a backup", err)
	}
	if startedByThisPass(s, b) {
		backupsStarted.WithLabelValues(string(trigger)).Inc()
		r.event(s, corev1.EventTypeNormal, eventBackupStarted, actionStartBackup,
			"Started backup %s of MyApp %s (trigger %s)", b.ID, app.Name, trigger)
	}
	s.bc.Status.ObservedAppGeneration = app.Generation
	s.bc.Status.ObservedAppUID = app.UID
	r.recordBackup(ctx, s, b, trigger)
	if b.Phase == backup.PhaseRunning {
		return requeueAfter(r.pollInterval()), nil
	}
	return ctrl.Result{}, nil
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
		Location:  b.Location,
		SizeBytes: b.SizeBytes,
		Reason:    b.Reason,
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
			"Backup %s failed: %s. The next trigger tries again", b.ID, normalizeReason(b.Reason))
	}
}

// reconcileRetention deletes this BackupConfig's successful backups beyond
// the newest spec.retention.keepLast. Only backups listed under its own owner
// are candidates, and the service refuses to delete anyone else's anyway.
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
	var succeeded []backup.Backup
	for _, b := range backups {
		if b.Owner == s.owner && b.Phase == backup.PhaseSucceeded {
			succeeded = append(succeeded, b)
		}
	}
	if len(succeeded) <= keep {
		return ctrl.Result{}, nil
	}
	sort.SliceStable(succeeded, func(i, j int) bool { return succeeded[i].StartedAt.Before(succeeded[j].StartedAt) })
	expired := succeeded[:len(succeeded)-keep]

	log := ctrl.LoggerFrom(ctx)
	log.Info("Deleting backups beyond retention", "count", len(expired), "keepLast", keep)
	deleted, err := r.deleteBackups(ctx, s, expired)
	backupsDeleted.WithLabelValues(deleteCauseRetention).Add(float64(deleted))
	if deleted > 0 {
		r.event(s, corev1.EventTypeNormal, eventBackupsPruned, actionDeleteBackups,
			"Deleted %d backups older than the newest %d (spec.retention.keepLast)", deleted, keep)
	}
	if err != nil {
		return r.serviceError(ctx, s, "deleting backups beyond retention", err)
	}
	return ctrl.Result{}, nil
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
	case BackupServiceUnavailableReason, BackupServiceUnauthorizedReason, BackupServiceErrorReason, CleanupBlockedReason:
		return true
	}
	return false
}

// event records an event about the BackupConfig, related to its MyApp.
func (r *Reconciler) event(s *scope, eventType, reason, action, note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(s.bc, s.related(), eventType, reason, action, note, args...)
}

// eventFor records an event about the BackupConfig, related to a given MyApp.
func (r *Reconciler) eventFor(bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp, eventType, reason, action,
	note string, args ...any) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(bc, app, eventType, reason, action, note, args...)
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
