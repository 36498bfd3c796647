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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	metaApp       = "myapp-app"
	metaOwner     = "myapp-owner"
	metaKey       = "myapp-idempotency-key"
	metaStartedAt = "myapp-started-at"
	metaLabels    = "myapp-labels"
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
	// Now is the clock a backup's start time is read from; time.Now when
	// nil.
	Now func() time.Time
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

	// namespaces remembers the namespace each owner's backups are filed
	// in (UID to namespace, which never changes for a UID), learned from
	// starts and lists, so a List without InNamespace looks once.
	namespaces sync.Map

	mu sync.Mutex
	// described holds what the objects listed before hold, by key and
	// ETag: objects are written once, so a list reads each only once.
	described map[string]describedObject
}

// describedObject is a listed object's backup, valid while its ETag is.
type describedObject struct {
	etag   string
	backup backup.Backup
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
		described:         map[string]describedObject{},
	}, nil
}

// checkEndpoint refuses an endpoint the client cannot use; empty means
// AWS's.
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return fmt.Errorf("s3: endpoint: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("s3: endpoint scheme must be http or https, not %q", u.Scheme)
	case u.Host == "":
		return errors.New("s3: endpoint has no host")
	case u.User != nil:
		return errors.New("s3: endpoint must not contain user information; credentials come from files")
	}
	return nil
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

// invalid returns, and counts, an error for a call refused before anything
// was sent.
func invalid(op, message string) error {
	err := &external.Error{Kind: external.KindInvalid, Service: serviceName, Operation: op, Message: message}
	observe(op, 0, err)
	return err
}

// Start writes the backup's content as one object, only if no object has
// that key yet (If-None-Match: *). A repeated start, or a retry after an
// answer that was lost, finds the object and returns the backup it holds:
// the content is written once and never replaced. The backup has
// succeeded as soon as the write has.
func (c *Client) Start(ctx context.Context, req backup.StartRequest) (backup.Backup, error) {
	switch {
	case req.IdempotencyKey == "":
		return backup.Backup{}, invalid(opStart, "idempotency key is required")
	case req.App == "":
		return backup.Backup{}, invalid(opStart, "app is required")
	case req.Owner == "":
		return backup.Backup{}, invalid(opStart, "owner is required")
	case len(req.Payload) == 0:
		return backup.Backup{}, invalid(opStart, "content is required: with the s3 provider the object is the backup, "+
			"and a backup without content could not be restored")
	}
	namespace := req.NamespaceOf()
	if namespace == "" {
		return backup.Backup{}, invalid(opStart, "namespace is required: the s3 provider files a backup under "+
			"its BackupConfig's namespace (StartRequest.Namespace or the label "+backup.LabelNamespace+")")
	}
	ref, err := refFor(namespace, req.Owner, req.IdempotencyKey)
	if err != nil {
		return backup.Backup{}, invalid(opStart, err.Error())
	}
	key := c.layout.key(ref)
	if len(key) > maxObjectKeyBytes {
		return backup.Backup{}, invalid(opStart, fmt.Sprintf("the object key would be %d bytes, more than S3's %d: "+
			"shorten --s3-prefix or the idempotency key", len(key), maxObjectKeyBytes))
	}
	if err := c.checkPayload(req, ref); err != nil {
		return backup.Backup{}, invalid(opStart, err.Error())
	}
	startedAt := c.now().UTC().Truncate(time.Millisecond)
	meta, err := objectMetadata(req, startedAt)
	if err != nil {
		return backup.Backup{}, invalid(opStart, err.Error())
	}

	begin := time.Now()
	b, err := c.putOnce(ctx, req, ref, key, meta, startedAt)
	observe(opStart, time.Since(begin), err)
	if err == nil {
		c.namespaces.Store(ref.uid, ref.namespace)
	}
	return b, err
}

