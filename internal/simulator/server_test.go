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

package simulator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

const token = "sim-token"

// call sends one request with the test token unless the caller set its own
// Authorization header, and returns the status and body. It reports failures
// with t.Errorf, so goroutines may use it too.
func call(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return 0, ""
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s %s: read body: %v", method, url, err)
	}
	return resp.StatusCode, string(data)
}

func upsertBody(owner string) string {
	return fmt.Sprintf(`{"type":"A","value":"192.0.2.1","ttl":60,"owner":%q}`, owner)
}

func TestAuthentication(t *testing.T) {
	_, url := simtest.Start(t, simulator.Options{Token: token})
	tests := []struct {
		name   string
		path   string
		auth   string
		status int
	}{
		{name: "no header", path: "/dns/v1/records", auth: "", status: 401},
		{name: "another scheme", path: "/dns/v1/records", auth: "Basic " + token, status: 401},
		{name: "empty bearer", path: "/backup/v1/backups", auth: "Bearer ", status: 401},
		{name: "wrong token", path: "/backup/v1/backups", auth: "Bearer nope", status: 403},
		{name: "admin needs the token too", path: "/admin/v1/state", auth: "", status: 401},
		{name: "right token", path: "/dns/v1/records", auth: "Bearer " + token, status: 200},
		{name: "health check needs none", path: "/healthz", auth: "", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			status, body := call(t, http.MethodGet, url+tt.path, "", "Authorization", tt.auth)
			g.Expect(status).To(Equal(tt.status), body)
			if status >= 400 {
				g.Expect(body).NotTo(ContainSubstring(token), "the server never echoes a token")
			}
		})
	}
}

