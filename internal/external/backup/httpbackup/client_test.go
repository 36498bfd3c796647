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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

const testToken = "backup-s3cr3t-token-value"

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newClient returns a client tuned for tests: two retries and millisecond
// backoff, so retry paths run in milliseconds.
func newClient(t testing.TB, baseURL string, mutate ...func(*external.Config)) backup.Client {
	t.Helper()
	cfg := external.Config{
		BaseURL:        baseURL,
		Token:          external.StaticTokenSource(testToken),
		AttemptTimeout: 2 * time.Second,
		MaxRetries:     2,
		MinRetryWait:   time.Millisecond,
		MaxRetryWait:   20 * time.Millisecond,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := httpbackup.New(cfg)
	if err != nil {
		t.Fatalf("httpbackup.New: %v", err)
	}
	return c
}

func start(app, owner, key string) backup.StartRequest {
	return backup.StartRequest{App: app, Owner: owner, IdempotencyKey: key}
}

func TestBackupLifecycle(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakeClock(epoch)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken, BackupDuration: time.Minute, Clock: clock})
	c := newClient(t, url)

	req := start("shop", "shop/prod", "shop-2026-01-01")
	req.Labels = map[string]string{"schedule": "nightly"}
	b, err := c.Start(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.ID).NotTo(BeEmpty())
	g.Expect(b.Phase).To(Equal(backup.PhaseRunning))
	g.Expect(b.StartedAt).To(Equal(epoch))
	g.Expect(b.CompletedAt).To(BeNil())
	g.Expect(b.Labels).To(Equal(map[string]string{"schedule": "nightly"}))

	clock.Step(59 * time.Second)
	got, err := c.Get(ctx, b.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Phase).To(Equal(backup.PhaseRunning))

	clock.Step(time.Second)
	got, err = c.Get(ctx, b.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Phase).To(Equal(backup.PhaseSucceeded))
	g.Expect(got.SizeBytes).To(BeNumerically(">", 0))
	g.Expect(got.Location).To(ContainSubstring(b.ID))
	g.Expect(got.CompletedAt).To(HaveValue(Equal(epoch.Add(time.Minute))))

	_, err = c.Start(ctx, start("blog", "blog/prod", "blog-2026-01-01"))
	g.Expect(err).NotTo(HaveOccurred())
	mine, err := c.List(ctx, "shop/prod")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mine).To(ConsistOf(HaveField("ID", b.ID)))
	all, err := c.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(HaveLen(2))

	g.Expect(c.Delete(ctx, b.ID, "shop/prod")).To(Succeed())
	_, err = c.Get(ctx, b.ID)
	g.Expect(err).To(MatchError(external.ErrNotFound))
	g.Expect(c.Delete(ctx, b.ID, "shop/prod")).To(Succeed(), "deleting what is gone is success")
	g.Expect(sim.Backups()).To(HaveLen(1))
}

// TestListFiltersByOwnerWhenTheServiceDoesNot puts the service behind a proxy
// that drops the owner filter. A caller waiting for "no backups left for my
// owner" would wait forever if List trusted the service's answer.
func TestListFiltersByOwnerWhenTheServiceDoesNot(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	_, url := simtest.StartBehind(t, simulator.Options{Token: testToken}, simtest.DropQuery(http.MethodGet, "owner"))
	c := newClient(t, url)
	var mineIDs []string
	for i, owner := range []string{"shop/prod", "blog/prod", "shop/prod"} {
		b, err := c.Start(ctx, start("app", owner, fmt.Sprintf("key-%d", i)))
		g.Expect(err).NotTo(HaveOccurred())
		if owner == "shop/prod" {
			mineIDs = append(mineIDs, b.ID)
		}
	}
	g.Expect(listUnfiltered(t, url+"/backup/v1/backups?owner=blog/prod")).To(HaveLen(3),
		"the proxy drops the filter, so the service answers with every backup")

	mine, err := c.List(ctx, "shop/prod")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mine).To(HaveExactElements(HaveField("ID", mineIDs[0]), HaveField("ID", mineIDs[1])))
	none, err := c.List(ctx, "nobody")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none).To(BeEmpty())
	all, err := c.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(HaveLen(3))
}

