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
	"net/http"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// phaseNow is where every phase test's clock starts: a quarter past an
// hourly slot, so a slot of "0 * * * *" is either due (10:00) or 45 minutes
// away (11:00).
var phaseNow = time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)

// slotAt is an hourly slot on phaseNow's day.
func slotAt(hour int) time.Time {
	return time.Date(2026, 3, 1, hour, 0, 0, 0, time.UTC)
}

// appRefIndexed serves the spec.appRef.name index that SetupWithManager
// registers in the manager's cache. The phase tests read the API server
// directly, which serves no such field selector for a custom resource, so
// the index is answered by listing the namespace and filtering.
type appRefIndexed struct {
	client.Client
}

func (c appRefIndexed) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	var name string
	var indexed bool
	if o.FieldSelector != nil {
		name, indexed = o.FieldSelector.RequiresExactMatch(AppRefIndexKey)
	}
	if !indexed {
		return c.Client.List(ctx, list, opts...)
	}
	bcs, ok := list.(*backupv1alpha1.BackupConfigList)
	if !ok {
		return fmt.Errorf("index %s is on BackupConfigs, not %T", AppRefIndexKey, list)
	}
	if err := c.Client.List(ctx, bcs, client.InNamespace(o.Namespace)); err != nil {
		return err
	}
	bcs.Items = slices.DeleteFunc(bcs.Items, func(bc backupv1alpha1.BackupConfig) bool {
		return bc.Spec.AppRef.Name != name
	})
	return nil
}

// newPhaseEnv is a test env whose backup service and Reconciler share one
// fake clock, so a backup finishes only when a case steps the clock, and a
// Reconciler built as SetupWithManager builds it, without a manager.
func newPhaseEnv(t *testing.T) (*testEnv, *clocktesting.FakeClock, *Reconciler) {
	t.Helper()
	clk := clocktesting.NewFakeClock(phaseNow)
	e := newTestEnv(t, func(o *simulator.Options) { o.Clock = clk })
	r := &Reconciler{Base: pass.Base{Client: appRefIndexed{Client: e.c}, APIReader: e.c, Clock: clk}, Backups: e.backups,
		OwnerID: testOwnerID, RenderChildren: myapp.RenderChildren}
	r.setDefaults()
	return e, clk, r
}

// newPassScope builds the scope as Reconcile does, from bc as read with its
// status, and with app as reconcileApp would have read it (nil when
// missing).
func newPassScope(r *Reconciler, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp) *scope {
	return &scope{
		bc:        bc,
		base:      bc.DeepCopy(),
		app:       app,
		key:       client.ObjectKeyFromObject(bc),
		backups:   r.Backups,
		owner:     ownerFor(bc),
		now:       r.currentTime(),
		readiness: readiness{appName: bc.Spec.AppRef.Name},
	}
}

// readyAfter is the Ready condition the deferred status write derives from
// what the phases left in s; it sets the readiness fields patchStatus takes
// from the spec, and leaves s alone.
func readyAfter(s *scope) metav1.Condition {
	bc := s.bc.DeepCopy()
	rd := s.readiness
	rd.deleting = !bc.DeletionTimestamp.IsZero()
	rd.suspended = bc.Spec.Suspend
	setReadyCondition(bc, rd, bc.Generation, s.now)
	return condition(bc, backupv1alpha1.ReadyCondition)
}

// requeue is the range a phase's RequeueAfter must fall in; the zero value
// expects a zero result.
type requeue struct{ min, max time.Duration }

// pollRequeue is a jittered poll of a running backup.
func pollRequeue(r *Reconciler) requeue {
	return requeue{r.BackupPollInterval, r.BackupPollInterval + time.Duration(pass.JitterFactor*float64(r.BackupPollInterval))}
}

// wakeupIn is the requeue for a slot d away: just after it.
func wakeupIn(d time.Duration) requeue {
	return requeue{d + scheduleWakeSlack, d + 2*scheduleWakeSlack}
}

// exactly is a requeue the code computes without jitter.
func exactly(d time.Duration) requeue { return requeue{d, d} }

func expectRequeue(t *testing.T, result ctrl.Result, want requeue) {
	t.Helper()
	g := NewWithT(t)
	if want == (requeue{}) {
		g.Expect(result).To(Equal(ctrl.Result{}), "a zero result")
		return
	}
	g.Expect(result.RequeueAfter).To(And(
		BeNumerically(">=", want.min), BeNumerically("<=", want.max)), "RequeueAfter")
}

// errorKind is what a phase's error tells pass.Run to do.
type errorKind int

const (
	noError errorKind = iota
	waitingError
	terminalError
	plainError
)

// expectErrorKind checks the kind of err: a *pass.Waiting with its After, a
// terminal error, a plain one for the backoff, or none; serviceKind is the
// backup service's classification a plain or waiting error must carry.
func expectErrorKind(t *testing.T, err error, want errorKind, after time.Duration, serviceKind external.Kind) {
	t.Helper()
	g := NewWithT(t)
	var waiting *pass.Waiting
	isWaiting := errors.As(err, &waiting)
	isTerminal := errors.Is(err, reconcile.TerminalError(nil))
	switch want {
	case noError:
		g.Expect(err).NotTo(HaveOccurred())
		return
	case waitingError:
		g.Expect(isWaiting).To(BeTrue(), "%v is a *pass.Waiting", err)
		g.Expect(waiting.After).To(Equal(after), "the wait the service asked for")
	case terminalError:
		g.Expect(isTerminal).To(BeTrue(), "%v is terminal", err)
		g.Expect(isWaiting).To(BeFalse(), "%v is not a *pass.Waiting", err)
	case plainError:
		g.Expect(err).To(HaveOccurred())
		g.Expect(isWaiting).To(BeFalse(), "%v is not a *pass.Waiting", err)
		g.Expect(isTerminal).To(BeFalse(), "%v is not terminal", err)
	}
	if serviceKind != "" {
		g.Expect(external.KindOf(err)).To(Equal(serviceKind), "the service's kind of %v", err)
	}
}

