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
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// memory is what the Reconciler remembers about BackupConfigs from one pass
// to the next, in this process only. Everything in it may be lost in a
// restart: the cost is at most one call to the backup service per
// BackupConfig before a wait it asked for is over, and a cleanup gauge
// estimated from status until the service answers again.
type memory struct {
	mu sync.Mutex
	// serviceWaits holds, per BackupConfig, the last backup service answer
	// that asked for a wait (Retry-After), and when the wait ends.
	serviceWaits map[types.NamespacedName]serviceWait
	// cleanupCounted holds the BackupConfigs being deleted whose
	// held-for-cleanup gauge has been set from a listing of the service.
	cleanupCounted map[types.NamespacedName]bool
}

type serviceWait struct {
	until  time.Time
	answer *external.Error
}

// waitFor records that the backup service asked a BackupConfig's calls to
// wait d, with the answer that asked for it.
func (m *memory) waitFor(key types.NamespacedName, answer *external.Error, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.serviceWaits == nil {
		m.serviceWaits = map[types.NamespacedName]serviceWait{}
	}
	m.serviceWaits[key] = serviceWait{until: time.Now().Add(d), answer: answer}
}

// pendingWait returns the error a call made now should fail with, because
// the wait the service asked for is not over, or nil when the call may go.
// The error is the answer that asked for the wait, carrying the wait that
// remains, so callers treat it exactly like that answer.
func (m *memory) pendingWait(key types.NamespacedName) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.serviceWaits[key]
	if !ok {
		return nil
	}
	remaining := time.Until(w.until)
	if remaining <= 0 {
		delete(m.serviceWaits, key)
		return nil
	}
	held := &heldBackError{until: w.until, answer: *w.answer}
	held.answer.RetryAfter = remaining
	return held
}

// heldBackError is the error of a call that was not sent because the
// backup service asked to wait. It unwraps to the answer that asked, with
// the wait that remains, so it is handled exactly like that answer.
type heldBackError struct {
	until  time.Time
	answer external.Error
}

func (e *heldBackError) Error() string {
	return fmt.Sprintf("not calling the backup service before %s, the end of the wait it asked for: %v",
		e.until.UTC().Format(time.RFC3339), &e.answer)
}

func (e *heldBackError) Unwrap() error { return &e.answer }

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
	delete(m.serviceWaits, key)
	delete(m.cleanupCounted, key)
}

// patientBackups is the backup service as one BackupConfig's pass sees it:
// while a wait the service asked this BackupConfig for is not over, calls
// are not sent and fail as the answer that asked for the wait did. A pass
// can start before the wait is over, because a watch event (a MyApp change,
// an edit of the BackupConfig) knows nothing about it; this keeps such a
// pass from calling the service sooner than it allows.
type patientBackups struct {
	backup.Client
	memory *memory
	key    types.NamespacedName
}

var _ backup.Client = patientBackups{}

// Start starts a backup unless the service asked to wait.
func (p patientBackups) Start(ctx context.Context, req backup.StartRequest) (backup.Backup, error) {
	if err := p.memory.pendingWait(p.key); err != nil {
		return backup.Backup{}, err
	}
	return p.Client.Start(ctx, req)
}

// Get reads a backup unless the service asked to wait.
func (p patientBackups) Get(ctx context.Context, id string) (backup.Backup, error) {
	if err := p.memory.pendingWait(p.key); err != nil {
		return backup.Backup{}, err
	}
	return p.Client.Get(ctx, id)
}

// List lists backups unless the service asked to wait.
func (p patientBackups) List(ctx context.Context, owner string) ([]backup.Backup, error) {
	if err := p.memory.pendingWait(p.key); err != nil {
		return nil, err
	}
	return p.Client.List(ctx, owner)
}

// Delete deletes a backup unless the service asked to wait.
func (p patientBackups) Delete(ctx context.Context, id, owner string) error {
	if err := p.memory.pendingWait(p.key); err != nil {
		return err
	}
	return p.Client.Delete(ctx, id, owner)
}

// rememberWait records the wait a failed call asked for, unless the call was
// held back by a wait already recorded, which must not be extended.
func (m *memory) rememberWait(key types.NamespacedName, err error, d time.Duration) {
	var held *heldBackError
	if errors.As(err, &held) {
		return
	}
	var answer *external.Error
	if errors.As(err, &answer) {
		m.waitFor(key, answer, d)
	}
}
