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

package s3

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// serviceName is the service label of the metrics and the service of the
// errors: the backup service, whichever provider stores it.
const serviceName = backup.ServiceName

// Operations, named as the HTTP client names them.
const (
	opStart   = "start"
	opGet     = "get"
	opList    = "list"
	opDelete  = "delete"
	opContent = "content"
)

// Defaults of Config, the same as the HTTP clients' (external.Config).
const (
	DefaultAttemptTimeout = external.DefaultAttemptTimeout
	DefaultMaxRetries     = external.DefaultMaxRetries
	DefaultMinRetryWait   = external.DefaultMinRetryWait
	DefaultMaxRetryWait   = external.DefaultMaxRetryWait
)

// maxMetadataBytes is the most user metadata S3 stores with an object (2 KiB
// on AWS, keys and values together).
const maxMetadataBytes = 2 << 10

// maxCachedBackups bounds the client's memory of what the objects it listed
// hold; beyond it a quarter is forgotten and read again when listed.
const maxCachedBackups = 20000

// User metadata stored with each object, so that a list can show a backup
// as the HTTP service would without reading its content. S3 hands the keys
// back in lower case.
const (
	metaApp   = "myapp-app"
	metaOwner = "myapp-owner"
	metaKey   = "myapp-idempotency-key"
	// metaStartedAt is the writer's clock at the start. It orders only the
	// backups the server stored within one second of each other (List); the
	// backup's StartedAt is the server's Last-Modified.
	metaStartedAt  = "myapp-started-at"
	metaLabels     = "myapp-labels"
	metaStartToken = "myapp-start-token"
)

// Config configures a Client.
type Config struct {
	// Endpoint is the S3 server's URL, such as https://s3.example.com or
	// http://127.0.0.1:7070. Empty means AWS's endpoint for Region.
	Endpoint string
	// Bucket holds the backups. It must exist: the client never creates
	// one.
	Bucket string
	// Region is the bucket's region, which requests are signed for.
	// Required; S3-compatible servers usually take us-east-1.
	Region string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key)
	// instead of the host name (bucket.endpoint/key), which most
	// S3-compatible servers need.
	PathStyle bool
	// Prefix is where in the bucket the installations keep their backups;
	// empty means the bucket's root.
	Prefix string
	// OwnerID is this installation's owner ID (--owner-id). The objects of
	// each installation live under <prefix>/<owner-id>/, so installations
	// sharing a bucket never list or delete each other's. Required.
	OwnerID string
	// Credentials supplies the access keys (FileCredentials for a mounted
	// Secret). Required.
	Credentials aws.CredentialsProvider
	// CredentialsSource names where the credentials come from (such as the
	// files' directory) in error messages; never the keys themselves.
	CredentialsSource string
	// CAFile is an optional PEM bundle trusted in addition to the system
	// roots, for a server behind a private certificate authority.
	CAFile string
	// AttemptTimeout bounds a single attempt; MaxRetries is how many times
	// a failed attempt is repeated (negative: never); MinRetryWait and
	// MaxRetryWait bound the jittered exponential backoff between them.
	AttemptTimeout time.Duration
	MaxRetries     int
	MinRetryWait   time.Duration
	MaxRetryWait   time.Duration
	// Logger receives debug lines; never a credential.
	Logger logr.Logger
	// Transport replaces the network transport; tests count requests and
	// bytes with it. It cannot be combined with CAFile.
	Transport http.RoundTripper
	// Now is the writer's clock stored with a backup (metadata), which
	// breaks ties between backups the server stored within one second;
	// time.Now when nil. A backup's StartedAt, and the order of a listing,
	// are the server's (Last-Modified), never this clock.
	Now func() time.Time
	// ReadContent reads what a start's content says of itself, so that
	// content a restore would refuse, or that names another owner, is
	// never stored (backupcontent.Identity). Required.
	ReadContent backup.ContentReader
}

// Client stores backups as objects in an S3 bucket. It implements
// backup.Client and is safe for concurrent use.
type Client struct {
	api               *awss3.Client
	bucket            string
	region            string
	endpoint          string
	credentialsSource string
	ownerID           string
	layout            layout
	log               logr.Logger
	now               func() time.Time
	readContent       backup.ContentReader

	// namespaces remembers the namespace each owner's backups are filed
	// in (UID to namespace, which never changes for a UID), learned from
	// starts and lists, so a List without InNamespace looks once.
	namespaces sync.Map

	mu sync.Mutex
	// described holds what the objects listed before hold, by key and
	// ETag: objects are written once, so a list reads each only once.
	described map[string]describedObject
}

// describedObject is a listed object's backup, valid while its ETag is,
// and the writer's time its metadata holds.
type describedObject struct {
	etag    string
	backup  backup.Backup
	written time.Time
}