// expectReady checks the Ready condition's reason, and that it is True
// exactly when the reason says all is well.
func expectReady(t *testing.T, ready metav1.Condition, reason string) {
	t.Helper()
	g := NewWithT(t)
	status := metav1.ConditionFalse
	if reason == backupv1alpha1.ReadyReason {
		status = metav1.ConditionTrue
	}
	g.Expect(ready.Reason).To(Equal(reason), "Ready reason; message %q", ready.Message)
	g.Expect(ready.Status).To(Equal(status), "Ready status")
}

// backedUp is the status a BackupConfig has once the on-change backup of
// app's current generation succeeded.
func backedUp(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
	started := metav1.NewTime(phaseNow.Add(-time.Hour))
	return backupv1alpha1.BackupConfigStatus{
		ObservedAppGeneration: app.Generation,
		ObservedAppUID:        app.UID,
		LastBackup: &backupv1alpha1.BackupStatus{ID: "bk-earlier", Phase: backupv1alpha1.BackupSucceeded,
			Trigger: backupv1alpha1.TriggerAppChange, Attempt: 1, StartTime: &started, CompletionTime: &started},
	}
}

// withSlot is status with status.nextScheduleTime at slot.
func withSlot(status backupv1alpha1.BackupConfigStatus, slot time.Time) backupv1alpha1.BackupConfigStatus {
	status.NextScheduleTime = &metav1.Time{Time: slot}
	return status
}

// withSuspend sets spec.suspend, which no fixture option does.
func withSuspend() fixtures.BackupConfigOption {
	return func(bc *backupv1alpha1.BackupConfig) { bc.Spec.Suspend = true }
}

