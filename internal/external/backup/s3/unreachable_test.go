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

package s3_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// TestAServerThatDoesNotAnswerIsTransient: a server that is down (nothing
// listens) or drops the connection without an answer is a failure that
// passes, retried with backoff, never a refusal: a refusal of a scheduled
// backup's start skips that slot for good.
func TestAServerThatDoesNotAnswerIsTransient(t *testing.T) {
	srv := s3Server(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := "http://" + l.Addr().String()
	_ = l.Close()
	dropping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(dropping.Close)
	for _, tt := range []struct{ name, endpoint string }{
		{name: "nothing listens", endpoint: closedPort},
		{name: "the connection drops", endpoint: dropping.URL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := newClient(t, srv, clientOptions{bucket: "any", endpoint: tt.endpoint})
			_, err := c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
			g.Expect(err).To(MatchError(external.ErrTransient))
			g.Expect(err.Error()).To(ContainSubstring("no answer from the S3 endpoint " + tt.endpoint))
			_, err = c.Start(t.Context(), startRequest(t, "cluster-a", "bc-1", "manual/k"))
			g.Expect(err).To(MatchError(external.ErrTransient))
			g.Expect(external.IsRetryable(err)).To(BeTrue())
			err = c.Delete(t.Context(), "shop/bc-1/manual/k", "backupconfig/bc-1")
			g.Expect(err).To(MatchError(external.ErrTransient))
		})
	}
}
