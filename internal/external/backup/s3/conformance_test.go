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
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
)

// TestAnIDOfAnyWrongFormIsNotFound: a backup ID that is not
// <namespace>/<backupconfig-uid>/<name> (a typo, the HTTP service's bk-…
// form, a path that climbs) names no backup, so Get and Content answer it
// as not found, and a Restore naming it fails BackupNotFound instead of
// retrying for ever. The server answers every request as S3 does for a
// missing key, so an ID that does parse is not found either.
func TestAnIDOfAnyWrongFormIsNotFound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` +
			`<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`))
	}))
	t.Cleanup(srv.Close)
	c, err := s3.New(s3.Config{
		Endpoint: srv.URL, Bucket: "backups", Region: "us-east-1", PathStyle: true, OwnerID: "cluster-a",
		Credentials: s3.StaticCredentials("key", "secret"), ReadContent: backupcontent.Identity, MaxRetries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range backuptest.WrongIDs() {
		g := NewWithT(t)
		_, err := c.Get(t.Context(), id)
		g.Expect(err).To(MatchError(external.ErrNotFound), "Get(%q)", id)
		_, err = c.Content(t.Context(), id)
		g.Expect(err).To(MatchError(external.ErrNotFound), "Content(%q)", id)
	}
}

// TestConformance runs the backup.Client contract against versitygw, a
// bucket per client.
func TestConformance(t *testing.T) {
	srv := s3Server(t)
	backuptest.RunConformance(t, backuptest.Harness{
		OwnerID: "cluster-a",
		New: func(t *testing.T, transport http.RoundTripper) backup.Client {
			return newClient(t, srv, clientOptions{bucket: newBucket(t, srv), transport: transport})
		},
		// S3 keeps an object's Last-Modified in whole seconds.
		Resolution: time.Second,
		Skewed: func(t *testing.T, server, client time.Duration) (backup.Client, backup.Client) {
			if server != 0 {
				t.Skip("versitygw keeps the host's clock")
			}
			bucket := newBucket(t, srv)
			skewed, err := s3.New(s3.Config{
				ReadContent: backupcontent.Identity,
				Endpoint:    srv.Endpoint, Bucket: bucket, Region: srv.Region, PathStyle: true, OwnerID: "cluster-a",
				Credentials: s3.StaticCredentials(srv.AccessKey, srv.SecretKey), MaxRetries: 2,
				MinRetryWait: time.Millisecond, MaxRetryWait: 20 * time.Millisecond,
				Now: func() time.Time { return time.Now().Add(client) },
			})
			if err != nil {
				t.Fatal(err)
			}
			return newClient(t, srv, clientOptions{bucket: bucket}), skewed
		},
	})
}
