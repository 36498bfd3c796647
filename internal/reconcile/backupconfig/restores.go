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
	"fmt"
	"time"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// The controller stays out of a restore's way: it reads the Restores of a
// BackupConfig's namespace (a Restore restores only backups of its own
// namespace) to keep the backups they have chosen, and to start no backup
// of a MyApp one is writing.
// +kubebuilder:rbac:groups=backup.myapp.dev,resources=restores,verbs=get;list;watch

// restoresInProgress is what the Restores in progress of one namespace
// need of its BackupConfigs, by the Restore that needs it.
type restoresInProgress struct {
	// pinned are the backups they have chosen (status.backup.id): no
	// retention or deletion deletes them.
	pinned map[string]string
	// targets are the MyApps they write (status.targetName): no backup of
	// them starts. since says from when, by MyApp: the Restore's
	// status.startTime, or its creation before it has one.
	targets map[string]string
	since   map[string]time.Time
}

// restoresInProgress lists, once per pass and from the cache, the Restores
// of the BackupConfig's namespace that have neither succeeded nor failed.
// A Restore the cache does not show yet has chosen nothing the cache could
// show either; one that just finished keeps its backup until a pass sees
// it finished, which its status change brings (restoreFinished).
func (r *Reconciler) restoresInProgress(ctx context.Context, s *scope) (restoresInProgress, error) {
	if s.restores != nil {
		return *s.restores, nil
	}
	var list backupv1alpha1.RestoreList
	if err := r.Client.List(ctx, &list, client.InNamespace(s.bc.Namespace)); err != nil {
		return restoresInProgress{}, fmt.Errorf("listing the Restores in namespace %s: %w", s.bc.Namespace, err)
	}
	in := restoresInProgress{pinned: map[string]string{}, targets: map[string]string{}, since: map[string]time.Time{}}
	for i := range list.Items {
		restore := &list.Items[i]
		if restore.Status.Phase.Finished() {
			continue
		}
		if b := restore.Status.Backup; b != nil && b.ID != "" {
			in.pinned[b.ID] = restore.Name
		}
		if target := restore.Status.TargetName; target != "" {
			in.targets[target] = restore.Name
			since := restore.CreationTimestamp.Time
			if st := restore.Status.StartTime; st != nil {
				since = st.Time
			}
			if prev, ok := in.since[target]; !ok || since.Before(prev) {
				in.since[target] = since
			}
		}
	}
	s.restores = &in
	return in, nil
}

// labelFollowsRestore is the label of the first backup of a MyApp a
// Restore created: the Restore's name. The backup's content carries the
// Restore's mark in the MyApp's own annotations as well.
const labelFollowsRestore = "backup.myapp.dev/follows-restore"

// backupConfigsForRestore maps a Restore onto the BackupConfigs of its
// namespace: any of them may keep the backup it chose, or hold back a
// backup of the MyApp it writes. Restores are few, so the mapping does not
// narrow further.
func (r *Reconciler) backupConfigsForRestore(ctx context.Context, restore client.Object) []ctrl.Request {
	var list backupv1alpha1.BackupConfigList
	if err := r.Client.List(ctx, &list, client.InNamespace(restore.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the BackupConfigs of a Restore's namespace", "restore", klog.KObj(restore))
		return nil
	}
	requests := make([]ctrl.Request, 0, len(list.Items))
	for i := range list.Items {
		requests = append(requests, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return requests
}

// restoreChanged lets through what changes a Restore's part in its
// namespace's BackupConfigs: its creation and deletion, and a new phase,
// target or chosen backup.
func restoreChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*backupv1alpha1.Restore)
			updated, okNew := e.ObjectNew.(*backupv1alpha1.Restore)
			if !okOld || !okNew {
				return false
			}
			return old.Status.Phase != updated.Status.Phase || old.Status.TargetName != updated.Status.TargetName ||
				(old.Status.Backup == nil) != (updated.Status.Backup == nil)
		},
	}
}
