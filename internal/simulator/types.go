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

package simulator

import (
	"fmt"
	"hash/fnv"
	"maps"
	"time"
)

// Service names one of the simulated services. It is the first path segment
// of the service's endpoints and the service part of a fault's address.
type Service string

// The simulated services.
const (
	ServiceDNS    Service = "dns"
	ServiceBackup Service = "backup"
	// serviceAdmin is used only to count admin requests; it takes no faults.
	serviceAdmin Service = "admin"
)

// Operation names one endpoint of a service.
type Operation string

// The operations of the services, named as in the request counters and the
// admin API's fault paths.
const (
	OpUpsert   Operation = "upsert"    // dns only
	OpTransfer Operation = "transfer"  // dns only
	OpPutClaim Operation = "put-claim" // dns only
	OpGetClaim Operation = "get-claim" // dns only
	OpStart    Operation = "start"     // backup only
	OpContent  Operation = "content"   // backup only
	OpGet      Operation = "get"
	OpDelete   Operation = "delete"
	OpList     Operation = "list"
	// AllOperations addresses a fault to every operation of a service. A
	// fault set for one operation takes precedence over it.
	AllOperations Operation = "all"
)

// operations lists the operations each service serves.
var operations = map[Service][]Operation{
	ServiceDNS:    {OpUpsert, OpGet, OpDelete, OpList, OpTransfer, OpPutClaim, OpGetClaim},
	ServiceBackup: {OpStart, OpGet, OpDelete, OpList, OpContent},
}

// validTarget reports whether a fault may be addressed to service and op.
func validTarget(service Service, op Operation) error {
	ops, ok := operations[service]
	if !ok {
		return fmt.Errorf("unknown service %q (want dns or backup)", service)
	}
	if op == AllOperations {
		return nil
	}
	for _, o := range ops {
		if o == op {
			return nil
		}
	}
	return fmt.Errorf("service %s has no operation %q (want one of %v or %q)", service, op, ops, AllOperations)
}

// RecordState is a DNS record's propagation state.
type RecordState string

// A record is PENDING from a change until the propagation delay has passed.
const (
	StatePending RecordState = "PENDING"
	StateActive  RecordState = "ACTIVE"
)

// Record is a DNS record as the service returns it.
type Record struct {
	Name      string      `json:"name"`
	Type      string      `json:"type"`
	Value     string      `json:"value"`
	TTL       int32       `json:"ttl"`
	Owner     string      `json:"owner"`
	State     RecordState `json:"state"`
	CreatedAt time.Time   `json:"createdAt"`
	UpdatedAt time.Time   `json:"updatedAt"`
}

// Phase is a backup's phase.
type Phase string

// A backup is RUNNING for the backup duration, then SUCCEEDED or FAILED.
const (
	PhaseRunning   Phase = "RUNNING"
	PhaseSucceeded Phase = "SUCCEEDED"
	PhaseFailed    Phase = "FAILED"
)

// Backup is a backup as the service returns it.
type Backup struct {
	ID             string            `json:"id"`
	App            string            `json:"app"`
	Owner          string            `json:"owner"`
	IdempotencyKey string            `json:"idempotencyKey"`
	StartToken     string            `json:"startToken,omitempty"`
	Phase          Phase             `json:"phase"`
	SizeBytes      int64             `json:"sizeBytes,omitempty"`
	Location       string            `json:"location,omitempty"`
	Reason         string            `json:"reason,omitempty"`
	StartedAt      time.Time         `json:"startedAt"`
	CompletedAt    *time.Time        `json:"completedAt,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
}

// storedRecord is a record with what the service needs to compute its state
// later. It is also the record's form in the state file.
type storedRecord struct {
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	Value     string    `json:"value"`
	TTL       int32     `json:"ttl"`
	Owner     string    `json:"owner"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// ActiveAt is when the last change has propagated.
	ActiveAt time.Time `json:"activeAt"`
}

func (r *storedRecord) view(now time.Time) Record {
	state := StatePending
	if !now.Before(r.ActiveAt) {
		state = StateActive
	}
	return Record{
		Name: r.Name, Type: r.Type, Value: r.Value, TTL: r.TTL, Owner: r.Owner,
		State: state, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// storedBackup is a backup with its fate decided at start: when it completes
// and whether it fails. It is also the backup's form in the state file.
type storedBackup struct {
	ID             string `json:"id"`
	App            string `json:"app"`
	Owner          string `json:"owner"`
	IdempotencyKey string `json:"idempotencyKey"`
	// StartToken is the token of the start that created the backup.
	StartToken  string            `json:"startToken,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	StartedAt   time.Time         `json:"startedAt"`
	CompletesAt time.Time         `json:"completesAt"`
	// FailReason, when set, makes the backup end FAILED.
	FailReason string `json:"failReason,omitempty"`
	// Content is what the start sent, stored as it came and served once the
	// backup has succeeded; nil when the start sent none.
	Content []byte `json:"content,omitempty"`
}

func (b *storedBackup) view(now time.Time) Backup {
	out := Backup{
		ID: b.ID, App: b.App, Owner: b.Owner, IdempotencyKey: b.IdempotencyKey, StartToken: b.StartToken,
		Phase: PhaseRunning, StartedAt: b.StartedAt, Labels: maps.Clone(b.Labels),
	}
	if now.Before(b.CompletesAt) {
		return out
	}
	completed := b.CompletesAt
	out.CompletedAt = &completed
	if b.FailReason != "" {
		out.Phase, out.Reason = PhaseFailed, b.FailReason
		return out
	}
	out.Phase = PhaseSucceeded
	out.SizeBytes = backupSize(b.ID)
	if b.Content != nil {
		// A backup that carries its content is as big as that content.
		out.SizeBytes = int64(len(b.Content))
	}
	out.Location = fmt.Sprintf("s3://simulator-backups/%s/%s.tar.gz", b.App, b.ID)
	return out
}

// backupSize derives a stable, plausible size from the ID, so a backup reads
// the same on every poll and after a restart.
func backupSize(id string) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return 1<<20 + int64(h.Sum32()%(64<<20))
}
