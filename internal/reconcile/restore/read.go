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
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore/restoreplan"
)

// The labels the BackupConfig controller stores with every backup
// (internal/reconcile/backupconfig, backupLabels), besides
// backup.LabelNamespace. The storage source narrows the service's listing
// by them before it reads any content, and a backup chosen before its
// content is read (one still running) is described from them.
// TestTheSourcesReadWhatBackupConfigsWrite checks them, and the owner
// below, against that controller.
const (
	labelBackupConfig = "backup.myapp.dev/backupconfig"
	labelMyApp        = "backup.myapp.dev/myapp"
	labelMyAppUID     = "backup.myapp.dev/myapp-uid"
	labelTrigger      = "backup.myapp.dev/trigger"
)

// backupConfigOwner is the owner the BackupConfig controller starts a
// BackupConfig's backups as: the UID keeps a BackupConfig re-created under
// the same name apart from the one before it.
func backupConfigOwner(uid types.UID) string {
	return "backupconfig/" + string(uid)
}

// read makes the read a plan needs and records what it found in the
// scope. An error is a failure to read (of the backup service or the API
// server), never a finding: a missing backup or MyApp is what the read
// found.
func (r *Reconciler) read(ctx context.Context, s *scope, need restoreplan.Need) error {
	switch need {
	case restoreplan.NeedSource:
		return r.readSource(ctx, s)
	case restoreplan.NeedBackup:
		return r.readBackup(ctx, s)
	case restoreplan.NeedContent:
		return r.readContent(ctx, s, s.backupID())
	case restoreplan.NeedApp:
		return r.readApp(ctx, s)
	case restoreplan.NeedCandidate:
		return r.readCandidate(ctx, s, s.outcome.Candidate)
	}
	return fmt.Errorf("the plan needs an unknown read %d", need)
}

// readSource resolves spec.source to one backup, or to the reason there is
// none to restore.
func (r *Reconciler) readSource(ctx context.Context, s *scope) error {
	src := s.restore.Spec.Source
	switch {
	case src.BackupConfigRef != nil:
		return r.resolveBackupConfig(ctx, s, src.BackupConfigRef.Name)
	case src.BackupID != "":
		return r.resolveBackupID(ctx, s, src.BackupID)
	case src.Storage != nil:
		return r.resolveStorage(ctx, s, cmp.Or(src.Storage.Namespace, s.restore.Namespace), src.Storage.AppName)
	}
	// The API server refuses a source without exactly one of them; an
	// object from before that rule, or written around it, is refused here.
	s.obs.Source = &restoreplan.SourceRead{Refusal: backupv1alpha1.BackupNotFoundReason}
	s.sourceDetail = "spec.source names no backup: set exactly one of backupConfigRef, backupID and storage"
	return nil
}

// resolveBackupConfig finds the newest succeeded backup of the BackupConfig
// name, read from the API server: the choice is made once, and a cache that
// does not show the BackupConfig yet (or still shows a deleted one) would
// make it wrongly.
func (r *Reconciler) resolveBackupConfig(ctx context.Context, s *scope, name string) error {
	bc := &backupv1alpha1.BackupConfig{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.restore.Namespace, Name: name}, bc)
	if apierrors.IsNotFound(err) {
		s.obs.Source = &restoreplan.SourceRead{Refusal: backupv1alpha1.BackupConfigNotFoundReason}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading BackupConfig %s: %w", name, err)
	}
	backups, err := r.Backups.List(ctx, backupConfigOwner(bc.UID), backup.InNamespace(bc.Namespace))
	if err != nil {
		return fmt.Errorf("listing the backups of BackupConfig %s: %w", name, err)
	}
	b, ok := newestSucceeded(backups)
	if !ok {
		s.obs.Source = &restoreplan.SourceRead{Refusal: backupv1alpha1.NoSucceededBackupReason}
		s.sourceDetail = fmt.Sprintf("the backup service lists %d of its backups", len(backups))
		return nil
	}
	s.chosen = &b
	// Listed by the BackupConfig's UID, and a BackupConfig's backups are
	// all taken in its namespace, the Restore's.
	s.obs.Source = &restoreplan.SourceRead{Found: true, Phase: planPhase(b.Phase), Namespace: bc.Namespace}
	return nil
}