func TestAuthenticationOffWithoutAToken(t *testing.T) {
	g := NewWithT(t)
	_, url := simtest.Start(t, simulator.Options{})
	status, _ := call(t, http.MethodGet, url+"/dns/v1/records", "", "Authorization", "")
	g.Expect(status).To(Equal(200))
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		header  []string
		status  int
		message string
	}{
		{name: "upper-case name", method: "PUT", path: "/dns/v1/records/WWW.example.com", body: upsertBody("o"), status: 400, message: "lower-case"},
		{name: "trailing dot", method: "PUT", path: "/dns/v1/records/www.example.com.", body: upsertBody("o"), status: 400, message: "empty label"},
		{name: "single label", method: "PUT", path: "/dns/v1/records/localhost", body: upsertBody("o"), status: 400, message: "not fully qualified"},
		{name: "hyphen at a label's edge", method: "PUT", path: "/dns/v1/records/-www.example.com", body: upsertBody("o"), status: 400, message: "hyphen"},
		{name: "label too long", method: "PUT", path: "/dns/v1/records/" + strings.Repeat("a", 64) + ".example.com", body: upsertBody("o"), status: 400, message: "longer than 63"},
		{name: "underscore label is fine", method: "PUT", path: "/dns/v1/records/_acme-challenge.example.com", body: upsertBody("o"), status: 201},
		{name: "unknown type", method: "PUT", path: "/dns/v1/records/a.example.com", body: `{"type":"TXT","value":"x","ttl":60,"owner":"o"}`, status: 400, message: "not supported"},
		{name: "bad CNAME target", method: "PUT", path: "/dns/v1/records/a.example.com", body: `{"type":"CNAME","value":"Not Valid","ttl":60,"owner":"o"}`, status: 400, message: "CNAME"},
		{name: "TTL too long", method: "PUT", path: "/dns/v1/records/a.example.com", body: `{"type":"A","value":"192.0.2.1","ttl":90000,"owner":"o"}`, status: 400, message: "outside 30-86400"},
		{name: "owner with spaces", method: "PUT", path: "/dns/v1/records/a.example.com", body: `{"type":"A","value":"192.0.2.1","ttl":60,"owner":"a b"}`, status: 400, message: "owner"},
		{name: "unknown field", method: "PUT", path: "/dns/v1/records/a.example.com", body: `{"type":"A","value":"192.0.2.1","ttl":60,"owner":"o","name":"x"}`, status: 400, message: "unknown field"},
		{name: "two JSON values", method: "PUT", path: "/dns/v1/records/a.example.com", body: upsertBody("o") + "{}", status: 400, message: "after the JSON value"},
		{name: "body too large", method: "PUT", path: "/dns/v1/records/a.example.com", body: `{"type":"` + strings.Repeat("A", 70<<10) + `"}`, status: 413, message: "larger than"},
		{name: "delete without owner", method: "DELETE", path: "/dns/v1/records/a.example.com", status: 400, message: "owner query parameter"},
		{name: "start without key", method: "POST", path: "/backup/v1/backups", body: `{"app":"shop","owner":"o"}`, status: 400, message: "Idempotency-Key"},
		{name: "key with a space", method: "POST", path: "/backup/v1/backups", body: `{"app":"shop","owner":"o"}`, header: []string{"Idempotency-Key", "a b"}, status: 400, message: "printable"},
		{name: "app not a label", method: "POST", path: "/backup/v1/backups", body: `{"app":"Shop_1","owner":"o"}`, header: []string{"Idempotency-Key", "k"}, status: 400, message: "app"},
		{name: "too many labels", method: "POST", path: "/backup/v1/backups", body: tooManyLabels(), header: []string{"Idempotency-Key", "k"}, status: 400, message: "at most 32 labels"},
		{name: "empty content", method: "POST", path: "/backup/v1/backups", body: `{"app":"shop","owner":"o","content":""}`, header: []string{"Idempotency-Key", "k"}, status: 400, message: "content must be 1 to 1048576 bytes"},
		{name: "content over the limit", method: "POST", path: "/backup/v1/backups", body: startWithContent(1<<20 + 1), header: []string{"Idempotency-Key", "k"}, status: 400, message: "got 1048577"},
		{name: "start body over its limit", method: "POST", path: "/backup/v1/backups", body: startWithContent(2 << 20), header: []string{"Idempotency-Key", "k"}, status: 413, message: "larger than"},
		{name: "content that is not base64", method: "POST", path: "/backup/v1/backups", body: `{"app":"shop","owner":"o","content":"not base64!"}`, header: []string{"Idempotency-Key", "k"}, status: 400, message: "illegal base64"},
		{name: "delete backup without owner", method: "DELETE", path: "/backup/v1/backups/bk-000001", status: 400, message: "owner"},
		{name: "unknown endpoint", method: "GET", path: "/dns/v2/records", status: 404, message: "no endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: token})
			status, body := call(t, tt.method, url+tt.path, tt.body, tt.header...)
			g.Expect(status).To(Equal(tt.status), body)
			g.Expect(body).To(ContainSubstring(tt.message))
			if status >= 400 {
				var e struct {
					Error struct{ Code, Message string }
				}
				g.Expect(json.Unmarshal([]byte(body), &e)).To(Succeed())
				g.Expect(e.Error.Code).NotTo(BeEmpty())
				g.Expect(sim.Records()).To(BeEmpty(), "a refused write stores nothing")
				g.Expect(sim.Backups()).To(BeEmpty(), "a refused write stores nothing")
			}
		})
	}
}

func tooManyLabels() string {
	labels := map[string]string{}
	for i := range 33 {
		labels[fmt.Sprintf("l%d", i)] = "v"
	}
	data, _ := json.Marshal(map[string]any{"app": "shop", "owner": "o", "labels": labels})
	return string(data)
}

