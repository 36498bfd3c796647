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

import (
	"sort"
	"time"
)

// Listed is the retention plan's view of a backup the service listed.
type Listed struct {
	ID      string
	Owner   string
	Started time.Time
	// Succeeded and Failed: SUCCEEDED, or FAILED (a backup RUNNING past the
	// backup timeout counts as failed); neither while it runs.
	Succeeded, Failed bool
	// NeededAttempt is set for a failed final backup attempt of the MyApp
	// that still exists: the attempts are counted from the listing, so
	// pruning one would start it again.
	NeededAttempt bool
	// Pinned is set while a Restore in progress has chosen the backup
	// (its status.backup.id): the Restore still reads it.
	Pinned bool
}

// RetentionObservation is what a pass knows when it prunes.
type RetentionObservation struct {
	Owner string
	// Keep is spec.retention.keepLast (at least 1).
	Keep int
	// Running is set while status.lastBackup is RUNNING.
	Running bool
	Backups []Listed
}

// RetentionPlan is the backups to delete, oldest first within each kind.
type RetentionPlan struct {
	Expired []Listed
	// Failed counts the failed backups among them.
	Failed int
	// Pinned are the backups retention would delete but keeps, because a
	// Restore in progress needs them; a later pass deletes them once it
	// has finished.
	Pinned []Listed
}

// PlanRetention keeps the newest Keep successful backups of the owner, and
// of its failed ones those expiredFailures leaves. Pruning waits while a
// backup runs, so it never counts one that may yet fail among the kept. A
// backup a Restore in progress has chosen is never deleted: it stays
// beyond Keep until the Restore has finished.
func PlanRetention(o RetentionObservation) RetentionPlan {
	p := planRetention(o)
	kept := p.Expired[:0:0]
	failed := 0
	for i, b := range p.Expired {
		switch {
		case b.Pinned:
			p.Pinned = append(p.Pinned, b)
		default:
			kept = append(kept, b)
			if i >= len(p.Expired)-p.Failed {
				failed++
			}
		}
	}
	p.Expired, p.Failed = kept, failed
	return p
}

// PlanCleanup is what a BackupConfig's deletion with deletionPolicy Delete
// deletes of the backups listed: every one of owner's, except those a
// Restore in progress has chosen, which wait until it has finished (the
// deletion waits with them).
func PlanCleanup(owner string, backups []Listed) (deletes, pinned []Listed) {
	for _, b := range backups {
		switch {
		case b.Owner != owner:
		case b.Pinned:
			pinned = append(pinned, b)
		default:
			deletes = append(deletes, b)
		}
	}
	return deletes, pinned
}

func planRetention(o RetentionObservation) RetentionPlan {
	if o.Running {
		return RetentionPlan{}
	}
	var succeeded, failed []Listed
	for _, b := range o.Backups {
		if b.Owner != o.Owner {
			continue
		}
		switch {
		case b.Succeeded:
			succeeded = append(succeeded, b)
		case b.Failed && !b.NeededAttempt:
			failed = append(failed, b)
		}
	}
	byStart := func(list []Listed) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].Started.Before(list[j].Started) })
	}
	byStart(succeeded)
	byStart(failed)
	var p RetentionPlan
	if len(succeeded) > o.Keep {
		p.Expired = append(p.Expired, succeeded[:len(succeeded)-o.Keep]...)
	}
	expiredFailed := ExpiredFailures(succeeded, failed, o.Keep)
	p.Expired = append(p.Expired, expiredFailed...)
	p.Failed = len(expiredFailed)
	return p
}

// ExpiredFailures is the retention rule for failed backups, both lists
// oldest first: a failed backup older than the newest successful one is
// deleted, since that success supersedes it, and of the failures after it
// only the newest keep stay, for a person to look into. Failures cannot
// pile up in the service however long a backup target stays broken.
func ExpiredFailures(succeeded, failed []Listed, keep int) []Listed {
	var expired []Listed
	if len(succeeded) > 0 {
		newest := succeeded[len(succeeded)-1].Started
		for len(failed) > 0 && failed[0].Started.Before(newest) {
			expired = append(expired, failed[0])
			failed = failed[1:]
		}
	}
	if len(failed) > keep {
		expired = append(expired, failed[:len(failed)-keep]...)
	}
	return expired
}