// putOnce writes the object unless it exists, and returns the backup the
// key names either way.
func (c *Client) putOnce(ctx context.Context, req backup.StartRequest, ref objectRef, key string,
	meta map[string]string, startedAt time.Time) (backup.Backup, error) {
	// Two rounds: a write refused because the object exists, whose read
	// then finds it deleted in between, writes again, once.
	for range 2 {
		out, err := c.api.PutObject(ctx, &awss3.PutObjectInput{
			Bucket:        aws.String(c.bucket),
			Key:           aws.String(key),
			Body:          bytes.NewReader(req.Payload),
			ContentLength: aws.Int64(int64(len(req.Payload))),
			ContentType:   aws.String("application/gzip"),
			IfNoneMatch:   aws.String("*"),
			Metadata:      meta,
		})
		if err == nil {
			b := c.backupOf(ref, key, int64(len(req.Payload)), req.App, startedAt, maps.Clone(req.Labels))
			c.remember(key, aws.ToString(out.ETag), b)
			return b, nil
		}
		if !isCode(err, codePreconditionFailed, codeConditionalConflict) {
			return backup.Backup{}, c.classify(opStart, err)
		}
		// The object exists: written by an earlier start of the same key
		// whose answer was lost, by this call's own first attempt, or by a
		// concurrent start. Its content stays; the backup it holds is the
		// answer.
		c.log.V(1).Info("Found the backup a start's key names already stored", "key", key)
		existing, err := c.stat(ctx, opStart, ref, key)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return backup.Backup{}, c.classify(opStart, err)
		}
		if existing.App != "" && existing.App != req.App {
			return backup.Backup{}, &external.Error{Kind: external.KindInvalid, Service: serviceName, Operation: opStart,
				Message: fmt.Sprintf("idempotency key %q was used to back up app %q, not %q", req.IdempotencyKey, existing.App, req.App)}
		}
		return existing, nil
	}
	return backup.Backup{}, &external.Error{Kind: external.KindTransient, Service: serviceName, Operation: opStart,
		Message: fmt.Sprintf("object %s was refused as existing and then not found, twice", key)}
}

// checkPayload refuses content a restore could not read, or that says it is
// the backup of another owner, key, namespace or installation than the one
// it would be filed as.
func (c *Client) checkPayload(req backup.StartRequest, ref objectRef) error {
	p, err := backup.DecodePayload(req.Payload)
	if err != nil {
		return err
	}
	m := p.Metadata
	switch {
	case m.Owner != req.Owner:
		return fmt.Errorf("the content names owner %q, the start %q", m.Owner, req.Owner)
	case m.IdempotencyKey != req.IdempotencyKey:
		return fmt.Errorf("the content names idempotency key %q, the start %q", m.IdempotencyKey, req.IdempotencyKey)
	case m.BackupConfig.Namespace != ref.namespace || m.BackupConfig.UID != ref.uid:
		return fmt.Errorf("the content is of BackupConfig %s (UID %s), the start of one in %s with UID %s",
			m.BackupConfig.Namespace+"/"+m.BackupConfig.Name, m.BackupConfig.UID, ref.namespace, ref.uid)
	case m.OwnerID != c.ownerID:
		return fmt.Errorf("the content names owner ID %q, this installation's is %q", m.OwnerID, c.ownerID)
	}
	return nil
}

// objectMetadata is the user metadata a backup's object is written with.
func objectMetadata(req backup.StartRequest, startedAt time.Time) (map[string]string, error) {
	meta := map[string]string{
		metaApp:       req.App,
		metaOwner:     req.Owner,
		metaKey:       req.IdempotencyKey,
		metaStartedAt: startedAt.Format(time.RFC3339Nano),
	}
	if len(req.Labels) > 0 {
		labels, err := asciiJSON(req.Labels)
		if err != nil {
			return nil, fmt.Errorf("labels: %w", err)
		}
		meta[metaLabels] = labels
	}
	size := 0
	for k, v := range meta {
		if !isASCII(v) {
			return nil, fmt.Errorf("%s must be ASCII to be stored as S3 metadata", k)
		}
		size += len(k) + len(v)
	}
	if size > maxMetadataBytes {
		return nil, fmt.Errorf("the backup's app, owner, key and labels take %d bytes of S3 metadata, "+
			"more than the %d S3 stores: use fewer or shorter labels", size, maxMetadataBytes)
	}
	return meta, nil
}

// asciiJSON encodes v as JSON with every character outside ASCII escaped,
// so it can travel in an HTTP header.
func asciiJSON(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range string(data) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16Surrogates(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String(), nil
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// backupOf is the backup an object holds.
func (c *Client) backupOf(ref objectRef, key string, size int64, app string, startedAt time.Time,
	labels map[string]string) backup.Backup {
	completed := startedAt
	return backup.Backup{
		ID:             ref.id(),
		App:            app,
		Owner:          ref.owner(),
		IdempotencyKey: ref.idempotencyKey(),
		// The write is the backup: there is nothing left to wait for.
		Phase:       backup.PhaseSucceeded,
		SizeBytes:   size,
		Location:    "s3://" + c.bucket + "/" + key,
		StartedAt:   startedAt,
		CompletedAt: &completed,
		Labels:      labels,
	}
}

// stat reads what an object holds without its content: a GET of its first
// byte. A HEAD would be lighter, but its errors come without a body, so a
// missing bucket would read as a missing backup.
func (c *Client) stat(ctx context.Context, op string, ref objectRef, key string) (backup.Backup, error) {
	out, err := c.api.GetObject(ctx, &awss3.GetObjectInput{
		Bucket: aws.String(c.bucket),
		Key:    aws.String(key),
		Range:  aws.String("bytes=0-0"),
	})
	if err != nil {
		return backup.Backup{}, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(out.Body, 16))
	_ = out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	if total, ok := rangeTotal(aws.ToString(out.ContentRange)); ok {
		size = total
	}
	startedAt, err := time.Parse(time.RFC3339Nano, out.Metadata[metaStartedAt])
	if err != nil {
		// An object someone else put under the prefix: its write time is
		// the nearest thing to a start.
		startedAt = aws.ToTime(out.LastModified).UTC()
	}
	var labels map[string]string
	if raw := out.Metadata[metaLabels]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &labels); err != nil {
			c.log.V(1).Info("Ignoring labels an object's metadata holds in another form", "key", key, "op", op)
			labels = nil
		}
	}
	b := c.backupOf(ref, key, size, out.Metadata[metaApp], startedAt, labels)
	c.remember(key, aws.ToString(out.ETag), b)
	return b, nil
}

