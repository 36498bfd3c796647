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
	"sort"
	"time"
)

// This file decides which backups retention deletes, from an observation
// alone: it calls nothing, reads no clock and knows no client or service
// package. retention.go observes and applies.

// listedBackup is the retention plan's view of a backup the service listed.
type listedBackup struct {
	id      string
	owner   string
	started time.Time
	// succeeded and failed: SUCCEEDED, or FAILED (a backup RUNNING past the
	// backup timeout counts as failed); neither while it runs.
	succeeded, failed bool
	// neededAttempt is set for a failed final backup attempt of the MyApp
	// that still exists: the attempts are counted from the listing, so
	// pruning one would start it again.
	neededAttempt bool
}

// retentionObservation is what a pass knows when it prunes.
type retentionObservation struct {
	owner string
	// keep is spec.retention.keepLast (at least 1).
	keep int
	// running is set while status.lastBackup is RUNNING.
	running bool
	backups []listedBackup
}

// retentionPlan is the backups to delete, oldest first within each kind.
type retentionPlan struct {
	expired []listedBackup
	// failed counts the failed backups among them.
	failed int
}

// planRetention keeps the newest keep successful backups of the owner, and
// of its failed ones those expiredFailures leaves. Pruning waits while a
// backup runs, so it never counts one that may yet fail among the kept.
func planRetention(o retentionObservation) retentionPlan {
	if o.running {
		return retentionPlan{}
	}
	var succeeded, failed []listedBackup
	for _, b := range o.backups {
		if b.owner != o.owner {
			continue
		}
		switch {
		case b.succeeded:
			succeeded = append(succeeded, b)
		case b.failed && !b.neededAttempt:
			failed = append(failed, b)
		}
	}
	byStart := func(list []listedBackup) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].started.Before(list[j].started) })
	}
	byStart(succeeded)
	byStart(failed)
	var p retentionPlan
	if len(succeeded) > o.keep {
		p.expired = append(p.expired, succeeded[:len(succeeded)-o.keep]...)
	}
	expiredFailed := expiredFailures(succeeded, failed, o.keep)
	p.expired = append(p.expired, expiredFailed...)
	p.failed = len(expiredFailed)
	return p
}

// expiredFailures is the retention rule for failed backups, both lists
// oldest first: a failed backup older than the newest successful one is
// deleted, since that success supersedes it, and of the failures after it
// only the newest keep stay, for a person to look into. Failures cannot pile
// up in the service however long a backup target stays broken.
func expiredFailures(succeeded, failed []listedBackup, keep int) []listedBackup {
	var expired []listedBackup
	if len(succeeded) > 0 {
		newest := succeeded[len(succeeded)-1].started
		for len(failed) > 0 && failed[0].started.Before(newest) {
			expired = append(expired, failed[0])
			failed = failed[1:]
		}
	}
	if len(failed) > keep {
		expired = append(expired, failed[:len(failed)-keep]...)
	}
	return expired
}
