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

// Package restore is the Restore controller. A Restore brings a MyApp back
// from a backup: it chooses the backup once (a BackupConfig's newest
// succeeded one, a named one, or the newest one this installation holds in
// storage of a MyApp by namespace and name), writes that choice to its
// status before anything else, reads the backup's content, creates the
// MyApp from it in its own namespace, marked with the restore, and follows
// the MyApp until it is Ready with its DNS record active. It never deletes
// what it restored, and a Restore's deletion needs nothing from it.
//
// What it does is told once, in docs/spec/restore.md.
//
// Files follow the pass and call downward only: restore_controller.go
// (setup, Reconcile, the status write) runs the one phase in restore.go,
// which loops over the plan of the restoreplan package: the plan, pure,
// decides from an observation which read it needs next (read.go makes it)
// and, once it has read enough, what to do (apply.go does it), what the
// status shows and when the Restore comes back. status.go derives the
// conditions and words the messages and events; scope.go is the per-pass
// scope, index.go the field indexes of Restores in progress (exported for
// the controllers that must stay out of a restore's way), metrics.go and
// defaults.go the rest. restoreplan's tests check the plan's promises over
// every observation of a bounded space and over sequences of passes with
// crashes, without a control plane.
// How a pass runs its phases and reads what they return is shared with the
// other controllers, in internal/reconcile/pass.
package restore
