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
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore/restoreplan"
)

// reconcileRestore is the pass's one phase: it plans, makes the read the
// plan asks for, and plans again, until the plan names what to do, which it
// then does. The loop holds no choice of its own: every branch is the
// plan's (restoreplan).
func (r *Reconciler) reconcileRestore(ctx context.Context, s *scope) (ctrl.Result, error) {
	// One read of each storage candidate's content at most, besides the
	// others.
	for reads := 0; reads < maxReadsPerPass+len(s.candidates); reads++ {
		p := restoreplan.Make(s.obs)
		s.outcome = p
		if p.Need == restoreplan.NeedNothing {
			s.takeChoice(p)
			return r.apply(ctx, s, p)
		}
		if err := r.read(ctx, s, p.Need); err != nil {
			return r.readFailed(ctx, s, err)
		}
	}
	return ctrl.Result{}, fmt.Errorf("the plan asked for more than %d reads in one pass", maxReadsPerPass+len(s.candidates))
}

// readFailed ends a pass whose read failed. A failure of the backup
// service is recorded for the condition, and one event goes out when the
// trouble starts; when the service said how long to wait (a 429, or a 503
// with Retry-After), the Restore comes back after exactly that wait, and
// otherwise after the controller's backoff, as for the other kinds. A
// failure of the API server is returned for the backoff as it is.
func (r *Reconciler) readFailed(ctx context.Context, s *scope, err error) (ctrl.Result, error) {
	var xerr *external.Error
	if !errors.As(err, &xerr) {
		return ctrl.Result{}, err
	}
	s.serviceErr = err
	s.serviceCause = pass.BackupServiceCause(r.Backups, err)
	if pass.TroubleStarts(s.base.Status.Conditions, readyCondition, pass.BackupServiceReasons.For(err)) {
		r.event(s, corev1.EventTypeWarning, eventBackupServiceFailed, actionReadBackup, "%v", err)
	}
	if delay, ok := external.RetryAfter(err); ok {
		ctrl.LoggerFrom(ctx).Info("Backup service asked to wait", "retryAfter", delay)
		// Not jittered: the service named the time.
		return ctrl.Result{}, pass.Wait(delay, err)
	}
	return ctrl.Result{}, err
}
