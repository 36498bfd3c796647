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

// Package simulator serves the external DNS and backup services described in
// docs/external-api.md from memory, and misbehaves on demand: errors,
// throttling, latency, hangs, outages, resets after a committed write,
// eventual consistency and failing backups, set through a Go API or an admin
// endpoint. cmd/simulator runs it as a process; tests mount it in an
// httptest.Server:
//
//	sim := simulator.New(simulator.Options{Token: "t"})
//	srv := httptest.NewServer(sim)
//	t.Cleanup(srv.Close)
//	t.Cleanup(sim.Close) // runs first, so hung requests end before srv.Close waits for them
package simulator

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// Defaults used by cmd/simulator and the documentation's examples.
const (
	DefaultPropagationDelay = 5 * time.Second
	DefaultBackupDuration   = 10 * time.Second
)

// maxRequestBytes bounds request bodies; every valid body is far smaller.
// A backup start may carry content, up to maxContentBytes, base64-encoded,
// so its body may be larger.
const (
	maxRequestBytes      = 64 << 10
	maxContentBytes      = 1 << 20
	maxStartRequestBytes = maxContentBytes*4/3 + maxRequestBytes
)

// Options configures a Server.
type Options struct {
	// Token is the bearer token every request but /healthz must carry. Empty
	// turns authentication off, which only tests that are not about
	// authentication should do.
	Token string
	// PropagationDelay is how long a changed DNS record stays PENDING. Zero
	// makes the first read after a write see it ACTIVE.
	PropagationDelay time.Duration
	// BackupDuration is how long a backup stays RUNNING. Zero makes the first
	// read after a start see it finished.
	BackupDuration time.Duration
	// StateFile, when set, is rewritten after every change so a restarted
	// simulator can pick the data up again with Open. Faults and settings are
	// not saved.
	StateFile string
	// Clock drives propagation, backup completion and consistency delays, so
	// tests can move time instead of sleeping. Defaults to the real clock.
	// Latency, hangs and Retry-After dates always use real time, because the
	// client measures them with real time.
	Clock clock.PassiveClock
	// Logger receives a line per request (never its headers) and state file
	// errors. Defaults to discarding.
	Logger logr.Logger
}

// Server is the simulated DNS and backup services. It is an http.Handler and
// safe for concurrent use.
type Server struct {
	opts   Options
	clock  clock.PassiveClock
	log    logr.Logger
	mux    *http.ServeMux
	closed chan struct{}
	once   sync.Once

	// saveMu serialises state file writes so an older snapshot never
	// overwrites a newer one; savedVersion is the last one written.
	saveMu       sync.Mutex
	savedVersion uint64

	mu                  sync.Mutex
	records             map[string]*storedRecord
	claims              map[string]*InstallationClaim
	backups             map[string]*storedBackup
	backupKeys          map[string]string // idempotency key to backup ID
	nextBackupID        int64
	propagationDelay    time.Duration
	backupDuration      time.Duration
	faults              map[faultKey]*Fault
	outages             map[Service]bool
	consistencyDelay    map[Service]time.Duration
	backupFailReason    string
	backupFailRemaining int // -1 means every backup
	version             uint64

	statsMu sync.Mutex
	stats   map[statKey]int
}

// New returns a Server with no data. It never reads Options.StateFile; use
// Open to start from a saved state.
func New(opts Options) *Server {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	s := &Server{
		opts:   opts,
		clock:  opts.Clock,
		log:    opts.Logger,
		closed: make(chan struct{}),
		stats:  map[statKey]int{},
	}
	s.resetLocked()
	s.routes()
	return s
}

// resetLocked returns data, faults and settings to how New left them.
func (s *Server) resetLocked() {
	s.records = map[string]*storedRecord{}
	s.claims = map[string]*InstallationClaim{}
	s.backups = map[string]*storedBackup{}
	s.backupKeys = map[string]string{}
	s.nextBackupID = 1
	s.propagationDelay = max(s.opts.PropagationDelay, 0)
	s.backupDuration = max(s.opts.BackupDuration, 0)
	s.faults = map[faultKey]*Fault{}
	s.outages = map[Service]bool{}
	s.consistencyDelay = map[Service]time.Duration{}
	s.backupFailReason, s.backupFailRemaining = "", 0
}

