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
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// version and commit name the build. The Makefile and the Dockerfile set
// them with -ldflags "-X main.version=... -X main.commit=..."; a plain
// `go build` or `go install` leaves them empty, and buildVersion falls back
// to what the Go toolchain stamped into the binary.
var (
	version string
	commit  string
)

// buildInfo is the usual Prometheus build-info gauge: always 1, its labels
// say which build runs, so a dashboard or an alert can join on it and an
// upgrade shows as a label change.
var buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "myapp_operator_build_info",
	Help: "Always 1: the labels are the manager's version, the commit it was built from and its Go version.",
}, []string{"version", "commit", "goversion"})

func init() {
	info, _ := debug.ReadBuildInfo()
	v, c := buildVersion(version, commit, info)
	buildInfo.WithLabelValues(v, c, runtime.Version()).Set(1)
	metrics.Registry.MustRegister(buildInfo)
}

// buildVersion returns the version and commit of this build: the ones set
// by -ldflags when there are, otherwise the module version `go install
// module@version` stamps and the VCS revision `go build` in a checkout
// stamps (with -dirty for uncommitted changes), otherwise "devel" and
// "unknown".
func buildVersion(version, commit string, info *debug.BuildInfo) (string, string) {
	if info != nil {
		if version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		if commit == "" {
			var revision, modified string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					revision = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if revision != "" && modified == "true" {
				revision += "-dirty"
			}
			commit = revision
		}
	}
	if version == "" {
		version = "devel"
	}
	if commit == "" {
		commit = "unknown"
	}
	return version, commit
}
