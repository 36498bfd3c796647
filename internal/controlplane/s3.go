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
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// VersityGWVersion is the versitygw release `make versitygw` builds; the
// Makefile's VERSITYGW_VERSION says the same.
const VersityGWVersion = "v1.8.0"

// InstallVersityGWHint is the one line a test prints when the S3 server is
// missing.
const InstallVersityGWHint = "versitygw (the S3 server the S3 tests run against) is not built: run `make versitygw`, " +
	"which builds github.com/versity/versitygw/cmd/versitygw " + VersityGWVersion + " into bin/ (or set VERSITYGW to a binary)"

// ErrNoVersityGW is VersityGWPath's error, and StartS3's, when the binary is
// missing; its text is InstallVersityGWHint.
var ErrNoVersityGW = errors.New(InstallVersityGWHint)

// S3Options configure StartS3. The zero value serves on a free loopback
// port with fresh root keys, in region us-east-1, with no bucket.
type S3Options struct {
	// Addr is the loopback address to listen on, 127.0.0.1:port; a free
	// port when empty.
	Addr string
	// AccessKey and SecretKey are the root account's keys; random when
	// empty.
	AccessKey, SecretKey string
	// Region is what the server signs for; "us-east-1" when empty.
	Region string
	// Buckets are created, empty, before StartS3 returns.
	Buckets []string
	// StateRoot is where run directories are created; $TMPDIR/myapp-s3
	// when empty.
	StateRoot string
}

// S3Server is a versitygw serving the S3 API on loopback from a directory
// (its posix backend: a bucket is a directory, an object a file with its
// metadata in extended attributes). It runs in its own run directory, like
// the control plane's components, and dies with the process that started
// it.
type S3Server struct {
	// Endpoint is the URL clients use, http://127.0.0.1:port, with
	// path-style addressing.
	Endpoint string
	// Addr is where it listens.
	Addr string
	// AccessKey and SecretKey are the root account's keys; Region is the
	// region it signs for.
	AccessKey, SecretKey, Region string
	// Dir is the run directory; DataDir, under it, holds the buckets.
	Dir, DataDir string

	binary string
	mu     sync.Mutex
	proc   *process
}

// VersityGWPath finds the versitygw binary: $VERSITYGW, else bin/versitygw
// in this repository. The error is ErrNoVersityGW.
func VersityGWPath() (string, error) {
	return builtBinary("VERSITYGW", "versitygw", ErrNoVersityGW)
}

// builtBinary finds a binary `make` builds into bin/: the path in the
// environment variable env when it is set (an error if nothing is there),
// else bin/name in this repository, else missing.
func builtBinary(env, name string, missing error) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", env, err)
		}
		return p, nil
	}
	p := filepath.Join(RepoRoot(), "bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", missing
	}
	return p, nil
}

// ServersRequired reports whether this run must fail, not skip, a test
// whose server binary is missing: under CI (CI=true) and under `make test`
// (MYAPP_REQUIRE_SERVERS=1), which build the binaries first, a missing one
// means a broken build, not a developer's partial checkout.
func ServersRequired() bool {
	return os.Getenv("CI") == "true" || os.Getenv("MYAPP_REQUIRE_SERVERS") == "1"
}

// RequireS3 ends a test that needs the S3 server when err, from StartS3 or
// VersityGWPath, is not nil: when the binary is missing it is skipped,
// naming the make target, or fails when ServersRequired; it fails for any
// other error, so a server that is there but broken never passes for one
// that is not built.
func RequireS3(t TB, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ErrNoVersityGW) && ServersRequired():
		t.Fatal(fmt.Sprintf("%v; this run requires the S3 server (CI=true or MYAPP_REQUIRE_SERVERS=1, which make test sets) "+
			"rather than skipping its tests", err))
	case errors.Is(err, ErrNoVersityGW):
		t.Skip(err)
	default:
		t.Fatal(err)
	}
}