// resolveBackupID finds the backup of that ID.
func (r *Reconciler) resolveBackupID(ctx context.Context, s *scope, id string) error {
	b, err := r.Backups.Get(ctx, id)
	if errors.Is(err, external.ErrNotFound) {
		s.obs.Source = &restoreplan.SourceRead{Refusal: backupv1alpha1.BackupNotFoundReason}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading backup %s: %w", id, err)
	}
	s.chosen = &b
	// The ID's own namespace, where the provider's IDs name one, over the
	// labels: it is where the backup is filed.
	s.obs.Source = &restoreplan.SourceRead{Found: true, Phase: planPhase(b.Phase),
		Namespace: cmp.Or(s.obs.IDNamespace, b.Labels[backup.LabelNamespace])}
	return nil
}

// resolveStorage lists the candidates of the storage source: the
// succeeded backups of the MyApp name in namespace, as far as their labels
// say, newest first. Which of them is restored is the plan's choice, made
// as their contents are read (readCandidate).
func (r *Reconciler) resolveStorage(ctx context.Context, s *scope, namespace, name string) error {
	all, err := r.Backups.List(ctx, "", backup.InNamespace(namespace),
		backup.WithLabels(map[string]string{backup.LabelNamespace: namespace, labelMyApp: name}))
	if err != nil {
		return fmt.Errorf("listing the backups in namespace %s: %w", namespace, err)
	}
	s.candidates = storageCandidates(all, namespace, name)
	read := &restoreplan.SourceRead{Storage: true, Namespace: namespace,
		Candidates: make([]restoreplan.Candidate, 0, len(s.candidates))}
	for _, b := range s.candidates {
		read.Candidates = append(read.Candidates, restoreplan.Candidate{ID: b.ID,
			OwnerID: b.Labels[backup.LabelOwnerID], Namespace: b.Labels[backup.LabelNamespace]})
	}
	s.obs.Source = read
	return nil
}

// readCandidate reads and decodes the content of the storage candidate id,
// and keeps it for the status's words should the plan choose it.
func (r *Reconciler) readCandidate(ctx context.Context, s *scope, id string) error {
	c := s.candidate(id)
	if c == nil {
		return fmt.Errorf("the plan needs the content of backup %s, which is not a candidate", id)
	}
	payload, problem, detail, err := r.fetchContent(ctx, id)
	if err != nil {
		return err
	}
	c.Content = contentRead(payload, problem)
	if s.candidateContent == nil {
		s.candidateContent = map[string]candidateContent{}
	}
	s.candidateContent[id] = candidateContent{payload: payload, detail: detail}
	return nil
}

// candidate is the storage candidate id as the plan sees it, nil when
// there is none.
func (s *scope) candidate(id string) *restoreplan.Candidate {
	if s.obs.Source == nil {
		return nil
	}
	for i := range s.obs.Source.Candidates {
		if s.obs.Source.Candidates[i].ID == id {
			return &s.obs.Source.Candidates[i]
		}
	}
	return nil
}

// takeChoice makes the storage candidate the plan chose the backup the
// pass works with, as the source's other reads leave theirs.
func (s *scope) takeChoice(p restoreplan.Plan) {
	if p.Candidate == "" || p.Need != restoreplan.NeedNothing || s.obs.Source == nil {
		return
	}
	i := slices.IndexFunc(s.candidates, func(b backup.Backup) bool { return b.ID == p.Candidate })
	if i < 0 {
		return
	}
	s.chosen = &s.candidates[i]
	got := s.candidateContent[p.Candidate]
	s.payload, s.contentDetail = got.payload, got.detail
	s.obs.Content = s.obs.Source.Candidates[i].Content
}

// newestSucceeded is the succeeded backup that started last; of those that
// started in the same instant, the one listed last. A provider lists its
// backups oldest first in the order it stored them (the backup contract,
// checked by backuptest.RunConformance), and its start times may be coarser
// than that order: S3's are its server's Last-Modified, in whole seconds.
func newestSucceeded(backups []backup.Backup) (backup.Backup, bool) {
	var newest backup.Backup
	found := false
	for _, b := range backups {
		if b.Phase != backup.PhaseSucceeded {
			continue
		}
		if !found || !b.StartedAt.Before(newest.StartedAt) {
			newest, found = b, true
		}
	}
	return newest, found
}