func TestSetFaultRefusesMistakes(t *testing.T) {
	tests := []struct {
		name    string
		service simulator.Service
		op      simulator.Operation
		fault   simulator.Fault
		message string
	}{
		{name: "unknown service", service: "mail", op: simulator.OpGet, fault: simulator.Fault{Status: 500}, message: "unknown service"},
		{name: "operation of the other service", service: simulator.ServiceDNS, op: simulator.OpStart, fault: simulator.Fault{Status: 500}, message: "no operation"},
		{name: "fault that does nothing", service: simulator.ServiceDNS, op: simulator.OpGet, fault: simulator.Fault{Count: 3}, message: "does nothing"},
		{name: "success status", service: simulator.ServiceDNS, op: simulator.OpGet, fault: simulator.Fault{Status: 200}, message: "not an error status"},
		{name: "rate above one", service: simulator.ServiceDNS, op: simulator.OpGet, fault: simulator.Fault{Status: 500, Rate: 1.5}, message: "rate"},
		{name: "unknown body fault", service: simulator.ServiceDNS, op: simulator.OpGet, fault: simulator.Fault{Body: "garbled"}, message: "is not one of"},
		{name: "body fault with a status", service: simulator.ServiceDNS, op: simulator.OpGet, fault: simulator.Fault{Body: simulator.BodyMalformed, Status: 500}, message: "neither status nor resetAfterCommit"},
		{name: "Retry-After without a status", service: simulator.ServiceDNS, op: simulator.OpGet, fault: simulator.Fault{Hang: true, RetryAfter: time.Second}, message: "retryAfter needs a status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: token})
			g.Expect(func() { sim.SetFault(tt.service, tt.op, tt.fault) }).To(PanicWith(ContainSubstring(tt.message)))
			g.Expect(sim.Faults()).To(BeEmpty())

			// The admin API refuses the same faults with a 400.
			body, err := json.Marshal(map[string]any{"status": tt.fault.Status, "rate": tt.fault.Rate, "count": tt.fault.Count,
				"hang": tt.fault.Hang, "retryAfter": tt.fault.RetryAfter.String(), "body": tt.fault.Body})
			g.Expect(err).NotTo(HaveOccurred())
			status, resp := call(t, http.MethodPut, fmt.Sprintf("%s/admin/v1/faults/%s/%s", url, tt.service, tt.op), string(body))
			g.Expect(status).To(Equal(400), resp)
			g.Expect(resp).To(ContainSubstring(tt.message))
		})
	}
}

func TestFaultCountRateAndPrecedence(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: token})
	get := func() int {
		status, _ := call(t, http.MethodGet, url+"/dns/v1/records", "")
		return status
	}

	sim.SetFault(simulator.ServiceDNS, simulator.OpList, simulator.Fault{Status: 500, Count: 2})
	g.Expect([]int{get(), get(), get()}).To(Equal([]int{500, 500, 200}))
	g.Expect(sim.Faults()).To(BeEmpty(), "a fault with a count removes itself when used up")

	sim.SetFault(simulator.ServiceDNS, simulator.AllOperations, simulator.Fault{Status: 502})
	sim.SetFault(simulator.ServiceDNS, simulator.OpList, simulator.Fault{Status: 504})
	g.Expect(get()).To(Equal(504), "the operation's own fault wins over the service-wide one")
	status, _ := call(t, http.MethodGet, url+"/dns/v1/records/a.example.com", "")
	g.Expect(status).To(Equal(502))
	status, _ = call(t, http.MethodGet, url+"/backup/v1/backups", "")
	g.Expect(status).To(Equal(200), "faults stay with their service")
	sim.ClearFault(simulator.ServiceDNS, simulator.OpList)
	g.Expect(get()).To(Equal(502))
	sim.ClearFaults()

	sim.SetFault(simulator.ServiceDNS, simulator.OpList, simulator.Fault{Status: 500, Rate: 0.5})
	failed := 0
	for range 200 {
		if get() == 500 {
			failed++
		}
	}
	// Binomial(200, 0.5) falls outside 60-140 with odds far below 1e-8.
	g.Expect(failed).To(BeNumerically(">", 60))
	g.Expect(failed).To(BeNumerically("<", 140))
	g.Expect(sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpList, 500)).To(BeNumerically(">=", failed))
}

func TestOutage(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: token})
	sim.SetOutage(simulator.ServiceDNS, true)

	status, body := call(t, http.MethodPut, url+"/dns/v1/records/a.example.com", upsertBody("o"))
	g.Expect(status).To(Equal(503))
	g.Expect(body).To(ContainSubstring("dns service is unavailable"))
	g.Expect(sim.Records()).To(BeEmpty())
	status, _ = call(t, http.MethodGet, url+"/dns/v1/records", "", "Authorization", "")
	g.Expect(status).To(Equal(503), "a service that is down does not even check tokens")
	status, _ = call(t, http.MethodGet, url+"/backup/v1/backups", "")
	g.Expect(status).To(Equal(200))
	status, _ = call(t, http.MethodGet, url+"/admin/v1/state", "")
	g.Expect(status).To(Equal(200), "the admin API stays up")

	sim.SetOutage(simulator.ServiceDNS, false)
	status, _ = call(t, http.MethodPut, url+"/dns/v1/records/a.example.com", upsertBody("o"))
	g.Expect(status).To(Equal(201))
}

