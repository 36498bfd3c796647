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

package backupplan

// Need is what a plan must have read before it decides: one type for the
// planners of this package, each of which needs some of its values (the
// glossary in docs/development.md). The zero value, NeedNothing, means the
// plan has decided.
type Need int

const (
	// NeedNothing: the plan has decided.
	NeedNothing Need = iota

	// PlanFinalBackup's reads.

	// NeedAppFromAPIServer: read the MyApp from the API server.
	NeedAppFromAPIServer
	// NeedNamespace: read the namespace, whose deletion takes the MyApp
	// along.
	NeedNamespace
	// NeedAttempts: list the service's final attempts.
	NeedAttempts

	// PlanHold's reads.

	// NeedOwnFinalBackup: read from the backup service whether this pass's
	// own final backup of the MyApp SUCCEEDED.
	NeedOwnFinalBackup
	// NeedHoldersFromAPIServer: list the namespace's BackupConfigs from the
	// API server, to confirm a release decided from the cache.
	NeedHoldersFromAPIServer
)
