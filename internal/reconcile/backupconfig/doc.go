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
// Files follow the pass: backupconfig_controller.go (setup, Reconcile, the
// phase list, the status write) runs the phases, and calls go down this
// list, never back up to a phase or to the controller's file (but for the
// Reconciler their methods hang on, and the index key holds.go reads):
// delete.go, the deletion, which runs the final backup and the holds too;
// schedule.go; final_backup.go; holds.go; backups.go (the running backup's
// poll, and new backups); retention.go. Each phase is one loop: it
// observes, asks its planner in backupplan (a pure package: no client, no
// service, no clock) for the next step and what it must read first, asks
// the backup service in service.go (the one place that starts a backup,
// whatever the trigger, and the idempotency keys and labels), and folds the
// answer into status in record.go (the one place that turns the service's
// answers into status, with the events they note), then plans again. The
// files below the phases share their types and helpers both ways rather
// than in one order: restores.go, the Restores in progress a phase stays
// out of the way of; record.go; service.go; content.go, what a backup
// keeps; status.go, which derives the conditions from what the pass
// learned (with the status rules every kind shares, in
// internal/reconcile/pass) and sends the events the pass noted; scope.go,
// the per-pass scope; memory.go and missing.go, what passes leave for later
// ones; metrics.go; and defaults.go, the tunables and the fixed intervals.
// The planners' promises are checked in backupplan's tests over every
// observation of a bounded space and over seeded worlds, without a control
// plane (make test-unit).
package backupconfig