func TestResetAfterCommitCommitsTheWrite(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: token})
	sim.SetFault(simulator.ServiceBackup, simulator.OpStart, simulator.Fault{ResetAfterCommit: true})

	req, err := http.NewRequest(http.MethodPost, url+"/backup/v1/backups", strings.NewReader(`{"app":"shop","owner":"o"}`))
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", "k")
	// A fresh transport, so net/http cannot retry on a reused connection
	// and hide the reset.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, err = client.Do(req)
	g.Expect(err).To(MatchError(Or(ContainSubstring("reset"), ContainSubstring("EOF"))))
	g.Expect(sim.Backups()).To(HaveLen(1), "the write happened although no answer came")
	g.Eventually(func() int {
		return sim.RequestCountStatus(simulator.ServiceBackup, simulator.OpStart, 0)
	}).Should(Equal(1), "a reset request is counted with status 0")
}

// TestBodyFaultsServeTheRequestAndSpoilTheAnswer checks each kind of spoiled
// body: the write is committed, the status and content type are the real
// answer's, and the body is what the kind promises.
func TestBodyFaultsServeTheRequestAndSpoilTheAnswer(t *testing.T) {
	tests := []struct {
		body  simulator.BodyFault
		check func(g Gomega, data []byte, readErr error)
	}{
		{body: simulator.BodyMalformed, check: func(g Gomega, data []byte, readErr error) {
			g.Expect(readErr).NotTo(HaveOccurred())
			g.Expect(json.Valid(data)).To(BeFalse(), "%s", data)
		}},
		{body: simulator.BodyTruncated, check: func(g Gomega, data []byte, readErr error) {
			g.Expect(readErr).To(MatchError(io.ErrUnexpectedEOF))
			g.Expect(data).NotTo(BeEmpty())
			g.Expect(json.Valid(data)).To(BeFalse(), "%s", data)
		}},
		{body: simulator.BodyOversized, check: func(g Gomega, data []byte, readErr error) {
			g.Expect(readErr).NotTo(HaveOccurred())
			g.Expect(data).To(HaveLen(simulator.OversizedBodyBytes))
			var rec map[string]any
			g.Expect(json.Unmarshal(data, &rec)).To(Succeed(), "padding keeps the JSON valid")
			g.Expect(rec).To(HaveKeyWithValue("owner", "o"))
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.body), func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: token})
			sim.SetFault(simulator.ServiceDNS, simulator.OpUpsert, simulator.Fault{Body: tt.body, Count: 1})

			req, err := http.NewRequest(http.MethodPut, url+"/dns/v1/records/a.example.com", strings.NewReader(upsertBody("o")))
			g.Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Authorization", "Bearer "+token)
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := client.Do(req)
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			g.Expect(resp.StatusCode).To(Equal(http.StatusCreated), "the real answer's status")
			g.Expect(resp.Header.Get("Content-Type")).To(Equal("application/json"))
			data, readErr := io.ReadAll(resp.Body)
			tt.check(g, data, readErr)
			g.Expect(sim.Records()).To(HaveLen(1), "the write happened although its answer is spoiled")

			// The count is used up: the next answer is whole.
			status, body := call(t, http.MethodGet, url+"/dns/v1/records/a.example.com", "")
			g.Expect(status).To(Equal(http.StatusOK))
			g.Expect(json.Valid([]byte(body))).To(BeTrue())
		})
	}

	t.Run("no body to spoil", func(t *testing.T) {
		g := NewWithT(t)
		sim, url := simtest.Start(t, simulator.Options{Token: token})
		status, _ := call(t, http.MethodPut, url+"/dns/v1/records/a.example.com", upsertBody("o"))
		g.Expect(status).To(Equal(http.StatusCreated))
		sim.SetFault(simulator.ServiceDNS, simulator.OpDelete, simulator.Fault{Body: simulator.BodyMalformed})
		status, body := call(t, http.MethodDelete, url+"/dns/v1/records/a.example.com?owner=o", "")
		g.Expect(status).To(Equal(http.StatusNoContent), body)
		g.Expect(body).To(BeEmpty())
		g.Expect(sim.Records()).To(BeEmpty())
	})
}