// listUnfiltered lists backups with a plain GET, bypassing the client.
func listUnfiltered(t *testing.T, url string) []backup.Backup {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Backups []backup.Backup `json:"backups"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Backups
}

func TestIdempotentStartNeverMakesTwoBackups(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name   string
		inject func(*simulator.Server)
		// starts is how many times the caller starts the same backup.
		starts int
	}{
		{name: "a repeated start", starts: 3},
		{
			name: "a reset after the start was committed",
			inject: func(s *simulator.Server) {
				s.SetFault(simulator.ServiceBackup, simulator.OpStart, simulator.Fault{ResetAfterCommit: true, Count: 1})
			},
			starts: 1,
		},
		{
			name: "a 503 on the first attempt",
			inject: func(s *simulator.Server) {
				s.SetFault(simulator.ServiceBackup, simulator.OpStart, simulator.Fault{Status: 503, Count: 1})
			},
			starts: 1,
		},
		{
			name: "throttling on the first attempts",
			inject: func(s *simulator.Server) {
				s.SetFault(simulator.ServiceBackup, simulator.OpStart, simulator.Fault{Status: 429, RetryAfter: 0, Count: 2})
			},
			starts: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			if tt.inject != nil {
				tt.inject(sim)
			}
			c := newClient(t, url)
			ids := map[string]bool{}
			for range tt.starts {
				b, err := c.Start(ctx, start("shop", "shop/prod", "key-1"))
				g.Expect(err).NotTo(HaveOccurred())
				ids[b.ID] = true
			}
			g.Expect(ids).To(HaveLen(1))
			g.Expect(sim.Backups()).To(HaveLen(1))
		})
	}
}

func TestConcurrentStartsWithOneKeyMakeOneBackup(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url)

	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Go(func() {
			b, err := c.Start(t.Context(), start("shop", "shop/prod", "same-key"))
			ids[i], errs[i] = b.ID, err
		})
	}
	wg.Wait()
	for i := range ids {
		g.Expect(errs[i]).NotTo(HaveOccurred())
		g.Expect(ids[i]).To(Equal(ids[0]))
	}
	g.Expect(sim.Backups()).To(HaveLen(1))
}

func TestStartWithoutAKeyIsNotSent(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	_, err := newClient(t, url).Start(t.Context(), start("shop", "shop/prod", ""))
	g.Expect(err).To(MatchError(external.ErrInvalid))
	g.Expect(err.Error()).To(ContainSubstring("idempotency key is required"))
	g.Expect(sim.RequestCount(simulator.ServiceBackup, simulator.OpStart)).To(BeZero())
}

func TestKeyConflicts(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name      string
		call      func(c backup.Client, id string) error
		wantErr   error
		wantOwner string
	}{{
		name: "start with another owner's key",
		call: func(c backup.Client, _ string) error {
			_, err := c.Start(ctx, start("shop", "intruder", "key-1"))
			return err
		},
		wantErr:   external.ErrConflict,
		wantOwner: "shop/prod",
	}, {
		name: "start of another app with the same key",
		call: func(c backup.Client, _ string) error {
			_, err := c.Start(ctx, start("blog", "shop/prod", "key-1"))
			return err
		},
		wantErr: external.ErrInvalid,
	}, {
		name:      "delete of another owner's backup",
		call:      func(c backup.Client, id string) error { return c.Delete(ctx, id, "intruder") },
		wantErr:   external.ErrConflict,
		wantOwner: "shop/prod",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			c := newClient(t, url)
			b, err := c.Start(ctx, start("shop", "shop/prod", "key-1"))
			g.Expect(err).NotTo(HaveOccurred())

			err = tt.call(c, b.ID)
			g.Expect(err).To(MatchError(tt.wantErr))
			var e *external.Error
			g.Expect(errors.As(err, &e)).To(BeTrue())
			g.Expect(e.Owner).To(Equal(tt.wantOwner))
			g.Expect(sim.Backups()).To(ConsistOf(HaveField("Owner", "shop/prod")))
		})
	}
}

func TestFailingBackupsThenRecovery(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakeClock(epoch)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken, BackupDuration: time.Minute, Clock: clock})
	sim.FailBackups("disk full", 1)
	c := newClient(t, url)

	failed, err := c.Start(ctx, start("shop", "shop/prod", "attempt-1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(failed.Phase).To(Equal(backup.PhaseRunning), "failure shows only once the backup ends")
	ok, err := c.Start(ctx, start("shop", "shop/prod", "attempt-2"))
	g.Expect(err).NotTo(HaveOccurred())

	clock.Step(time.Minute)
	failed, err = c.Get(ctx, failed.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(failed.Phase).To(Equal(backup.PhaseFailed))
	g.Expect(failed.Reason).To(Equal("disk full"))
	g.Expect(failed.Location).To(BeEmpty())
	ok, err = c.Get(ctx, ok.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ok.Phase).To(Equal(backup.PhaseSucceeded))

	// Repeating the start of the failed backup returns the failed backup: a
	// new attempt needs a new key.
	again, err := c.Start(ctx, start("shop", "shop/prod", "attempt-1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.ID).To(Equal(failed.ID))
	g.Expect(again.Phase).To(Equal(backup.PhaseFailed))
}

func TestBackupFaults(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name      string
		inject    func(*simulator.Server)
		call      func(backup.Client, string) error
		op        simulator.Operation
		wantKind  external.Kind
		wantCalls int
	}{{
		name:   "an outage is transient after every retry",
		inject: func(s *simulator.Server) { s.SetOutage(simulator.ServiceBackup, true) },
		call:   func(c backup.Client, id string) error { _, err := c.Get(ctx, id); return err },
		op:     simulator.OpGet, wantKind: external.KindTransient, wantCalls: 3,
	}, {
		name: "throttling over the cap is reported at once",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceBackup, simulator.OpList, simulator.Fault{Status: 429, RetryAfter: 120 * time.Second})
		},
		call: func(c backup.Client, _ string) error { _, err := c.List(ctx, ""); return err },
		op:   simulator.OpList, wantKind: external.KindThrottled, wantCalls: 1,
	}, {
		name: "eventual consistency hides a new backup from reads",
		inject: func(s *simulator.Server) {
			s.SetConsistencyDelay(simulator.ServiceBackup, time.Hour)
		},
		call: func(c backup.Client, id string) error { _, err := c.Get(ctx, id); return err },
		op:   simulator.OpGet, wantKind: external.KindNotFound, wantCalls: 1,
	}, {
		name: "a delete hit by a reset after commit succeeds on retry",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceBackup, simulator.OpDelete, simulator.Fault{ResetAfterCommit: true, Count: 1})
		},
		call: func(c backup.Client, id string) error { return c.Delete(ctx, id, "shop/prod") },
		op:   simulator.OpDelete, wantCalls: 2,
	}, {
		name: "a wrong status on start is not retried when it is a client error",
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceBackup, simulator.OpStart, simulator.Fault{Status: http.StatusUnprocessableEntity})
		},
		call: func(c backup.Client, _ string) error {
			_, err := c.Start(ctx, start("shop", "shop/prod", "other-key"))
			return err
		},
		op: simulator.OpStart, wantKind: external.KindInvalid, wantCalls: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			c := newClient(t, url)
			b, err := c.Start(ctx, start("shop", "shop/prod", "key-1"))
			g.Expect(err).NotTo(HaveOccurred())
			tt.inject(sim)
			before := sim.RequestCount(simulator.ServiceBackup, tt.op)

			err = tt.call(c, b.ID)
			if tt.wantKind == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(external.KindOf(err)).To(Equal(tt.wantKind), "error: %v", err)
			}
			g.Eventually(func() int {
				return sim.RequestCount(simulator.ServiceBackup, tt.op) - before
			}).WithTimeout(2 * time.Second).WithPolling(5 * time.Millisecond).Should(Equal(tt.wantCalls))
		})
	}
}

// TestThrottledServiceIsNotCalledBeforeRetryAfter: see simtest.RunThrottleTests.
func TestThrottledServiceIsNotCalledBeforeRetryAfter(t *testing.T) {
	simtest.RunThrottleTests(t, simulator.Options{Token: testToken}, simtest.ThrottledService{
		Service: simulator.ServiceBackup, Op: simulator.OpStart,
		Setup: func(t *testing.T, url string, maxRetryAfter time.Duration) (map[string]func() error, string) {
			ctx := t.Context()
			c := newClient(t, url, func(c *external.Config) { c.MaxRetryAfter = maxRetryAfter })
			b, err := c.Start(ctx, start("shop", "shop/prod", "key-1"))
			NewWithT(t).Expect(err).NotTo(HaveOccurred())
			return map[string]func() error{
				"start":  func() error { _, err := c.Start(ctx, start("shop", "shop/prod", "key-2")); return err },
				"get":    func() error { _, err := c.Get(ctx, b.ID); return err },
				"list":   func() error { _, err := c.List(ctx, "shop/prod"); return err },
				"delete": func() error { return c.Delete(ctx, "bk-missing", "shop/prod") },
			}, "start"
		},
	})
}

func TestContentIsServedOnceTheBackupSucceeded(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	clock := clocktesting.NewFakeClock(epoch)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken, BackupDuration: time.Minute, Clock: clock})
	c := newClient(t, url)
	payload := mustEncode(t, testPayload(t))

	req := start("shop", "shop/prod", "key-with-content")
	req.Payload = payload
	b, err := c.Start(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Content(ctx, b.ID)
	g.Expect(err).To(MatchError(external.ErrNotFound))
	g.Expect(err.Error()).To(ContainSubstring("still RUNNING"))

	// A repeated start with other content is answered with the first
	// backup, whose content stays what the first start sent.
	other := testPayload(t)
	other.Metadata.Trigger = "Manual"
	req.Payload = mustEncode(t, other)
	again, err := c.Start(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.ID).To(Equal(b.ID))

	clock.Step(time.Minute)
	got, err := c.Content(ctx, b.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(payload))
	decoded, err := backupcontent.DecodePayload(got)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(decoded.Metadata.Trigger).To(Equal("AppChange"))

	done, err := c.Get(ctx, b.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done.SizeBytes).To(BeEquivalentTo(len(payload)), "a backup with content is as big as its content")
	g.Expect(sim.RequestCount(simulator.ServiceBackup, simulator.OpContent)).To(Equal(2))
}

func TestContentOfABackupWithoutIt(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name    string
		prepare func(*simulator.Server, backup.Client) string
		want    string
	}{{
		name: "started without content",
		prepare: func(_ *simulator.Server, c backup.Client) string {
			b, err := c.Start(ctx, start("shop", "shop/prod", "no-content"))
			if err != nil {
				t.Fatal(err)
			}
			return b.ID
		},
		want: "was started without content",
	}, {
		name: "failed",
		prepare: func(s *simulator.Server, c backup.Client) string {
			s.FailBackups("disk full", 1)
			req := start("shop", "shop/prod", "failing")
			req.Payload = mustEncode(t, testPayload(t))
			b, err := c.Start(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			return b.ID
		},
		want: "FAILED (disk full) and holds no content",
	}, {
		name:    "missing",
		prepare: func(*simulator.Server, backup.Client) string { return "bk-999999" },
		want:    `backup "bk-999999" does not exist`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			sim, url := simtest.Start(t, simulator.Options{Token: testToken})
			c := newClient(t, url)
			_, err := c.Content(ctx, tt.prepare(sim, c))
			g.Expect(err).To(MatchError(external.ErrNotFound))
			g.Expect(err.Error()).To(ContainSubstring(tt.want))
		})
	}
}

func TestStartRefusesContentOverTheLimit(t *testing.T) {
	g := NewWithT(t)
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	req := start("shop", "shop/prod", "too-big")
	req.Payload = make([]byte, backup.MaxPayloadBytes+1)
	_, err := newClient(t, url).Start(t.Context(), req)
	g.Expect(err).To(MatchError(external.ErrInvalid))
	g.Expect(err.Error()).To(ContainSubstring("more than the 1048576 a backup may hold"))
	g.Expect(sim.RequestCount(simulator.ServiceBackup, simulator.OpStart)).To(BeZero())
}

// TestStartCarriesTheLargestContent: the simulator takes a start whose
// content is exactly at the limit, although its body is then well over the
// limit of other requests.
func TestStartCarriesTheLargestContent(t *testing.T) {
	g := NewWithT(t)
	_, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url)
	req := start("shop", "shop/prod", "largest")
	req.Payload = bytes.Repeat([]byte{0xff}, backup.MaxPayloadBytes)
	b, err := c.Start(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := c.Content(t.Context(), b.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(req.Payload))
}

// testPayload is a small payload as the controller builds it; the client
// carries it as bytes, so its children do not matter here.
func testPayload(t testing.TB) *backupcontent.Payload {
	t.Helper()
	app := &appsv1alpha1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "app-uid-1", Generation: 3},
		Spec:       appsv1alpha1.MyAppSpec{Image: "nginx:1.27", Host: "web.example.com"},
	}
	return &backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger: "AppChange", MyAppUID: string(app.UID), MyAppGeneration: app.Generation,
			TakenAt:      epoch,
			BackupConfig: backupcontent.ObjectIdentity{Namespace: "shop", Name: "nightly", UID: "bc-uid-1"},
			OwnerID:      "cluster-a", Owner: "backupconfig/bc-uid-1",
			IdempotencyKey: "backupconfig/bc-uid-1/change/app-uid-1/3",
		},
		MyApp: backupcontent.SnapshotApp(app),
	}
}

func mustEncode(t testing.TB, p *backupcontent.Payload) []byte {
	t.Helper()
	data, err := backupcontent.EncodePayload(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
