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

package main

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// apiKey is one counter of the counting proxy: a verb on a resource.
type apiKey struct {
	Verb     string // get, list, watch, create, update, patch, delete, deletecollection
	Resource string // "deployments", "myapps/status", ...
}

// countingProxy stands between the manager and the API server, which only
// the manager uses, so every request the manager makes is counted exactly,
// however its client batches or retries. It authenticates to the API server
// as the harness's administrator; the manager reaches it over plain HTTP on
// the loopback interface.
type countingProxy struct {
	mu       sync.Mutex
	counts   map[apiKey]int
	failures map[apiKey]int
	// firstWrite is when the first write of a reconcile (a lease or an
	// event aside) started since the last snapshot, zero if none did.
	firstWrite time.Time
	server     *http.Server
	URL        string
}

func startCountingProxy(cfg *rest.Config) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	p := &countingProxy{counts: map[apiKey]int{}, failures: map[apiKey]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.URL = "http://" + l.Addr().String()
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := classify(r)
		if key.Resource == "" {
			rp.ServeHTTP(w, r) // discovery, version, healthz: not the manager's work
			return
		}
		// Counted when it starts: a watch (and a list served as one) lasts
		// until the manager stops.
		p.mu.Lock()
		p.counts[key]++
		if p.firstWrite.IsZero() && isWrite(key.Verb) && key.Resource != "leases" && key.Resource != "events" {
			p.firstWrite = time.Now()
		}
		p.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		if sw.status >= 400 {
			p.mu.Lock()
			p.failures[key]++
			p.mu.Unlock()
		}
	})}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// snapshot returns the counts so far and resets them.
func (p *countingProxy) snapshot() (counts, failures map[apiKey]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts, failures = p.counts, p.failures
	p.counts, p.failures = map[apiKey]int{}, map[apiKey]int{}
	p.firstWrite = time.Time{}
	return counts, failures
}

// firstWriteAt returns when the first write of a reconcile (a lease or an
// event aside) started since the last snapshot, zero if none did.
func (p *countingProxy) firstWriteAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstWrite
}

func (p *countingProxy) close() { _ = p.server.Close() }

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// classify names the verb and resource of an API request from its path:
// /api/v1/namespaces/ns/services/web, /apis/apps/v1/deployments?watch=true,
// /apis/apps.myapp.dev/v1alpha1/namespaces/ns/myapps/web/status.
func classify(r *http.Request) apiKey {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return apiKey{}
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		if len(parts) == 2 {
			parts = []string{"namespaces", parts[1]}
		} else {
			parts = parts[2:]
		}
	}
	if len(parts) == 0 {
		return apiKey{}
	}
	resource, named := parts[0], len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	verb := ""
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = opGet
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = opDelete
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(r.Method)
	}
	return apiKey{Verb: verb, Resource: resource}
}

// isWrite tells the verbs that change something.
func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}