func TestCloseEndsHungRequests(t *testing.T) {
	g := NewWithT(t)
	sim := simulator.New(simulator.Options{Token: token})
	srv := httptest.NewUnstartedServer(sim)
	var active atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateActive {
			active.Add(1)
		}
	}
	srv.Start()
	sim.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Hang: true})
	sim.SetFault(simulator.ServiceDNS, simulator.OpList, simulator.Fault{Latency: time.Hour})

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, path := range []string{"/dns/v1/records/a.example.com", "/dns/v1/records"} {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			errs[i] = err
		})
	}
	g.Eventually(active.Load).Should(Equal(int32(2)), "both requests reached the server")

	start := time.Now()
	sim.Close()
	srv.Close() // blocks until every handler has returned
	wg.Wait()
	g.Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second))
	for _, err := range errs {
		g.Expect(err).To(HaveOccurred(), "hung requests end without an answer")
	}
}

func TestConsistencyDelayAndTimings(t *testing.T) {
	g := NewWithT(t)
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sim, url := simtest.Start(t, simulator.Options{Token: token, Clock: clock})
	sim.SetConsistencyDelay(simulator.ServiceDNS, time.Minute)
	sim.SetPropagationDelay(2 * time.Minute)

	status, body := call(t, http.MethodPut, url+"/dns/v1/records/a.example.com", upsertBody("o"))
	g.Expect(status).To(Equal(201))
	g.Expect(body).To(ContainSubstring("PENDING"))
	status, _ = call(t, http.MethodGet, url+"/dns/v1/records/a.example.com", "")
	g.Expect(status).To(Equal(404))
	_, body = call(t, http.MethodGet, url+"/dns/v1/records", "")
	g.Expect(body).NotTo(ContainSubstring("a.example.com"))
	g.Expect(sim.Records()).To(HaveLen(1), "the Go accessor ignores the delay")

	clock.Step(time.Minute)
	status, body = call(t, http.MethodGet, url+"/dns/v1/records/a.example.com", "")
	g.Expect(status).To(Equal(200))
	g.Expect(body).To(ContainSubstring("PENDING"))
	clock.Step(time.Minute)
	_, body = call(t, http.MethodGet, url+"/dns/v1/records/a.example.com", "")
	g.Expect(body).To(ContainSubstring("ACTIVE"))

	// With no delay, a write still answers PENDING and the next read sees
	// ACTIVE: propagation is only ever observed by polling.
	sim.SetPropagationDelay(0)
	sim.SetConsistencyDelay(simulator.ServiceDNS, 0)
	_, body = call(t, http.MethodPut, url+"/dns/v1/records/b.example.com", upsertBody("o"))
	g.Expect(body).To(ContainSubstring("PENDING"))
	_, body = call(t, http.MethodGet, url+"/dns/v1/records/b.example.com", "")
	g.Expect(body).To(ContainSubstring("ACTIVE"))
}

// startWithContent is a start body whose content is n bytes.
func startWithContent(n int) string {
	data, _ := json.Marshal(map[string]any{"app": "shop", "owner": "o", "content": make([]byte, n)})
	return string(data)
}

