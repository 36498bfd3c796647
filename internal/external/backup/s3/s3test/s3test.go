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

// Package s3test is what the tests of the S3 backup provider share beyond
// the package itself (the BackupConfig controller's, the reliability
// campaign's): one versitygw per test binary, a bucket per test, a fault
// proxy in front of the server, and a reader of what a bucket holds that
// goes around the client under test.
package s3test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
)

var (
	sharedOnce   sync.Once
	shared       *controlplane.S3Server
	sharedErr    error
	bucketSerial atomic.Int64
)

// Shared returns the test binary's versitygw, started the first time on a
// free loopback port, or StartS3's error (controlplane.ErrNoVersityGW when
// the binary is not built: pass it to controlplane.RequireS3). Close stops
// it; call it from TestMain after the tests.
func Shared() (*controlplane.S3Server, error) {
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		shared, sharedErr = controlplane.StartS3(ctx, controlplane.S3Options{})
	})
	return shared, sharedErr
}

// Close stops the shared server if it was started.
func Close() error {
	if shared == nil {
		return nil
	}
	return shared.Close()
}

// NewBucket creates an empty bucket with a name no other call of this
// process gives, so each test sees only its own objects.
func NewBucket(ctx context.Context, srv *controlplane.S3Server, what string) (string, error) {
	name := fmt.Sprintf("%s-%d-%d", what, time.Now().UnixNano()%1e6, bucketSerial.Add(1))
	if len(name) > 63 {
		name = name[len(name)-63:]
	}
	name = strings.Trim(strings.ToLower(name), "-")
	return name, srv.CreateBucket(ctx, name)
}

// Object is one object of a bucket as the S3 server holds it, read with the
// root account's keys.
type Object struct {
	Key  string
	Size int64
	// Metadata is the object's user metadata, keys in lower case.
	Metadata map[string]string
	// Content is the object's body.
	Content []byte
	// Payload is the content decoded as a backup, nil when it does not
	// decode; PayloadErr says why.
	Payload    *backupcontent.Payload
	PayloadErr error
}

// Owner, IdempotencyKey and App are what the provider wrote in the
// object's metadata.
func (o Object) Owner() string          { return o.Metadata["myapp-owner"] }
func (o Object) IdempotencyKey() string { return o.Metadata["myapp-idempotency-key"] }
func (o Object) App() string            { return o.Metadata["myapp-app"] }

// Labels are the labels the provider wrote in the object's metadata.
func (o Object) Labels() map[string]string {
	var labels map[string]string
	_ = json.Unmarshal([]byte(o.Metadata["myapp-labels"]), &labels)
	return labels
}

// ID is the backup ID the provider gives the object, when it is filed under
// base (<prefix>/<owner-id>, or <owner-id> without a prefix): the key below
// base without the suffix. ok is false for an object outside base.
func (o Object) ID(base string) (string, bool) {
	rest, ok := strings.CutPrefix(o.Key, strings.Trim(base, "/")+"/")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, ".json.gz")
}

