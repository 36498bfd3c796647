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
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
)

func TestStartStoresOneObjectAndSucceedsAtOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	c := newClient(t, srv, clientOptions{bucket: bucket, prefix: "backups"})

	req := startRequest(t, "cluster-a", "bc-1", "schedule/app-1/20260101T0000Z")
	b, err := c.Start(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.ID).To(Equal("shop/bc-1/schedule/app-1/20260101T0000Z"))
	g.Expect(b.Phase).To(Equal(backup.PhaseSucceeded), "with S3 the write is the backup")
	g.Expect(b.Owner).To(Equal("backupconfig/bc-1"))
	g.Expect(b.IdempotencyKey).To(Equal(req.IdempotencyKey))
	g.Expect(b.SizeBytes).To(BeEquivalentTo(len(req.Payload)))
	g.Expect(b.Location).To(Equal("s3://" + bucket + "/backups/cluster-a/shop/bc-1/schedule/app-1/20260101T0000Z.json.gz"))
	g.Expect(b.CompletedAt).To(HaveValue(Equal(b.StartedAt)))
	g.Expect(objects(t, srv, bucket)).To(Equal([]string{"backups/cluster-a/shop/bc-1/schedule/app-1/20260101T0000Z.json.gz"}))

	got, err := c.Get(ctx, b.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(b), "Get reads back what Start answered, labels and start time included")
	g.Expect(got.Labels).To(HaveKeyWithValue("note", "café"))

	content, err := c.Content(ctx, b.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(content).To(Equal(req.Payload))
	_, err = backupcontent.DecodePayload(content)
	g.Expect(err).NotTo(HaveOccurred())

	listed, err := c.List(ctx, req.Owner, backup.InNamespace("shop"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listed).To(Equal([]backup.Backup{b}))

	// A client that never started it (a restarted manager) finds the
	// owner's namespace by itself, and reads the same backup.
	fresh := newClient(t, srv, clientOptions{bucket: bucket, prefix: "backups"})
	listed, err = fresh.List(ctx, req.Owner)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listed).To(Equal([]backup.Backup{b}))
	all, err := fresh.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(HaveLen(1))
	none, err := fresh.List(ctx, "backupconfig/someone-else")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(none).To(BeEmpty())
}

// TestStartIsExactlyOnce: however a start is repeated (again by a later
// pass, after an answer lost once the write was committed, or by
// concurrent callers) the key names one object, written once, and every
// caller gets the same backup; the content of the first write stays.
func TestStartIsExactlyOnce(t *testing.T) {
	tests := []struct {
		name string
		// wrap, when set, wraps the client's transport.
		wrap   func(http.RoundTripper) http.RoundTripper
		starts int
		// concurrent runs the starts at once.
		concurrent bool
		// puts is how many PUT requests the client makes in all.
		puts int
	}{
		{name: "a repeated start", starts: 3, puts: 3},
		{name: "a start whose answer was lost after the write", wrap: lostAnswer(1), starts: 1, puts: 2},
		{name: "two answers lost in a row", wrap: lostAnswer(2), starts: 1, puts: 3},
		{name: "eight concurrent starts", starts: 8, concurrent: true, puts: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := t.Context()
			srv := s3Server(t)
			bucket := newBucket(t, srv)
			var count counter
			transport := count.transport()
			if tt.wrap != nil {
				transport = tt.wrap(transport)
			}
			c := newClient(t, srv, clientOptions{bucket: bucket, transport: transport})
			first := startRequest(t, "cluster-a", "bc-1", "manual/app-1/k1")

			ids := make([]string, tt.starts)
			errs := make([]error, tt.starts)
			var wg sync.WaitGroup
			for i := range tt.starts {
				req := first
				if i > 0 {
					// A later start of the same key builds its content
					// again, with other bytes; the first write's stay.
					req = startRequest(t, "cluster-a", "bc-1", "manual/app-1/k1")
					req.Payload = regenerated(t, req.Payload, int64(i+1))
					req.Labels = map[string]string{"attempt": "later"}
				}
				run := func() {
					b, err := c.Start(ctx, req)
					ids[i], errs[i] = b.ID, err
				}
				if tt.concurrent {
					wg.Go(run)
				} else {
					run()
				}
			}
			wg.Wait()
			for i := range ids {
				g.Expect(errs[i]).NotTo(HaveOccurred())
				g.Expect(ids[i]).To(Equal("shop/bc-1/manual/app-1/k1"))
			}
			g.Expect(objects(t, srv, bucket)).To(HaveLen(1))
			g.Expect(count.method(http.MethodPut)).To(Equal(tt.puts))
			got, err := c.Get(ctx, ids[0])
			g.Expect(err).NotTo(HaveOccurred())
			content, err := c.Content(ctx, ids[0])
			g.Expect(err).NotTo(HaveOccurred())
			if !tt.concurrent {
				g.Expect(got.Labels).NotTo(HaveKey("attempt"), "the first write is the one kept")
				g.Expect(content).To(Equal(first.Payload))
				return
			}
			// Whichever concurrent start won, its content and its
			// metadata were written together: generation 1 is the start
			// without the "attempt" label.
			stored, err := backupcontent.DecodePayload(content)
			g.Expect(err).NotTo(HaveOccurred())
			wantLabel := "later"
			if stored.Metadata.MyAppGeneration == 1 {
				wantLabel = ""
			}
			g.Expect(got.Labels["attempt"]).To(Equal(wantLabel),
				"content of generation %d with labels %v", stored.Metadata.MyAppGeneration, got.Labels)
		})
	}
}