// seedBackup starts a backup of app owned by bc, failing with failReason
// when one is given, and steps the clock past its end, so the next seed
// starts a minute later and the service lists them in that order.
func seedBackup(t *testing.T, e *testEnv, clk *clocktesting.FakeClock, bc *backupv1alpha1.BackupConfig,
	app *appsv1alpha1.MyApp, key, failReason string) string {
	t.Helper()
	if failReason != "" {
		e.sim.FailBackups(failReason, 1)
	}
	b, err := e.backups.Start(t.Context(), backup.StartRequest{
		App: serviceAppName(app.Namespace, app.Name), Owner: ownerFor(bc), IdempotencyKey: key,
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	clk.Step(time.Minute)
	return b.ID
}

// deleteHeld deletes obj, which a finalizer keeps, and reads it back with
// its deletion timestamp.
func deleteHeld(t *testing.T, e *testEnv, obj client.Object) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(obj.GetFinalizers()).NotTo(BeEmpty(), "a finalizer keeps %s while it is deleted", obj.GetName())
	g.Expect(e.c.Delete(t.Context(), obj)).To(Succeed())
	g.Expect(e.get(obj)()).To(Succeed())
	g.Expect(obj.GetDeletionTimestamp()).NotTo(BeNil())
}

func TestReconcileNewBackupPhase(t *testing.T) {
	type lastBackup struct {
		phase   backupv1alpha1.BackupPhase
		trigger backupv1alpha1.BackupTrigger
		attempt int32
	}
	failedChange := func(app *appsv1alpha1.MyApp, finishedAgo time.Duration) backupv1alpha1.BackupConfigStatus {
		status := backedUp(app)
		finished := metav1.NewTime(phaseNow.Add(-finishedAgo))
		status.LastBackup.Phase, status.LastBackup.Reason = backupv1alpha1.BackupFailed, "disk full"
		status.LastBackup.StartTime, status.LastBackup.CompletionTime = &finished, &finished
		return status
	}
	tests := []struct {
		name string
		opts []fixtures.BackupConfigOption
		// status is what earlier passes left; nil for a new BackupConfig.
		status func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus
		fault  func(sim *simulator.Server)
		// wantStarts and wantLists are the requests the service saw.
		wantStarts, wantLists int
		// wantKey is the idempotency key of the one backup started.
		wantKey func(owner string, app *appsv1alpha1.MyApp) string
		// wantLast is status.lastBackup after the phase; nil expects it
		// unchanged.
		wantLast *lastBackup
		// wantObserved expects status to cover app's generation; otherwise
		// the observed generation and UID are unchanged.
		wantObserved bool
		// wantNext is status.nextScheduleTime after the phase.
		wantNext    *time.Time
		wantResult  func(r *Reconciler) requeue
		wantErr     errorKind
		wantWait    time.Duration
		wantKind    external.Kind
		wantRefused string
		wantReady   string
	}{
		{
			name:       "a generation without a backup starts one",
			wantStarts: 1, wantLists: 1,
			wantKey:      changeKey,
			wantLast:     &lastBackup{backupv1alpha1.BackupRunning, backupv1alpha1.TriggerAppChange, 1},
			wantObserved: true,
			wantResult:   pollRequeue,
			wantReady:    backupv1alpha1.ReadyReason,
		},
		{
			name:       "a generation already backed up starts nothing",
			status:     backedUp,
			wantResult: func(*Reconciler) requeue { return requeue{} },
			wantReady:  backupv1alpha1.ReadyReason,
		},
		{
			name: "with no slot due it sleeps until the next one",
			opts: []fixtures.BackupConfigOption{fixtures.WithSchedule("0 * * * *")},
			status: func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
				return withSlot(backedUp(app), slotAt(11))
			},
			wantNext:   new(slotAt(11)),
			wantResult: func(*Reconciler) requeue { return wakeupIn(45 * time.Minute) },
			wantReady:  backupv1alpha1.ReadyReason,
		},
		{
			name:       "suspended starts nothing for a new generation",
			opts:       []fixtures.BackupConfigOption{withSuspend()},
			wantResult: func(*Reconciler) requeue { return requeue{} },
			wantReady:  backupv1alpha1.SuspendedReason,
		},
		{
			name: "suspended skips a due slot instead of saving it up",
			opts: []fixtures.BackupConfigOption{withSuspend(), fixtures.WithSchedule("0 * * * *")},
			status: func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
				return withSlot(backedUp(app), slotAt(10))
			},
			wantNext:   new(slotAt(11)),
			wantResult: func(*Reconciler) requeue { return wakeupIn(45 * time.Minute) },
			wantReady:  backupv1alpha1.SuspendedReason,
		},
		{
			name: "a due slot starts a scheduled backup",
			opts: []fixtures.BackupConfigOption{fixtures.WithSchedule("0 * * * *")},
			status: func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
				return withSlot(backedUp(app), slotAt(10))
			},
			wantStarts: 1, wantLists: 1,
			wantKey: func(owner string, app *appsv1alpha1.MyApp) string {
				return scheduleKey(owner, app.UID, slotAt(10))
			},
			wantLast:     &lastBackup{backupv1alpha1.BackupRunning, backupv1alpha1.TriggerSchedule, 0},
			wantObserved: true,
			wantNext:     new(slotAt(11)),
			wantResult:   pollRequeue,
			wantReady:    backupv1alpha1.ReadyReason,
		},
		{
			// One backup at a time: the scheduled one serves the change too,
			// and covers it once it succeeded.
			name: "a due slot with a new generation starts one backup for both",
			opts: []fixtures.BackupConfigOption{fixtures.WithSchedule("0 * * * *")},
			status: func(*appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
				return withSlot(backupv1alpha1.BackupConfigStatus{}, slotAt(10))
			},
			wantStarts: 1, wantLists: 1,
			wantKey: func(owner string, app *appsv1alpha1.MyApp) string {
				return scheduleKey(owner, app.UID, slotAt(10))
			},
			wantLast:     &lastBackup{backupv1alpha1.BackupRunning, backupv1alpha1.TriggerSchedule, 0},
			wantObserved: false, // only once it succeeded
			wantNext:     new(slotAt(11)),
			wantResult:   pollRequeue,
			wantReady:    backupv1alpha1.ReadyReason,
		},
		{
			name: "a failed on-change backup waits out its retry delay",
			status: func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
				return failedChange(app, 20*time.Second)
			},
			wantResult: func(*Reconciler) requeue { return exactly(DefaultFailedBackupRetryDelay - 20*time.Second) },
			wantReady:  backupv1alpha1.ReadyReason,
		},
		{
			name: "a failed on-change backup is retried once its delay is over",
			status: func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
				return failedChange(app, 2*time.Minute)
			},
			wantStarts: 1, wantLists: 1,
			wantKey: func(owner string, app *appsv1alpha1.MyApp) string {
				return changeRetryKey(owner, app, 2)
			},
			wantLast:     &lastBackup{backupv1alpha1.BackupRunning, backupv1alpha1.TriggerAppChange, 2},
			wantObserved: true,
			wantResult:   pollRequeue,
			wantReady:    backupv1alpha1.ReadyReason,
		},
		{
			name:       "an unusable schedule starts nothing",
			opts:       []fixtures.BackupConfigOption{fixtures.WithSchedule("0 0 30 2 *")},
			wantResult: func(*Reconciler) requeue { return requeue{} },
			wantReady:  backupv1alpha1.InvalidScheduleReason,
		},
		{
			name: "a throttled start waits as long as the service asked",
			fault: func(sim *simulator.Server) {
				sim.SetFault(simulator.ServiceBackup, simulator.OpStart,
					simulator.Fault{Status: http.StatusTooManyRequests, RetryAfter: 3 * time.Second})
			},
			wantStarts: 1, wantLists: 1,
			wantResult: func(*Reconciler) requeue { return requeue{} },
			wantErr:    waitingError, wantWait: 3 * time.Second, wantKind: external.KindThrottled,
			wantReady: backupv1alpha1.BackupServiceUnavailableReason,
		},
		{
			// The listing that guards against a second backup fails first,
			// so no start is even tried.
			name:       "a service that is down fails the phase for the backoff",
			fault:      func(sim *simulator.Server) { sim.SetOutage(simulator.ServiceBackup, true) },
			wantStarts: 0, wantLists: 1,
			wantResult: func(*Reconciler) requeue { return requeue{} },
			wantErr:    plainError, wantKind: external.KindTransient,
			wantReady: backupv1alpha1.BackupServiceUnavailableReason,
		},
		{
			name: "a refused scheduled start skips its slot",
			opts: []fixtures.BackupConfigOption{fixtures.WithSchedule("0 * * * *")},
			status: func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
				return withSlot(backedUp(app), slotAt(10))
			},
			fault: func(sim *simulator.Server) {
				sim.SetFault(simulator.ServiceBackup, simulator.OpStart, simulator.Fault{Status: http.StatusUnprocessableEntity})
			},
			wantStarts: 1, wantLists: 1,
			wantNext:    new(slotAt(11)),
			wantResult:  func(*Reconciler) requeue { return wakeupIn(45 * time.Minute) },
			wantRefused: "2026-03-01T10:00:00Z",
			wantReady:   backupv1alpha1.ScheduledBackupRefusedReason,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			e, _, r := newPhaseEnv(t)
			app := e.newApp("web")
			bc := e.newBackupConfig("web", "web", tt.opts...)
			e.create(app, bc)
			if tt.status != nil {
				bc.Status = tt.status(app)
			}
			if tt.fault != nil {
				tt.fault(e.sim)
			}
			s := newPassScope(r, bc, app)
			// reconcileSchedule runs before this phase and decides the slot;
			// only an unusable schedule fails it, terminally.
			_, err := r.reconcileSchedule(t.Context(), s)
			if tt.wantReady == backupv1alpha1.InvalidScheduleReason {
				expectErrorKind(t, err, terminalError, 0, "")
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}

			result, err := r.reconcileNewBackup(t.Context(), s)

			expectErrorKind(t, err, tt.wantErr, tt.wantWait, tt.wantKind)
			expectRequeue(t, result, tt.wantResult(r))
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpStart)).To(Equal(tt.wantStarts), "starts")
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpList)).To(Equal(tt.wantLists), "lists")

			status := s.bc.Status
			own := e.ownBackups(bc)
			if tt.wantKey != nil {
				g.Expect(own).To(HaveLen(1))
				g.Expect(own[0].IdempotencyKey).To(Equal(tt.wantKey(s.owner, app)))
				g.Expect(status.LastBackup).NotTo(BeNil())
				g.Expect(status.LastBackup.ID).To(Equal(own[0].ID))
			} else {
				g.Expect(own).To(BeEmpty())
			}
			if tt.wantLast != nil {
				g.Expect(status.LastBackup).To(And(
					HaveField("Phase", tt.wantLast.phase),
					HaveField("Trigger", tt.wantLast.trigger),
					HaveField("Attempt", tt.wantLast.attempt),
				))
			} else {
				g.Expect(status.LastBackup).To(Equal(s.base.Status.LastBackup))
			}
			if tt.wantObserved {
				g.Expect(status.ObservedAppGeneration).To(Equal(app.Generation))
				g.Expect(status.ObservedAppUID).To(Equal(app.UID))
			} else {
				g.Expect(status.ObservedAppGeneration).To(Equal(s.base.Status.ObservedAppGeneration))
				g.Expect(status.ObservedAppUID).To(Equal(s.base.Status.ObservedAppUID))
			}
			if tt.wantNext != nil {
				g.Expect(status.NextScheduleTime).NotTo(BeNil())
				g.Expect(status.NextScheduleTime.UTC()).To(Equal(*tt.wantNext))
				g.Expect(s.slotDue).To(BeFalse(), "the slot is dealt with")
			} else {
				g.Expect(status.NextScheduleTime).To(BeNil())
			}

			if tt.wantErr == noError {
				g.Expect(s.readiness.serviceErr).NotTo(HaveOccurred())
			} else {
				g.Expect(s.readiness.serviceErr).To(HaveOccurred())
				g.Expect(external.KindOf(s.readiness.serviceErr)).To(Equal(tt.wantKind))
			}
			if tt.wantRefused != "" {
				g.Expect(s.readiness.refusedSlot).To(ContainSubstring(tt.wantRefused))
			} else {
				g.Expect(s.readiness.refusedSlot).To(BeEmpty())
			}
			ready := readyAfter(s)
			expectReady(t, ready, tt.wantReady)
			if tt.wantErr == waitingError {
				g.Expect(ready.Message).To(ContainSubstring("asked the operator to wait"))
			}
		})
	}
}

