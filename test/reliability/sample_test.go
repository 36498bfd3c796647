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
	"context"
	"time"
)

// sampleInterval is how often the families' samplers look.
const sampleInterval = 100 * time.Millisecond

// sampleEvery calls sample every sampleInterval, from a goroutine of its
// own, until stop is called; stop returns once the last sample has
// returned, so what the samples gathered can be read without a race. The
// context sample gets ends with stop.
func sampleEvery(ctx context.Context, sample func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(sampleInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			sample(ctx)
		}
	}()
	return func() { cancel(); <-done }
}
