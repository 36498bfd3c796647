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

// Package backupconfig is the BackupConfig controller. It backs up a MyApp it
// does not own in the external backup service, which emits no events, so the
// controller learns everything it needs from watches and from polling the
// backups it started.
//
// What it does (triggers, failures and timeouts, crash safety, waiting for
// the service, ownership of backups, the final backup before a MyApp goes,
// deletion) is told once, in docs/spec/backupconfig.md.
//
// Files follow the pass and call downward only: backupconfig_controller.go
// (setup, Reconcile, the phase list) runs the phases in backups.go,
// retention.go, final_backup.go, delete.go, schedule.go and holds.go; they
// call the helpers in service.go (the backup service, backup identity and
// keys), status.go (conditions and events), scope.go (the per-pass scope) and
// defaults.go. The decisions of new backups, final backups, retention and
// the final-backup holds on MyApps are pure plans over an observation
// (backup_plan.go: planNewBackup, planDue; final_plan.go: planFinalBackup;
// retention_plan.go: planRetention; hold_plan.go: planAddHold, planHold,
// planUnwantedRelease), which backups.go, final_backup.go, delete.go,
// retention.go and holds.go observe for and apply; the plans call nothing
// and read no clock, and plan_properties_test.go and hold_plan_test.go
// check their promises over every observation of a bounded space. How a
// pass runs its phases and reads what they return is shared with the MyApp
// controller, in internal/reconcile/pass.
package backupconfig
