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

package myapp

import (
	"sync"
	"time"
)

// serviceGate holds back every call to a service until a time it asked for
// with Retry-After. A rate limit belongs to the client, not to one object:
// without the gate, a watch event for another MyApp (or for this one, such as
// its Deployment's status changing) would call a throttling service again
// before it allowed.
type serviceGate struct {
	mu        sync.Mutex
	notBefore time.Time
}

// closeFor keeps the gate closed for d from now, or longer if it already is.
func (g *serviceGate) closeFor(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until := time.Now().Add(d); until.After(g.notBefore) {
		g.notBefore = until
	}
}

// wait is how long callers must still wait; zero when the gate is open.
func (g *serviceGate) wait() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(time.Until(g.notBefore), 0)
}