// Reset forgets every record, backup, fault, setting and request count, as if
// the server had just been created. The state file, if any, is emptied too.
func (s *Server) Reset() {
	s.mu.Lock()
	s.resetLocked()
	snapshot := s.snapshotLocked()
	s.mu.Unlock()
	s.ResetRequestCounts()
	s.save(snapshot)
}

// Close ends hung and delayed requests and makes new ones fail the same way,
// so an http.Server or httptest.Server holding this handler can shut down
// without waiting for clients to time out. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
}

// SetPropagationDelay changes how long records changed from now on stay
// PENDING.
func (s *Server) SetPropagationDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.propagationDelay = max(d, 0)
}

// SetBackupDuration changes how long backups started from now on run.
func (s *Server) SetBackupDuration(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backupDuration = max(d, 0)
}

// Records returns every stored record as a read would show it now, ignoring
// consistency delays, sorted by name.
func (s *Server) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listRecordsLocked("", "", false)
}

// Backups returns every stored backup as a read would show it now, ignoring
// consistency delays, oldest first.
func (s *Server) Backups() []Backup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listBackupsLocked("", "", false)
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})

	s.handle(m, "PUT /dns/v1/records/{name}", ServiceDNS, OpUpsert, s.upsertRecord)
	s.handle(m, "GET /dns/v1/records/{name}", ServiceDNS, OpGet, s.getRecord)
	s.handle(m, "DELETE /dns/v1/records/{name}", ServiceDNS, OpDelete, s.deleteRecord)
	s.handle(m, "PUT /dns/v1/records/{name}/owner", ServiceDNS, OpTransfer, s.transferRecord)
	s.handle(m, "GET /dns/v1/records", ServiceDNS, OpList, s.listRecords)
	s.handle(m, "PUT /dns/v1/installations/{ownerId}", ServiceDNS, OpPutClaim, s.putClaim)
	s.handle(m, "GET /dns/v1/installations/{ownerId}", ServiceDNS, OpGetClaim, s.getClaim)

	s.handle(m, "POST /backup/v1/backups", ServiceBackup, OpStart, s.startBackup)
	s.handle(m, "GET /backup/v1/backups/{id}", ServiceBackup, OpGet, s.getBackup)
	s.handle(m, "GET /backup/v1/backups/{id}/content", ServiceBackup, OpContent, s.getBackupContent)
	s.handle(m, "DELETE /backup/v1/backups/{id}", ServiceBackup, OpDelete, s.deleteBackup)
	s.handle(m, "GET /backup/v1/backups", ServiceBackup, OpList, s.listBackups)

	s.admin(m, "GET /admin/v1/state", "state", s.adminState)
	s.admin(m, "POST /admin/v1/reset", "reset", s.adminReset)
	s.admin(m, "GET /admin/v1/faults", "faults", s.adminFaults)
	s.admin(m, "DELETE /admin/v1/faults", "clear-faults", s.adminClearFaults)
	s.admin(m, "PUT /admin/v1/faults/{service}/{operation}", "set-fault", s.adminSetFault)
	s.admin(m, "DELETE /admin/v1/faults/{service}/{operation}", "clear-fault", s.adminClearFault)
	s.admin(m, "PUT /admin/v1/outages/{service}", "set-outage", s.adminSetOutage)
	s.admin(m, "GET /admin/v1/settings", "settings", s.adminSettings)
	s.admin(m, "PATCH /admin/v1/settings", "update-settings", s.adminUpdateSettings)
	s.admin(m, "GET /admin/v1/stats", "stats", s.adminStats)
	s.admin(m, "DELETE /admin/v1/stats", "reset-stats", s.adminResetStats)

	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no endpoint "+r.Method+" "+r.URL.Path, "")
	})
	s.mux = m
}

// handle mounts a service endpoint behind the simulated infrastructure: the
// request counter, the outage switch, authentication and the fault injector,
// in the order a real deployment's load balancer, gateway and service would
// apply them.
func (s *Server) handle(m *http.ServeMux, pattern string, service Service, op Operation, h http.HandlerFunc) {
	m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		defer func() { s.finish(service, op, r, rec, start) }()

		if s.isDown(service) {
			writeError(rec, http.StatusServiceUnavailable, "unavailable", string(service)+" service is unavailable", "")
			return
		}
		if !s.authorize(rec, r) {
			return
		}
		limit := int64(maxRequestBytes)
		if service == ServiceBackup && op == OpStart {
			limit = maxStartRequestBytes
		}
		r.Body = http.MaxBytesReader(rec, r.Body, limit)
		if f, ok := s.takeFault(service, op); ok {
			s.serveWithFault(rec, r, f, h)
			return
		}
		h(rec, r)
	})
}