func TestReconcileRetentionPhase(t *testing.T) {
	// A seed is one backup the service holds before the pass, oldest first.
	type seed struct {
		failed bool
		// final makes it an attempt at the MyApp's final backup.
		final bool
	}
	ok, failed, failedFinal := seed{}, seed{failed: true}, seed{failed: true, final: true}
	running := func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
		status := backedUp(app)
		status.LastBackup.Phase = backupv1alpha1.BackupRunning
		return status
	}
	tests := []struct {
		name     string
		keepLast int32
		seeds    []seed
		// status is what earlier passes left; backedUp when nil.
		status func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus
		fault  func(sim *simulator.Server)
		// wantKept are the indexes of the seeds still in the service.
		wantKept               []int
		wantLists, wantDeletes int
		wantErr                errorKind
		wantKind               external.Kind
		wantReady              string
	}{
		{
			name:     "successes beyond keepLast go, oldest first",
			keepLast: 2, seeds: []seed{ok, ok, ok, ok},
			wantKept:  []int{2, 3},
			wantLists: 1, wantDeletes: 2,
			wantReady: backupv1alpha1.ReadyReason,
		},
		{
			name:     "the newest success stays with keepLast 1",
			keepLast: 1, seeds: []seed{ok, ok, failed},
			wantKept:  []int{1, 2},
			wantLists: 1, wantDeletes: 1,
			wantReady: backupv1alpha1.ReadyReason,
		},
		{
			name:     "failures older than the newest success go",
			keepLast: 3, seeds: []seed{failed, ok, failed, ok, failed},
			wantKept:  []int{1, 3, 4},
			wantLists: 1, wantDeletes: 2,
			wantReady: backupv1alpha1.ReadyReason,
		},
		{
			name:     "failures after the newest success beyond keepLast go",
			keepLast: 1, seeds: []seed{ok, failed, failed},
			wantKept:  []int{0, 2},
			wantLists: 1, wantDeletes: 1,
			wantReady: backupv1alpha1.ReadyReason,
		},
		{
			name:     "nothing goes within the limit",
			keepLast: 3, seeds: []seed{ok, ok, failed},
			wantKept:  []int{0, 1, 2},
			wantLists: 1,
			wantReady: backupv1alpha1.ReadyReason,
		},
		{
			// Its attempts are counted from the listing, so pruning one
			// would start it again.
			name:     "a failed final attempt of the MyApp stays",
			keepLast: 3, seeds: []seed{failedFinal, failed, ok},
			wantKept:  []int{0, 2},
			wantLists: 1, wantDeletes: 1,
			wantReady: backupv1alpha1.ReadyReason,
		},
		{
			name:     "a running backup postpones pruning",
			keepLast: 1, seeds: []seed{ok, ok, ok},
			status:    running,
			wantKept:  []int{0, 1, 2},
			wantReady: backupv1alpha1.ReadyReason,
		},
		{
			name:     "a listing failure is a service error",
			keepLast: 1, seeds: []seed{ok, ok, ok},
			fault: func(sim *simulator.Server) {
				sim.SetFault(simulator.ServiceBackup, simulator.OpList, simulator.Fault{Status: http.StatusServiceUnavailable})
			},
			wantKept:  []int{0, 1, 2},
			wantLists: 1,
			wantErr:   plainError, wantKind: external.KindTransient,
			wantReady: backupv1alpha1.BackupServiceUnavailableReason,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			e, clk, r := newPhaseEnv(t)
			app := e.newApp("web")
			bc := e.newBackupConfig("web", "web", fixtures.WithKeepLast(tt.keepLast))
			e.create(app, bc)
			ids := make([]string, 0, len(tt.seeds))
			for i, sd := range tt.seeds {
				key, reason := fmt.Sprintf("%s/seed/%d", ownerFor(bc), i), ""
				if sd.final {
					key = finalKey(ownerFor(bc), app.UID, i+1)
				}
				if sd.failed {
					reason = "disk full"
				}
				ids = append(ids, seedBackup(t, e, clk, bc, app, key, reason))
			}
			status := backedUp(app)
			if tt.status != nil {
				status = tt.status(app)
			}
			bc.Status = status
			if tt.fault != nil {
				tt.fault(e.sim)
			}
			s := newPassScope(r, bc, app)

			result, err := r.reconcileRetention(t.Context(), s)

			expectErrorKind(t, err, tt.wantErr, 0, tt.wantKind)
			expectRequeue(t, result, requeue{})
			want := make([]string, 0, len(tt.wantKept))
			for _, i := range tt.wantKept {
				want = append(want, ids[i])
			}
			g.Expect(backupIDs(e.ownBackups(bc))).To(Equal(want), "the backups kept, of %v", ids)
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpList)).To(Equal(tt.wantLists), "lists")
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpDelete)).To(Equal(tt.wantDeletes), "deletes")
			// Pruning touches the service only; status stays as it was.
			g.Expect(s.bc.Status).To(Equal(s.base.Status))
			if tt.wantErr == noError {
				g.Expect(s.readiness.serviceErr).NotTo(HaveOccurred())
			} else {
				g.Expect(external.KindOf(s.readiness.serviceErr)).To(Equal(tt.wantKind))
			}
			expectReady(t, readyAfter(s), tt.wantReady)
		})
	}
}

