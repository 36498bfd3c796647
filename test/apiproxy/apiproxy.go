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

// Package apiproxy is a counting reverse proxy between one manager and the
// API server, for the tests and the bench: every request the manager makes
// is counted by verb and resource, however its client batches or retries.
package apiproxy

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Request is what the proxy counts: a verb on a resource.
type Request struct {
	Verb     string // get, list, watch, create, update, patch, delete, deletecollection
	Resource string // "deployments", "myapps/status", "leases"...
}

// String is "verb resource".
func (r Request) String() string { return r.Verb + " " + r.Resource }

// Proxy stands between a manager and the API server. It reaches the API
// server as the harness's administrator; the manager reaches it over plain
// HTTP on the loopback interface (Kubeconfig).
type Proxy struct {
	// URL is where the manager reaches the proxy.
	URL string

	mu       sync.Mutex
	counts   map[Request]int
	failures map[Request]int
	// firstWrite is when the first write of a reconcile (a lease or an
	// event aside) started since the last Reset, zero if none did.
	firstWrite time.Time
	server     *http.Server
}

// Start serves a proxy to the API server cfg reaches on a loopback port.
func Start(cfg *rest.Config) (*Proxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{URL: "http://" + l.Addr().String(), counts: map[Request]int{}, failures: map[Request]int{}}
	p.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := Classify(r)
		if !ok {
			rp.ServeHTTP(w, r) // discovery, version, healthz: not the manager's work
			return
		}
		// Counted when it starts: a watch (and a list served as one) lasts
		// until the manager stops.
		p.mu.Lock()
		p.counts[req]++
		if p.firstWrite.IsZero() && IsWrite(req.Verb) && req.Resource != "leases" && req.Resource != "events" {
			p.firstWrite = time.Now()
		}
		p.mu.Unlock()
		sw := &StatusWriter{ResponseWriter: w, Status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		if sw.Status >= http.StatusBadRequest {
			p.mu.Lock()
			p.failures[req]++
			p.mu.Unlock()
		}
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.server.Close() }

// Counts returns the requests counted so far, and of them those answered
// with an error status.
func (p *Proxy) Counts() (counts, failures map[Request]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts), maps.Clone(p.failures)
}

// Reset returns what Counts does and starts counting again from zero, the
// first write's time included.
func (p *Proxy) Reset() (counts, failures map[Request]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts, failures = p.counts, p.failures
	p.counts, p.failures = map[Request]int{}, map[Request]int{}
	p.firstWrite = time.Time{}
	return counts, failures
}

// FirstWriteAt returns when the first write of a reconcile (a lease or an
// event aside) started since the last Reset, zero if none did.
func (p *Proxy) FirstWriteAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstWrite
}

// Kubeconfig is a kubeconfig that reaches the API server through the proxy.
func (p *Proxy) Kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: %s
contexts:
- name: proxy
  context:
    cluster: proxy
    user: proxy
current-context: proxy
users:
- name: proxy
  user: {}
`, p.URL)
}

// StatusWriter remembers the status code of the response it writes; it
// flushes, so a watch streams through it.
type StatusWriter struct {
	http.ResponseWriter
	Status int
}

// WriteHeader records code and writes it.
func (w *StatusWriter) WriteHeader(code int) {
	w.Status = code
	w.ResponseWriter.WriteHeader(code)
}

// Flush flushes the response written so far.
func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Classify names the verb and resource of an API request from its path,
// such as /api/v1/namespaces/ns/services/web,
// /apis/apps/v1/deployments?watch=true or
// /apis/apps.myapp.dev/v1alpha1/namespaces/ns/myapps/web/status. ok is
// false for discovery, version and health requests.
func Classify(r *http.Request) (req Request, ok bool) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return Request{}, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // a namespaced resource; namespaces/<name> is a namespace itself
	}
	if len(parts) == 0 {
		return Request{}, false
	}
	resource, named := parts[0], len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	verb := strings.ToLower(r.Method)
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodDelete:
		if !named {
			verb = "deletecollection"
		}
	}
	return Request{Verb: verb, Resource: resource}, true
}

// IsWrite tells the verbs that change something.
func IsWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}