func TestStartOfAnotherAppWithAUsedKeyIsRefused(t *testing.T) {
	g := NewWithT(t)
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	c := newClient(t, srv, clientOptions{bucket: bucket})
	req := startRequest(t, "cluster-a", "bc-1", "manual/k")
	_, err := c.Start(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	req.App = "shop-other"
	_, err = c.Start(t.Context(), req)
	g.Expect(err).To(MatchError(external.ErrInvalid))
	g.Expect(err.Error()).To(ContainSubstring(`was used to back up app "shop-web", not "shop-other"`))
}

// TestDeleteRemovesOnlyTheExactKeyOfItsOwner: retention and a
// BackupConfig's deletion remove one backup of their own at a time, by
// its exact key, and never another owner's, whatever ID they are handed.
func TestDeleteRemovesOnlyTheExactKeyOfItsOwner(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	c := newClient(t, srv, clientOptions{bucket: bucket})

	mine := make([]backup.Backup, 0, 3)
	for _, rest := range []string{"change/app-1/1", "change/app-1/1/2", "change/app-1/10"} {
		b, err := c.Start(ctx, startRequest(t, "cluster-a", "bc-1", rest))
		g.Expect(err).NotTo(HaveOccurred())
		mine = append(mine, b)
	}
	theirs, err := c.Start(ctx, startRequest(t, "cluster-a", "bc-2", "change/app-1/1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects(t, srv, bucket)).To(HaveLen(4))

	g.Expect(c.Delete(ctx, mine[0].ID, "backupconfig/bc-1")).To(Succeed())
	g.Expect(objects(t, srv, bucket)).To(ConsistOf(
		"cluster-a/shop/bc-1/change/app-1/1/2.json.gz",
		"cluster-a/shop/bc-1/change/app-1/10.json.gz",
		"cluster-a/shop/bc-2/change/app-1/1.json.gz",
	), "the key change/app-1/1 went, not the keys it is a prefix of")
	g.Expect(c.Delete(ctx, mine[0].ID, "backupconfig/bc-1")).To(Succeed(), "deleting what is gone is success")

	err = c.Delete(ctx, theirs.ID, "backupconfig/bc-1")
	g.Expect(err).To(MatchError(external.ErrConflict))
	var xerr *external.Error
	g.Expect(errors.As(err, &xerr)).To(BeTrue())
	g.Expect(xerr.Owner).To(Equal("backupconfig/bc-2"))
	g.Expect(objects(t, srv, bucket)).To(ContainElement("cluster-a/shop/bc-2/change/app-1/1.json.gz"))

	_, err = c.Get(ctx, mine[0].ID)
	g.Expect(err).To(MatchError(external.ErrNotFound))
	listed, err := c.List(ctx, "backupconfig/bc-1", backup.InNamespace("shop"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listed).To(HaveExactElements(HaveField("ID", mine[1].ID), HaveField("ID", mine[2].ID)))

	for _, bad := range []string{"../cluster-b/shop/bc-1/x", "shop/bc-1/../../x", "shop/bc-1", "shop//bc-1/x"} {
		err := c.Delete(ctx, bad, "backupconfig/bc-1")
		g.Expect(err).To(MatchError(external.ErrInvalid), "ID %q", bad)
	}
	g.Expect(objects(t, srv, bucket)).To(HaveLen(3))
}

// TestTwoInstallationsShareABucket: two installations with their own owner
// IDs keep backups of BackupConfigs with the same namespace and UID in one
// bucket; neither lists, reads or deletes the other's.
func TestTwoInstallationsShareABucket(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	a := newClient(t, srv, clientOptions{bucket: bucket, ownerID: "cluster-a"})
	b := newClient(t, srv, clientOptions{bucket: bucket, ownerID: "cluster-ab"})

	backupA, err := a.Start(ctx, startRequest(t, "cluster-a", "bc-1", "manual/k"))
	g.Expect(err).NotTo(HaveOccurred())
	backupB, err := b.Start(ctx, startRequest(t, "cluster-ab", "bc-1", "manual/k"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(backupA.ID).To(Equal(backupB.ID), "the same owner and key in two installations")
	g.Expect(objects(t, srv, bucket)).To(HaveLen(2), "a start of one never answers with the other's backup")

	listA, err := a.List(ctx, "backupconfig/bc-1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(listA).To(ConsistOf(HaveField("Location", ContainSubstring("/cluster-a/"))))
	allB, err := b.List(ctx, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(allB).To(ConsistOf(HaveField("Location", ContainSubstring("/cluster-ab/"))))

	g.Expect(b.Delete(ctx, backupB.ID, "backupconfig/bc-1")).To(Succeed())
	g.Expect(objects(t, srv, bucket)).To(Equal([]string{"cluster-a/shop/bc-1/manual/k.json.gz"}))
	g.Expect(b.Delete(ctx, backupA.ID, "backupconfig/bc-1")).To(Succeed(), "the ID names b's own, gone, key")
	g.Expect(objects(t, srv, bucket)).To(Equal([]string{"cluster-a/shop/bc-1/manual/k.json.gz"}))
	_, err = b.Content(ctx, backupA.ID)
	g.Expect(err).To(MatchError(external.ErrNotFound))
}

// TestFailuresNameTheCauseAndTheWayOut: each way the server can refuse a
// call gives the kind of error the controller turns into a condition, with
// a message that says what is wrong and what to change, and stores
// nothing.
func TestFailuresNameTheCauseAndTheWayOut(t *testing.T) {
	srv := s3Server(t)
	// A new user each run, so the test can run again (-count) on the
	// package's server.
	user := fmt.Sprintf("readonly%d", bucketSeq.Add(1))
	if err := srv.AddUser(t.Context(), user, "readonlysecret1234"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		options  func(bucket string) clientOptions
		wantKind external.Kind
		want     []string
	}{{
		name:     "a missing bucket",
		options:  func(string) clientOptions { return clientOptions{bucket: "no-such-bucket"} },
		wantKind: external.KindInvalid,
		want:     []string{`bucket "no-such-bucket" does not exist at ` + srv.Endpoint, "create it, or correct --s3-bucket"},
	}, {
		name: "an unknown access key",
		options: func(bucket string) clientOptions {
			return clientOptions{bucket: bucket, accessKey: "nobody", secretKey: srv.SecretKey}
		},
		wantKind: external.KindUnauthorized,
		want:     []string{"does not know the access key ID (the test's keys)", "correct the access key"},
	}, {
		name: "a wrong secret key",
		options: func(bucket string) clientOptions {
			return clientOptions{bucket: bucket, accessKey: srv.AccessKey, secretKey: "wrong-secret-key"}
		},
		wantKind: external.KindUnauthorized,
		want:     []string{"secret access key does not match", "correct the secret key"},
	}, {
		name: "a refused write",
		options: func(bucket string) clientOptions {
			return clientOptions{bucket: bucket, accessKey: user, secretKey: "readonlysecret1234"}
		},
		wantKind: external.KindUnauthorized,
		want:     []string{"refused the write of the backup (AccessDenied)", "need s3:PutObject", "cluster-a/"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bucket := newBucket(t, srv)
			c := newClient(t, srv, tt.options(bucket))
			_, err := c.Start(t.Context(), startRequest(t, "cluster-a", "bc-1", "manual/k"))
			g.Expect(external.KindOf(err)).To(Equal(tt.wantKind), "error: %v", err)
			for _, w := range tt.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
			g.Expect(external.IsRetryable(err)).To(BeFalse(), "waiting alone does not fix it")
			g.Expect(objects(t, srv, bucket)).To(BeEmpty())
			_, err = c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
			g.Expect(external.KindOf(err)).To(Equal(tt.wantKind), "a list fails the same way: %v", err)
		})
	}
}

// TestSlowDownIsRetriedThenReported: a server that asks to slow down (503
// SlowDown, which versitygw does not send, so a proxy in front of it does)
// is retried with backoff; one that keeps asking is reported as throttled
// after the retries, with nothing written, and the next start after it
// recovers writes the backup once.
func TestSlowDownIsRetriedThenReported(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	proxy := newFaultProxy(t, srv.Endpoint)
	c := newClient(t, srv, clientOptions{bucket: bucket, endpoint: proxy.URL})

	proxy.set(http.MethodPut, 1, http.StatusServiceUnavailable, "SlowDown")
	b, err := c.Start(ctx, startRequest(t, "cluster-a", "bc-1", "manual/k1"))
	g.Expect(err).NotTo(HaveOccurred(), "one SlowDown is waited out")
	g.Expect(proxy.count()).To(Equal(1))
	g.Expect(b.Phase).To(Equal(backup.PhaseSucceeded))

	proxy.set(http.MethodPut, 100, http.StatusServiceUnavailable, "SlowDown")
	req := startRequest(t, "cluster-a", "bc-1", "manual/k2")
	_, err = c.Start(ctx, req)
	g.Expect(err).To(MatchError(external.ErrThrottled))
	g.Expect(err.Error()).To(ContainSubstring("asked to slow down (SlowDown) and still did after 3 attempts"))
	g.Expect(external.IsRetryable(err)).To(BeTrue())
	g.Expect(proxy.count()).To(Equal(3), "the first attempt and two retries")
	g.Expect(objects(t, srv, bucket)).To(HaveLen(1), "nothing of the throttled start was written")

	proxy.set(http.MethodGet, 100, http.StatusInternalServerError, "InternalError")
	_, err = c.List(ctx, "backupconfig/bc-1", backup.InNamespace("shop"))
	g.Expect(err).To(MatchError(external.ErrTransient))
	g.Expect(err.Error()).To(ContainSubstring("the S3 server at " + proxy.URL + " failed (InternalError)"))

	proxy.set("", 0, 0, "")
	_, err = c.Start(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objects(t, srv, bucket)).To(HaveLen(2))
}

func TestStartRefusesWhatARestoreCouldNotRead(t *testing.T) {
	srv := s3Server(t)
	tests := []struct {
		name   string
		mutate func(*backup.StartRequest)
		want   string
	}{
		{"no content", func(r *backup.StartRequest) { r.Payload = nil }, "content is required"},
		{"content that is not a backup", func(r *backup.StartRequest) { r.Payload = []byte("hello") }, "not gzip'd"},
		{"content of another owner", func(r *backup.StartRequest) {
			other := startRequest(t, "cluster-a", "bc-2", "manual/k")
			r.Payload = other.Payload
		}, `the content names owner "backupconfig/bc-2"`},
		{"content of another installation", func(r *backup.StartRequest) {
			r.Payload = startRequest(t, "cluster-b", "bc-1", "manual/k").Payload
		}, `the content names owner ID "cluster-b", this installation's is "cluster-a"`},
		{"no namespace", func(r *backup.StartRequest) { r.Namespace = "" }, "namespace is required"},
		{"a key outside its owner", func(r *backup.StartRequest) { r.IdempotencyKey = "manual/k" }, "must begin with its owner"},
		{"labels too large for S3 metadata", func(r *backup.StartRequest) {
			r.Labels = map[string]string{}
			for i := range 20 {
				r.Labels[string(rune('a'+i))] = strings.Repeat("v", 200)
			}
		}, "more than the 2048 S3 stores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bucket := newBucket(t, srv)
			var count counter
			c := newClient(t, srv, clientOptions{bucket: bucket, transport: count.transport()})
			req := startRequest(t, "cluster-a", "bc-1", "manual/k")
			tt.mutate(&req)
			_, err := c.Start(t.Context(), req)
			g.Expect(err).To(MatchError(external.ErrInvalid))
			g.Expect(err.Error()).To(ContainSubstring(tt.want))
			g.Expect(count.requests.Load()).To(BeZero(), "nothing is sent")
		})
	}
}

// TestNamespaceFromTheLabel: the BackupConfig controller of today sends the
// namespace as a label, not in StartRequest.Namespace; the client files the
// backup by it all the same.
func TestNamespaceFromTheLabel(t *testing.T) {
	g := NewWithT(t)
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	c := newClient(t, srv, clientOptions{bucket: bucket})
	req := startRequest(t, "cluster-a", "bc-1", "manual/k")
	req.Namespace = ""
	req.Labels = map[string]string{backup.LabelNamespace: "shop"}
	b, err := c.Start(t.Context(), req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.ID).To(HavePrefix("shop/bc-1/"))
}

// TestMetricsAreTheHTTPClientsSeries: the S3 client counts its calls in
// the series the HTTP clients use, under service "backup", and building an
// HTTP client afterwards does not collide with it.
func TestMetricsAreTheHTTPClientsSeries(t *testing.T) {
	g := NewWithT(t)
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	c := newClient(t, srv, clientOptions{bucket: bucket})
	before := requestCount(t, "backup", "start", "ok")
	_, err := c.Start(t.Context(), startRequest(t, "cluster-a", "bc-1", "manual/k"))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Get(t.Context(), "shop/bc-1/manual/missing")
	g.Expect(err).To(MatchError(external.ErrNotFound))
	g.Expect(requestCount(t, "backup", "start", "ok")).To(Equal(before + 1))
	g.Expect(requestCount(t, "backup", "get", "not_found")).To(BeNumerically(">=", 1))

	_, err = httpbackup.New(external.Config{BaseURL: "http://127.0.0.1:1", Token: external.StaticTokenSource("t")})
	g.Expect(err).NotTo(HaveOccurred(), "an HTTP client built after the S3 client shares the collectors")
}

// requestCount is the value of myapp_external_requests_total with the
// given labels in controller-runtime's registry.
func requestCount(t *testing.T, service, operation, outcome string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"service": service, "operation": operation, "outcome": outcome}
	for _, f := range families {
		if f.GetName() != "myapp_external_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if maps.Equal(got, want) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// regenerated is payload built again with another generation: other bytes
// for the same backup.
func regenerated(t *testing.T, payload []byte, generation int64) []byte {
	t.Helper()
	p, err := backupcontent.DecodePayload(payload)
	if err != nil {
		t.Fatal(err)
	}
	p.Metadata.MyAppGeneration = generation
	data, err := backupcontent.EncodePayload(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
