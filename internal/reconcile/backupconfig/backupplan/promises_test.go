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

import (
	"fmt"
	"time"
)

// The planners are pure, so their promises are checked over every
// observation of a bounded space, and over seeded sequences against a
// model of the world, without a cluster. The promises are the docs'
// (docs/spec/backupconfig.md), written from the world's point of view; no
// test restates a planner's body, and no generator takes one planner's
// answer as a free input.

var planNow = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

const (
	planMaxAttempts   = 3
	planTeardownLimit = 10 * time.Minute
	planRetryDelay    = time.Minute
)

// The promises a planner broke are collected with proptest.Collector:
// each test hands it every observation and the rules its plan broke, and
// it reports "N of M <observations> broke <rule>" with the first cases.

// describe prints v for a counterexample.
func describe(v any) func() string { return func() string { return fmt.Sprintf("%+v", v) } }
