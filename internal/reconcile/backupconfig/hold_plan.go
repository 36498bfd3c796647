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
	"k8s.io/apimachinery/pkg/types"
)

// This file decides the final-backup holds on MyApps (the final-backup
// finalizer a BackupConfig puts on the MyApp it references) from an
// observation alone: whether a hold goes on, and whether one is still
// wanted or may be released. It calls nothing, reads no clock and knows no
// client or service package. holds.go observes and applies: it reads the
// MyApps and BackupConfigs, asks the backup service the one question a
// plan may leave open, confirms a release with the API server, and writes.

// holderView is what a hold decision knows of one BackupConfig of the
// namespace: its spec, its deletion and what its status says of the MyApp's
// final backup.
type holderView struct {
	uid types.UID
	// self is the BackupConfig of this pass.
	self bool
	// optIn is spec.backupBeforeAppDeletion; appRef is spec.appRef.name.
	optIn  bool
	appRef string
	// deleting is set while the BackupConfig is being deleted; deletePolicy
	// is spec.deletionPolicy Delete; cleanupFinalizer says it still carries
	// its own cleanup finalizer.
	deleting, deletePolicy, cleanupFinalizer bool
	// suspended is spec.suspend, and gaveUp says its status (as fetched, for
	// this pass's own BackupConfig) reports the final backup abandoned
	// (FinalBackupAbandoned): suspend never blocks a deletion.
	suspended, gaveUp bool
	// finalRecorded says its status records a SUCCEEDED final backup of
	// the MyApp (finalBackupRecorded).
	finalRecorded bool
}

// wantsHold reports whether h's spec asks for a final backup of the MyApp
// named app: it has the option on and references app, and is either not
// being deleted, or is being deleted with deletionPolicy Retain and still
// has its cleanup finalizer: then its own passes may still take the
// MyApp's final backup (a namespace teardown) and release the hold
// themselves.
func wantsHold(h holderView, app string) bool {
	if !h.optIn || h.appRef != app {
		return false
	}
	return !h.deleting || !h.deletePolicy && h.cleanupFinalizer
}

// planAddHold decides whether this pass puts the hold on the MyApp it
// references: with the option on, on a MyApp that exists, is not being
// deleted (a finalizer cannot be added then: a MyApp whose deletion began
// before the option was set goes without a final backup) and does not
// carry it yet, unless the cache is behind this controller's own last hold
// write on that MyApp.
func planAddHold(optIn, appDeleting, appHeld, behind bool) bool {
	return optIn && !appDeleting && !appHeld && !behind
}

// holdObservation is what a pass knows when it asks whether a hold on a
// MyApp is still wanted.
type holdObservation struct {
	// app is the MyApp's name; appDeleting says its deletion began.
	app         string
	appDeleting bool
	// keepOwnHold is the final-backup plan's word, for this pass's
	// BackupConfig being deleted, on whether it still wants the hold
	// (planFinal); it counts only when that BackupConfig references app.
	keepOwnHold bool
	// holders is every BackupConfig the cache lists as referencing app,
	// and this pass's own (self) whatever it references.
	holders []holderView
}

// holdPlan is the answer: keep says a holder surely wants the hold;
// otherwise askService names the holder (only ever this pass's own) whose
// final backup only the backup service can say succeeded, and asked the
// holders accounted for, which the release's confirmation against the API
// server does not ask again.
type holdPlan struct {
	keep       bool
	asked      map[types.UID]bool
	askService []types.UID
}

// planHold decides, from what needs no service call, whether the hold on
// the MyApp is still wanted.
func planHold(o holdObservation) holdPlan {
	plan := holdPlan{asked: map[types.UID]bool{}}
	for _, h := range o.holders {
		if h.self && h.deleting {
			// This BackupConfig is being deleted: its final-backup plan
			// decided (teardownFinalBackup).
			if o.keepOwnHold && h.appRef == o.app {
				return holdPlan{keep: true}
			}
			plan.asked[h.uid] = true
			continue
		}
		if !wantsHold(h, o.app) {
			continue
		}
		if h.deleting || !o.appDeleting {
			// Another BackupConfig being deleted decides its own hold in its
			// own passes: it may owe the MyApp a final backup first. And a
			// MyApp not being deleted is held while the option is on.
			return holdPlan{keep: true}
		}
		plan.asked[h.uid] = true
		if h.finalRecorded || h.suspended && h.gaveUp {
			continue
		}
		if !h.self {
			// Another BackupConfig's final backup is its own question: it
			// references the MyApp, asks the service in its own passes, and
			// records the answer in its status, which this plan reads.
			// Asking the service here too made a namespace teardown cost
			// O(N) lists per pass, O(N^2) in all (audit 2, S4).
			return holdPlan{keep: true}
		}
		plan.askService = append(plan.askService, h.uid)
	}
	return plan
}

// planUnwantedRelease is the safety net's decision (releaseUnwantedHolds):
// a held MyApp that no BackupConfig of the namespace wants, as the API
// server lists them, is released.
func planUnwantedRelease(app string, holders []holderView) bool {
	for _, h := range holders {
		if wantsHold(h, app) {
			return false
		}
	}
	return true
}
