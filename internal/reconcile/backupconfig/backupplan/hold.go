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

package backupplan

// HolderView is what a hold decision knows of one BackupConfig of the
// namespace: its spec, its deletion and what its status says of the
// MyApp's final backup.
type HolderView struct {
	// UID identifies the BackupConfig; Self says it is this pass's.
	UID  string
	Self bool
	// OptIn is spec.backupBeforeAppDeletion; AppRef is spec.appRef.name.
	OptIn  bool
	AppRef string
	// Deleting is set while the BackupConfig is being deleted;
	// DeletePolicy is spec.deletionPolicy Delete; CleanupFinalizer says it
	// still carries its own cleanup finalizer.
	Deleting, DeletePolicy, CleanupFinalizer bool
	// Suspended is spec.suspend, and GaveUp says its status (as fetched,
	// for this pass's own BackupConfig) reports the final backup abandoned
	// (FinalBackupAbandoned): suspend never blocks a deletion.
	Suspended, GaveUp bool
	// FinalRecorded says its status records a SUCCEEDED final backup of
	// the MyApp.
	FinalRecorded bool
}

// WantsHold reports whether h's spec asks for a final backup of the MyApp
// named app: it has the option on and references app, and is either not
// being deleted, or is being deleted with deletionPolicy Retain and still
// has its cleanup finalizer: then its own passes may still take the
// MyApp's final backup (a teardown) and release the hold themselves.
func WantsHold(h HolderView, app string) bool {
	if !h.OptIn || h.AppRef != app {
		return false
	}
	return !h.Deleting || !h.DeletePolicy && h.CleanupFinalizer
}

// PlanAddHold decides whether a pass puts the hold on the MyApp its
// BackupConfig references: with the option on, on a MyApp that exists, is
// not being deleted (a finalizer cannot be added then: a MyApp whose
// deletion began before the option was set goes without a final backup)
// and does not carry it yet, unless the cache is behind this controller's
// own last hold write on that MyApp.
func PlanAddHold(optIn, appDeleting, appHeld, cacheBehind bool) bool {
	return optIn && !appDeleting && !appHeld && !cacheBehind
}

// HoldObservation is what a pass knows when it asks whether the hold on a
// MyApp is still wanted, and what it read so far.
type HoldObservation struct {
	// App is the MyApp's name; AppDeleting says its deletion began.
	App         string
	AppDeleting bool
	// Holders is every BackupConfig the cache lists as referencing App,
	// and this pass's own (Self) whatever it references.
	Holders []HolderView
	// OwnSucceeded is the service's answer, once asked (OwnAsked), on
	// whether this pass's own final backup of the MyApp SUCCEEDED.
	OwnAsked, OwnSucceeded bool
	// Confirmed is set once the API server listed the namespace's
	// BackupConfigs, and Live is that list: a release decided from the
	// cache is confirmed against it before it counts.
	Confirmed bool
	Live      []HolderView
}

// HoldPlan is the decision: what to read first, or whether the hold goes.
type HoldPlan struct {
	Need    Need
	Release bool
}

// PlanHold decides whether the hold on the MyApp may go. The hold stays
// while any BackupConfig still wants a final backup of the MyApp: one not
// being deleted while the MyApp lives; once the MyApp is being deleted,
// one whose final backup has not SUCCEEDED and that has not given it up
// (suspended, FinalBackupAbandoned); one being deleted decides in its own
// passes. Only this pass's own final
// backup is asked of the service: another BackupConfig's answer is its
// own question, recorded in its status, which the view reads (asking here
// too made a namespace teardown cost O(N^2) calls; audit 2, S4). A release
// decided from the cache is confirmed with the API server: a BackupConfig
// the cache does not show yet, or shows with an older spec, that wants the
// hold keeps it.
func PlanHold(o HoldObservation) HoldPlan {
	accounted := map[string]bool{}
	askOwn := false
	for _, h := range o.Holders {
		if h.Self && h.Deleting {
			// This BackupConfig is being deleted, and its pass asks only once
			// its final-backup plan let the MyApp go (PlanFinalBackup).
			accounted[h.UID] = true
			continue
		}
		if !WantsHold(h, o.App) {
			continue
		}
		if h.Deleting || !o.AppDeleting {
			// Another BackupConfig being deleted decides its own hold in its
			// own passes: it may owe the MyApp a final backup first. And a
			// MyApp not being deleted is held while the option is on.
			return HoldPlan{}
		}
		accounted[h.UID] = true
		switch {
		case h.FinalRecorded || h.Suspended && h.GaveUp:
		case !h.Self:
			return HoldPlan{}
		default:
			askOwn = true
		}
	}
	switch {
	case askOwn && !o.OwnAsked:
		// Asked only once no other BackupConfig keeps the hold anyway.
		return HoldPlan{Need: NeedOwnFinalBackup}
	case askOwn && !o.OwnSucceeded:
		return HoldPlan{}
	case !o.Confirmed:
		return HoldPlan{Need: NeedHoldersFromAPIServer}
	}
	for _, h := range o.Live {
		if !accounted[h.UID] && WantsHold(h, o.App) {
			// That BackupConfig, or this one's next pass on its current
			// spec, decides.
			return HoldPlan{}
		}
	}
	return HoldPlan{Release: true}
}

// PlanUnwantedRelease is the safety net's decision: a held MyApp that no
// BackupConfig of the namespace wants, as the API server lists them, is
// released.
func PlanUnwantedRelease(app string, holders []HolderView) bool {
	for _, h := range holders {
		if WantsHold(h, app) {
			return false
		}
	}
	return true
}
