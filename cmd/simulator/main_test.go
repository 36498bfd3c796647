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
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

func TestParseFlags(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    func(*WithT, config)
		wantErr string
	}{{
		name: "defaults",
		args: []string{"--token", "devtoken"},
		want: func(g *WithT, c config) {
			g.Expect(c.addr).To(Equal("127.0.0.1:8090"))
			g.Expect(c.token).To(Equal("devtoken"))
			g.Expect(c.propagationDelay).To(Equal(5 * time.Second))
			g.Expect(c.backupDuration).To(Equal(10 * time.Second))
		},
	}, {
		name: "token from a file",
		args: []string{"--token-file", tokenFile, "--propagation-delay", "1s", "--backup-duration", "0s"},
		want: func(g *WithT, c config) {
			g.Expect(c.token).To(Equal("from-file"))
			g.Expect(c.propagationDelay).To(Equal(time.Second))
			g.Expect(c.backupDuration).To(BeZero())
		},
	}, {
		name: "no token", args: nil, wantErr: "a token is required",
	}, {
		name: "two tokens", args: []string{"--token", "a", "--token-file", tokenFile}, wantErr: "mutually exclusive",
	}, {
		name: "missing token file", args: []string{"--token-file", filepath.Join(t.TempDir(), "absent")}, wantErr: "no such file",
	}, {
		name: "certificate without key", args: []string{"--token", "a", "--tls-cert-file", "c.pem"}, wantErr: "go together",
	}, {
		name: "stray argument", args: []string{"--token", "a", "extra"}, wantErr: "unexpected arguments",
	}, {
		name: "negative duration", args: []string{"--token", "a", "--backup-duration", "-1s"}, wantErr: "negative",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.want(g, c)
		})
	}
}

func TestRunServesUntilCancelledAndKeepsState(t *testing.T) {
	g := NewWithT(t)
	stateFile := filepath.Join(t.TempDir(), "state.json")
	args := []string{"--addr", "127.0.0.1:0", "--token", "devtoken", "--state-file", stateFile}

	// serve runs the command until fn returns, as SIGTERM would end it.
	serve := func(fn func(base string)) string {
		ctx, cancel := context.WithCancel(t.Context())
		logs := &fixtures.SyncBuffer{}
		addr := make(chan string, 1)
		done := make(chan error, 1)
		go func() { done <- run(ctx, args, logs, func(a string) { addr <- a }) }()
		select {
		case a := <-addr:
			fn("http://" + a)
		case err := <-done:
			t.Fatalf("run ended early: %v", err)
		}
		cancel()
		select {
		case err := <-done:
			g.Expect(err).NotTo(HaveOccurred())
		case <-time.After(10 * time.Second):
			t.Fatal("run did not shut down")
		}
		return logs.String()
	}

	logs := serve(func(base string) {
		req, err := http.NewRequest(http.MethodPut, base+"/dns/v1/records/www.example.com",
			strings.NewReader(`{"type":"A","value":"192.0.2.10","ttl":300,"owner":"team-a"}`))
		g.Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer devtoken")
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusCreated))
	})
	g.Expect(logs).To(ContainSubstring("Serving simulated DNS and backup services"))
	g.Expect(logs).To(ContainSubstring("Stopped"))
	g.Expect(logs).NotTo(ContainSubstring("devtoken"), "the token is never logged")

	// A second run with the same state file still has the record.
	serve(func(base string) {
		req, err := http.NewRequest(http.MethodGet, base+"/dns/v1/records/www.example.com", nil)
		g.Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "Bearer devtoken")
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		g.Expect(string(body)).To(ContainSubstring("team-a"))
	})
}
