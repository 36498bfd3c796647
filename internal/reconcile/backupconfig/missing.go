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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// missingBackups remembers, per BackupConfig, the running backup the backup
// service last answered 404 for: how many polls in a row did, and when the
// first of them was, by the controller's clock. It lives in memory only: a
// restart starts the count again, which only ever waits longer before a
// backup is given up.
type missingBackups struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]missingBackup
}

type missingBackup struct {
	id    string
	since time.Time
	polls int
}

// observe counts one more poll that found backup id missing, at now, and
// returns how many polls in a row found it missing and for how long.
func (m *missingBackups) observe(key types.NamespacedName, id string, now time.Time) (int, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[types.NamespacedName]missingBackup{}
	}
	e, ok := m.entries[key]
	if !ok || e.id != id {
		e = missingBackup{id: id, since: now}
	}
	e.polls++
	m.entries[key] = e
	return e.polls, now.Sub(e.since)
}

// forget ends the count of a BackupConfig: its backup was found, finished,
// or given up, or the BackupConfig is gone.
func (m *missingBackups) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, key)
}
