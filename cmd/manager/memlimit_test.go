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
	"testing"
)

func TestCgroupMemoryLimit(t *testing.T) {
	write := func(t *testing.T, name, content string) string {
		root := t.TempDir()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return root
	}
	for _, tc := range []struct {
		name, file, content string
		want                int64
		ok                  bool
	}{
		{"cgroup v2 limit", "memory.max", "268435456\n", 268435456, true},
		{"cgroup v2 without limit", "memory.max", "max\n", 0, false},
		{"cgroup v1 limit", "memory/memory.limit_in_bytes", "134217728\n", 134217728, true},
		{"cgroup v1 without limit", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0, false},
		{"unreadable value", "memory.max", "lots\n", 0, false},
		{"no cgroup files", "other", "1\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := cgroupMemoryLimit(write(t, tc.file, tc.content))
			if got != tc.want || ok != tc.ok {
				t.Errorf("cgroupMemoryLimit() = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
