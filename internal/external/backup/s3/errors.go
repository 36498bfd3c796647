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
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

// S3 error codes the client tells apart. Servers that speak S3 (AWS,
// versitygw, MinIO, Ceph) send these in the XML error body; a HEAD has no
// body, so its errors carry only a status, which is why the client reads
// objects with a ranged GET instead.
const (
	codeNoSuchBucket          = "NoSuchBucket"
	codeNoSuchKey             = "NoSuchKey"
	codeNotFound              = "NotFound"
	codeAccessDenied          = "AccessDenied"
	codeInvalidAccessKeyID    = "InvalidAccessKeyId"
	codeSignatureDoesNotMatch = "SignatureDoesNotMatch"
	codePreconditionFailed    = "PreconditionFailed"
	codeConditionalConflict   = "ConditionalRequestConflict"
	codeSlowDown              = "SlowDown"
	codePermanentRedirect     = "PermanentRedirect"
	codeAuthHeaderMalformed   = "AuthorizationHeaderMalformed"
)

// throttleCodes are the answers that ask a client to slow down.
var throttleCodes = map[string]bool{
	codeSlowDown: true, "Throttling": true, "ThrottlingException": true, "RequestLimitExceeded": true,
	"TooManyRequests": true, "TooManyRequestsException": true, "RequestThrottled": true,
}

// apiErrorOf returns the S3 error code, message and HTTP status of err, with
// ok false when no answer came back (a timeout, a refused or dropped
// connection). The SDK wraps a request that was never answered in a
// response error too, with status 0 and no code: that is no answer, not a
// refusal, or a server that is down would read as a request it refused,
// and a scheduled backup's slot would be skipped for it.
func apiErrorOf(err error) (code, message string, status int, ok bool) {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code, message = ae.ErrorCode(), ae.ErrorMessage()
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return code, message, status, status != 0 || code != ""
}

// isCode reports whether err is an S3 answer with one of codes.
func isCode(err error, codes ...string) bool {
	code, _, _, ok := apiErrorOf(err)
	if !ok {
		return false
	}
	for _, c := range codes {
		if code == c {
			return true
		}
	}
	return false
}

// isNotFound reports an answer that the object does not exist; a missing
// bucket is not that (see classify).
func isNotFound(err error) bool {
	code, _, status, ok := apiErrorOf(err)
	return ok && code != codeNoSuchBucket && (code == codeNoSuchKey || code == codeNotFound || status == http.StatusNotFound)
}

// attemptsOf is how many attempts the SDK made before it gave up.
func attemptsOf(err error) int {
	var me *retry.MaxAttemptsError
	if errors.As(err, &me) {
		return me.Attempt
	}
	return 1
}

