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
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// listOwn lists the backups of owner, one of this BackupConfig's: they are
// filed in its namespace, where a provider that files backups by namespace
// (s3) looks first.
func (s *scope) listOwn(ctx context.Context, owner string) ([]backup.Backup, error) {
	return s.backups.List(ctx, owner, backup.InNamespace(s.bc.Namespace))
}

// scope is what one reconcile pass knows about a BackupConfig. Phases read
// and fill it in; the deferred status write turns it into status.
type scope struct {
	bc *backupv1alpha1.BackupConfig
	// base is the BackupConfig as fetched, the base of the status patch.
	base *backupv1alpha1.BackupConfig
	// app is the referenced MyApp, nil when it does not exist.
	app *appsv1alpha1.MyApp
	// restores are the Restores in progress of the namespace, once a
	// phase has listed them (restoresInProgress).
	restores *restoresInProgress
	// key names the BackupConfig in the Reconciler's memory and its metrics.
	key types.NamespacedName
	// backups is the backup service. Its client holds every call back while
	// the service asked to wait.
	backups backup.Client
	// owner is this BackupConfig's identity in the backup service.
	owner string
	// startToken is this pass's own: every start it makes sends it, and a
	// backup the service answers with it is one this pass started
	// (startedByThisPass), whatever the service's clock says.
	startToken string
	now        time.Time
	// schedule is spec.schedule parsed, nil without one.
	schedule cron.Schedule
	// slotDue is set when status.nextScheduleTime has come.
	slotDue bool
	// readyWas is the Ready condition's reason as the pass read it.
	readyWas string
	// readiness collects what decides the Ready condition.
	readiness readiness
	// holdCheckErr is the first failure of the backup service in this pass's
	// checks of final-backup holds. Once the service fails, the pass asks
	// it nothing more about other MyApps: each call could take the client's
	// whole timeout, and the pass must get to report.
	holdCheckErr error
	// notes are the events the pass decided to send (sendEvents).
	notes []note
	// listed is what the service listed of this BackupConfig's backups
	// before this pass starts one (recordListed), nil before that.
	listed []backup.Backup
}

// note is an event the pass decided to send.
type note struct {
	related   *appsv1alpha1.MyApp
	eventType string
	reason    eventReason
	action    string
	message   string
}
