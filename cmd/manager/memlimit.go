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
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// memoryLimitRatio is the share of the container's memory limit the Go
// runtime aims to stay under: the rest is for what the runtime does not
// count (stacks, the binary, the kernel's page cache of it).
const memoryLimitRatio = 0.9

// cgroupMemoryFiles are where the container's memory limit is, under the
// cgroup root: cgroup v2, then v1.
var cgroupMemoryFiles = []string{"memory.max", "memory/memory.limit_in_bytes"}

// setMemoryLimit gives the Go runtime a soft memory limit of 90% of the
// container's, unless GOMEMLIMIT sets one. Without it the garbage collector
// knows nothing of the container's limit: after a burst (many MyApps
// created at once) the heap may grow to twice what is live before it
// collects, and the kernel kills the manager instead. With it the collector
// works harder as the heap nears the limit. Outside a container, or with no
// limit, nothing changes.
func setMemoryLimit(log logr.Logger, cgroupRoot string) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	limit, ok := cgroupMemoryLimit(cgroupRoot)
	if !ok {
		return
	}
	soft := int64(float64(limit) * memoryLimitRatio)
	debug.SetMemoryLimit(soft)
	log.Info("Set the Go runtime's memory limit from the container's", "containerLimit", limit, "goMemLimit", soft)
}

// cgroupMemoryLimit is the memory limit in bytes of the cgroup the process
// runs in, when it has one.
func cgroupMemoryLimit(root string) (int64, bool) {
	for _, name := range cgroupMemoryFiles {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			continue
		}
		value := strings.TrimSpace(string(data))
		if value == "max" {
			return 0, false
		}
		limit, err := strconv.ParseInt(value, 10, 64)
		// cgroup v1 writes a page-rounded maximum int64 for no limit.
		if err != nil || limit <= 0 || limit >= 1<<62 {
			return 0, false
		}
		return limit, true
	}
	return 0, false
}