// rangeTotal reads the object's size from a Content-Range answer such as
// "bytes 0-0/438".
func rangeTotal(contentRange string) (int64, bool) {
	_, total, ok := strings.Cut(contentRange, "/")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	return n, err == nil
}

// remember keeps what a listed object holds, forgetting a quarter of what
// it knows when the memory is full.
func (c *Client) remember(key, etag string, b backup.Backup) {
	if etag == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.described) >= maxCachedBackups {
		n := 0
		for k := range c.described {
			delete(c.described, k)
			if n++; n >= maxCachedBackups/4 {
				break
			}
		}
	}
	c.described[key] = describedObject{etag: etag, backup: b}
}

// recalled returns what the object key with etag holds, when known.
func (c *Client) recalled(key, etag string) (backup.Backup, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.described[key]
	if !ok || d.etag != etag {
		return backup.Backup{}, false
	}
	return d.backup, true
}

func (c *Client) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.described, key)
}

// Get returns the backup with the given ID.
func (c *Client) Get(ctx context.Context, id string) (backup.Backup, error) {
	ref, err := parseID(id)
	if err != nil {
		return backup.Backup{}, invalid(opGet, err.Error())
	}
	begin := time.Now()
	b, err := c.stat(ctx, opGet, ref, c.layout.key(ref))
	if err != nil {
		xerr := c.classify(opGet, err)
		if xerr.Kind == external.KindNotFound {
			xerr.Message = fmt.Sprintf("backup %q does not exist", id)
		}
		observe(opGet, time.Since(begin), xerr)
		return backup.Backup{}, xerr
	}
	observe(opGet, time.Since(begin), nil)
	return b, nil
}

// Content returns the object's bytes: the backup's content as its start
// gave it.
func (c *Client) Content(ctx context.Context, id string) (data []byte, err error) {
	ref, err := parseID(id)
	if err != nil {
		return nil, invalid(opContent, err.Error())
	}
	begin := time.Now()
	defer func() { observe(opContent, time.Since(begin), err) }()
	out, err := c.api.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(c.layout.key(ref))})
	if err != nil {
		xerr := c.classify(opContent, err)
		if xerr.Kind == external.KindNotFound {
			xerr.Message = fmt.Sprintf("backup %q does not exist", id)
		}
		return nil, xerr
	}
	defer func() { _ = out.Body.Close() }()
	data, err = io.ReadAll(io.LimitReader(out.Body, backup.MaxPayloadBytes+1))
	if err != nil {
		return nil, &external.Error{Kind: external.KindTransient, Service: serviceName, Operation: opContent,
			Message: "reading the object was cut off", Err: err}
	}
	if len(data) > backup.MaxPayloadBytes {
		return nil, &external.Error{Kind: external.KindInvalid, Service: serviceName, Operation: opContent,
			Message: fmt.Sprintf("object of backup %q is larger than the %d bytes a backup may hold", id, backup.MaxPayloadBytes)}
	}
	return data, nil
}

