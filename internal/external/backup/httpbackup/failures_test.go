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

package httpbackup_test

import (
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
)

// TestEveryFailureNamesItsCauseAndTheEndpoint: whatever way a call to the
// backup service fails, the client says of it (backup.Explainer), for the
// BackupConfig's Ready condition, the cause in words a person acts on and
// the service's URL, and the same words the next time the same cause
// fails a call (a condition that changed with each retry would churn);
// never the token, even when the server echoes it.
func TestEveryFailureNamesItsCauseAndTheEndpoint(t *testing.T) {
	down := backuptest.NewUnanswering(t)
	echo := `{"error":{"code":"invalid_request","message":"token ` + testToken + ` may not list"}}`

	tests := []struct {
		name     string
		url      string
		wantKind external.Kind
		// want are the words the explanation holds besides the URL.
		want []string
	}{{
		name: "nothing listens", url: down.Closed, wantKind: external.KindTransient,
		want: []string{"no answer from the backup service at", "connection refused"},
	}, {
		name: "a server that does not answer in time", url: down.Hung, wantKind: external.KindTransient,
		want: []string{"no answer from the backup service at", "did not answer in time"},
	}, {
		name: "a certificate the operator does not trust", url: down.Untrusted, wantKind: external.KindTransient,
		want: []string{"TLS", "certificate", "not trust", "--external-ca-file"},
	}, {
		name: "a server that does not speak TLS", url: down.NotTLS,
		wantKind: external.KindTransient,
		want:     []string{"TLS", "does not speak TLS"},
	}, {
		name: "a refused token (401)", url: backuptest.Answering(t, http.StatusUnauthorized, "application/json", echo),
		wantKind: external.KindUnauthorized,
		want:     []string{"refused the operator's credentials (HTTP 401)", "--backup-token-file or --backup-token-secret"},
	}, {
		name: "a forbidden call (403)", url: backuptest.Answering(t, http.StatusForbidden, "text/plain", "forbidden"),
		wantKind: external.KindUnauthorized,
		want:     []string{"refused the operator's credentials (HTTP 403)"},
	}, {
		name: "a URL that is not the service's (404)", url: backuptest.Answering(t, http.StatusNotFound, "text/html", "<html>nope</html>"),
		wantKind: external.KindNotFound,
		want:     []string{"HTTP 404", "list of the backups", "--backup-url"},
	}, {
		name: "a failing service (5xx)", url: backuptest.Answering(t, http.StatusInternalServerError, "text/plain", "boom"),
		wantKind: external.KindTransient,
		want:     []string{"failed (HTTP 500)"},
	}, {
		name:     "a service that asks to slow down (429)",
		url:      backuptest.Answering(t, http.StatusTooManyRequests, "application/json", "{}", "Retry-After", "600"),
		wantKind: external.KindThrottled,
		want:     []string{"asked the operator to wait"},
	}, {
		name: "an answer that is not the API's", url: backuptest.Answering(t, http.StatusOK, "text/html", "<html>a login page</html>"),
		wantKind: external.KindTransient,
		want:     []string{"an answer the operator cannot read (HTTP 200)"},
	}, {
		name: "a refused request (4xx)", url: backuptest.Answering(t, http.StatusUnprocessableEntity, "application/json", echo),
		wantKind: external.KindInvalid,
		want:     []string{"refused the list of the backups (HTTP 422, invalid_request)"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := newClient(t, tt.url, func(cfg *external.Config) {
				cfg.AttemptTimeout = 5 * time.Second
				if tt.url == down.Hung {
					// Short for the server that does not answer only: a
					// TLS handshake on a loaded machine may take longer.
					cfg.AttemptTimeout = 300 * time.Millisecond
				}
				cfg.MaxRetries = 1
			})
			explainer, ok := c.(backup.Explainer)
			g.Expect(ok).To(BeTrue(), "the HTTP provider's client explains its failures (backup.Explainer)")
			if !ok {
				return
			}
			var first string
			for i := range 2 {
				_, err := c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
				g.Expect(external.KindOf(err)).To(Equal(tt.wantKind), "error: %v", err)
				explained, ok := explainer.Explain(err)
				g.Expect(ok).To(BeTrue(), "error: %v", err)
				g.Expect(explained).To(ContainSubstring(tt.url), "it names the endpoint")
				for _, w := range tt.want {
					g.Expect(explained).To(ContainSubstring(w))
				}
				g.Expect(explained).NotTo(ContainSubstring(testToken))
				if i == 0 {
					first = explained
				} else {
					g.Expect(explained).To(Equal(first), "the same cause, the same words")
				}
			}
		})
	}
}
