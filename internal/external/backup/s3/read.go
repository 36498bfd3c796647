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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// objectFacts is what an object says of its backup besides its key.
type objectFacts struct {
	size  int64
	app   string
	token string
	// storedAt is when the server stored the object, by its clock.
	storedAt time.Time
	labels   map[string]string
}

// backupOf is the backup an object holds. Its StartedAt is the server's
// time, in whole seconds: Last-Modified is written so, and a Get, a List
// and a Start then agree on it whatever the server's listing keeps.
func (c *Client) backupOf(ref objectRef, key string, f objectFacts) backup.Backup {
	started := f.storedAt.UTC().Truncate(time.Second)
	completed := started
	// The key says whose backup it is: every object this client reads is
	// under its installation's prefix. So a backup written before its start
	// labelled the owner ID, or one whose metadata says otherwise, answers
	// the key's.
	labels := maps.Clone(f.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[backup.LabelOwnerID] = c.ownerID
	return backup.Backup{
		ID:             ref.id(),
		App:            f.app,
		Owner:          ref.owner(),
		IdempotencyKey: ref.idempotencyKey(),
		StartToken:     f.token,
		// The write is the backup: there is nothing left to wait for.
		Phase:       backup.PhaseSucceeded,
		SizeBytes:   f.size,
		Location:    "s3://" + c.bucket + "/" + key,
		StartedAt:   started,
		CompletedAt: &completed,
		Labels:      labels,
	}
}

// stat reads what an object holds without its content: a GET of its first
// byte. A HEAD would be lighter, but its errors come without a body, so a
// missing bucket would read as a missing backup.
func (c *Client) stat(ctx context.Context, op string, ref objectRef, key string) (describedObject, error) {
	out, err := c.api.GetObject(ctx, &awss3.GetObjectInput{
		Bucket: aws.String(c.bucket),
		Key:    aws.String(key),
		Range:  aws.String("bytes=0-0"),
	})
	if err != nil {
		return describedObject{}, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(out.Body, 16))
	_ = out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	if total, ok := rangeTotal(aws.ToString(out.ContentRange)); ok {
		size = total
	}
	// An object someone else put under the prefix has no writer's time
	// (zero): the server's time alone orders it.
	written, _ := time.Parse(time.RFC3339Nano, out.Metadata[metaStartedAt])
	var labels map[string]string
	if raw := out.Metadata[metaLabels]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &labels); err != nil {
			c.log.V(1).Info("Ignoring labels an object's metadata holds in another form", "key", key, "op", op)
			labels = nil
		}
	}
	b := c.backupOf(ref, key, objectFacts{size: size, app: out.Metadata[metaApp], token: out.Metadata[metaStartToken],
		storedAt: aws.ToTime(out.LastModified), labels: labels})
	d := describedObject{etag: aws.ToString(out.ETag), backup: b, written: written}
	c.remember(key, d)
	return d, nil
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

// remember keeps what a listed object holds, and the writer's time its
// metadata holds, forgetting a quarter of what it knows when the memory is
// full.
func (c *Client) remember(key string, d describedObject) {
	if d.etag == "" {
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
	c.described[key] = d
}

// recalled returns what the object key with etag holds, when known.
func (c *Client) recalled(key, etag string) (describedObject, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.described[key]
	if !ok || d.etag != etag {
		return describedObject{}, false
	}
	return d, true
}

func (c *Client) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.described, key)
}

// unknownID answers a read of an ID that cannot name an object of the
// layout (a typo, the HTTP service's bk-… form): no backup has it, so it is
// not found, and a Restore naming it fails BackupNotFound rather than
// retrying for ever. err, from parseID, says which form an ID has.
func unknownID(op string, err error) error {
	xerr := &external.Error{Kind: external.KindNotFound, Service: serviceName, Operation: op,
		Message: err.Error() + ", so it names no backup"}
	observe(op, 0, xerr)
	return xerr
}

// NamespaceOfID returns the namespace a backup ID names, its first
// segment, without a call: backup.IDNamespacer.
func (c *Client) NamespaceOfID(id string) (string, bool) {
	ref, err := parseID(id)
	if err != nil {
		return "", false
	}
	return ref.namespace, true
}

