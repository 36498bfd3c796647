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
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
)

// The keys of the failure table's client; neither may show in a message.
const (
	failureAccessKey = "AKIAFAILURETABLE0001"
	failureSecretKey = "failure-table-secret-key-value"
)

// s3Answering is a server that answers every request with an S3 error of
// code and status (an empty code: body as it is, with contentType).
func s3Answering(t *testing.T, status int, code, contentType, body string) string {
	t.Helper()
	if code != "" {
		contentType = "application/xml"
		body = fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code>`+
			`<Message>refused for %s</Message><RequestId>req-%d</RequestId></Error>`, code, failureSecretKey, time.Now().UnixNano())
	}
	return backuptest.Answering(t, status, contentType, body)
}

// TestEveryFailureNamesItsCauseAndTheEndpoint: whatever way a call to the
// bucket fails, the client says of it (backup.Explainer), for the
// BackupConfig's Ready condition, the cause in words a person acts on, the
// endpoint and the bucket, and the same words the next time the same cause
// fails a call (the server's request IDs and the client's ports stay out);
// never a key, even when the server echoes one. An answer the client
// cannot read is a failure that may pass, not a refusal: a refused start
// of a scheduled backup skips its slot for good.
func TestEveryFailureNamesItsCauseAndTheEndpoint(t *testing.T) {
	down := backuptest.NewUnanswering(t)

	tests := []struct {
		name     string
		endpoint string
		// passTime, when set, is the caller's deadline, shorter than an
		// attempt's.
		passTime time.Duration
		wantKind external.Kind
		want     []string
	}{{
		name: "nothing listens", endpoint: down.Closed, wantKind: external.KindTransient,
		want: []string{"no answer from the S3 endpoint", `bucket "backups"`, "connection refused"},
	}, {
		name: "a server that does not answer in time", endpoint: down.Hung, wantKind: external.KindTransient,
		want: []string{"no answer from the S3 endpoint", "did not answer in time"},
	}, {
		name: "the pass's time runs out", endpoint: down.Hung, passTime: 300 * time.Millisecond,
		wantKind: external.KindTransient,
		want:     []string{"no answer from the S3 endpoint", "did not answer in time"},
	}, {
		name: "a certificate the operator does not trust", endpoint: down.Untrusted, wantKind: external.KindTransient,
		want: []string{"TLS", "certificate", "not trust", "--s3-ca-file"},
	}, {
		name: "a server that does not speak TLS", endpoint: down.NotTLS,
		wantKind: external.KindTransient,
		want:     []string{"TLS", "does not speak TLS"},
	}, {
		name: "a refused list (403 AccessDenied)", endpoint: s3Answering(t, http.StatusForbidden, "AccessDenied", "", ""),
		wantKind: external.KindUnauthorized,
		want:     []string{"refused the list of the backups (AccessDenied)", "need s3:ListBucket", `bucket "backups"`},
	}, {
		name: "an unknown access key (403)", endpoint: s3Answering(t, http.StatusForbidden, "InvalidAccessKeyId", "", ""),
		wantKind: external.KindUnauthorized,
		want:     []string{"does not know the access key ID (the test's keys)"},
	}, {
		name: "a missing bucket (404)", endpoint: s3Answering(t, http.StatusNotFound, "NoSuchBucket", "", ""),
		wantKind: external.KindInvalid,
		want:     []string{`bucket "backups" does not exist at`},
	}, {
		name: "a failing server (5xx)", endpoint: s3Answering(t, http.StatusInternalServerError, "InternalError", "", ""),
		wantKind: external.KindTransient,
		want:     []string{"failed (InternalError)", `bucket "backups"`},
	}, {
		name: "a server that asks to slow down", endpoint: s3Answering(t, http.StatusServiceUnavailable, "SlowDown", "", ""),
		wantKind: external.KindThrottled,
		want:     []string{"asked to slow down (SlowDown)"},
	}, {
		name:     "an answer that is not S3's",
		endpoint: s3Answering(t, http.StatusOK, "", "text/html", "<html>a login page</html>"),
		wantKind: external.KindTransient,
		want:     []string{"an answer the operator cannot read", `bucket "backups"`},
	}, {
		name: "a refused request (4xx)", endpoint: s3Answering(t, http.StatusBadRequest, "InvalidArgument", "", ""),
		wantKind: external.KindInvalid,
		want:     []string{"refused the list of the backups (InvalidArgument)"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := s3.New(s3.Config{
				ReadContent: backupcontent.Identity,
				Endpoint:    tt.endpoint, Bucket: "backups", Region: "us-east-1", PathStyle: true, OwnerID: "cluster-a",
				Credentials:       s3.StaticCredentials(failureAccessKey, failureSecretKey),
				CredentialsSource: "the test's keys",
				AttemptTimeout:    attemptTimeout(tt.endpoint == down.Hung),
				MaxRetries:        1,
				MinRetryWait:      time.Millisecond,
				MaxRetryWait:      20 * time.Millisecond,
			})
			g.Expect(err).NotTo(HaveOccurred())
			if tt.passTime > 0 {
				c, err = s3.New(s3.Config{
					ReadContent: backupcontent.Identity,
					Endpoint:    tt.endpoint, Bucket: "backups", Region: "us-east-1", PathStyle: true, OwnerID: "cluster-a",
					Credentials:    s3.StaticCredentials(failureAccessKey, failureSecretKey),
					AttemptTimeout: 10 * time.Second,
				})
				g.Expect(err).NotTo(HaveOccurred())
			}
			var first string
			for i := range 2 {
				ctx := t.Context()
				if tt.passTime > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.passTime)
					defer cancel()
				}
				_, err := c.List(ctx, "backupconfig/bc-1", backup.InNamespace("shop"))
				g.Expect(external.KindOf(err)).To(Equal(tt.wantKind), "error: %v", err)
				explained, ok := c.Explain(err)
				g.Expect(ok).To(BeTrue(), "error: %v", err)
				g.Expect(explained).To(ContainSubstring(tt.endpoint), "it names the endpoint")
				for _, w := range tt.want {
					g.Expect(explained).To(ContainSubstring(w))
				}
				g.Expect(explained).NotTo(Or(ContainSubstring(failureSecretKey), ContainSubstring(failureAccessKey)))
				if i == 0 {
					first = explained
				} else {
					g.Expect(explained).To(Equal(first), "the same cause, the same words")
				}
			}
		})
	}
}

// attemptTimeout is an attempt's time limit in the failure tables: short
// for the server that does not answer, long enough otherwise for a TLS
// handshake on a loaded machine, which would else read as no answer in
// time.
func attemptTimeout(short bool) time.Duration {
	if short {
		return 300 * time.Millisecond
	}
	return 5 * time.Second
}
