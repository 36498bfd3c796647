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
	"time"

	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore/restoreplan"
)

// scope is what one reconcile pass knows about a Restore. The reads fill
// it in, the plan decides from its observation, and the deferred status
// write turns it into status.
type scope struct {
	restore *backupv1alpha1.Restore
	// base is the Restore as fetched, the base of the status patch.
	base *backupv1alpha1.Restore
	now  time.Time
	// obs is what the plan decides from.
	obs restoreplan.Observation
	// outcome is the plan the pass ended with: the plan's, or what apply
	// made of it when a write failed. setStatus derives the status from it.
	outcome restoreplan.Plan

	// chosen is the backup the source resolved to (before a backup is
	// chosen), or the chosen backup as the backup service reports it now.
	chosen *backup.Backup
	// payload is the chosen backup's content, once read and decoded.
	payload *backupcontent.Payload
	// sourceDetail says, for a refused source, what resolving it found;
	// contentDetail, for content that cannot be restored, why.
	sourceDetail, contentDetail string
	// candidates are the storage source's candidates, newest first, and
	// candidateContent what reading the content of each found: the plan
	// chooses among them.
	candidates       []backup.Backup
	candidateContent map[string]candidateContent
	// app is the target MyApp as the API server had it, nil when there is
	// none or it was not read.
	app *appsv1alpha1.MyApp
	// restoredUID is the UID of the MyApp this pass created, replaced the
	// spec of, or took for its own.
	restoredUID types.UID
	// serviceErr is the backup service's failure that ended the pass;
	// appWriteErr a failed write of the MyApp.
	serviceErr, appWriteErr error
	// serviceCause is what the provider's client says of serviceErr, its
	// cause and endpoint (pass.BackupServiceCause); "" when it says nothing.
	serviceCause string
}

// candidateContent is a storage candidate's content, decoded, or why it
// cannot be restored.
type candidateContent struct {
	payload *backupcontent.Payload
	detail  string
}

// newScope starts a pass over restore, by the installation ownerID, at now.
func newScope(restore *backupv1alpha1.Restore, ownerID string, now time.Time) *scope {
	st := restore.Status
	obs := restoreplan.Observation{
		RestoreUID:  string(restore.UID),
		OwnerID:     ownerID,
		Namespace:   restore.Namespace,
		Policy:      cmp.Or(restore.Spec.Target.ExistingApp, backupv1alpha1.ExistingAppFail),
		Phase:       st.Phase,
		RestoredUID: string(st.RestoredAppUID),
	}
	if st.Backup != nil {
		obs.Pinned = st.Backup.ID
	}
	if storage := restore.Spec.Source.Storage; storage != nil {
		obs.SourceNamespace, obs.SourceApp = storage.Namespace, storage.AppName
	}
	if st.StartTime != nil {
		obs.PastDeadline = !now.Before(st.StartTime.Add(timeoutOf(restore)))
	}
	return &scope{restore: restore, base: restore.DeepCopy(), now: now, obs: obs}
}

// backupID is the ID of the backup the pass works with: the chosen one, or
// the one the source resolved to.
func (s *scope) backupID() string {
	if s.obs.Pinned != "" {
		return s.obs.Pinned
	}
	if s.chosen != nil {
		return s.chosen.ID
	}
	return ""
}

// targetName is the name of the MyApp the Restore writes, "" while it is
// not known: spec.target.name, else the name status already records, else
// the backed-up MyApp's name as its content, or failing that the backup's
// labels or status, say.
func (s *scope) targetName() string {
	name := cmp.Or(s.restore.Spec.Target.Name, s.restore.Status.TargetName)
	if name != "" {
		return name
	}
	if s.payload != nil {
		return s.payload.MyApp.Name
	}
	if b := s.restore.Status.Backup; b != nil && b.MyApp != nil {
		return b.MyApp.Name
	}
	if s.chosen != nil {
		return s.chosen.Labels[labelMyApp]
	}
	return ""
}

// timeoutOf is the Restore's spec.timeout, or its default when not set.
func timeoutOf(restore *backupv1alpha1.Restore) time.Duration {
	if t := restore.Spec.Timeout; t != nil && t.Duration > 0 {
		return t.Duration
	}
	return backupv1alpha1.DefaultRestoreTimeout
}