// Get returns the backup with the given ID, not found for one that cannot
// name a backup.
func (c *Client) Get(ctx context.Context, id string) (backup.Backup, error) {
	ref, err := parseID(id)
	if err != nil {
		return backup.Backup{}, unknownID(opGet, err)
	}
	begin := time.Now()
	d, err := c.stat(ctx, opGet, ref, c.layout.key(ref))
	if err != nil {
		xerr := c.classify(opGet, err)
		if xerr.Kind == external.KindNotFound {
			xerr.Message = fmt.Sprintf("backup %q does not exist", id)
		}
		observe(opGet, time.Since(begin), xerr)
		return backup.Backup{}, xerr
	}
	observe(opGet, time.Since(begin), nil)
	return d.backup, nil
}

// Content returns the object's bytes: the backup's content as its start
// gave it.
func (c *Client) Content(ctx context.Context, id string) (data []byte, err error) {
	ref, err := parseID(id)
	if err != nil {
		return nil, unknownID(opContent, err)
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
	o := backup.ApplyListOptions(opts...)
	namespace := o.Namespace
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
	found, err := c.readFolder(ctx, prefix, uid)
	if err != nil {
		return nil, err
	}
	if owner != "" && len(found) > 0 {
		c.namespaces.Store(uid, namespace)
	}
	found = slices.DeleteFunc(found, func(d describedObject) bool { return !o.Matches(d.backup) })
	slices.SortFunc(found, serverOrder)
	out = make([]backup.Backup, 0, len(found))
	for _, d := range found {
		out = append(out, d.backup)
	}
	return out, nil
}

// serverOrder orders backups as the server stored them: by Last-Modified,
// which is the server's clock and the same whichever replica of the
// operator wrote them. Last-Modified has whole seconds, so the backups the
// server stored within one second are ordered by the time their writer
// recorded (one writer's own order, as a BackupConfig is reconciled by one
// leader at a time), then by ID. A writer's clock can therefore swap only
// backups stored within the same second, never an hour of them.
func serverOrder(a, b describedObject) int {
	if n := a.backup.StartedAt.Compare(b.backup.StartedAt); n != 0 {
		return n
	}
	if n := a.written.Compare(b.written); n != 0 {
		return n
	}
	return strings.Compare(a.backup.ID, b.backup.ID)
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
// owner uid only when uid is set, each started at the Last-Modified the
// listing shows.
func (c *Client) readFolder(ctx context.Context, prefix, uid string) ([]describedObject, error) {
	out := []describedObject{}
	pages := awss3.NewListObjectsV2Paginator(c.api, &awss3.ListObjectsV2Input{Bucket: aws.String(c.bucket), Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		if err := c.checkListed(page); err != nil {
			return nil, err
		}
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			ref, ok := c.layout.parseKey(key)
			if !ok || uid != "" && ref.uid != uid {
				continue
			}
			d, ok := c.recalled(key, aws.ToString(obj.ETag))
			if !ok {
				d, err = c.stat(ctx, opList, ref, key)
				if isNotFound(err) {
					// Deleted since the page was read.
					continue
				}
				if err != nil {
					return nil, err
				}
			}
			if obj.LastModified != nil {
				// A start's answer has the server's Date, a second from
				// its Last-Modified at most; the listing has the latter.
				stored := obj.LastModified.UTC().Truncate(time.Second)
				d.backup.StartedAt, d.backup.CompletedAt = stored, &stored
			}
			out = append(out, d)
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
		if err := c.checkListed(page); err != nil {
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
			if err := c.checkListed(found); err != nil {
				return "", err
			}
			if len(found.Contents) > 0 {
				return namespace, nil
			}
		}
	}
	return "", nil
}

// checkListed refuses a listing that is not one: an answer of success
// without the bucket's name, which every S3 server puts in a
// ListBucketResult, is something else (a proxy's login page, a server that
// is not S3), which the SDK reads as an empty list. Taken for one, it
// would say the bucket holds no backups. It may pass, so it is transient,
// never a refusal.
func (c *Client) checkListed(out *awss3.ListObjectsV2Output) error {
	if out != nil && out.Name != nil {
		return nil
	}
	return &external.Error{Kind: external.KindTransient, Service: serviceName, Operation: opList,
		Message: fmt.Sprintf("%s gave an answer the operator cannot read (not a list of the bucket's objects) for bucket %q",
			c.serverName(), c.bucket)}
}
