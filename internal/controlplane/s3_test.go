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

// TestRequireServers holds every built or installed server to one rule: a
// missing one skips a developer's run, naming how to get it, and fails
// make test's and CI's, which build and install them first; any other
// error fails.
func TestRequireServers(t *testing.T) {
	s3Case := func(name string, err error, required, wantSkip, wantFail bool) requireCase {
		return requireCase{"s3: " + name, RequireS3, err, required, wantSkip, wantFail, "make versitygw"}
	}
	hookCase := func(name string, err error, required, wantSkip, wantFail bool) requireCase {
		return requireCase{"webhook: " + name, RequireWebhookServer, err, required, wantSkip, wantFail, ""}
	}
	for _, tc := range []requireCase{
		s3Case("the server is there", nil, false, false, false),
		s3Case("no binary", ErrNoVersityGW, false, true, false),
		s3Case("no binary, wrapped", fmt.Errorf("starting S3: %w", ErrNoVersityGW), false, true, false),
		s3Case("the server failed", errors.New("versitygw exited (exit status 1)"), false, false, true),
		s3Case("no binary, servers required", ErrNoVersityGW, true, false, true),
		s3Case("the server is there, servers required", nil, true, false, false),
		hookCase("the server is there", nil, false, false, false),
		hookCase("no binary", ErrNoWebhookServer, false, true, false),
		hookCase("no PowerDNS, wrapped", fmt.Errorf("starting pdns: %w", ErrNoPowerDNS), false, true, false),
		hookCase("the server failed", errors.New("external-dns-webhook exited (exit status 1)"), false, false, true),
		hookCase("no binary, servers required", ErrNoWebhookServer, true, false, true),
		hookCase("no PowerDNS, servers required", ErrNoPowerDNS, true, false, true),
		hookCase("the server is there, servers required", nil, true, false, false),
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
			tc.require(&r, tc.err)
			if (r.skipped != "") != tc.wantSkip || (r.failed != "") != tc.wantFail {
				t.Fatalf("skipped=%q failed=%q; want skip=%v fail=%v", r.skipped, r.failed, tc.wantSkip, tc.wantFail)
			}
			if msg := r.skipped + r.failed; tc.wantHint != "" && errors.Is(tc.err, ErrNoVersityGW) &&
				!strings.Contains(msg, tc.wantHint) {
				t.Errorf("the message says %q; want %q", msg, tc.wantHint)
			}
		})
	}
}

// requireCase is one case of TestRequireServers.
type requireCase struct {
	name               string
	require            func(TB, error)
	err                error
	required           bool
	wantSkip, wantFail bool
	// wantHint is what the message must name when the binary is missing.
	wantHint string
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