// classify turns an SDK error into the *external.Error a reconciler
// branches on. The message names the cause and the way out, in the words of
// the flags and Secret a person set up; it never contains a credential
// (the SDK's messages do not, and the client adds only names and paths).
func (c *Client) classify(op string, err error) *external.Error {
	e := &external.Error{Service: serviceName, Operation: op, Err: err, Attempts: attemptsOf(err)}
	code, message, status, ok := apiErrorOf(err)
	e.StatusCode = status
	// The SDK's error string repeats the code and message; keeping only
	// the cause's chain below the message would lose the request ID, so the
	// cause stays and the message says what to do.
	if !ok || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// No answer, or none in time (an attempt's timeout, or the
		// caller's deadline while an attempt or a backoff ran).
		cause, tlsFailure := external.NoAnswerCause(err)
		if tlsFailure {
			cause += "; give its certificate authority with --s3-ca-file (else --external-ca-file)"
		}
		e.Kind = external.KindTransient
		e.Message = fmt.Sprintf("no answer from the S3 endpoint %s (bucket %q): %s", c.endpointName(), c.bucket, cause)
		return e
	}
	server := c.serverName()
	switch {
	case code == codeNoSuchBucket:
		e.Kind = external.KindInvalid
		e.Message = fmt.Sprintf("bucket %q does not exist at %s: create it, or correct --s3-bucket, --s3-endpoint and --s3-region",
			c.bucket, c.endpointName())
	case code == codeInvalidAccessKeyID:
		e.Kind = external.KindUnauthorized
		e.Message = fmt.Sprintf("%s does not know the access key ID (%s): correct the access key in the credentials Secret",
			server, c.credentialsSource)
	case code == codeSignatureDoesNotMatch:
		e.Kind = external.KindUnauthorized
		e.Message = fmt.Sprintf("the secret access key does not match the access key ID (%s) at %s: correct the secret key "+
			"in the credentials Secret", c.credentialsSource, c.endpointName())
	case code == codeAccessDenied || status == http.StatusForbidden:
		e.Kind = external.KindUnauthorized
		e.Message = fmt.Sprintf("%s refused the %s (%s): the credentials (%s) need %s on bucket %q under %q",
			server, operationWords[op], codeOr(code, status), c.credentialsSource, permissionFor[op], c.bucket,
			c.layout.installationPrefix())
	case throttleCodes[code] || status == http.StatusTooManyRequests:
		e.Kind = external.KindThrottled
		e.Message = fmt.Sprintf("%s asked to slow down (%s) and still did after %d attempts",
			server, codeOr(code, status), e.Attempts)
	case code == codePermanentRedirect || code == codeAuthHeaderMalformed || status == http.StatusMovedPermanently:
		e.Kind = external.KindInvalid
		e.Message = fmt.Sprintf("bucket %q is not in region %q (%s at %s): set --s3-region to the bucket's region",
			c.bucket, c.region, codeOr(code, status), c.endpointName())
	case isNotFound(err):
		e.Kind = external.KindNotFound
		e.Message = "the backup does not exist"
	case status >= 200 && status < 300:
		// An answer of success the SDK could not read: a proxy's page, a
		// server that is not S3. It may pass; a refusal would skip a
		// scheduled backup's slot for good.
		e.Kind = external.KindTransient
		e.Message = fmt.Sprintf("%s gave an answer the operator cannot read (HTTP %d) for bucket %q; %s",
			server, status, c.bucket, seeAnswer("its answer"))
	case status >= 500 || code == codeConditionalConflict:
		e.Kind = external.KindTransient
		e.Message = fmt.Sprintf("%s failed (%s) for bucket %q; %s", server, codeOr(code, status), c.bucket, seeAnswer(message))
	default:
		e.Kind = external.KindInvalid
		e.Message = fmt.Sprintf("%s refused the %s (%s) for bucket %q; %s", server, operationWords[op], codeOr(code, status),
			c.bucket, seeAnswer(message))
	}
	return e
}

// seeAnswer says where the server's own words are. The message of an error
// is what a condition shows, and must not change from one failure to the
// next; the server's text (which may carry a request ID) stays in the
// error's cause, which the events and the log print.
func seeAnswer(message string) string {
	if strings.TrimSpace(message) == "" {
		return "it gave no explanation"
	}
	return "its answer is in the operator's events and log"
}

// Explain returns the message classify (or a refusal before the call) gave
// err: the cause and the way out, named by the bucket, the endpoint, the
// credentials' source and the permission missing, and stable from one
// failure of that cause to the next, so the BackupConfig's condition can
// carry it (backup.Explainer).
func (c *Client) Explain(err error) (string, bool) {
	var xerr *external.Error
	if !errors.As(err, &xerr) || xerr.Service != serviceName || xerr.Message == "" {
		return "", false
	}
	switch xerr.Kind {
	case external.KindInvalid, external.KindUnauthorized, external.KindThrottled, external.KindTransient:
		return xerr.Message, true
	}
	return "", false
}

// operationWords and permissionFor name, per operation, what was refused
// and the permission that allows it.
var (
	operationWords = map[string]string{
		opStart: "write of the backup", opGet: "read of the backup", opContent: "read of the backup's content",
		opList: "list of the backups", opDelete: "delete of the backup",
	}
	permissionFor = map[string]string{
		opStart: "s3:PutObject (and s3:GetObject, to read a backup a repeated start finds)", opGet: "s3:GetObject",
		opContent: "s3:GetObject", opList: "s3:ListBucket (and s3:GetObject)", opDelete: "s3:DeleteObject",
	}
)

// codeOr names an answer by its S3 code, or by its status when it has none.
func codeOr(code string, status int) string {
	if code != "" && code != http.StatusText(status) {
		return code
	}
	return fmt.Sprintf("HTTP %d", status)
}