func TestReconcileFinalBackupPhase(t *testing.T) {
	const failure = "snapshot volume unavailable"
	tests := []struct {
		name string
		opts []fixtures.BackupConfigOption
		// appDeleting deletes the MyApp, which its finalizers keep.
		appDeleting bool
		// seed puts attempts the service holds before the pass.
		seed  func(t *testing.T, e *testEnv, clk *clocktesting.FakeClock, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp)
		fault func(sim *simulator.Server)
		// wantStarts and wantLists are the requests of the phase itself.
		wantStarts, wantLists int
		// wantKey is the idempotency key of the attempt the phase started.
		wantKey func(owner string, app *appsv1alpha1.MyApp) string
		// wantLast is status.lastBackup's phase and trigger; empty expects
		// it unchanged.
		wantLast        backupv1alpha1.BackupPhase
		wantPending     bool
		wantFailures    int
		wantReleased    bool
		wantResult      func(r *Reconciler) requeue
		wantErr         errorKind
		wantKind        external.Kind
		wantReady       string
		wantReadyDetail string
	}{
		{
			name:       "a MyApp not being deleted is left alone",
			opts:       []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			wantResult: func(*Reconciler) requeue { return requeue{} },
			wantReady:  backupv1alpha1.ReadyReason,
		},
		{
			name:        "without backupBeforeAppDeletion a MyApp being deleted is left alone",
			appDeleting: true,
			wantResult:  func(*Reconciler) requeue { return requeue{} },
			wantReady:   backupv1alpha1.ReadyReason,
		},
		{
			name:        "a held MyApp being deleted gets its final backup",
			opts:        []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			appDeleting: true,
			wantStarts:  1, wantLists: 1,
			wantKey: func(owner string, app *appsv1alpha1.MyApp) string {
				return finalKey(owner, app.UID, 1)
			},
			wantLast:    backupv1alpha1.BackupRunning,
			wantPending: true,
			wantResult:  pollRequeue,
			wantReady:   backupv1alpha1.FinalBackupInProgressReason,
		},
		{
			name:        "a failed attempt is followed by the next one",
			opts:        []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			appDeleting: true,
			seed: func(t *testing.T, e *testEnv, clk *clocktesting.FakeClock, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp) {
				seedBackup(t, e, clk, bc, app, finalKey(ownerFor(bc), app.UID, 1), failure)
			},
			wantStarts: 1, wantLists: 1,
			wantKey: func(owner string, app *appsv1alpha1.MyApp) string {
				return finalKey(owner, app.UID, 2)
			},
			wantLast:    backupv1alpha1.BackupRunning,
			wantPending: true,
			wantResult:  pollRequeue,
			wantReady:   backupv1alpha1.FinalBackupInProgressReason,
		},
		{
			// Suspend never blocks a deletion: the final backup is given
			// up, said first, and the next pass releases the MyApp.
			name:            "suspended gives the final backup up without a backup",
			opts:            []fixtures.BackupConfigOption{fixtures.WithFinalBackup(), withSuspend()},
			appDeleting:     true,
			wantLists:       1,
			wantResult:      func(*Reconciler) requeue { return requeue{abandonReportDelay, abandonReportDelay} },
			wantReady:       backupv1alpha1.FinalBackupAbandonedReason,
			wantReadyDetail: "spec.suspend",
		},
		{
			name:        "attempts run out and a person is asked to decide",
			opts:        []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			appDeleting: true,
			seed: func(t *testing.T, e *testEnv, clk *clocktesting.FakeClock, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp) {
				for attempt := 1; attempt <= DefaultFinalBackupAttempts; attempt++ {
					seedBackup(t, e, clk, bc, app, finalKey(ownerFor(bc), app.UID, attempt), failure)
				}
			},
			wantLists:       1,
			wantFailures:    DefaultFinalBackupAttempts,
			wantResult:      func(*Reconciler) requeue { return requeue{} },
			wantReady:       backupv1alpha1.FinalBackupFailedReason,
			wantReadyDetail: failure,
		},
		{
			// Status records the success once it is read, so releasing the
			// hold asks the service nothing more.
			name:        "a succeeded final backup releases the MyApp",
			opts:        []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			appDeleting: true,
			seed: func(t *testing.T, e *testEnv, clk *clocktesting.FakeClock, bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp) {
				seedBackup(t, e, clk, bc, app, finalKey(ownerFor(bc), app.UID, 1), "")
			},
			wantLists:    1,
			wantLast:     backupv1alpha1.BackupSucceeded,
			wantReleased: true,
			wantResult:   func(*Reconciler) requeue { return requeue{} },
			wantReady:    backupv1alpha1.ReadyReason,
		},
		{
			name:        "a service that is down keeps the MyApp held",
			opts:        []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			appDeleting: true,
			fault:       func(sim *simulator.Server) { sim.SetOutage(simulator.ServiceBackup, true) },
			wantLists:   1,
			wantPending: true,
			wantResult:  func(*Reconciler) requeue { return requeue{} },
			wantErr:     plainError, wantKind: external.KindTransient,
			wantReady: backupv1alpha1.BackupServiceUnavailableReason,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			e, clk, r := newPhaseEnv(t)
			// The DNS finalizer stands for the MyApp's own controller, so
			// the MyApp stays to be looked at once this one releases it.
			app := e.newApp("web", dnsCleanupFinalizer, backupv1alpha1.FinalBackupFinalizer)
			bc := e.newBackupConfig("web", "web", tt.opts...)
			e.create(app, bc)
			if tt.appDeleting {
				deleteHeld(t, e, app)
			}
			if tt.seed != nil {
				tt.seed(t, e, clk, bc, app)
			}
			seeded := backupIDs(e.ownBackups(bc))
			e.sim.ResetRequestCounts()
			// The on-change backup of the MyApp's generation came first.
			bc.Status = backedUp(app)
			if tt.fault != nil {
				tt.fault(e.sim)
			}
			s := newPassScope(r, bc, app)

			result, err := r.reconcileFinalBackup(t.Context(), s)

			expectErrorKind(t, err, tt.wantErr, 0, tt.wantKind)
			expectRequeue(t, result, tt.wantResult(r))
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpStart)).To(Equal(tt.wantStarts), "starts")
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpList)).To(Equal(tt.wantLists), "lists")

			own := e.ownBackups(bc)
			g.Expect(own).To(HaveLen(len(seeded) + tt.wantStarts))
			if tt.wantKey != nil {
				started := own[len(own)-1]
				g.Expect(started.IdempotencyKey).To(Equal(tt.wantKey(s.owner, app)))
				g.Expect(started.Labels).To(HaveKeyWithValue(labelTrigger, string(backupv1alpha1.TriggerAppDeletion)))
				g.Expect(s.bc.Status.LastBackup.ID).To(Equal(started.ID))
			}
			if tt.wantLast != "" {
				g.Expect(s.bc.Status.LastBackup).To(And(
					HaveField("Phase", tt.wantLast),
					HaveField("Trigger", backupv1alpha1.TriggerAppDeletion),
				))
			} else {
				g.Expect(s.bc.Status.LastBackup).To(Equal(s.base.Status.LastBackup))
			}
			if tt.wantLast == backupv1alpha1.BackupSucceeded {
				g.Expect(s.bc.Status.LastBackup.ID).To(Equal(seeded[0]))
				g.Expect(s.bc.Status.LastSuccessfulBackupTime).NotTo(BeNil())
			}

			g.Expect(s.readiness.finalBackupPending).To(Equal(tt.wantPending), "finalBackupPending")
			g.Expect(s.readiness.finalBackupFailures).To(Equal(tt.wantFailures), "finalBackupFailures")
			if tt.wantFailures > 0 {
				g.Expect(s.readiness.finalBackupFailure).To(Equal(failure))
			}
			if tt.wantErr == noError {
				g.Expect(s.readiness.serviceErr).NotTo(HaveOccurred())
			} else {
				g.Expect(external.KindOf(s.readiness.serviceErr)).To(Equal(tt.wantKind))
			}
			ready := readyAfter(s)
			expectReady(t, ready, tt.wantReady)
			g.Expect(ready.Message).To(ContainSubstring(tt.wantReadyDetail))

			g.Expect(e.get(app)()).To(Succeed())
			if tt.wantReleased {
				g.Expect(app.Finalizers).To(ConsistOf(dnsCleanupFinalizer))
				g.Expect(s.app.Finalizers).To(ConsistOf(dnsCleanupFinalizer), "the scope sees the release")
			} else {
				g.Expect(app.Finalizers).To(ConsistOf(dnsCleanupFinalizer, backupv1alpha1.FinalBackupFinalizer))
			}
		})
	}
}

