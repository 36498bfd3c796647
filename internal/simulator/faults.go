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
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// Fault describes how the simulator misbehaves for one operation. Its parts
// combine in this order: Latency, then Hang, then Status, then
// ResetAfterCommit or Body. The zero value does nothing and is refused by
// SetFault.
type Fault struct {
	// Latency delays the request before anything else happens to it.
	Latency time.Duration
	// Hang holds the request without an answer until the client goes away or
	// the server is closed, so clients hit their attempt timeout.
	Hang bool
	// Status answers the request with this HTTP status (400-599) and an error
	// body instead of serving it. Nothing is changed on the server.
	Status int
	// RetryAfter sets a Retry-After header on a Status answer, in whole
	// seconds rounded up, or as an HTTP-date when RetryAfterDate is set.
	RetryAfter     time.Duration
	RetryAfterDate bool
	// ResetAfterCommit serves the request, so a write is committed, then
	// resets the connection instead of answering: the client cannot tell
	// whether its write happened.
	ResetAfterCommit bool
	// Body serves the request, so a write is committed, then spoils the body
	// of its answer, keeping its status and headers: what a broken proxy or a
	// server crashing mid-answer sends. An answer without a body (204) is
	// sent as it is.
	Body BodyFault
	// Rate is the fraction of requests affected, in (0, 1]; 0 means all.
	Rate float64
	// Count limits the fault to that many affected requests, after which it
	// removes itself; 0 means no limit.
	Count int
}

// BodyFault is how Fault.Body spoils an answer's body.
type BodyFault string

const (
	// BodyMalformed replaces the body with bytes that are not JSON, under the
	// answer's JSON content type.
	BodyMalformed BodyFault = "malformed"
	// BodyTruncated announces the whole body's length, sends half of it and
	// drops the connection, so the client reads an unexpected end of file.
	BodyTruncated BodyFault = "truncated"
	// BodyOversized pads the body with spaces to OversizedBodyBytes: still
	// valid JSON, but larger than a client should ever read.
	BodyOversized BodyFault = "oversized"
)

// OversizedBodyBytes is the size of a BodyOversized answer: twice the 4 MiB
// the operator's clients read at most by default.
const OversizedBodyBytes = 8 << 20

// malformedBody is what a BodyMalformed answer sends.
const malformedBody = "]{\"injected\": malformed body\n"

func (f Fault) validate() error {
	if err := f.validateBody(); err != nil {
		return err
	}
	switch {
	case f.Latency < 0 || f.RetryAfter < 0:
		return errors.New("durations must not be negative")
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("status %d is not an error status (400-599)", f.Status)
	case f.Rate < 0 || f.Rate > 1 || math.IsNaN(f.Rate):
		return fmt.Errorf("rate %v is not in [0, 1]", f.Rate)
	case f.Count < 0:
		return errors.New("count must not be negative")
	case (f.RetryAfter > 0 || f.RetryAfterDate) && f.Status == 0:
		return errors.New("retryAfter needs a status to go with it")
	case f.Latency == 0 && !f.Hang && f.Status == 0 && !f.ResetAfterCommit && f.Body == "":
		return errors.New("fault does nothing: set latency, hang, status, resetAfterCommit or body")
	}
	return nil
}

// validateBody checks Body and what it may be combined with.
func (f Fault) validateBody() error {
	switch {
	case f.Body == "":
		return nil
	case f.Body != BodyMalformed && f.Body != BodyTruncated && f.Body != BodyOversized:
		return fmt.Errorf("body %q is not one of %q, %q, %q", f.Body, BodyMalformed, BodyTruncated, BodyOversized)
	case f.Status != 0 || f.ResetAfterCommit:
		return errors.New("body spoils a served answer, so it goes with neither status nor resetAfterCommit")
	}
	return nil
}

// FaultRule is a fault and the operation it is set for.
type FaultRule struct {
	Service   Service
	Operation Operation
	Fault     Fault
}

type faultKey struct {
	service Service
	op      Operation
}

// SetFault makes the simulator misbehave for one operation of a service, or
// for all of them with AllOperations, replacing any fault set there before.
// It panics on an unknown service or operation, or a fault that does
// nothing, because either is a mistake in the calling test.
func (s *Server) SetFault(service Service, op Operation, f Fault) {
	if err := s.setFault(service, op, f); err != nil {
		panic("simulator: SetFault: " + err.Error())
	}
}

func (s *Server) setFault(service Service, op Operation, f Fault) error {
	if err := validTarget(service, op); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[faultKey{service, op}] = &f
	return nil
}

// ClearFault removes the fault set for one operation (or AllOperations).
func (s *Server) ClearFault(service Service, op Operation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.faults, faultKey{service, op})
}

// ClearFaults removes every fault, outage, consistency delay and backup
// failure, leaving stored data and durations as they are.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearFaultsLocked()
}

func (s *Server) clearFaultsLocked() {
	clear(s.faults)
	clear(s.outages)
	clear(s.consistencyDelay)
	s.backupFailReason, s.backupFailRemaining = "", 0
}

// Faults returns the faults currently set, including what is left of their
// counts, sorted by service and operation.
func (s *Server) Faults() []FaultRule {
	s.mu.Lock()
	defer s.mu.Unlock()
	rules := make([]FaultRule, 0, len(s.faults))
	for k, f := range s.faults {
		rules = append(rules, FaultRule{Service: k.service, Operation: k.op, Fault: *f})
	}
	sort.Slice(rules, func(i, j int) bool {
		if rules[i].Service != rules[j].Service {
			return rules[i].Service < rules[j].Service
		}
		return rules[i].Operation < rules[j].Operation
	})
	return rules
}

