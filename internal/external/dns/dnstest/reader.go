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
	"sync"
	"time"
)

// ReadEvery is how often the reader reads the name during a change.
const ReadEvery = 100 * time.Millisecond

// ReadFunc reads name at the server, past every client cache, as a
// resolver would: the values of its address record, none when it has none.
type ReadFunc func(ctx context.Context, name string) ([]string, error)

// reader polls one name every ReadEvery while an operation runs, and
// counts the reads that found it without an address.
type reader struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu                  sync.Mutex
	reads, misses, errs int
	lastErr             error
}

// startReader reads name now and then every ReadEvery until stop.
func startReader(ctx context.Context, read ReadFunc, name string) *reader {
	ctx, cancel := context.WithCancel(ctx)
	r := &reader{cancel: cancel}
	r.wg.Go(func() {
		tick := time.NewTicker(ReadEvery)
		defer tick.Stop()
		for {
			r.read(ctx, read, name)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return r
}

func (r *reader) read(ctx context.Context, read ReadFunc, name string) {
	values, err := read(ctx, name)
	if ctx.Err() != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	switch {
	case err != nil:
		r.errs++
		r.lastErr = err
	case len(values) == 0:
		r.misses++
	}
}

// stop ends the reads, reads once more, and returns the counts.
func (r *reader) stop(ctx context.Context, read ReadFunc, name string) (reads, misses, errs int, lastErr error) {
	r.cancel()
	r.wg.Wait()
	r.read(ctx, read, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads, r.misses, r.errs, r.lastErr
}
