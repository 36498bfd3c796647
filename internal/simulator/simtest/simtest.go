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

// Package simtest starts the simulator for a test. It is a separate package
// so the simulator command does not link the testing package.
package simtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// Start serves a new simulator on a loopback port for the rest of the test
// and returns it with its base URL. Cleanup closes the simulator before the
// HTTP server, so requests a fault left hanging end instead of blocking the
// server's shutdown.
func Start(tb testing.TB, opts simulator.Options) (*simulator.Server, string) {
	tb.Helper()
	return StartBehind(tb, opts, nil)
}

// StartBehind is Start with the simulator behind middleware, such as
// DropQuery, standing in for a proxy or another version of the service. A
// nil middleware serves the simulator directly.
func StartBehind(tb testing.TB, opts simulator.Options, middleware func(http.Handler) http.Handler) (*simulator.Server, string) {
	tb.Helper()
	sim := simulator.New(opts)
	var handler http.Handler = sim
	if middleware != nil {
		handler = middleware(sim)
	}
	srv := httptest.NewServer(handler)
	tb.Cleanup(srv.Close)
	tb.Cleanup(sim.Close)
	return sim, srv.URL
}

// DropQuery returns middleware that removes the query parameter param from
// requests with the given method before the simulator sees them, as a proxy
// that rewrites URLs or an older service that does not know the parameter
// would.
func DropQuery(method, param string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == method {
				query := r.URL.Query()
				query.Del(param)
				r.URL.RawQuery = query.Encode()
			}
			next.ServeHTTP(w, r)
		})
	}
}

// StartTLS is Start over HTTPS. The returned server's Certificate is the CA
// a client must trust.
func StartTLS(tb testing.TB, opts simulator.Options) (*simulator.Server, *httptest.Server) {
	tb.Helper()
	sim := simulator.New(opts)
	srv := httptest.NewTLSServer(sim)
	tb.Cleanup(srv.Close)
	tb.Cleanup(sim.Close)
	return sim, srv
}

// RequestTotal counts every request of service the simulator handled,
// whatever the operation and status.
func RequestTotal(sim *simulator.Server, service simulator.Service) int {
	n := 0
	for _, rc := range sim.RequestCounts() {
		if rc.Service == service {
			n += rc.Count
		}
	}
	return n
}

// StartWithRecords is Start with a simulator that starts with n ACTIVE A
// records, named r00000.example.com and up, owned by owner(i). They are
// written as the simulator's state file (opts.StateFile is set to a file of
// the test's), since 20,000 upserts through HTTP would take longer than
// what a test of a large listing measures.
func StartWithRecords(tb testing.TB, opts simulator.Options, n int, owner func(i int) string) (*simulator.Server, string) {
	tb.Helper()
	type stored struct {
		Name      string    `json:"name"`
		Type      string    `json:"type"`
		Value     string    `json:"value"`
		TTL       int32     `json:"ttl"`
		Owner     string    `json:"owner"`
		CreatedAt time.Time `json:"createdAt"`
		UpdatedAt time.Time `json:"updatedAt"`
		ActiveAt  time.Time `json:"activeAt"`
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	records := make([]stored, n)
	for i := range records {
		records[i] = stored{
			Name: fmt.Sprintf("r%05d.example.com", i), Type: "A", Value: "192.0.2.10", TTL: 300,
			Owner: owner(i), CreatedAt: epoch, UpdatedAt: epoch, ActiveAt: epoch,
		}
	}
	data, err := json.Marshal(map[string]any{"version": 1, "nextBackupID": 1, "records": records, "backups": []any{}})
	if err != nil {
		tb.Fatal(err)
	}
	opts.StateFile = filepath.Join(tb.TempDir(), "state.json")
	if err := os.WriteFile(opts.StateFile, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	sim, err := simulator.Open(opts)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	tb.Cleanup(srv.Close)
	tb.Cleanup(sim.Close)
	return sim, srv.URL
}
