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

package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// semantics is how the fake provider applies a batch, after the providers
// behind external-dns's webhook servers (../../../../docs/webhook.md).
type semantics int

const (
	// transactional is Route 53 and Google Cloud DNS: a batch is checked
	// whole, deletes first (each must match exactly), then creates (each
	// name and type must be free once the deletes are made), and applied
	// whole or not at all.
	transactional semantics = iota
	// inmemoryLike is external-dns's inmemory provider: creates are checked
	// against the zone before any delete, so a batch that deletes and
	// creates one record set is refused; deletes must match the first
	// value.
	inmemoryLike
	// lastWriterWins is external-dns's rfc2136 provider: creates add their
	// values to what is there, deletes remove what matches and ignore the
	// rest, creates before deletes, no condition.
	lastWriterWins
)

// fakeProvider is a webhook server written from the protocol's OpenAPI
// file, for the client's tests. The tests against external-dns's own
// server (realserver_test.go) are what prove the client against the real
// thing; this one can fail on purpose.
type fakeProvider struct {
	t         testing.TB
	semantics semantics
	srv       *httptest.Server

	mu  sync.Mutex
	eps []webhook.Endpoint
	// filter is the negotiation's answer.
	filter webhook.DomainFilter
	// contentType overrides the negotiation's content type when set.
	contentType string
	// beforeApply, when set, may answer a batch itself: it returns the
	// status to answer (-1 closes the connection unanswered) and whether to
	// apply the batch first.
	beforeApply func(ch webhook.Changes) (status int, apply bool)
	// answerHeader is added to beforeApply's answers.
	answerHeader http.Header
	// adjust, when set, rewrites endpoints in POST /adjustendpoints.
	adjust func(ep webhook.Endpoint) webhook.Endpoint

	// zoneBody, when set, is the answer to every zone read as it stands,
	// encoded once: a benchmark's zone whose encoding would otherwise be
	// counted with the client's memory.
	zoneBody []byte

	zoneReads, writes, adjusts atomic.Int64
	zoneBytes                  atomic.Int64
}

