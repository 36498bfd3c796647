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

package main

import (
	"slices"
	"strconv"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
)

// TestLocalClusterControllerManagerQPS: the local cluster `make run` starts
// gives kube-controller-manager the QPS `make bench`'s cluster has, so a
// thousand MyApps converge at the operator's pace there too, not at the
// pace of kube-controller-manager's default of 20.
func TestLocalClusterControllerManagerQPS(t *testing.T) {
	opts := localClusterOptions(t.TempDir())
	if opts.Tier != controlplane.TierCluster {
		t.Errorf("the local cluster is tier %q, want %q", opts.Tier, controlplane.TierCluster)
	}
	args := controlplane.ControllerManagerArgs(t.TempDir(), opts)
	qps := controlplane.LocalClusterControllerManagerQPS
	for _, want := range []string{"--kube-api-qps=" + strconv.Itoa(qps), "--kube-api-burst=" + strconv.Itoa(2*qps)} {
		if !slices.Contains(args, want) {
			t.Errorf("kube-controller-manager's command line has no %s: %q", want, args)
		}
	}
}