// storageCandidates are the succeeded backups that may be of the MyApp
// name in namespace, newest first: those whose labels name it, and those
// whose labels do not say (the content will). A backup whose labels name
// another MyApp or namespace is not one.
func storageCandidates(backups []backup.Backup, namespace, name string) []backup.Backup {
	var out []backup.Backup
	for _, b := range backups {
		if b.Phase != backup.PhaseSucceeded {
			continue
		}
		if ns, ok := b.Labels[backup.LabelNamespace]; ok && ns != namespace {
			continue
		}
		if app, ok := b.Labels[labelMyApp]; ok && app != name {
			continue
		}
		out = append(out, b)
	}
	// Newest first, and of those that started in the same instant the one
	// listed last first (newestSucceeded).
	slices.Reverse(out)
	slices.SortStableFunc(out, func(a, b backup.Backup) int { return b.StartedAt.Compare(a.StartedAt) })
	return out
}

// readBackup reads the chosen backup again: it may have been deleted, or
// have finished, since it was chosen.
func (r *Reconciler) readBackup(ctx context.Context, s *scope) error {
	b, err := r.Backups.Get(ctx, s.obs.Pinned)
	if errors.Is(err, external.ErrNotFound) {
		s.obs.Backup = &restoreplan.BackupRead{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading backup %s: %w", s.obs.Pinned, err)
	}
	s.chosen = &b
	s.obs.Backup = &restoreplan.BackupRead{Found: true, Phase: planPhase(b.Phase)}
	return nil
}

// readContent reads and decodes the content of backup id.
func (r *Reconciler) readContent(ctx context.Context, s *scope, id string) error {
	payload, problem, detail, err := r.fetchContent(ctx, id)
	if err != nil {
		return err
	}
	s.setContent(payload, problem, detail)
	return nil
}

// fetchContent reads the content of backup id and says whether it can be
// restored: problem is the Failed reason of content that cannot (and
// detail why), "" for a payload of a MyApp this operator restores.
func (r *Reconciler) fetchContent(ctx context.Context, id string) (*backupcontent.Payload, string, string, error) {
	data, err := r.Backups.Content(ctx, id)
	if errors.Is(err, external.ErrNotFound) {
		// The backup was chosen as succeeded, so what is missing is its
		// content: the service's message says which (started without
		// content, or deleted meanwhile).
		return nil, backupv1alpha1.BackupHasNoContentReason, serviceMessage(err), nil
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("reading the content of backup %s: %w", id, err)
	}
	payload, problem, detail := decodeContent(data)
	return payload, problem, detail, nil
}

// decodeContent reads content as a payload of a MyApp this operator can
// restore, or says why it cannot.
func decodeContent(data []byte) (*backupcontent.Payload, string, string) {
	payload, err := backupcontent.DecodePayload(data)
	var formatErr *backupcontent.FormatError
	switch {
	case errors.As(err, &formatErr):
		return nil, backupv1alpha1.UnsupportedBackupFormatReason, formatErr.Error()
	case err != nil:
		return nil, backupv1alpha1.InvalidBackupContentReason, err.Error()
	case payload.MyApp.APIVersion != appsv1alpha1.GroupVersion.String() || payload.MyApp.Kind != "MyApp":
		return nil, backupv1alpha1.InvalidBackupContentReason, fmt.Sprintf(
			"it holds a %s of %s, and this operator restores MyApps of %s",
			payload.MyApp.Kind, payload.MyApp.APIVersion, appsv1alpha1.GroupVersion)
	}
	return payload, "", ""
}

// setContent records what reading the content found.
func (s *scope) setContent(payload *backupcontent.Payload, problem, detail string) {
	s.payload, s.contentDetail = payload, detail
	s.obs.Content = contentRead(payload, problem)
}

// contentRead is what the plan needs of content: the problem, or whose
// backup of which MyApp it is.
func contentRead(payload *backupcontent.Payload, problem string) *restoreplan.ContentRead {
	c := &restoreplan.ContentRead{Problem: problem}
	if payload != nil {
		c.OwnerID = payload.Metadata.OwnerID
		c.Namespace, c.Name = payload.MyApp.Namespace, payload.MyApp.Name
	}
	return c
}

// readApp reads the target MyApp from the API server, not the cache: a
// cache that does not show a MyApp yet would have it created twice (the
// second refused as existing, or worse, taken for absent after the
// Restore's own create); one that still shows an old generation Ready
// would let the Restore succeed before the MyApp ran the restored spec.
func (r *Reconciler) readApp(ctx context.Context, s *scope) error {
	name := s.targetName()
	if name == "" {
		return errors.New("the plan needs the target MyApp before its name is known")
	}
	app := &appsv1alpha1.MyApp{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.restore.Namespace, Name: name}, app)
	if apierrors.IsNotFound(err) {
		s.obs.App = &restoreplan.AppRead{}
		app = nil
	} else if err != nil {
		return fmt.Errorf("reading MyApp %s: %w", name, err)
	} else {
		s.app = app
		s.obs.App = observeApp(app)
	}
	busy, err := r.restoreAhead(ctx, s, name, app)
	if err != nil {
		return err
	}
	s.obs.App.BusyWith = busy
	return nil
}