func TestStateFileSurvivesARestart(t *testing.T) {
	g := NewWithT(t)
	stateFile := filepath.Join(t.TempDir(), "state.json")
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts := simulator.Options{Token: token, StateFile: stateFile, BackupDuration: time.Hour, Clock: clock}

	first, err := simulator.Open(opts)
	g.Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewServer(first)
	status, _ := call(t, http.MethodPut, srv.URL+"/dns/v1/records/a.example.com", upsertBody("team-a"))
	g.Expect(status).To(Equal(201))
	status, body := call(t, http.MethodPost, srv.URL+"/backup/v1/backups", `{"app":"shop","owner":"o","content":"H4sIAAAA"}`, "Idempotency-Key", "k1")
	g.Expect(status).To(Equal(201))
	g.Expect(body).To(ContainSubstring("bk-000001"))
	status, _ = call(t, http.MethodPut, srv.URL+"/dns/v1/installations/prod-eu", `{"nonce":"abc123","cluster":"uid-1","instance":"m-0","checkIntervalSeconds":60}`)
	g.Expect(status).To(Equal(201))
	srv.Close()

	second, err := simulator.Open(opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(second.Records()).To(Equal(first.Records()))
	g.Expect(second.Backups()).To(Equal(first.Backups()))
	g.Expect(second.Claims()).To(Equal(first.Claims()), "installation claims survive the restart")
	g.Expect(second.Claims()).To(HaveLen(1))
	srv = httptest.NewServer(second)
	t.Cleanup(srv.Close)
	status, body = call(t, http.MethodPost, srv.URL+"/backup/v1/backups", `{"app":"shop","owner":"o"}`, "Idempotency-Key", "k1")
	g.Expect(status).To(Equal(200), "the idempotency key survived the restart")
	g.Expect(body).To(ContainSubstring("bk-000001"))
	status, body = call(t, http.MethodGet, srv.URL+"/backup/v1/backups/bk-000001/content", "")
	g.Expect(status).To(Equal(404), "the backup started before the restart runs for an hour")
	g.Expect(body).To(ContainSubstring("still RUNNING"))
	clock.Step(time.Hour)
	status, body = call(t, http.MethodGet, srv.URL+"/backup/v1/backups/bk-000001/content", "")
	g.Expect(status).To(Equal(200))
	g.Expect(body).To(ContainSubstring(`"content": "H4sIAAAA"`), "the content survived the restart")
	_, body = call(t, http.MethodPost, srv.URL+"/backup/v1/backups", `{"app":"shop","owner":"o"}`, "Idempotency-Key", "k2")
	g.Expect(body).To(ContainSubstring("bk-000002"), "IDs are not reused after a restart")
	status, _ = call(t, http.MethodPut, srv.URL+"/dns/v1/records/a.example.com", upsertBody("team-b"))
	g.Expect(status).To(Equal(409), "ownership survived the restart")

	second.Reset()
	third, err := simulator.Open(opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(third.Records()).To(BeEmpty(), "a reset empties the state file too")
	g.Expect(third.Claims()).To(BeEmpty())
}

func TestOpenRefusesABrokenStateFile(t *testing.T) {
	tests := map[string]string{
		"not JSON":      "{",
		"wrong version": `{"version":99}`,
		"nameless":      `{"version":1,"records":[{"type":"A"}]}`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			path := filepath.Join(t.TempDir(), "state.json")
			g.Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
			_, err := simulator.Open(simulator.Options{StateFile: path})
			g.Expect(err).To(MatchError(ContainSubstring("state file")))
		})
	}
}

func TestAdminSettingsAreAllOrNothing(t *testing.T) {
	g := NewWithT(t)
	_, url := simtest.Start(t, simulator.Options{Token: token, PropagationDelay: time.Second})
	status, body := call(t, http.MethodPatch, url+"/admin/v1/settings", `{"propagationDelay":"9s","consistencyDelay":{"mail":"1s"}}`)
	g.Expect(status).To(Equal(400), body)
	_, body = call(t, http.MethodGet, url+"/admin/v1/settings", "")
	g.Expect(body).To(ContainSubstring(`"propagationDelay": "1s"`), "a refused patch changes nothing")

	for _, bad := range []string{`{"backupDuration":"-1s"}`, `{"backupDuration":5}`, `{"backupFailure":{"reason":"x","count":-1}}`, `{"unknown":true}`} {
		status, body = call(t, http.MethodPatch, url+"/admin/v1/settings", bad)
		g.Expect(status).To(Equal(400), "%s: %s", bad, body)
	}
	status, _ = call(t, http.MethodPut, url+"/admin/v1/outages/dns", `{}`)
	g.Expect(status).To(Equal(400), `"down" is required`)
}