func TestAppHoldWanted(t *testing.T) {
	finalDone := func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus {
		status := backedUp(app)
		status.LastBackup.ID, status.LastBackup.Trigger = "bk-final", backupv1alpha1.TriggerAppDeletion
		return status
	}
	// other is another BackupConfig in the namespace.
	type other struct {
		app  string
		opts []fixtures.BackupConfigOption
	}
	tests := []struct {
		name string
		// ownApp is the MyApp this BackupConfig references; "web" is the
		// one held.
		ownApp      string
		ownOpts     []fixtures.BackupConfigOption
		ownDeleting bool
		ownStatus   func(app *appsv1alpha1.MyApp) backupv1alpha1.BackupConfigStatus
		others      []other
		appDeleting bool
		outage      bool
		want        bool
		// wantLists is how often the backup service was asked for final
		// backups.
		wantLists int
		wantErr   external.Kind
	}{
		{
			name:    "this BackupConfig wants the hold on a MyApp that is not being deleted",
			ownApp:  "web",
			ownOpts: []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			want:    true,
		},
		{
			name:        "this BackupConfig wants the hold until its final backup is done",
			ownApp:      "web",
			ownOpts:     []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			appDeleting: true,
			want:        true,
			wantLists:   1,
		},
		{
			// Status answers it, so the service is not asked.
			name:        "a final backup recorded as done releases it",
			ownApp:      "web",
			ownOpts:     []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			ownStatus:   finalDone,
			appDeleting: true,
			want:        false,
		},
		{
			name:   "the option off does not want it",
			ownApp: "web",
			want:   false,
		},
		{
			name:    "a BackupConfig of another MyApp does not want it",
			ownApp:  "api",
			ownOpts: []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			want:    false,
		},
		{
			name:   "another BackupConfig in the namespace still wants it",
			ownApp: "web",
			others: []other{{app: "web", opts: []fixtures.BackupConfigOption{fixtures.WithFinalBackup()}}},
			want:   true,
		},
		{
			// Without asking the service: that one asks in its own passes
			// (audit 2, S4).
			name:        "another BackupConfig's final backup still due keeps it",
			ownApp:      "web",
			ownOpts:     []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			ownStatus:   finalDone,
			others:      []other{{app: "web", opts: []fixtures.BackupConfigOption{fixtures.WithFinalBackup()}}},
			appDeleting: true,
			want:        true,
			wantLists:   0,
		},
		{
			name:   "another BackupConfig of another MyApp does not count",
			ownApp: "web",
			others: []other{{app: "api", opts: []fixtures.BackupConfigOption{fixtures.WithFinalBackup()}}},
			want:   false,
		},
		{
			name:        "this BackupConfig being deleted does not want it",
			ownApp:      "web",
			ownOpts:     []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			ownDeleting: true,
			want:        false,
		},
		{
			// The safe side: a hold that cannot be decided stays.
			name:        "a service failure keeps it and is returned",
			ownApp:      "web",
			ownOpts:     []fixtures.BackupConfigOption{fixtures.WithFinalBackup()},
			appDeleting: true,
			outage:      true,
			want:        true,
			wantLists:   1,
			wantErr:     external.KindTransient,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			e, _, r := newPhaseEnv(t)
			app := e.newApp("web", backupv1alpha1.FinalBackupFinalizer)
			e.create(app, e.newApp("api"))
			opts := tt.ownOpts
			if tt.ownDeleting {
				// The cleanup finalizer keeps it while it is deleted.
				opts = append(slices.Clone(opts), func(bc *backupv1alpha1.BackupConfig) {
					bc.Finalizers = []string{backupv1alpha1.BackupCleanupFinalizer}
				})
			}
			bc := e.newBackupConfig("own", tt.ownApp, opts...)
			e.create(bc)
			if tt.ownDeleting {
				deleteHeld(t, e, bc)
			}
			for i, o := range tt.others {
				e.create(e.newBackupConfig(fmt.Sprintf("other-%d", i), o.app, o.opts...))
			}
			if tt.appDeleting {
				deleteHeld(t, e, app)
			}
			if tt.ownStatus != nil {
				bc.Status = tt.ownStatus(app)
			}
			if tt.outage {
				e.sim.SetOutage(simulator.ServiceBackup, true)
			}
			s := newPassScope(r, bc, nil)

			wanted, err := r.appHoldWanted(t.Context(), s, app)

			g.Expect(wanted).To(Equal(tt.want), "hold wanted")
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(s.holdCheckErr).NotTo(HaveOccurred())
			} else {
				g.Expect(external.KindOf(err)).To(Equal(tt.wantErr), "error %v", err)
				g.Expect(s.holdCheckErr).To(MatchError(err), "the pass asks the service nothing more")
			}
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpList)).To(Equal(tt.wantLists), "lists")
			g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpStart)).To(BeZero(), "starts")
			// Deciding changes nothing: the hold is released by the caller.
			g.Expect(e.get(app)()).To(Succeed())
			g.Expect(app.Finalizers).To(ContainElement(backupv1alpha1.FinalBackupFinalizer))
		})
	}
}

