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

	"k8s.io/apimachinery/pkg/types"
)

// memory is what the Reconciler remembers about BackupConfigs from one pass
// to the next, in this process only. Everything in it may be lost in a
// restart: the cost is a cleanup gauge estimated from status until the
// service answers again. (A wait the backup service asks for is kept by its
// client, which holds every call back until it is over.)
type memory struct {
	mu sync.Mutex
	// cleanupCounted holds the BackupConfigs being deleted whose
	// held-for-cleanup gauge has been set from a listing of the service.
	cleanupCounted map[types.NamespacedName]bool
}

// markCleanupCounted records that a listing of the service set the
// BackupConfig's held-for-cleanup gauge.
func (m *memory) markCleanupCounted(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cleanupCounted == nil {
		m.cleanupCounted = map[types.NamespacedName]bool{}
	}
	m.cleanupCounted[key] = true
}

func (m *memory) isCleanupCounted(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cleanupCounted[key]
}

// forget drops everything remembered about a BackupConfig that is gone.
func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cleanupCounted, key)
}