// Objects reads every object of bucket, key by key in order, with its
// metadata and content, through srv's root client: what the tests check
// the provider against, without the provider's own reading of it.
func Objects(ctx context.Context, srv *controlplane.S3Server, bucket string) ([]Object, error) {
	c := srv.Client()
	var out []Object
	pages := awss3.NewListObjectsV2Paginator(c, &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing bucket %s: %w", bucket, err)
		}
		for _, listed := range page.Contents {
			key := aws.ToString(listed.Key)
			got, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			if err != nil {
				// Deleted since the page was read.
				if strings.Contains(err.Error(), "NoSuchKey") {
					continue
				}
				return nil, fmt.Errorf("reading %s: %w", key, err)
			}
			content, err := io.ReadAll(got.Body)
			_ = got.Body.Close()
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", key, err)
			}
			o := Object{Key: key, Size: int64(len(content)), Metadata: got.Metadata, Content: content}
			o.Payload, o.PayloadErr = backupcontent.DecodePayload(content)
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// FaultProxy stands in front of an S3 server and passes every request on,
// unless told to fail some: it answers the next requests of a method with
// an S3 error (a throttling or failing server), or drops every connection
// (a server that is down). The Host header stays the proxy's, which is
// what a client pointed at it signs for.
type FaultProxy struct {
	// URL is the endpoint to give the client.
	URL string

	srv *httptest.Server
	mu  sync.Mutex
	// method and remaining say which requests get the fault ("" is every
	// method; a negative remaining, every request); status and code are
	// what they get.
	method      string
	remaining   int
	status      int
	code        string
	afterServer bool
	down        bool
	// answered counts the requests that got the fault; passed, those that
	// went through, by method.
	answered int
	passed   map[string]int
}

// NewFaultProxy starts a proxy to target, the server's endpoint. Close
// stops it.
func NewFaultProxy(target string) (*FaultProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	fp := &FaultProxy{passed: map[string]int{}}
	fp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		down, fault := fp.take(r.Method)
		switch {
		case down || fault != nil && fault.status == 0 && !fault.afterServer:
			// As a server that is gone: the connection closes without an
			// answer.
			dropConnection(w)
		case fault != nil && fault.afterServer:
			// As a connection reset after the server committed the
			// request: it is handled, and its answer lost.
			rp.ServeHTTP(discardAnswer{header: http.Header{}}, r)
			dropConnection(w)
		case fault != nil:
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(fault.status)
			_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code>`+
				`<Message>injected by the test's fault proxy</Message><RequestId>fault</RequestId></Error>`, fault.code)
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	fp.URL = fp.srv.URL
	return fp, nil
}

type fault struct {
	status      int
	code        string
	afterServer bool
}

// dropConnection closes the client's connection without an answer.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

// discardAnswer is a response writer that throws the server's answer away.
type discardAnswer struct{ header http.Header }

func (d discardAnswer) Header() http.Header         { return d.header }
func (d discardAnswer) Write(p []byte) (int, error) { return len(p), nil }
func (d discardAnswer) WriteHeader(int)             {}

// Fail answers the next n requests of method ("" for any; n < 0 for every
// one until Clear) with status and the S3 error code, such as 503 SlowDown;
// status 0 drops their connections without an answer, before the server
// sees them.
func (f *FaultProxy) Fail(method string, n, status int, code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.method, f.remaining, f.status, f.code, f.afterServer, f.answered = method, n, status, code, false, 0
}

// LoseAnswers passes the next n requests of method (n < 0: every one until
// Clear) to the server and drops their connections once it has handled
// them, as a reset after a committed write does.
func (f *FaultProxy) LoseAnswers(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.method, f.remaining, f.status, f.code, f.afterServer, f.answered = method, n, 0, "", true, 0
}

// SetDown drops every connection while down is true.
func (f *FaultProxy) SetDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// Clear ends every fault.
func (f *FaultProxy) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.method, f.remaining, f.down = "", 0, false
}

// Answered is how many requests got the fault set last.
func (f *FaultProxy) Answered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answered
}

// Passed is how many requests of method went through to the server.
func (f *FaultProxy) Passed(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.passed[method]
}

func (f *FaultProxy) take(method string) (bool, *fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return true, nil
	}
	if f.remaining != 0 && (f.method == "" || f.method == method) {
		if f.remaining > 0 {
			f.remaining--
		}
		f.answered++
		return false, &fault{status: f.status, code: f.code, afterServer: f.afterServer}
	}
	f.passed[method]++
	return false, nil
}

// Close stops the proxy.
func (f *FaultProxy) Close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// Counter counts the requests a client makes, by method, and the bytes on
// the wire both ways (headers included), through the transport it gives.
type Counter struct {
	mu       sync.Mutex
	methods  map[string]int
	sent     int64
	received int64
}

// Transport returns a transport that counts into c.
func (c *Counter) Transport() http.RoundTripper {
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
		c.mu.Lock()
		if c.methods == nil {
			c.methods = map[string]int{}
		}
		c.methods[r.Method]++
		c.mu.Unlock()
		return t.RoundTrip(r)
	})
}

// Counts is what a Counter counted.
type Counts struct {
	// Requests by HTTP method.
	Requests map[string]int
	// Sent and Received are bytes on the wire.
	Sent, Received int64
}

// Total is the number of requests.
func (c Counts) Total() int {
	n := 0
	for _, v := range c.Requests {
		n += v
	}
	return n
}

// Sub is what was counted between before and c.
func (c Counts) Sub(before Counts) Counts {
	out := Counts{Requests: map[string]int{}, Sent: c.Sent - before.Sent, Received: c.Received - before.Received}
	for m, n := range c.Requests {
		if d := n - before.Requests[m]; d != 0 {
			out.Requests[m] = d
		}
	}
	return out
}

// Snapshot returns the counts so far.
func (c *Counter) Snapshot() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Counts{Requests: map[string]int{}, Sent: c.sent, Received: c.received}
	for m, n := range c.methods {
		out.Requests[m] = n
	}
	return out
}

func (c *Counter) add(sent, received int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent += int64(sent)
	c.received += int64(received)
}

type countingConn struct {
	net.Conn
	c *Counter
}

func (cc *countingConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.add(0, n)
	return n, err
}

func (cc *countingConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.add(n, 0)
	return n, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
