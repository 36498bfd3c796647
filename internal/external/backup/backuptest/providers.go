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

// Package backuptest is what the tests of every backup provider share: the
// one list of the providers the controllers' suites run on.
package backuptest

// Provider names a backup provider as --backup-provider does.
type Provider string

// The providers the suites run on. A new provider is added here, and every
// suite that ranges over Providers runs on it.
const (
	// HTTP is the HTTP backup service (package httpbackup), served in tests
	// by the simulator.
	HTTP Provider = "http"
	// S3 is an S3 bucket (package s3), served in tests by versitygw.
	S3 Provider = "s3"
)

// Providers returns every provider, in a fixed order.
func Providers() []Provider { return []Provider{HTTP, S3} }
