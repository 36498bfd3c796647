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

package controlplane

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestRequireS3: without the binary the S3 tests are skipped with the line
// naming `make versitygw`; any other error from the server fails them.
func TestRequireS3(t *testing.T) {
	for _, tc := range []struct {
		name               string
		err                error
		required           bool
		wantSkip, wantFail bool
	}{
		{name: "the server is there"},
		{name: "no binary", err: ErrNoVersityGW, wantSkip: true},
		{name: "no binary, wrapped", err: fmt.Errorf("starting S3: %w", ErrNoVersityGW), wantSkip: true},
		{name: "the server failed", err: errors.New("versitygw exited (exit status 1)"), wantFail: true},
		{name: "no binary, servers required", err: ErrNoVersityGW, required: true, wantFail: true},
		{name: "the server is there, servers required", required: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// make test and CI require the servers (ServersRequired); each
			// case says which run it is, whatever runs this test.
			t.Setenv("CI", "")
			t.Setenv("MYAPP_REQUIRE_SERVERS", "")
			if tc.required {
				t.Setenv("MYAPP_REQUIRE_SERVERS", "1")
			}
			var r recorder
			RequireS3(&r, tc.err)
			if (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantFail {
				t.Fatalf("skipped=%q failed=%q; want skip=%v fail=%v", r.skipped, r.failed, tc.wantSkip, tc.wantFail)
			}
			if msg := r.skipped + r.failed; tc.err != nil && errors.Is(tc.err, ErrNoVersityGW) && !strings.Contains(msg, "make versitygw") {
				t.Errorf("the message says %q; want the make target", msg)
			}
		})
	}
}

// TestStartS3 starts versitygw with a bucket, writes an object, and checks
// that a restart keeps it and Close leaves nothing behind.
func TestStartS3(t *testing.T) {
	ctx := t.Context()
	s, err := StartS3(ctx, S3Options{Buckets: []string{"backups"}, StateRoot: t.TempDir()})
	RequireS3(t, err)
	defer func() { _ = s.Close() }()
	c := s.Client()
	if _, err := c.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: aws.String("backups"), Key: aws.String("a/b.json.gz"), Body: strings.NewReader("x"),
	}); err != nil {
		t.Fatalf("put: %v\n%s", err, s.Log())
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String("backups")})
	if err != nil || len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "a/b.json.gz" {
		t.Fatalf("after a restart the bucket lists %v (%v), want the object written before", out, err)
	}
	if _, err := s.ClientAs(s.AccessKey, "wrong").ListBuckets(ctx, &awss3.ListBucketsInput{}); err == nil {
		t.Error("the server takes a wrong secret key")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s behind (%v)", s.Dir, err)
	}
}

// TestRequireWebhookServer holds the webhook servers to the S3 server's
// rule: a missing external-dns webhook server or PowerDNS skips a developer's
// run and fails make test's and CI's, which build and install them first.
func TestRequireWebhookServer(t *testing.T) {
	for _, tc := range []struct {
		name               string
		err                error
		required           bool
		wantSkip, wantFail bool
	}{
		{name: "the server is there"},
		{name: "no binary", err: ErrNoWebhookServer, wantSkip: true},
		{name: "no PowerDNS, wrapped", err: fmt.Errorf("starting pdns: %w", ErrNoPowerDNS), wantSkip: true},
		{name: "the server failed", err: errors.New("external-dns-webhook exited (exit status 1)"), wantFail: true},
		{name: "no binary, servers required", err: ErrNoWebhookServer, required: true, wantFail: true},
		{name: "no PowerDNS, servers required", err: ErrNoPowerDNS, required: true, wantFail: true},
		{name: "the server is there, servers required", required: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", "")
			t.Setenv("MYAPP_REQUIRE_SERVERS", "")
			if tc.required {
				t.Setenv("MYAPP_REQUIRE_SERVERS", "1")
			}
			var r recorder
			RequireWebhookServer(&r, tc.err)
			if (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantFail {
				t.Fatalf("skipped=%q failed=%q; want skip=%v fail=%v", r.skipped, r.failed, tc.wantSkip, tc.wantFail)
			}
		})
	}
}