// List returns the owner's backups, oldest first, reading the objects under
// <prefix>/<owner-id>/<namespace>/<uid>/; without an owner, those of every
// owner under <prefix>/<owner-id>/<namespace>/ (or, without InNamespace
// either, the whole installation). Without InNamespace it finds the
// namespace once, by looking for the owner's prefix in each namespace of
// the installation, and remembers it; an owner with no backups anywhere is
// looked for again on the next call.
func (c *Client) List(ctx context.Context, owner string, opts ...backup.ListOption) (out []backup.Backup, err error) {
	var uid string
	if owner != "" {
		if uid, err = ownerUID(owner); err != nil {
			return nil, invalid(opList, err.Error())
		}
	}
	namespace := backup.ApplyListOptions(opts...).Namespace
	if namespace != "" {
		if err := checkNamespace(namespace); err != nil {
			return nil, invalid(opList, err.Error())
		}
	}
	begin := time.Now()
	defer func() {
		var xerr *external.Error
		if err != nil && !errors.As(err, &xerr) {
			err = c.classify(opList, err)
		}
		observe(opList, time.Since(begin), err)
	}()

	prefix := c.layout.installationPrefix()
	switch {
	case owner == "" && namespace != "":
		// One namespace of every owner (a restore's storage source): its
		// folder only, not every namespace's objects read and dropped.
		prefix = c.layout.namespacePrefix(namespace)
	case owner != "":
		if namespace, err = c.namespaceOf(ctx, uid, namespace); err != nil || namespace == "" {
			return []backup.Backup{}, err
		}
		prefix = c.layout.ownerPrefix(namespace, uid)
	}
	if out, err = c.readFolder(ctx, prefix, uid); err != nil {
		return nil, err
	}
	if owner != "" && len(out) > 0 {
		c.namespaces.Store(uid, namespace)
	}
	slices.SortFunc(out, func(a, b backup.Backup) int {
		if n := a.StartedAt.Compare(b.StartedAt); n != 0 {
			return n
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// namespaceOf is the namespace the backups of owner uid are filed in: the
// one the caller named, the one remembered, or the one found; "" when the
// owner has no backups anywhere.
func (c *Client) namespaceOf(ctx context.Context, uid, named string) (string, error) {
	if named != "" {
		return named, nil
	}
	if known, ok := c.namespaces.Load(uid); ok {
		return known.(string), nil
	}
	return c.findNamespace(ctx, uid)
}

// readFolder returns the backups whose objects are under prefix, of the
// owner uid only when uid is set.
func (c *Client) readFolder(ctx context.Context, prefix, uid string) ([]backup.Backup, error) {
	out := []backup.Backup{}
	pages := awss3.NewListObjectsV2Paginator(c.api, &awss3.ListObjectsV2Input{Bucket: aws.String(c.bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			ref, ok := c.layout.parseKey(key)
			if !ok || uid != "" && ref.uid != uid {
				continue
			}
			b, ok := c.recalled(key, aws.ToString(obj.ETag))
			if !ok {
				b, err = c.stat(ctx, opList, ref, key)
				if isNotFound(err) {
					// Deleted since the page was read.
					continue
				}
				if err != nil {
					return nil, err
				}
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// findNamespace looks for the namespace whose folder holds objects of the
// owner uid: one list of the installation's namespaces (by delimiter), then
// one small list per namespace until one has the owner's prefix. It returns
// "" when none has.
func (c *Client) findNamespace(ctx context.Context, uid string) (string, error) {
	pages := awss3.NewListObjectsV2Paginator(c.api, &awss3.ListObjectsV2Input{
		Bucket:    aws.String(c.bucket),
		Prefix:    aws.String(c.layout.installationPrefix()),
		Delimiter: aws.String("/"),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", err
		}
		for _, p := range page.CommonPrefixes {
			namespace := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(p.Prefix), c.layout.installationPrefix()), "/")
			if checkNamespace(namespace) != nil {
				continue
			}
			found, err := c.api.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{
				Bucket:  aws.String(c.bucket),
				Prefix:  aws.String(c.layout.ownerPrefix(namespace, uid)),
				MaxKeys: aws.Int32(1),
			})
			if err != nil {
				return "", err
			}
			if len(found.Contents) > 0 {
				return namespace, nil
			}
		}
	}
	return "", nil
}

// Delete removes the backup's object. The ID names the owner the backup is
// filed under; a backup of another owner is refused without a call, so
// nothing but the owner's own exact key is ever deleted. A backup that is
// gone is success (S3 answers a delete of a missing key the same).
//
// The delete is not conditional on the object's ETag (If-Match): the key
// alone proves whose backup it is, and an object is written once, so a
// condition would cost a read before every delete and protect nothing.
func (c *Client) Delete(ctx context.Context, id, owner string) (err error) {
	ref, err := parseID(id)
	if err != nil {
		return invalid(opDelete, err.Error())
	}
	if owner == "" {
		return invalid(opDelete, "owner is required")
	}
	uid, err := ownerUID(owner)
	if err != nil {
		return invalid(opDelete, err.Error())
	}
	if uid != ref.uid {
		err := &external.Error{Kind: external.KindConflict, Service: serviceName, Operation: opDelete, Owner: ref.owner(),
			Message: fmt.Sprintf("backup %q is filed under owner %q, not %q", id, ref.owner(), owner)}
		observe(opDelete, 0, err)
		return err
	}
	key := c.layout.key(ref)
	begin := time.Now()
	defer func() { observe(opDelete, time.Since(begin), err) }()
	if _, err := c.api.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(key)}); err != nil {
		if isNotFound(err) {
			c.forget(key)
			return nil
		}
		return c.classify(opDelete, err)
	}
	c.forget(key)
	return nil
}