// A scheduled backup that also served a change due with its slot (one
// backup at a time) and failed leaves that change to be retried as an
// on-change backup, as a failed on-change backup would be, rather than to
// the next slot: the change has no successful backup yet.
func TestAFailedScheduledBackupLeavesItsChangeToBeRetried(t *testing.T) {
	g := NewWithT(t)
	e, clk, r := newPhaseEnv(t)
	app := e.newApp("web")
	bc := e.newBackupConfig("web", "web", fixtures.WithSchedule("0 * * * *"))
	e.create(app, bc)
	// The 10:00 slot is due and the MyApp's generation has no backup.
	bc.Status = withSlot(backupv1alpha1.BackupConfigStatus{}, slotAt(10))
	e.sim.FailBackups("disk full", 1)

	// runPass runs the phases that decide backups, as reconcileNormal does, and
	// keeps the status it computed, as the deferred status write would.
	runPass := func() ctrl.Result {
		t.Helper()
		s := newPassScope(r, bc, app)
		var result ctrl.Result
		for _, phase := range []func(context.Context, *scope) (ctrl.Result, error){
			r.reconcileSchedule, r.reconcileRunningBackup, r.reconcileNewBackup,
		} {
			phaseResult, err := phase(t.Context(), s)
			g.Expect(err).NotTo(HaveOccurred())
			result = pass.Soonest(result, phaseResult)
		}
		bc.Status = s.bc.Status
		return result
	}

	runPass()
	g.Expect(bc.Status.LastBackup).To(HaveField("Trigger", backupv1alpha1.TriggerSchedule))
	g.Expect(bc.Status.LastBackup).To(HaveField("Phase", backupv1alpha1.BackupRunning))

	clk.Step(time.Minute) // the scheduled backup fails
	result := runPass()
	g.Expect(e.sim.RequestCount(simulator.ServiceBackup, simulator.OpStart)).To(Equal(2),
		"the change the failed scheduled backup served is backed up on its own")
	g.Expect(bc.Status.LastBackup).To(HaveField("Trigger", backupv1alpha1.TriggerAppChange))
	g.Expect(bc.Status.LastBackup).To(HaveField("Phase", backupv1alpha1.BackupRunning))
	g.Expect(result.RequeueAfter).To(BeNumerically("<=", pollRequeue(r).max), "the new backup is polled")

	clk.Step(time.Minute) // the on-change backup succeeds
	runPass()
	g.Expect(bc.Status.LastBackup).To(HaveField("Phase", backupv1alpha1.BackupSucceeded))
	g.Expect(bc.Status.ObservedAppUID).To(Equal(app.UID))
	g.Expect(bc.Status.ObservedAppGeneration).To(Equal(app.Generation))
}

