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
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external/internal/httpapi"
)

// observe records one logical call in the same series as the HTTP clients
// (internal/external/internal/httpapi): myapp_external_requests_total and
// myapp_external_request_duration_seconds with the labels service,
// operation and outcome, so a dashboard or an alert on the backup service
// keeps working whichever provider stores the backups. A zero duration
// marks a call refused before anything was sent, counted but not timed.
func observe(operation string, d time.Duration, err error) {
	httpapi.Observe(serviceName, operation, d, err)
}