func newFake(t testing.TB, sem semantics) *fakeProvider {
	f := &fakeProvider{t: t, semantics: sem, filter: webhook.DomainFilter{Include: []string{zone}}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", f.negotiate)
	mux.HandleFunc("/records", f.records)
	mux.HandleFunc("/adjustendpoints", f.adjustEndpoints)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) URL() string { return f.srv.URL }

func (f *fakeProvider) negotiate(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	ct := webhook.MediaType
	if f.contentType != "" {
		ct = f.contentType
	}
	w.Header().Set("Content-Type", ct)
	_ = json.NewEncoder(w).Encode(f.filter)
}

func (f *fakeProvider) records(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		f.zoneReads.Add(1)
		f.mu.Lock()
		data := f.zoneBody
		if data == nil {
			// A provider reads and writes only the names its domain
			// filter serves: the rest is hidden, and changes to it dropped.
			served := slices.DeleteFunc(slices.Clone(f.eps), func(ep webhook.Endpoint) bool { return !f.serves(ep.DNSName) })
			data, _ = json.Marshal(served)
		}
		f.mu.Unlock()
		f.zoneBytes.Add(int64(len(data)))
		w.Header().Set("Content-Type", webhook.MediaType)
		_, _ = w.Write(data)
	case http.MethodPost:
		f.writes.Add(1)
		if r.Header.Get("Content-Type") != webhook.MediaType {
			f.t.Errorf("a batch came with Content-Type %q", r.Header.Get("Content-Type"))
		}
		var ch webhook.Changes
		if err := json.NewDecoder(r.Body).Decode(&ch); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		outside := func(ep webhook.Endpoint) bool { return !f.serves(ep.DNSName) }
		ch.Create, ch.Delete = slices.DeleteFunc(ch.Create, outside), slices.DeleteFunc(ch.Delete, outside)
		f.mu.Unlock()
		if (len(ch.UpdateOld) > 0 || len(ch.UpdateNew) > 0) && f.semantics == transactional {
			// The client promises never to send them to a provider that
			// replaces in one batch: Route 53 makes updateNew an
			// unconditional UPSERT.
			f.t.Errorf("the client sent updateOld/updateNew: %+v", ch)
		}
		if f.beforeApply != nil {
			if status, apply := f.beforeApply(ch); status != 0 {
				if apply {
					_ = f.apply(ch)
				}
				if status < 0 {
					// The connection is closed without an answer.
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						_ = conn.Close()
					}
					return
				}
				for k, v := range f.answerHeader {
					w.Header()[k] = v
				}
				w.WriteHeader(status)
				return
			}
		}
		if err := f.apply(ch); err != nil {
			// As external-dns's reference server: any failure is a bare 500.
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// serves applies the filter's lists and regular expressions, as
// external-dns's domain filter does. f.mu is held.
func (f *fakeProvider) serves(name string) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	under := func(list []string) bool {
		return slices.ContainsFunc(list, func(d string) bool {
			d = strings.TrimPrefix(strings.ToLower(d), ".")
			return name == d || strings.HasSuffix(name, "."+d)
		})
	}
	if f.filter.RegexInclude != "" || f.filter.RegexExclude != "" {
		if f.filter.RegexExclude != "" && regexp.MustCompile(f.filter.RegexExclude).MatchString(name) {
			return false
		}
		return f.filter.RegexInclude == "" || regexp.MustCompile(f.filter.RegexInclude).MatchString(name)
	}
	include := append(slices.Clone(f.filter.Include), f.filter.Filters...)
	return (len(include) == 0 || under(include)) && !under(f.filter.Exclude)
}

func (f *fakeProvider) adjustEndpoints(w http.ResponseWriter, r *http.Request) {
	f.adjusts.Add(1)
	var eps []webhook.Endpoint
	if err := json.NewDecoder(r.Body).Decode(&eps); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if f.adjust != nil {
		for i := range eps {
			eps[i] = f.adjust(eps[i])
		}
	}
	w.Header().Set("Content-Type", webhook.MediaType)
	_ = json.NewEncoder(w).Encode(eps)
}

var errRefused = errors.New("refused")

func key(ep webhook.Endpoint) string {
	return strings.ToLower(strings.TrimSuffix(ep.DNSName, ".")) + " " + ep.RecordType + " " + ep.SetIdentifier
}

func (f *fakeProvider) find(eps []webhook.Endpoint, k string) int {
	return slices.IndexFunc(eps, func(e webhook.Endpoint) bool { return key(e) == k })
}

func sameTargets(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func (f *fakeProvider) apply(ch webhook.Changes) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.semantics {
	case transactional:
		return f.applyTransactional(ch)
	case inmemoryLike:
		return f.applyInMemory(ch)
	default:
		f.applyLastWriterWins(ch)
		return nil
	}
}

func (f *fakeProvider) applyTransactional(ch webhook.Changes) error {
	next := slices.Clone(f.eps)
	for _, d := range ch.Delete {
		i := f.find(next, key(d))
		if i < 0 || !sameTargets(next[i].Targets, d.Targets) || next[i].RecordTTL != d.RecordTTL {
			return errRefused
		}
		next = slices.Delete(next, i, i+1)
	}
	for _, c := range ch.Create {
		if f.find(next, key(c)) >= 0 {
			return errRefused
		}
		next = append(next, c)
	}
	f.eps = next
	return nil
}

func (f *fakeProvider) applyInMemory(ch webhook.Changes) error {
	seen := map[string]bool{}
	// An update replaces a set that is there, with its first value as
	// updateOld says, whole and at once.
	if len(ch.UpdateOld) != len(ch.UpdateNew) {
		return errRefused
	}
	for i, old := range ch.UpdateOld {
		j := f.find(f.eps, key(old))
		if j < 0 || f.eps[j].Targets[0] != old.Targets[0] || key(ch.UpdateNew[i]) != key(old) || seen[key(old)] {
			return errRefused
		}
		seen[key(old)] = true
	}
	for _, c := range ch.Create {
		if f.find(f.eps, key(c)) >= 0 || seen[key(c)] {
			return errRefused
		}
		seen[key(c)] = true
	}
	for _, d := range ch.Delete {
		i := f.find(f.eps, key(d))
		if i < 0 || f.eps[i].Targets[0] != d.Targets[0] || seen[key(d)] {
			return errRefused
		}
		seen[key(d)] = true
	}
	f.eps = append(f.eps, ch.Create...)
	for _, u := range ch.UpdateNew {
		f.eps[f.find(f.eps, key(u))] = u
	}
	for _, d := range ch.Delete {
		f.eps = slices.DeleteFunc(f.eps, func(e webhook.Endpoint) bool { return key(e) == key(d) })
	}
	return nil
}

func (f *fakeProvider) applyLastWriterWins(ch webhook.Changes) {
	// An update removes the old values and adds the new ones in one
	// message, as external-dns's rfc2136 provider does, with no
	// condition.
	ch.Delete = append(slices.Clone(ch.Delete), ch.UpdateOld...)
	ch.Create = append(slices.Clone(ch.Create), ch.UpdateNew...)
	for _, c := range ch.Create {
		i := f.find(f.eps, key(c))
		if i < 0 {
			f.eps = append(f.eps, c)
			continue
		}
		for _, t := range c.Targets {
			if !slices.Contains(f.eps[i].Targets, t) {
				f.eps[i].Targets = append(f.eps[i].Targets, t)
			}
		}
		f.eps[i].RecordTTL = c.RecordTTL
	}
	for _, d := range ch.Delete {
		i := f.find(f.eps, key(d))
		if i < 0 {
			continue
		}
		f.eps[i].Targets = slices.DeleteFunc(f.eps[i].Targets, func(t string) bool { return slices.Contains(d.Targets, t) })
		if len(f.eps[i].Targets) == 0 {
			f.eps = slices.Delete(f.eps, i, i+1)
		}
	}
}

// seed puts endpoints in the zone, as someone else's writes.
func (f *fakeProvider) seed(eps ...webhook.Endpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.eps = append(f.eps, eps...)
}

// at returns the endpoints at name.
func (f *fakeProvider) at(name string) []webhook.Endpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []webhook.Endpoint
	for _, e := range f.eps {
		if strings.TrimSuffix(e.DNSName, ".") == name {
			out = append(out, e)
		}
	}
	return out
}

// read is the values of the A or CNAME records at name, as a resolver
// would read them.
func (f *fakeProvider) read(_ context.Context, name string) ([]string, error) {
	var out []string
	for _, ep := range f.at(name) {
		if ep.RecordType == "A" || ep.RecordType == "CNAME" {
			out = append(out, ep.Targets...)
		}
	}
	return out, nil
}
