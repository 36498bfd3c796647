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

package external_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

const fuzzToken = "fuzz-token-do-not-leak"

// cannedTransport answers every request with the same response, so the fuzzer
// drives the clients' whole decoding path without a server.
type cannedTransport struct {
	status      int
	contentType string
	retryAfter  string
	body        []byte
}

func (c cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	header := http.Header{"Content-Type": {c.contentType}}
	if c.retryAfter != "" {
		header.Set("Retry-After", c.retryAfter)
	}
	return &http.Response{
		StatusCode: c.status,
		Status:     http.StatusText(c.status),
		Header:     header,
		Body:       io.NopCloser(bytes.NewReader(c.body)),
		Request:    req,
	}, nil
}

// FuzzDecodeResponse feeds arbitrary responses to every call of both clients.
// Whatever arrives, a call must return either a valid value or an
// *external.Error whose text does not contain the token; it must never panic
// and never accept an error status as success.
func FuzzDecodeResponse(f *testing.F) {
	seeds := []struct {
		status      int
		contentType string
		retryAfter  string
		body        string
	}{
		{200, "application/json", "", `{"name":"www.example.com","type":"A","value":"192.0.2.1","ttl":300,"owner":"o","state":"ACTIVE","createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}`},
		{200, "application/json", "", `{"records":[{"name":"www.example.com","type":"A","value":"192.0.2.1","ttl":300,"owner":"o","state":"PENDING"}]}`},
		{201, "application/json", "", `{"id":"bk-000001","app":"shop","owner":"o","idempotencyKey":"k","phase":"RUNNING","startedAt":"2026-01-01T00:00:00Z"}`},
		{200, "application/json", "", `{"id":"bk-000001","app":"shop","owner":"o","idempotencyKey":"k","phase":"SUCCEEDED","sizeBytes":10,"location":"s3://b/x","startedAt":"2026-01-01T00:00:00Z","completedAt":"2026-01-01T00:01:00Z"}`},
		{200, "application/json", "", `{"backups":[{"id":"bk-000001","app":"shop","owner":"o","idempotencyKey":"k","phase":"FAILED","reason":"disk full"}]}`},
		{200, "application/json; charset=utf-8", "", `{"name":"www.example.com","ttl":1e99}`},
		{200, "text/html", "", `<html></html>`},
		{200, "application/json", "", `null`},
		{200, "application/json", "", `{"records":null}`},
		{200, "application/json", "", `{"completedAt":"yesterday"}`},
		{409, "application/json", "", `{"error":{"code":"conflict","message":"owned by fuzz-token-do-not-leak","owner":"team-a"}}`},
		{429, "application/json", "120", `{"error":{"code":"throttled","message":"slow down"}}`},
		{429, "application/json", "Wed, 21 Oct 2015 07:28:00 GMT", ``},
		{503, "text/plain", "-1", `down`},
		{404, "application/json", "", `{"error":"not an object"}`},
		{302, "", "", ``},
	}
	for _, s := range seeds {
		f.Add(s.status, s.contentType, s.retryAfter, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, contentType, retryAfter string, body []byte) {
		if status < 100 || status > 599 {
			t.Skip("not an HTTP status")
		}
		if strings.ContainsAny(contentType+retryAfter, "\r\n") {
			t.Skip("not a header value")
		}
		cfg := external.Config{
			BaseURL:          "http://fuzz.invalid",
			Token:            external.StaticTokenSource(fuzzToken),
			MaxRetries:       -1,
			MaxResponseBytes: 64 << 10,
			Transport:        cannedTransport{status: status, contentType: contentType, retryAfter: retryAfter, body: body},
		}
		dnsClient, err := dns.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		backupClient, err := httpbackup.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		success := status >= 200 && status < 300

		check := func(call string, err error, valid func() bool) {
			if err == nil {
				// A delete of what is gone is the one success besides a 2xx.
				goneOnDelete := status == http.StatusNotFound && strings.HasPrefix(call, "delete")
				if !success && !goneOnDelete {
					t.Fatalf("%s: HTTP %d accepted as success", call, status)
				}
				if valid != nil && !valid() {
					t.Fatalf("%s: returned an invalid value without an error", call)
				}
				return
			}
			var e *external.Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: error is %T, not *external.Error: %v", call, err, err)
			}
			if external.KindOf(err) == "" {
				t.Fatalf("%s: error without a kind: %v", call, err)
			}
			if strings.Contains(err.Error(), fuzzToken) {
				t.Fatalf("%s: error contains the token: %v", call, err)
			}
		}

		rec, err := dnsClient.Get(ctx, "www.example.com")
		check("dns get", err, func() bool { return rec.Name == "www.example.com" && rec.Owner != "" })
		rec, err = dnsClient.Upsert(ctx, dns.Record{Name: "www.example.com", Type: dns.TypeA, Value: "192.0.2.1", TTL: 60, Owner: "o"})
		check("dns upsert", err, func() bool { return rec.Name == "www.example.com" })
		recs, err := dnsClient.List(ctx, "o")
		check("dns list", err, func() bool { return recs != nil })
		check("delete dns", dnsClient.Delete(ctx, "www.example.com", "o"), nil)

		b, err := backupClient.Get(ctx, "bk-000001")
		check("backup get", err, func() bool { return b.ID == "bk-000001" && b.Phase != "" })
		b, err = backupClient.Start(ctx, backup.StartRequest{App: "shop", Owner: "o", IdempotencyKey: "k"})
		check("backup start", err, func() bool { return b.IdempotencyKey == "k" })
		bs, err := backupClient.List(ctx, "")
		check("backup list", err, func() bool { return bs != nil })
		check("delete backup", backupClient.Delete(ctx, "bk-000001", "o"), nil)
	})
}