// TestAFailedScheduledBackupDoesNotEndTheRetriesOfAFailedChange is the
// second audit's F3: the on-change backup of the MyApp's generation failed,
// and before its retry the due slot's scheduled backup starts and fails too.
// The generation still has no successful backup, so its retry must come
// after the retry delay, as attempt 2, rather than wait for the next slot.
func TestAFailedScheduledBackupDoesNotEndTheRetriesOfAFailedChange(t *testing.T) {
	g := NewWithT(t)
	e, clk, r := newPhaseEnv(t)
	app := e.newApp("web")
	bc := e.newBackupConfig("web", "web", fixtures.WithSchedule("0 * * * *"))
	e.create(app, bc)
	failedAt := metav1.NewTime(phaseNow.Add(-2 * time.Minute))
	bc.Status = withSlot(backupv1alpha1.BackupConfigStatus{
		ObservedAppGeneration: app.Generation,
		ObservedAppUID:        app.UID,
		LastBackup: &backupv1alpha1.BackupStatus{ID: "bk-change-1", Phase: backupv1alpha1.BackupFailed,
			Trigger: backupv1alpha1.TriggerAppChange, Attempt: 1, StartTime: &failedAt, CompletionTime: &failedAt,
			Reason: "disk full"},
	}, slotAt(10))
	e.sim.FailBackups("disk full", 1)

	runPass := func() {
		t.Helper()
		s := newPassScope(r, bc, app)
		for _, phase := range []func(context.Context, *scope) (ctrl.Result, error){
			r.reconcileSchedule, r.reconcileRunningBackup, r.reconcileNewBackup,
		} {
			_, err := phase(t.Context(), s)
			g.Expect(err).NotTo(HaveOccurred())
		}
		bc.Status = s.bc.Status
	}

	runPass()
	g.Expect(bc.Status.LastBackup).To(HaveField("Trigger", backupv1alpha1.TriggerSchedule), "the slot comes first")
	clk.Step(time.Minute) // the scheduled backup fails
	runPass()
	g.Expect(e.ownBackups(bc)).To(ContainElement(And(
		HaveField("IdempotencyKey", ContainSubstring("/schedule/")),
		HaveField("Phase", backup.PhaseFailed))), "the scheduled backup failed")
	clk.Step(3 * time.Minute) // past any retry delay of attempt 1 or 2
	runPass()

	own := e.ownBackups(bc)
	keys := make([]string, 0, len(own))
	for _, b := range own {
		keys = append(keys, b.IdempotencyKey)
	}
	g.Expect(keys).To(ContainElement(changeRetryKey(ownerFor(bc), app, 2)),
		"the failed change is retried as attempt 2 (keys started: %v)", keys)
}

// TestAStalePassUnderTheListingDelayStartsNoSecondBackup is the second
// audit's S3: the service lists a backup only after its consistency delay,
// so the list before a start cannot show one just started, and a pass that reads
// the BackupConfig from before its own last status write (a lagging cache)
// decides to start again. It starts nothing new: the keys are derived from
// that same status (the slot in status.nextScheduleTime, the MyApp's UID
// and generation and the attempt), so the service answers with the backup
// already started, whichever was due.
func TestAStalePassUnderTheListingDelayStartsNoSecondBackup(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []fixtures.BackupConfigOption
		slot bool
	}{
		{name: "a change"},
		{name: "a schedule slot", opts: []fixtures.BackupConfigOption{fixtures.WithSchedule("0 * * * *")}, slot: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			e, clk, r := newPhaseEnv(t)
			e.sim.SetConsistencyDelay(simulator.ServiceBackup, time.Minute)
			app := e.newApp("web")
			bc := e.newBackupConfig("web", "web", tc.opts...)
			e.create(app, bc)
			if tc.slot {
				bc.Status = withSlot(backedUp(app), slotAt(10))
			}
			stale := bc.Status.DeepCopy()

			pass := func(status backupv1alpha1.BackupConfigStatus) *scope {
				read := bc.DeepCopy()
				read.Status = status
				s := newPassScope(r, read, app)
				for _, phase := range []func(context.Context, *scope) (ctrl.Result, error){
					r.reconcileSchedule, r.reconcileRunningBackup, r.reconcileNewBackup,
				} {
					_, err := phase(t.Context(), s)
					g.Expect(err).NotTo(HaveOccurred())
				}
				return s
			}
			first := pass(*stale)
			g.Expect(first.bc.Status.LastBackup).NotTo(BeNil(), "the first pass started a backup")
			clk.Step(time.Second)
			g.Expect(e.backups.List(t.Context(), ownerFor(bc))).To(BeEmpty(), "the service does not list it yet")
			second := pass(*stale)

			g.Expect(e.ownBackups(bc)).To(HaveLen(1), "no second backup")
			g.Expect(second.bc.Status.LastBackup.ID).To(Equal(first.bc.Status.LastBackup.ID), "the same backup is followed")
		})
	}
}
