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

package dnstest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the fault layer does to one write request.
type Fault int

const (
	// Pass sends the request and returns its answer.
	Pass Fault = iota
	// Fail answers with an error without sending the request: the server
	// never sees it.
	Fail
	// Hold sends the request after HoldFor: the name stays as the writes
	// before it left it for that long, which the reader sees.
	Hold
	// Lose sends the request and drops its answer: the server applied it,
	// the client is told it failed.
	Lose
	// Down fails the request as Fail does, and every write after it until
	// Disarm: the server went away in the middle of the call (a sidecar
	// restarting), and the call's own retries fail too.
	Down
)

func (f Fault) String() string {
	return [...]string{"pass", "fail", "hold", "lose", "down"}[f]
}

// ErrInjected is the error a failed or lost request answers with.
var ErrInjected = errors.New("dnstest: injected fault: the request failed or its answer was lost")

// HoldFor is how long a held request waits: long enough for the reader,
// which polls every ReadEvery, to read the name at least twice meanwhile.
const HoldFor = 250 * time.Millisecond

// Faults is the suite's fault layer. A backend routes every write request
// its client sends (a webhook batch, an HTTP PUT or DELETE, an RFC 2136
// UPDATE) through Do, or through RoundTripper for an HTTP client; Arm then
// makes exactly one of them fail, wait or lose its answer.
type Faults struct {
	mu     sync.Mutex
	fault  Fault
	left   int // writes to let through before the armed one
	writes atomic.Int64
}

// Arm makes the n-th write request from now (1 is the next) meet fault,
// and every other one pass.
func (f *Faults) Arm(fault Fault, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault, f.left = fault, n-1
}

// Disarm lets every request pass; it reports whether the armed fault was
// never met (the operation made fewer writes than the fault waited for).
func (f *Faults) Disarm() (unmet bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	unmet = f.fault != Pass && (f.fault != Down || f.left >= 0)
	f.fault, f.left = Pass, 0
	return unmet
}

// Writes is the number of write requests seen so far.
func (f *Faults) Writes() int { return int(f.writes.Load()) }

func (f *Faults) take() Fault {
	f.writes.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault == Pass {
		return Pass
	}
	if f.left > 0 {
		f.left--
		return Pass
	}
	f.left = -1 // met
	out := f.fault
	if out != Down {
		f.fault = Pass
	}
	return out
}

// Do runs one write request, send, through the layer.
func (f *Faults) Do(ctx context.Context, send func() error) error {
	switch f.take() {
	case Fail, Down:
		return ErrInjected
	case Hold:
		select {
		case <-time.After(HoldFor):
		case <-ctx.Done():
			return ctx.Err()
		}
	case Lose:
		if err := send(); err != nil {
			return err
		}
		return ErrInjected
	}
	return send()
}

// RoundTripper routes the requests isWrite selects through the layer and
// sends them, and every other request, with next.
func (f *Faults) RoundTripper(next http.RoundTripper, isWrite func(*http.Request) bool) http.RoundTripper {
	return roundTripper{f: f, next: next, isWrite: isWrite}
}

type roundTripper struct {
	f       *Faults
	next    http.RoundTripper
	isWrite func(*http.Request) bool
}

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if !rt.isWrite(r) {
		return rt.next.RoundTrip(r)
	}
	var resp *http.Response
	err := rt.f.Do(r.Context(), func() error {
		var err error
		resp, err = rt.next.RoundTrip(r)
		return err
	})
	if resp == nil && r.Body != nil {
		_ = r.Body.Close() // a failed request is never sent; its body is closed as RoundTrip must
	}
	if errors.Is(err, ErrInjected) && resp != nil {
		// A lost answer: the server applied the request; its answer is
		// read and dropped.
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}