// StartS3 starts versitygw on a new run directory and returns once it
// answers, with opts.Buckets created. Runs whose owner died are swept first.
func StartS3(ctx context.Context, opts S3Options) (*S3Server, error) {
	binary, err := VersityGWPath()
	if err != nil {
		return nil, err
	}
	if opts.StateRoot == "" {
		opts.StateRoot = filepath.Join(os.TempDir(), "myapp-s3")
	}
	if opts.Addr == "" {
		if opts.Addr, err = FreeAddress(); err != nil {
			return nil, err
		}
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.AccessKey == "" {
		opts.AccessKey = "root" + randomHex(8)
	}
	if opts.SecretKey == "" {
		opts.SecretKey = randomHex(20)
	}
	if err := sweepStaleRuns(opts.StateRoot); err != nil {
		return nil, fmt.Errorf("sweeping stale S3 runs in %s: %w", opts.StateRoot, err)
	}
	dir, err := newRunDir(opts.StateRoot)
	if err != nil {
		return nil, err
	}
	s := &S3Server{
		Endpoint: "http://" + opts.Addr, Addr: opts.Addr,
		AccessKey: opts.AccessKey, SecretKey: opts.SecretKey, Region: opts.Region,
		Dir: dir, DataDir: filepath.Join(dir, "data"), binary: binary,
	}
	for _, d := range []string{s.DataDir, filepath.Join(dir, "iam")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
	}
	if err := s.Start(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	for _, b := range opts.Buckets {
		if err := s.CreateBucket(ctx, b); err != nil {
			return nil, errors.Join(err, s.Close())
		}
	}
	return s, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Start starts versitygw again after Stop, on the same address with the
// same data. It returns once the server answers.
func (s *S3Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		if done, _ := s.proc.exited(); !done {
			return nil
		}
	}
	args := []string{
		"--port", s.Addr,
		"--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
		"--iam-dir", filepath.Join(s.Dir, "iam"),
		"--quiet",
		"posix", s.DataDir,
	}
	p, err := startProcess("versitygw", s.binary, args, s.Dir)
	if err != nil {
		return err
	}
	s.proc = p
	deadline := time.Now().Add(30 * time.Second)
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("versitygw exited (%v); its log: %s", err, s.tail())
		}
		if s.answers() {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = p.stop(5 * time.Second)
			return fmt.Errorf("versitygw did not answer on %s within 30s; its log: %s", s.Addr, s.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answers reports whether the server answers S3 requests: an unsigned list
// of buckets is refused with an S3 error, which takes a running server.
func (s *S3Server) answers() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(s.Endpoint + "/")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode > 0
}

func (s *S3Server) tail() string {
	data, _ := os.ReadFile(filepath.Join(s.Dir, "versitygw.log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// Client returns an S3 client signed with the root account's keys.
func (s *S3Server) Client() *awss3.Client {
	return s.ClientAs(s.AccessKey, s.SecretKey)
}

// ClientAs returns an S3 client of the server signed with the given keys.
func (s *S3Server) ClientAs(accessKey, secretKey string) *awss3.Client {
	return awss3.New(awss3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}, nil
		}),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// CreateBucket creates an empty bucket owned by the root account.
func (s *S3Server) CreateBucket(ctx context.Context, name string) error {
	if _, err := s.Client().CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return fmt.Errorf("creating bucket %s: %w", name, err)
	}
	return nil
}

// AddUser creates an account with the role "user", through versitygw's
// admin API: it may use the buckets it owns and, in those of others, only
// what their ACLs grant it, so a test can see a write refused with 403.
func (s *S3Server) AddUser(ctx context.Context, accessKey, secretKey string) error {
	cmd := exec.CommandContext(ctx, s.binary, "admin",
		"--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region, "--endpoint-url", s.Endpoint,
		"create-user", "--access", accessKey, "--secret", secretKey, "--role", "user")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("versitygw admin create-user: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Stop stops versitygw and keeps its data; Start brings it back.
func (s *S3Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	return s.proc.stop(10 * time.Second)
}

// Log is versitygw's log so far.
func (s *S3Server) Log() string {
	data, _ := os.ReadFile(filepath.Join(s.Dir, "versitygw.log"))
	return string(data)
}

// Close stops versitygw and removes its run directory.
func (s *S3Server) Close() error {
	err := s.Stop()
	if err == nil {
		err = killProcessesUsing(s.Dir)
	}
	if err == nil {
		err = os.RemoveAll(s.Dir)
	}
	return err
}
