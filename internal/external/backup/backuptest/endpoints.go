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

package backuptest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Unanswering are the URLs of backup services that give no answer, one per
// cause a failure's message must name: every provider's failure table
// calls each of them.
type Unanswering struct {
	// Closed is a loopback port nothing listens on.
	Closed string
	// Hung is a server that never answers (for 5 seconds).
	Hung string
	// Untrusted is a TLS server whose certificate nobody trusts.
	Untrusted string
	// NotTLS is an https URL of a server that speaks plain HTTP.
	NotTLS string
}

// NewUnanswering starts the servers of Unanswering, stopped when t ends.
func NewUnanswering(t testing.TB) Unanswering {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	_ = l.Close()
	hung := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(hung.Close)
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(untrusted.Close)
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(plain.Close)
	return Unanswering{Closed: closed, Hung: hung.URL, Untrusted: untrusted.URL,
		NotTLS: strings.Replace(plain.URL, "http:", "https:", 1)}
}

// Answering is the URL of a server that answers every request with status,
// the content type and body given, and header's name and value pairs; the
// body may echo a secret, as a careless server's error does. It stops when
// t ends.
func Answering(t testing.TB, status int, contentType, body string, header ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