var (
	_ backup.Client    = (*Client)(nil)
	_ backup.Explainer = (*Client)(nil)
)

// New checks cfg and returns a Client. It does not reach the server: a
// missing bucket or wrong credentials show in the first call's error.
func New(cfg Config) (*Client, error) {
	switch {
	case cfg.Bucket == "":
		return nil, errors.New("s3: the bucket is required")
	case cfg.Region == "":
		return nil, errors.New("s3: the region is required (S3-compatible servers usually take us-east-1)")
	case cfg.Credentials == nil:
		return nil, errors.New("s3: credentials are required")
	case cfg.ReadContent == nil:
		return nil, errors.New("s3: a reader of the backups' content is required")
	case cfg.Transport != nil && cfg.CAFile != "":
		return nil, errors.New("s3: a CA file cannot be combined with a custom transport")
	}
	if err := checkEndpoint(cfg.Endpoint); err != nil {
		return nil, err
	}
	l, err := newLayout(cfg.Prefix, cfg.OwnerID)
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	cfg = withDefaults(cfg)
	transport := cfg.Transport
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CAFile != "" {
			pool, err := loadCAFile(cfg.CAFile)
			if err != nil {
				return nil, err
			}
			t.TLSClientConfig.RootCAs = pool
		}
		transport = t
	}
	httpClient := &http.Client{
		Transport: transport,
		Timeout:   cfg.AttemptTimeout,
		// A redirect means the bucket is elsewhere (another region); the
		// answer says so, and following it would sign for the wrong place.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	awsCfg := aws.Config{
		Region:      cfg.Region,
		Credentials: cfg.Credentials,
		HTTPClient:  httpClient,
		Retryer:     func() aws.Retryer { return newRetryer(cfg) },
	}
	api := awss3.NewFromConfig(awsCfg, func(o *awss3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		o.HTTPSignerV4 = newRotationAwareSigner()
		// Checksums only where S3 requires them: the SDK's newer default
		// (a CRC32 trailer on every upload) is not understood by every
		// S3-compatible server, and SigV4 already covers the body.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	source := cfg.CredentialsSource
	if source == "" {
		source = "the configured credentials"
	}
	return &Client{
		api:               api,
		bucket:            cfg.Bucket,
		region:            cfg.Region,
		endpoint:          cfg.Endpoint,
		credentialsSource: source,
		ownerID:           cfg.OwnerID,
		layout:            l,
		log:               cfg.Logger.WithName("s3"),
		now:               cfg.Now,
		readContent:       cfg.ReadContent,
		described:         map[string]describedObject{},
	}, nil
}

func withDefaults(cfg Config) Config {
	if cfg.AttemptTimeout <= 0 {
		cfg.AttemptTimeout = DefaultAttemptTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.MinRetryWait <= 0 {
		cfg.MinRetryWait = DefaultMinRetryWait
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	cfg.MinRetryWait = min(cfg.MinRetryWait, cfg.MaxRetryWait)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

// newRetryer is the SDK's standard retryer with the project's backoff: it
// retries 5xx answers, throttling (SlowDown among them), timeouts and reset
// connections, and a conditional write that met another in flight. It has
// no retry quota: a reconciler's call retries a few times at most, and the
// quota would make one BackupConfig's outage fail another's first attempt.
func newRetryer(cfg Config) aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = cfg.MaxRetries + 1
		o.MaxBackoff = cfg.MaxRetryWait
		o.RateLimiter = ratelimit.None
		o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
			step := cfg.MinRetryWait << min(attempt-1, 20)
			if step <= 0 || step > cfg.MaxRetryWait {
				step = cfg.MaxRetryWait
			}
			// From the upper half of the step, as the HTTP clients wait.
			half := step / 2
			return half + rand.N(half+1), nil
		})
		o.Retryables = append(o.Retryables, retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			if isCode(err, codeConditionalConflict) {
				return aws.TrueTernary
			}
			return aws.UnknownTernary
		}))
	})
}

func loadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("s3: CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("s3: CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// endpointName names the server in messages.
func (c *Client) endpointName() string {
	if c.endpoint == "" {
		return "AWS S3 (" + c.region + ")"
	}
	return c.endpoint
}

// serverName names the server in messages that start with it.
func (c *Client) serverName() string {
	if c.endpoint == "" {
		return "AWS S3 in region " + c.region
	}
	return "the S3 server at " + c.endpoint
}

// invalid returns, and counts, an error for a call refused before anything
// was sent.
func invalid(op, message string) error {
	err := &external.Error{Kind: external.KindInvalid, Service: serviceName, Operation: op, Message: message}
	observe(op, 0, err)
	return err
}