// admin mounts an admin endpoint: authenticated and counted, never faulty.
func (s *Server) admin(m *http.ServeMux, pattern, op string, h http.HandlerFunc) {
	m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		defer func() { s.finish(serviceAdmin, Operation(op), r, rec, start) }()
		if !s.authorize(rec, r) {
			return
		}
		r.Body = http.MaxBytesReader(rec, r.Body, maxRequestBytes)
		h(rec, r)
	})
}

func (s *Server) finish(service Service, op Operation, r *http.Request, rec *statusRecorder, start time.Time) {
	s.count(service, op, rec.status)
	s.log.Info("Handled request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
		"duration", time.Since(start).Round(time.Microsecond).String())
}

func (s *Server) isDown(service Service) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outages[service]
}

// authorize answers 401 to a request without a bearer token and 403 to one
// with the wrong token.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	header := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="simulator"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "a bearer token is required", "")
		return false
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) != 1 {
		writeError(w, http.StatusForbidden, "forbidden", "the bearer token is not valid", "")
		return false
	}
	return true
}

// ServeHTTP serves the DNS service under /dns/v1/, the backup service under
// /backup/v1/, the admin API under /admin/v1/ and a health check at /healthz.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// statusRecorder remembers the status written through it. It unwraps to the
// real writer so http.ResponseController can still hijack the connection.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusRecorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// errorBody is the body of every error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Owner   string `json:"owner,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, message, owner string) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: message, Owner: owner}})
}

func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		return "invalid"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusConflict:
		return "conflict"
	case http.StatusTooManyRequests:
		return "throttled"
	case http.StatusServiceUnavailable:
		return "unavailable"
	}
	if status >= 500 {
		return "internal"
	}
	return "error"
}

// writeJSON writes v indented, because people read these responses with curl.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"encode response"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// decodeBody reads a JSON request body strictly, so a misspelt field is an
// error instead of a silently ignored one.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large",
				fmt.Sprintf("request body is larger than %d bytes", tooLarge.Limit), "")
			return false
		}
		writeError(w, http.StatusBadRequest, "invalid", "request body: "+err.Error(), "")
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "invalid", "request body: data after the JSON value", "")
		return false
	}
	return true
}

// statKey identifies a request counter. Status 0 counts requests that got no
// answer: hung up on, reset, or abandoned by the client.
type statKey struct {
	service Service
	op      Operation
	status  int
}

// RequestCount is how many requests one operation answered with one status.
type RequestCount struct {
	Service   Service   `json:"service"`
	Operation Operation `json:"operation"`
	// Status is the HTTP status, or 0 for requests that got no answer.
	Status int `json:"status"`
	Count  int `json:"count"`
}

func (s *Server) count(service Service, op Operation, status int) {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	s.stats[statKey{service, op, status}]++
}

// RequestCount returns how many requests an operation has handled, whatever
// their status. A request is counted once it is finished, so a test waiting
// for a hung request should poll.
func (s *Server) RequestCount(service Service, op Operation) int {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	n := 0
	for k, c := range s.stats {
		if k.service == service && k.op == op {
			n += c
		}
	}
	return n
}

// RequestCountStatus returns how many requests an operation answered with
// status (0 for no answer).
func (s *Server) RequestCountStatus(service Service, op Operation, status int) int {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats[statKey{service, op, status}]
}

// RequestCounts returns every counter, sorted by service, operation and
// status. Admin requests are counted under the service "admin".
func (s *Server) RequestCounts() []RequestCount {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	out := make([]RequestCount, 0, len(s.stats))
	for k, c := range s.stats {
		out = append(out, RequestCount{Service: k.service, Operation: k.op, Status: k.status, Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		return a.Status < b.Status
	})
	return out
}

// ResetRequestCounts sets every counter back to zero.
func (s *Server) ResetRequestCounts() {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	clear(s.stats)
}

// now is the business clock's time, in UTC and to the millisecond, so
// timestamps read the same in JSON, in the state file and to a person.
func (s *Server) now() time.Time {
	return s.clock.Now().UTC().Truncate(time.Millisecond)
}
