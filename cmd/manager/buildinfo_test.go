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
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	stamped := func(version string, settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	for _, tc := range []struct {
		name                 string
		version, commit      string
		info                 *debug.BuildInfo
		wantVersion, wantCmt string
	}{
		{"set by -ldflags", "v0.3.0", "abc123", stamped("v0.2.0", "vcs.revision", "def456"), "v0.3.0", "abc123"},
		{"go install module@version", "", "", stamped("v0.2.0"), "v0.2.0", "unknown"},
		{"go build in a clean checkout", "", "", stamped("(devel)", "vcs.revision", "def456", "vcs.modified", "false"), "devel", "def456"},
		{"go build with uncommitted changes", "", "", stamped("(devel)", "vcs.revision", "def456", "vcs.modified", "true"), "devel", "def456-dirty"},
		{"no build information", "", "", nil, "devel", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, c := buildVersion(tc.version, tc.commit, tc.info)
			if v != tc.wantVersion || c != tc.wantCmt {
				t.Errorf("buildVersion = %q, %q; want %q, %q", v, c, tc.wantVersion, tc.wantCmt)
			}
		})
	}
}
