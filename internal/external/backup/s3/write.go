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
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

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
	if err := contract.ValidateStartToken(req.StartToken); err != nil {
		return backup.Backup{}, invalid(opStart, "start token "+err.Error())
	}
	written := c.now().UTC().Truncate(time.Millisecond)
	meta, err := objectMetadata(req, written)
	if err != nil {
		return backup.Backup{}, invalid(opStart, err.Error())
	}

	begin := time.Now()
	b, err := c.putOnce(ctx, req, ref, key, meta, written)
	observe(opStart, time.Since(begin), err)
	if err == nil {
		c.namespaces.Store(ref.uid, ref.namespace)
	}
	return b, err
}

// putOnce writes the object unless it exists, and returns the backup the
// key names either way.
func (c *Client) putOnce(ctx context.Context, req backup.StartRequest, ref objectRef, key string,
	meta map[string]string, written time.Time) (backup.Backup, error) {
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
			// The server's clock when it answered the write, as its Date
			// header gave it: within a second of the Last-Modified a read
			// shows (a PUT's answer carries none), and never the writer's
			// clock, which may be an hour off.
			stored, ok := awsmiddleware.GetServerTime(out.ResultMetadata)
			if !ok {
				stored = written
			}
			b := c.backupOf(ref, key, objectFacts{size: int64(len(req.Payload)), app: req.App, token: req.StartToken,
				storedAt: stored, labels: maps.Clone(req.Labels)})
			c.remember(key, describedObject{etag: aws.ToString(out.ETag), backup: b, written: written})
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
		found, err := c.stat(ctx, opStart, ref, key)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return backup.Backup{}, c.classify(opStart, err)
		}
		existing := found.backup
		if existing.App != "" && existing.App != req.App {
			return backup.Backup{}, &external.Error{Kind: external.KindInvalid, Service: serviceName, Operation: opStart,
				Message: fmt.Sprintf("idempotency key %q was used to back up app %q, not %q", req.IdempotencyKey, existing.App, req.App)}
		}
		return existing, nil
	}
	return backup.Backup{}, &external.Error{Kind: external.KindTransient, Service: serviceName, Operation: opStart,
		Message: fmt.Sprintf("object %s was refused as existing and then not found, twice", key)}
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
