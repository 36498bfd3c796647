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

// Package reliability is the reliability campaign of issue 11: families of
// generated scenarios (a crash at every write, stale reads, same-name
// recreates during an outage, mass deletion, concurrent writers) run against
// the real controllers on the cluster tier
// with the simulator, each judged by one oracle that counts leaks,
// duplicates and stuck objects. `make test` runs a small sample of every
// family; RELIABILITY_FULL=1 (`make test-reliability`) runs them all.
package reliability

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3/s3test"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

var (
	cp         *controlplane.ControlPlane
	k8sClient  client.Client // uncached: the scenarios' own reads and writes
	testScheme = fixtures.Scheme()
)

func TestMain(m *testing.M) {
	// The controllers log an error for every call a crashed manager makes;
	// RELIABILITY_LOG=1 shows them.
	if os.Getenv("RELIABILITY_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.DPanicLevel)))
	}
	// The cluster tier: Deployments become Available (MyApps turn Ready) and
	// the namespace controller finishes namespace deletions. Two fake nodes
	// hold the pods of the mass-deletion family.
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierCluster, Nodes: 2}, &cp, func(cp *controlplane.ControlPlane) (func(), error) {
		var err error
		k8sClient, err = cp.NewClient(client.Options{Scheme: testScheme})
		return func() {
			removeManagerBin()
			// The S3 path's versitygw, if a scenario started it.
			if err := s3test.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping versitygw:", err)
			}
		}, err
	}))
}

// full reports whether the whole campaign runs (make test-reliability)
// rather than the sample make test runs.
func full() bool {
	v, _ := strconv.ParseBool(os.Getenv("RELIABILITY_FULL"))
	return v
}

// scale picks the size of a family: sample in make test, all in the full
// campaign. RELIABILITY_SCALE overrides the full size, for a quicker run by
// hand.
func scale(sample, all int) int {
	if !full() {
		return sample
	}
	if v, err := strconv.Atoi(os.Getenv("RELIABILITY_SCALE")); err == nil && v > 0 {
		return v
	}
	return all
}
