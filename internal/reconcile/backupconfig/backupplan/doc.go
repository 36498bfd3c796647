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

// Package backupplan decides what a BackupConfig's passes do with the
// backup service and with the final-backup holds on MyApps, as data: each
// planner turns one observation (what the pass knows) into a plan: what to
// read first (a Need, one type for the package), or what to do (an
// action) and when to come back (a Wake). It reads nothing, calls nothing,
// and has no clock (the observation carries the time); it imports the
// standard library and the API's types only, the rule of every planner
// (TestThePlannerImportsNoClientAndNoClock), so every decision is checked
// over every observation of a bounded space and over seeded sequences
// against a model of the world, without a control plane (make test-unit).
// The backupconfig package observes, applies and shows.
//
// The planners:
//   - PlanNewBackup: the next action for new backups (skip a slot, list the
//     service's backups, start one for a backup-now request, a slot or a
//     change, or nothing) and the one wake-up of the pass;
//   - PlanFinalBackup: a MyApp's final backup, for a BackupConfig in use
//     and for one being deleted, with what it must read first (the MyApp
//     from the API server, the namespace, the service's final attempts);
//   - PlanHold, PlanAddHold, PlanUnwantedRelease: the final-backup holds
//     (the finalizer a BackupConfig puts on the MyApp it references);
//   - PlanRetention: the backups retention deletes.
//
// The promises they keep are stated in the tests from the docs
// (docs/spec/backupconfig.md), never by restating a planner.
package backupplan
