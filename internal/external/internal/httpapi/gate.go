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

package httpapi

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

// gate holds back every call of one client while its service has asked,
// with Retry-After, to be left alone. A rate limit belongs to the client, not
// to the object a reconciler happens to work on: without the gate, a watch
// event for any object would call a throttling service again before it
// allowed, and N objects would make N calls per wait.
//
// The wait honoured is capped, so one absurd answer (a day, a millisecond
// count sent as seconds, a date years ahead), from the service or a proxy in
// front of it, cannot stop every call until the manager restarts.
type gate struct {
	service string
	// maxWait caps the wait honoured for one answer.
	maxWait time.Duration
	log     logr.Logger
	now     func() time.Time

	mu    sync.Mutex
	until time.Time
}

// honour closes the gate for the wait an answer asked for, at most maxWait,
// and returns the wait honoured. header is the Retry-After value as sent, for
// the log line that says a wait was capped. A gate already closed for
// longer stays so.
func (g *gate) honour(asked time.Duration, header string) time.Duration {
	wait := asked
	if wait > g.maxWait {
		wait = g.maxWait
		retryAfterCapped.WithLabelValues(g.service).Inc()
		g.log.Info("Capping the wait the external service asked for", "service", g.service,
			"retryAfter", header, "asked", asked.String(), "honoured", wait.String())
	}
	if wait <= 0 {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if until := g.now().Add(wait); until.After(g.until) {
		g.until = until
		g.log.V(1).Info("Holding calls back until the wait the external service asked for is over",
			"service", g.service, "wait", wait.String())
	}
	return wait
}

// remaining is how long calls must still wait; zero when the gate is open.
// A nil gate is always open.
func (g *gate) remaining() time.Duration {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(g.until.Sub(g.now()), 0)
}

// heldBack returns the error of a call made while the gate is closed, or nil
// when the call may go. It matches external.ErrThrottled and carries the wait
// that is left, rounded up to a millisecond so a requeue after it never comes
// back before the gate opens.
func (g *gate) heldBack(operation string) error {
	left := g.remaining()
	if left <= 0 {
		return nil
	}
	left = (left + time.Millisecond - 1).Truncate(time.Millisecond)
	return &external.Error{
		Kind:      external.KindThrottled,
		Service:   g.service,
		Operation: operation,
		Message: fmt.Sprintf("not sent: the service asked to wait until %s",
			g.now().Add(left).UTC().Format(time.RFC3339)),
		RetryAfter: left,
	}
}