// SetOutage takes a whole service down (every request answers 503) or brings
// it back.
func (s *Server) SetOutage(service Service, down bool) {
	if err := validTarget(service, AllOperations); err != nil {
		panic("simulator: SetOutage: " + err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setOutageLocked(service, down)
}

func (s *Server) setOutageLocked(service Service, down bool) {
	if down {
		s.outages[service] = true
	} else {
		delete(s.outages, service)
	}
}

// SetConsistencyDelay makes a service eventually consistent: for d after an
// object is created, reads and lists behave as if it did not exist yet. Writes
// always see it. Zero turns the delay off.
func (s *Server) SetConsistencyDelay(service Service, d time.Duration) {
	if err := validTarget(service, AllOperations); err != nil {
		panic("simulator: SetConsistencyDelay: " + err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setConsistencyDelayLocked(service, d)
}

func (s *Server) setConsistencyDelayLocked(service Service, d time.Duration) {
	if d > 0 {
		s.consistencyDelay[service] = d
	} else {
		delete(s.consistencyDelay, service)
	}
}

// FailBackups makes backups started from now on end FAILED with reason: the
// next count of them, or every one while the setting lasts when count is 0.
// An empty reason stops failing backups.
func (s *Server) FailBackups(reason string, count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failBackupsLocked(reason, count)
}

func (s *Server) failBackupsLocked(reason string, count int) {
	switch {
	case reason == "":
		s.backupFailReason, s.backupFailRemaining = "", 0
	case count > 0:
		s.backupFailReason, s.backupFailRemaining = reason, count
	default:
		s.backupFailReason, s.backupFailRemaining = reason, -1
	}
}

// takeFault returns the fault that applies to this request, if any, and
// counts it against the fault's Count.
func (s *Server) takeFault(service Service, op Operation) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := faultKey{service, op}
	f, ok := s.faults[key]
	if !ok {
		key = faultKey{service, AllOperations}
		if f, ok = s.faults[key]; !ok {
			return Fault{}, false
		}
	}
	if f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate {
		return Fault{}, false
	}
	if f.Count > 0 {
		f.Count--
		if f.Count == 0 {
			delete(s.faults, key)
		}
	}
	return *f, true
}

// serveWithFault runs next under fault f. It reports nothing: the recorder
// has seen whatever status was written, or none when the request was hung up
// on or reset.
func (s *Server) serveWithFault(w *statusRecorder, r *http.Request, f Fault, next http.HandlerFunc) {
	if f.Latency > 0 {
		timer := time.NewTimer(f.Latency)
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return
		case <-s.closed:
			timer.Stop()
			panic(http.ErrAbortHandler)
		}
	}
	if f.Hang {
		select {
		case <-r.Context().Done():
			// The client gave up; there is nobody left to answer.
			return
		case <-s.closed:
			// Closing the server ends hung requests without an answer, so
			// shutdown does not wait for clients to time out.
			panic(http.ErrAbortHandler)
		}
	}
	if f.Status != 0 {
		if f.RetryAfter > 0 || f.RetryAfterDate {
			w.Header().Set("Retry-After", retryAfterValue(f))
		}
		writeError(w, f.Status, codeForStatus(f.Status), "injected fault", "")
		return
	}
	if f.ResetAfterCommit {
		buf := &bufferedWriter{header: http.Header{}}
		next(buf, r)
		resetConnection(w)
		return
	}
	if f.Body != "" {
		buf := &bufferedWriter{header: http.Header{}, status: http.StatusOK}
		next(buf, r)
		spoilBody(w, buf, f.Body)
		return
	}
	next(w, r)
}

// spoilBody sends the answer buf holds with its body spoiled as kind says.
func spoilBody(w http.ResponseWriter, buf *bufferedWriter, kind BodyFault) {
	maps.Copy(w.Header(), buf.header)
	body := buf.body.Bytes()
	if buf.status == http.StatusNoContent || buf.status == http.StatusNotModified {
		w.WriteHeader(buf.status)
		return
	}
	switch kind {
	case BodyMalformed:
		body = []byte(malformedBody)
	case BodyOversized:
		body = append(body, bytes.Repeat([]byte(" "), max(OversizedBodyBytes-len(body), 0))...)
	case BodyTruncated:
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(buf.status)
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		// Aborting the handler closes the connection short of the length
		// announced: the client sees the body end early.
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(buf.status)
	_, _ = w.Write(body)
}

func retryAfterValue(f Fault) string {
	if f.RetryAfterDate {
		// An HTTP-date is absolute, so it is computed from the real clock the
		// client compares it with, not the simulator's business clock.
		return time.Now().Add(f.RetryAfter).UTC().Format(http.TimeFormat)
	}
	seconds := int64(math.Ceil(f.RetryAfter.Seconds()))
	return strconv.FormatInt(seconds, 10)
}

// resetConnection drops the client's connection with a TCP reset, the way a
// crashing load balancer would, after the request was already handled.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2 and recorders cannot be hijacked; aborting the handler still
		// denies the client its answer.
		panic(http.ErrAbortHandler)
	}
	raw := conn
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		raw = tc.NetConn()
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// bufferedWriter holds a response that is not sent as it is: dropped by a
// reset, or spoiled.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header         { return b.header }
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedWriter) WriteHeader(status int)      { b.status = status }