func TestConcurrentUseIsRaceFree(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: token})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				name := fmt.Sprintf("r%d-%d.example.com", w, i%5)
				call(t, http.MethodPut, url+"/dns/v1/records/"+name, upsertBody(fmt.Sprintf("o%d", w)))
				call(t, http.MethodGet, url+"/dns/v1/records/"+name, "")
				call(t, http.MethodPost, url+"/backup/v1/backups", `{"app":"shop","owner":"o"}`, "Idempotency-Key", fmt.Sprint("k", i%3))
				call(t, http.MethodGet, url+"/dns/v1/records", "")
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil && sim.RequestCount(simulator.ServiceDNS, simulator.OpList) < 100 {
			sim.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 500, Rate: 0.3})
			sim.SetOutage(simulator.ServiceBackup, true)
			_ = sim.Faults()
			_ = sim.RequestCounts()
			sim.SetOutage(simulator.ServiceBackup, false)
			sim.ClearFaults()
			_ = sim.Records()
		}
	})
	wg.Wait()
	g.Expect(sim.Records()).To(HaveLen(20))
	g.Expect(len(sim.Backups())).To(BeNumerically("<=", 3), "three keys make at most three backups")
}

// TestRecordListPages walks a record list page by page while records are
// written and deleted between the pages: a page continues after the last
// name of the one before, so every record that exists throughout is answered
// exactly once, a record created ahead of the walk is answered, and one
// created behind it or deleted before its page is not.
func TestRecordListPages(t *testing.T) {
	g := NewWithT(t)
	_, url := simtest.Start(t, simulator.Options{Token: token})
	put := func(name, owner string) {
		status, body := call(t, http.MethodPut, url+"/dns/v1/records/"+name, upsertBody(owner))
		g.Expect(status).To(BeElementOf(200, 201), body)
	}
	for _, n := range []string{"b", "d", "f", "h", "j"} {
		put(n+".example.com", "op/"+n)
	}
	put("e.example.com", "team-b")
	type page struct {
		Records []struct {
			Name string `json:"name"`
		} `json:"records"`
		NextPageToken string `json:"nextPageToken"`
	}
	get := func(query string) page {
		status, body := call(t, http.MethodGet, url+"/dns/v1/records?ownerPrefix=op/"+query, "")
		g.Expect(status).To(Equal(200), body)
		var p page
		g.Expect(json.Unmarshal([]byte(body), &p)).To(Succeed())
		return p
	}
	names := func(p page) []string {
		out := make([]string, 0, len(p.Records))
		for _, r := range p.Records {
			out = append(out, r.Name)
		}
		return out
	}

	first := get("&limit=2")
	g.Expect(names(first)).To(Equal([]string{"b.example.com", "d.example.com"}))
	g.Expect(first.NextPageToken).NotTo(BeEmpty())
	// Between the pages: one record behind the walk and one ahead of it
	// appear, one ahead of it goes.
	put("a.example.com", "op/a")
	put("g.example.com", "op/g")
	status, body := call(t, http.MethodDelete, url+"/dns/v1/records/f.example.com?owner=op/f", "")
	g.Expect(status).To(Equal(204), body)

	second := get("&limit=2&pageToken=" + first.NextPageToken)
	g.Expect(names(second)).To(Equal([]string{"g.example.com", "h.example.com"}), "the filter applies to every page")
	last := get("&limit=2&pageToken=" + second.NextPageToken)
	g.Expect(names(last)).To(Equal([]string{"j.example.com"}))
	g.Expect(last.NextPageToken).To(BeEmpty(), "the last page has no token")

	// A page that ends exactly at the last record is the last page.
	exact := get("&pageToken=" + first.NextPageToken + "&limit=3")
	g.Expect(names(exact)).To(Equal([]string{"g.example.com", "h.example.com", "j.example.com"}))
	g.Expect(exact.NextPageToken).To(BeEmpty())

	// Without a limit a page holds up to the default.
	status, body = call(t, http.MethodGet, url+"/dns/v1/records", "")
	g.Expect(status).To(Equal(200), body)
	g.Expect(body).NotTo(ContainSubstring("nextPageToken"))

	for _, query := range []string{"limit=0", "limit=1001", "limit=two", "pageToken=not*base64", "pageToken=Lg"} {
		status, body := call(t, http.MethodGet, url+"/dns/v1/records?"+query, "")
		g.Expect(status).To(Equal(400), query)
		g.Expect(body).To(ContainSubstring(`"invalid"`), query)
	}
}
