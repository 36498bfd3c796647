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

package reliability

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// errCrashed is what every call of a crashed manager gets.
var errCrashed = errors.New("reliability: the manager crashed")

// crashGate sits under every call one manager makes, to the API server and to
// both external services. It numbers the writes in the order they are sent
// and, when crashAt is set, lets write crashAt through and then fails every
// later call of that manager, reads included: the manager is dead from that
// instant, whatever it still has in flight or queued. Nothing graceful runs
// after the crash point, because nothing can reach a server any more.
type crashGate struct {
	crashAt int // 0: never crash

	mu      sync.Mutex
	writes  []string
	tripped bool
	crashed chan struct{}
}

func newCrashGate(crashAt int) *crashGate {
	return &crashGate{crashAt: crashAt, crashed: make(chan struct{})}
}

// admit decides the fate of one call before it is sent.
func (g *crashGate) admit(what string, write bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tripped {
		return errCrashed
	}
	if !write {
		return nil
	}
	g.writes = append(g.writes, what)
	if g.crashAt > 0 && len(g.writes) == g.crashAt {
		// This write goes out; nothing after it does.
		g.tripped = true
		close(g.crashed)
	}
	return nil
}

// Writes lists the writes made so far, in order.
func (g *crashGate) Writes() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.writes...)
}

// Crashed reports whether the crash point was reached.
func (g *crashGate) Crashed() bool {
	select {
	case <-g.crashed:
		return true
	default:
		return false
	}
}

// wrap puts the gate under a transport. service names the target in the
// write log ("api", "dns", "backup").
func (g *crashGate) wrap(service string, next http.RoundTripper) http.RoundTripper {
	return gatedTransport{gate: g, service: service, next: next}
}

type gatedTransport struct {
	gate    *crashGate
	service string
	next    http.RoundTripper
}

func (t gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	write := req.Method != http.MethodGet && req.Method != http.MethodHead
	// Events are recorded asynchronously and carry no state the oracle
	// judges; numbering them would make the write order differ between
	// runs. They still fail after the crash.
	if t.service == "api" && strings.Contains(req.URL.Path, "/events") {
		write = false
	}
	if err := t.gate.admit(fmt.Sprintf("%s %s %s", t.service, req.Method, req.URL.Path), write); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(req)
}