// restoreAhead names another Restore in progress that writes the MyApp
// name before this one, "" when none: the Restore whose mark the MyApp
// carries, read from the API server (its status may say it finished);
// else one in progress for that target, by the cache's index, that wrote it
// already or was created earlier (the older name first on a tie). Either
// way at most one Restore writes a MyApp at a time, and the others find
// what it left once it has finished.
func (r *Reconciler) restoreAhead(ctx context.Context, s *scope, name string, app *appsv1alpha1.MyApp) (string, error) {
	self := s.restore
	if app != nil {
		markedBy := types.UID(app.Annotations[backupv1alpha1.RestoreUIDAnnotation])
		if other := app.Labels[backupv1alpha1.RestoreNameLabel]; markedBy != "" && markedBy != self.UID && other != "" {
			marker := &backupv1alpha1.Restore{}
			err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: self.Namespace, Name: other}, marker)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return "", fmt.Errorf("reading Restore %s, whose mark MyApp %s carries: %w", other, name, err)
			case marker.UID == markedBy && !marker.Status.Phase.Finished():
				return marker.Name, nil
			}
		}
	}
	var inProgress backupv1alpha1.RestoreList
	if err := r.Client.List(ctx, &inProgress, client.InNamespace(self.Namespace),
		client.MatchingFields{InProgressTargetIndexKey: name}); err != nil {
		return "", fmt.Errorf("listing the Restores in progress for MyApp %s: %w", name, err)
	}
	for i := range inProgress.Items {
		other := &inProgress.Items[i]
		if other.UID != self.UID && (other.Status.RestoredAppUID != "" || createdBefore(other, self)) {
			return other.Name, nil
		}
	}
	return "", nil
}

// createdBefore orders Restores by creation, then name.
func createdBefore(a, b *backupv1alpha1.Restore) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// observeApp is what a plan needs of a MyApp.
func observeApp(app *appsv1alpha1.MyApp) *restoreplan.AppRead {
	a := &restoreplan.AppRead{
		Exists:             true,
		UID:                string(app.UID),
		MarkedBy:           app.Annotations[backupv1alpha1.RestoreUIDAnnotation],
		Deleting:           !app.DeletionTimestamp.IsZero(),
		Generation:         app.Generation,
		ObservedGeneration: app.Status.ObservedGeneration,
		Host:               app.Spec.Host,
		RequestedAt:        app.Annotations[appsv1alpha1.ReconcileRequestAnnotation],
		HandledAt:          app.Status.LastHandledReconcileAt,
	}
	if c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.ReadyCondition); c != nil {
		a.Ready, a.ReadyGeneration = c.Status == metav1.ConditionTrue, c.ObservedGeneration
		a.Suspended = app.Spec.Suspend && c.Reason == appsv1alpha1.SuspendedReason
	}
	if c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition); c != nil {
		a.HostConflict = c.Reason == appsv1alpha1.HostConflictReason && c.ObservedGeneration == app.Generation
	}
	if dns := app.Status.DNS; dns != nil {
		a.DNSState, a.DNSName = dns.State, dns.Name
	}
	return a
}

// planPhase is a backup's phase in the plan's words: a phase the service
// reports that is neither SUCCEEDED nor FAILED is a backup not finished.
func planPhase(p backup.Phase) restoreplan.BackupPhase {
	switch p {
	case backup.PhaseSucceeded:
		return restoreplan.BackupSucceeded
	case backup.PhaseFailed:
		return restoreplan.BackupFailed
	}
	return restoreplan.BackupRunning
}

// serviceMessage is the backup service's own explanation of a failure,
// without the attempt counts and waits the error's text adds, so a
// condition that quotes it does not change from one retry to the next.
func serviceMessage(err error) string {
	var xerr *external.Error
	if errors.As(err, &xerr) && xerr.Message != "" {
		return strings.TrimRight(xerr.Message, ".")
	}
	return err.Error()
}
