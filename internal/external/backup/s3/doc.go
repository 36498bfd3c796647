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

// Package s3 keeps backups in an S3 bucket (AWS S3 or any S3-compatible
// server) and implements backup.Client, so the BackupConfig controller
// keeps its guarantees on storage a platform team runs:
//
//   - One object per backup, its content (internal/backupcontent) as the
//     body, under <prefix>/<owner-id>/<namespace>/<backupconfig-uid>/,
//     named after the backup's idempotency key (keys.go). The owner scoping
//     is the key prefix: an installation lists, reads and deletes under its
//     own owner ID only, and an owner under its own BackupConfig's folder.
//   - Start is a PutObject with If-None-Match: *, so the first write of a
//     key wins and is never replaced: a start repeated after a crash or a
//     lost answer finds the object and answers with the backup it holds.
//     The backup has succeeded as soon as the write has.
//   - Delete removes one exact key of its own owner; List reads the
//     owner's folder (and the objects' metadata, once per object).
//   - Failures become *external.Error with the project's kinds and a
//     message that names the cause and the way out (errors.go), and calls
//     are counted in the HTTP clients' metric series (metrics.go).
//
// The client library is github.com/aws/aws-sdk-go-v2/service/s3 (v1.114),
// not github.com/minio/minio-go/v7, for four reasons. It is AWS's own
// client, so the conditional writes (PutObjectInput.IfNoneMatch) and
// deletes (DeleteObjectInput.IfMatch) are typed fields that follow S3's
// API as AWS ships it, rather than headers set by hand. Its errors carry
// the S3 error code (smithy.APIError), which is what tells a missing bucket
// from a missing key, and a wrong secret from a refused write. Its retryer
// already treats SlowDown and 5xx answers as retryable and lets the backoff
// be the project's. And it adds only the SDK core, the S3 service and
// smithy-go to go.mod (eleven modules, none with cgo), all building with Go
// 1.26; versitygw, the server the tests run against, is written with the
// same SDK. The SDK's newer default of checksum trailers on every upload is
// turned off (WhenRequired), because not every S3-compatible server reads
// them and SigV4 already covers the body.
package s3
