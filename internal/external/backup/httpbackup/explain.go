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

package httpbackup

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

var _ backup.Explainer = (*client)(nil)

// The operations whose refusals an explanation tells apart.
const (
	opStart = "start"
	opList  = "list"
)

// operationWords name, per operation, what the service refused.
var operationWords = map[string]string{
	opStart: "start of the backup", "get": "read of the backup", opList: "list of the backups",
	"delete": "delete of the backup", "content": "read of the backup's content",
}

// Explain says of a failed call the cause and the service's URL, and the
// way out where a setting of the manager's is it, for the BackupConfig's
// Ready condition (backup.Explainer). It is built from the error's kind,
// HTTP status and the service's error code only, never from the service's
// message or the transport error's text: those carry backup IDs, request
// IDs and ports, and would change the condition at every retry. They stay
// in the error, which the events and the log print. A backup the service
// does not have (a read of a missing ID) and a backup another owner holds
// are answers the controller words itself.
func (c *client) Explain(err error) (string, bool) {
	var xerr *external.Error
	if !errors.As(err, &xerr) || xerr.Service != backup.ServiceName {
		return "", false
	}
	at := "the backup service at " + c.api.Endpoint()
	what := operationWords[xerr.Operation]
	status := xerr.StatusCode
	switch xerr.Kind {
	case external.KindThrottled:
		// The client's own hold of later calls (its gate) has no status:
		// the words are those of the answer that asked for the wait.
		return at + " asked the operator to wait", true
	case external.KindUnauthorized:
		if status == 0 {
			return fmt.Sprintf("the operator could not read its token for %s (%s): check --backup-token-file "+
				"or --backup-token-secret", at, xerr.Message), true
		}
		return fmt.Sprintf("%s refused the operator's credentials (HTTP %d): check the token the manager is given "+
			"(--backup-token-file or --backup-token-secret)", at, status), true
	case external.KindNotFound:
		if xerr.Operation != opList && xerr.Operation != opStart {
			return "", false
		}
		return fmt.Sprintf("%s answered HTTP %d to the %s: check that --backup-url is the service's root, "+
			"without the API's path", at, status, what), true
	case external.KindTransient:
		switch {
		case status == 0 && xerr.Err == nil:
			// A listing whose pages do not continue each other.
			return at + " gave a list of the backups the operator cannot follow; its log has what was wrong", true
		case status == 0:
			cause, tlsFailure := external.NoAnswerCause(xerr.Err)
			if tlsFailure {
				cause += "; give its certificate authority with --external-ca-file"
			}
			return fmt.Sprintf("no answer from %s: %s", at, cause), true
		case status >= 200 && status < 300:
			return fmt.Sprintf("%s gave an answer the operator cannot read (HTTP %d); its log has what was wrong",
				at, status), true
		default:
			return fmt.Sprintf("%s failed (HTTP %d)", at, status), true
		}
	case external.KindInvalid:
		if status == 0 {
			return fmt.Sprintf("the operator did not send the %s to %s: %s", what, at, xerr.Message), true
		}
		return fmt.Sprintf("%s refused the %s (%s); its answer is in the operator's events and log",
			at, what, statusAndCode(status, xerr.Code)), true
	}
	return "", false
}

// statusAndCode names an answer by its status and the service's code.
func statusAndCode(status int, code string) string {
	if code == "" {
		return fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	}
	return fmt.Sprintf("HTTP %d, %s", status, code)
}
