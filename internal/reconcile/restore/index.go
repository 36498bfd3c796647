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
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// Field indexes of the Restores in progress (neither Succeeded nor Failed),
// in the manager's cache. The Restore controller maps MyApp events onto the
// Restores that wait for them with the first. Both are exported for the
// controllers that must stay out of a restore's way: a BackupConfig starts
// no backup of a MyApp a Restore is writing, and its retention keeps a
// backup a Restore still needs. They list with
//
//	client.InNamespace(ns), client.MatchingFields{restore.InProgressTargetIndexKey: appName}
//
// (a Restore writes a MyApp of its own namespace), and with
// client.MatchingFields{restore.InProgressBackupIndexKey: backupID} in every
// namespace, since a Restore may restore a backup taken in another one. A
// Restore that has not chosen its backup yet is in neither index; it is in
// the first from the pass that chooses on, since the choice also fixes the
// target's name.
const (
	// InProgressTargetIndexKey indexes Restores in progress by
	// status.targetName, the MyApp they write.
	InProgressTargetIndexKey = "restore.inProgress.targetName"
	// InProgressBackupIndexKey indexes Restores in progress by
	// status.backup.id, the backup they restore.
	InProgressBackupIndexKey = "restore.inProgress.backupID"
)

// IndexInProgress registers both indexes with indexer. The Restore
// controller's SetupWithManager calls it; a manager registers each once.
func IndexInProgress(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &backupv1alpha1.Restore{}, InProgressTargetIndexKey, inProgressTarget); err != nil {
		return fmt.Errorf("indexing Restores by %s: %w", InProgressTargetIndexKey, err)
	}
	if err := indexer.IndexField(ctx, &backupv1alpha1.Restore{}, InProgressBackupIndexKey, inProgressBackup); err != nil {
		return fmt.Errorf("indexing Restores by %s: %w", InProgressBackupIndexKey, err)
	}
	return nil
}

// inProgressTarget is the index value of InProgressTargetIndexKey.
func inProgressTarget(obj client.Object) []string {
	r, ok := obj.(*backupv1alpha1.Restore)
	if !ok || r.Status.Phase.Finished() || r.Status.TargetName == "" {
		return nil
	}
	return []string{r.Status.TargetName}
}

// inProgressBackup is the index value of InProgressBackupIndexKey.
func inProgressBackup(obj client.Object) []string {
	r, ok := obj.(*backupv1alpha1.Restore)
	if !ok || r.Status.Phase.Finished() || r.Status.Backup == nil || r.Status.Backup.ID == "" {
		return nil
	}
	return []string{r.Status.Backup.ID}
}
