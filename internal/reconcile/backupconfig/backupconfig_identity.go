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
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// Labels stored with every backup, for people and tools reading the backup
// service. Ownership is the owner field and identity the idempotency key; the
// controller reads labels back only for a backup it adopts rather than
// starts (an earlier pass started it and could not record it): the MyApp's
// UID and generation say which change the backup covers, and the trigger
// what it was started for.
const (
	labelBackupConfig    = "backup.myapp.dev/backupconfig"
	labelNamespace       = "backup.myapp.dev/namespace"
	labelMyApp           = "backup.myapp.dev/myapp"
	labelMyAppUID        = "backup.myapp.dev/myapp-uid"
	labelMyAppGeneration = "backup.myapp.dev/myapp-generation"
	labelTrigger         = "backup.myapp.dev/trigger"
)

// ownerFor is the BackupConfig's identity in the backup service. It is built
// from the UID, not the name, so a BackupConfig re-created under the same
// name never lists, prunes or deletes the backups of the one before it.
func ownerFor(bc *backupv1alpha1.BackupConfig) string {
	return "backupconfig/" + string(bc.UID)
}

// The idempotency keys below are derived only from state that survives a
// restart, so a pass that starts a backup and dies before recording it is
// followed by a pass that derives the same key and adopts the same backup.
// Every key begins with the owner, so keys of two BackupConfigs never meet.

// changeKey names the backup of one generation of one MyApp. The MyApp's UID
// keeps a re-created MyApp's generation 1 apart from the old one's.
func changeKey(owner string, app *appsv1alpha1.MyApp) string {
	return fmt.Sprintf("%s/change/%s/%d", owner, app.UID, app.Generation)
}

// changeRetryKey names one attempt at the backup of a generation: the first
// is changeKey itself, a retry after a failure adds the attempt number, which
// status.lastBackup.attempt keeps across restarts.
func changeRetryKey(owner string, app *appsv1alpha1.MyApp, attempt int32) string {
	if attempt <= 1 {
		return changeKey(owner, app)
	}
	return fmt.Sprintf("%s/%d", changeKey(owner, app), attempt)
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

// scheduleKey names the backup of one schedule slot, the one stored in
// status.nextScheduleTime before the backup was started, of one MyApp. The
// MyApp is part of it because the service refuses a key used again for
// another app: after an answer lost at a slot and a change of spec.appRef,
// the slot's next start must be a new backup, not a refused one.
func scheduleKey(owner string, appUID types.UID, slot time.Time) string {
	return fmt.Sprintf("%s/schedule/%s/%s", owner, appUID, slot.UTC().Format("20060102T1504Z"))
}

// finalKeyPrefix is shared by every final backup attempt for one MyApp.
func finalKeyPrefix(owner string, appUID types.UID) string {
	return fmt.Sprintf("%s/final/%s/", owner, appUID)
}

// finalKey names one attempt at the final backup of a MyApp. The attempt
// number is one more than the failed attempts the service lists, so it too
// can be derived again after a restart.
func finalKey(owner string, appUID types.UID, attempt int) string {
	return finalKeyPrefix(owner, appUID) + strconv.Itoa(attempt)
}

// maxServiceAppName is the longest app name the backup service accepts: one
// DNS label.
const maxServiceAppName = 63

// serviceAppName names a MyApp in the backup service, which wants one DNS
// label. "<namespace>-<name>" keeps apps of the same name in two namespaces
// apart in the service's storage layout. That plain form is used only when it
// can be read back one way: the namespace has no '-', so the first '-' ends
// it, and the name has no '.', the one character replaced. Every other name,
// and one too long, ends in a hash of "<namespace>/<name>", so "web.v2" and
// "web-v2", or namespace "a-b" with app "c" and namespace "a" with app "b-c",
// stay apart.
func serviceAppName(namespace, name string) string {
	full := namespace + "-" + strings.ReplaceAll(name, ".", "-")
	if len(full) <= maxServiceAppName && !strings.Contains(namespace, "-") && !strings.Contains(name, ".") {
		return full
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return strings.TrimRight(full[:min(len(full), maxServiceAppName-len(suffix))], "-") + suffix
}

// backupLabels are the labels a backup is started with.
func backupLabels(bc *backupv1alpha1.BackupConfig, app *appsv1alpha1.MyApp, trigger backupv1alpha1.BackupTrigger) map[string]string {
	return map[string]string{
		labelBackupConfig:    bc.Name,
		labelNamespace:       bc.Namespace,
		labelMyApp:           app.Name,
		labelMyAppUID:        string(app.UID),
		labelMyAppGeneration: strconv.FormatInt(app.Generation, 10),
		labelTrigger:         string(trigger),
	}
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
	case backupv1alpha1.TriggerAppChange, backupv1alpha1.TriggerAppDeletion:
		return t
	}
	return backupv1alpha1.TriggerSchedule
}
