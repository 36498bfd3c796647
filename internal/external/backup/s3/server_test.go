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
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
)

// The tests run against versitygw, a real S3 server, started once for the
// package on loopback with a directory backend (see
// internal/controlplane/s3.go). Each test uses its own bucket, so none sees
// another's objects.

var (
	serverOnce sync.Once
	server     *controlplane.S3Server
	serverErr  error
	bucketSeq  atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if server != nil {
		if err := server.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping versitygw:", err)
		}
	}
	os.Exit(code)
}

// s3Server returns the package's S3 server, starting it the first time,
// and skips the test when versitygw is not built, or in a -short run:
// make test-unit runs the tests that need no built binary, and make test
// runs these.
func s3Server(t testing.TB) *controlplane.S3Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the S3 server (versitygw): -short runs (make test-unit) start none; make test runs this")
	}
	serverOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		server, serverErr = controlplane.StartS3(ctx, controlplane.S3Options{})
	})
	controlplane.RequireS3(t, serverErr)
	return server
}

// newBucket creates an empty bucket for one test.
func newBucket(t testing.TB, srv *controlplane.S3Server) string {
	t.Helper()
	name := fmt.Sprintf("test-%d-%d", time.Now().UnixNano()%1e6, bucketSeq.Add(1))
	if err := srv.CreateBucket(t.Context(), name); err != nil {
		t.Fatal(err)
	}
	return name
}

// counter counts the requests and the bytes on the wire (both ways,
// headers included) of a client, through its transport.
type counter struct {
	requests atomic.Int64
	sent     atomic.Int64
	received atomic.Int64
	// perMethod counts requests by HTTP method.
	mu        sync.Mutex
	perMethod map[string]int
}

func (c *counter) reset() {
	c.requests.Store(0)
	c.sent.Store(0)
	c.received.Store(0)
	c.mu.Lock()
	c.perMethod = map[string]int{}
	c.mu.Unlock()
}

func (c *counter) method(m string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.perMethod[m]
}

// transport returns a transport that counts into c.
func (c *counter) transport() http.RoundTripper {
	c.reset()
	t := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn, c: c}, nil
	}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		c.requests.Add(1)
		c.mu.Lock()
		c.perMethod[r.Method]++
		c.mu.Unlock()
		return t.RoundTrip(r)
	})
}

type countingConn struct {
	net.Conn
	c *counter
}

func (cc *countingConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.received.Add(int64(n))
	return n, err
}

func (cc *countingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.sent.Add(int64(n))
	return n, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// clientOptions tune newClient.
type clientOptions struct {
	endpoint             string
	bucket               string
	ownerID              string
	prefix               string
	accessKey, secretKey string
	transport            http.RoundTripper
	maxRetries           int
}

// newClient returns a client of srv tuned for tests: two retries with
// millisecond backoff.
func newClient(t testing.TB, srv *controlplane.S3Server, o clientOptions) *s3.Client {
	t.Helper()
	if o.endpoint == "" {
		o.endpoint = srv.Endpoint
	}
	if o.ownerID == "" {
		o.ownerID = "cluster-a"
	}
	if o.accessKey == "" {
		o.accessKey, o.secretKey = srv.AccessKey, srv.SecretKey
	}
	if o.maxRetries == 0 {
		o.maxRetries = 2
	}
	c, err := s3.New(s3.Config{
		ReadContent: backupcontent.Identity,
		Endpoint:    o.endpoint, Bucket: o.bucket, Region: srv.Region, PathStyle: true,
		Prefix: o.prefix, OwnerID: o.ownerID,
		Credentials:       s3.StaticCredentials(o.accessKey, o.secretKey),
		CredentialsSource: "the test's keys",
		AttemptTimeout:    10 * time.Second,
		MaxRetries:        o.maxRetries,
		MinRetryWait:      time.Millisecond,
		MaxRetryWait:      20 * time.Millisecond,
		Transport:         o.transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// objects lists every key in bucket with the root account, bypassing the
// client under test.
func objects(t testing.TB, srv *controlplane.S3Server, bucket string) []string {
	t.Helper()
	var keys []string
	pages := awss3.NewListObjectsV2Paginator(srv.Client(), &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	slices.Sort(keys)
	return keys
}

// startRequest is a start of owner "backupconfig/<uid>" in namespace shop
// with the key's rest, carrying a valid payload of installation ownerID.
func startRequest(t testing.TB, ownerID, uid, rest string) backup.StartRequest {
	t.Helper()
	const namespace = "shop"
	owner := "backupconfig/" + uid
	key := owner + "/" + rest
	payload, err := backupcontent.EncodePayload(&backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger: "Manual", MyAppUID: "app-" + uid, MyAppGeneration: 1,
			TakenAt:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: namespace, Name: "nightly", UID: uid},
			OwnerID:      ownerID, Owner: owner, IdempotencyKey: key,
		},
		MyApp: backupcontent.AppSnapshot{APIVersion: "apps.myapp.dev/v1alpha1", Kind: "MyApp", Namespace: namespace, Name: "web"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return backup.StartRequest{
		App: namespace + "-web", Owner: owner, IdempotencyKey: key, Namespace: namespace, Payload: payload,
		Labels: map[string]string{"backup.myapp.dev/trigger": "Manual", "note": "café"},
	}
}

// faultProxy stands in front of the S3 server and answers the next
// requests of one method with an S3 error of its choosing, as a throttled
// or failing server would; every other request goes through.
type faultProxy struct {
	URL string
	mu  sync.Mutex
	// method and remaining say which requests get the fault; status, code
	// and message are what they get.
	method    string
	remaining int
	status    int
	code      string
	// answered counts the requests that got the fault.
	answered int
}

func newFaultProxy(t testing.TB, target string) *faultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	// The Host header stays the proxy's: the client signed for it.
	rp := httputil.NewSingleHostReverseProxy(u)
	fp := &faultProxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fp.take(r.Method) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(fp.status)
			_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected by the test</Message><RequestId>fault</RequestId></Error>`, fp.code)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	fp.URL = srv.URL
	return fp
}

// set answers the next n requests of method with status and code.
func (f *faultProxy) set(method string, n, status int, code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.method, f.remaining, f.status, f.code, f.answered = method, n, status, code, 0
}

func (f *faultProxy) take(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.remaining == 0 || method != f.method {
		return false
	}
	f.remaining--
	f.answered++
	return true
}

func (f *faultProxy) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answered
}

// lostAnswer passes requests to the server and, for the next n PUTs, drops
// the answer after the server has handled it, as a connection reset after
// a committed write does.
func lostAnswer(n int) func(http.RoundTripper) http.RoundTripper {
	var left atomic.Int64
	left.Store(int64(n))
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(r)
			if err == nil && r.Method == http.MethodPut && left.Add(-1) >= 0 {
				_ = resp.Body.Close()
				return nil, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
			}
			return resp, err
		})
	}
}
