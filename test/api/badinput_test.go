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

package api_test

import (
	"strings"
	"testing"
)

// The bad-input family of the reliability campaign (issue 11, family 8;
// docs/reliability.md): specs a user could plausibly write, or a script
// could produce, that the API server must refuse before any controller sees
// them, each with a message naming the field. The cases in
// validation_test.go are the rules' own examples; these walk every field's
// edges: wrong types, empty values, each way a host is not a DNS name, and
// values just past each bound.

// set returns a mutation that sets spec[key] to value.
func set(key string, value any) func(map[string]any) {
	return func(s map[string]any) { s[key] = value }
}

// setIn returns a mutation that sets spec[outer][key] to value.
func setIn(outer, key string, value any) func(map[string]any) {
	return func(s map[string]any) { s[outer] = map[string]any{key: value} }
}

// want expects the error to name path as the field in error (the server
// writes "<path>: <reason>") and to say why with phrase.
func want(path, phrase string) []string { return []string{path + ": ", phrase} }

// label returns a DNS label of n characters.
func label(n int) string { return strings.Repeat("a", n) }

func TestMyAppBadInput(t *testing.T) {
	runValidationCases(t, myAppGVK, validMyAppSpec, myAppBadInput())
}

func TestBackupConfigBadInput(t *testing.T) {
	runValidationCases(t, backupConfigGVK, validBackupConfigSpec, backupConfigBadInput())
}

func myAppBadInput() []validationCase {
	const host = "spec.host"
	return []validationCase{
		// image
		{"image empty", set("image", ""), want("spec.image", "at least 1 chars long")},
		{"image longer than 1024", set("image", "registry.example.com/"+strings.Repeat("a", 1010)+":1"), want("spec.image", "may not be more than 1024 bytes")},
		{"image with a leading space", set("image", " nginx:1.27"), want("spec.image", "must not contain spaces")},
		{"image with a carriage return", set("image", "nginx:1.27\r"), want("spec.image", "must not contain spaces")},
		{"image a number", set("image", int64(127)), want("spec.image", "must be of type string")},

		// host: empty, IPs, case, dots, labels, wildcard, URLs
		{"host empty", set("host", ""), want(host, "at least 3 chars long")},
		{"host an IPv4 address", set("host", "192.0.2.10"), want(host, "not an IP address")},
		{"host an IPv4 address with a trailing dot", set("host", "192.0.2.10."), want(host, "not an IP address")},
		{"host an IPv6 address", set("host", "2001:db8::1"), want(host, "lowercase fully qualified DNS name")},
		{"host the IPv6 loopback", set("host", "::1"), want(host, "lowercase fully qualified DNS name")},
		{"host upper case", set("host", "WEB.EXAMPLE.COM"), want(host, "lowercase fully qualified DNS name")},
		{"host mixed case", set("host", "Web.example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host with a trailing dot", set("host", "web.example.com."), want(host, "lowercase fully qualified DNS name")},
		{"host with a leading dot", set("host", ".example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host with an empty label", set("host", "web..example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host a wildcard", set("host", "*.example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host label starting with a hyphen", set("host", "-web.example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host label ending with a hyphen", set("host", "web-.example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host with an underscore", set("host", "_dmarc.example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host with a port", set("host", "web.example.com:8080"), want(host, "lowercase fully qualified DNS name")},
		{"host a URL", set("host", "https://web.example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host with a path", set("host", "web.example.com/shop"), want(host, "lowercase fully qualified DNS name")},
		{"host with a space", set("host", "web example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host not ASCII", set("host", "wéb.example.com"), want(host, "lowercase fully qualified DNS name")},
		{"host last label of 64", set("host", "web.example."+label(64)), want(host, "lowercase fully qualified DNS name")},
		{"host longer than 253", set("host", strings.Repeat(label(63)+".", 4)+"com"), want(host, "may not be more than 253 bytes")},
		{"host a number", set("host", int64(1)), want(host, "must be of type string")},

		// replicas and ports
		{"replicas negative", set("replicas", int64(-1)), want("spec.replicas", "greater than or equal to 1")},
		{"replicas past int32", set("replicas", int64(1)<<31), want("spec.replicas", "less than or equal to 1000")},
		{"replicas a string", set("replicas", "3"), want("spec.replicas", "must be of type integer")},
		{"containerPort 0", set("containerPort", int64(0)), want("spec.containerPort", "greater than or equal to 1")},
		{"containerPort negative", set("containerPort", int64(-80)), want("spec.containerPort", "greater than or equal to 1")},
		{"containerPort 65536", set("containerPort", int64(65536)), want("spec.containerPort", "less than or equal to 65535")},
		{"containerPort a name", set("containerPort", "http"), want("spec.containerPort", "must be of type integer")},
		{"servicePort 65536", set("servicePort", int64(65536)), want("spec.servicePort", "less than or equal to 65535")},
		{"servicePort negative", set("servicePort", int64(-1)), want("spec.servicePort", "greater than or equal to 1")},

		// resources
		{"ephemeral-storage request over its limit", set("resources", map[string]any{
			"requests": map[string]any{"ephemeral-storage": "2Gi"},
			"limits":   map[string]any{"ephemeral-storage": "1Gi"},
		}), want("spec.resources", "resources.requests.ephemeral-storage must not exceed resources.limits.ephemeral-storage")},
		{"cpu request over its limit in other notations", set("resources", map[string]any{
			"requests": map[string]any{"cpu": "1"},
			"limits":   map[string]any{"cpu": "999m"},
		}), want("spec.resources", "resources.requests.cpu must not exceed resources.limits.cpu")},
		{"cpu request not a quantity", setIn("resources", "requests", map[string]any{"cpu": "lots"}), want("spec.resources.requests.cpu", "should match")},
		{"memory limit with a unit Kubernetes does not know", setIn("resources", "limits", map[string]any{"memory": "1GB"}), want("spec.resources.limits.memory", "should match")},
		{"requests not a map", setIn("resources", "requests", "cpu=1"), want("spec.resources.requests", "must be of type object")},

		// env
		{"env entry without a name", set("env", []any{map[string]any{"value": "1"}}), want("spec.env[0].name", "Required value")},
		{"env name repeated further down", set("env", []any{
			map[string]any{"name": "A"}, map[string]any{"name": "B"}, map[string]any{"name": "A"},
		}), want("spec.env[2]", "Duplicate value")},
		{"env of 101 entries", func(s map[string]any) {
			env := make([]any, 101)
			for i := range env {
				env[i] = map[string]any{"name": "V" + strings.Repeat("X", i)}
			}
			s["env"] = env
		}, want("spec.env", "must have at most 100 items")},
		{"env secretKeyRef without a key", set("env", []any{map[string]any{"name": "A", "valueFrom": map[string]any{
			"secretKeyRef": map[string]any{"name": "s"},
		}}}), want("spec.env[0].valueFrom.secretKeyRef.key", "Required value")},
		{"env value a number", set("env", []any{map[string]any{"name": "A", "value": int64(1)}}), want("spec.env[0].value", "must be of type string")},
		{"env a map", set("env", map[string]any{"A": "1"}), want("spec.env", "must be of type array")},

		// deletionPolicy
		{"deletionPolicy empty", set("deletionPolicy", ""), want("spec.deletionPolicy", `supported values: "Delete", "Orphan"`)},
		{"deletionPolicy in lower case", set("deletionPolicy", "delete"), want("spec.deletionPolicy", `supported values: "Delete", "Orphan"`)},
		{"deletionPolicy of a BackupConfig", set("deletionPolicy", "Retain"), want("spec.deletionPolicy", `supported values: "Delete", "Orphan"`)},
	}
}

func backupConfigBadInput() []validationCase {
	return []validationCase{
		// appRef
		{"appRef a string", set("appRef", "web"), want("spec.appRef", "must be of type object")},
		{"appRef.name empty", setIn("appRef", "name", ""), want("spec.appRef.name", "at least 1 chars long")},
		{"appRef.name upper case", setIn("appRef", "name", "Web"), want("spec.appRef.name", "DNS label")},
		{"appRef.name ending with a hyphen", setIn("appRef", "name", "web-"), want("spec.appRef.name", "DNS label")},
		{"appRef.name with a namespace", setIn("appRef", "name", "shop/web"), want("spec.appRef.name", "DNS label")},
		{"appRef.name with an underscore", setIn("appRef", "name", "web_1"), want("spec.appRef.name", "DNS label")},
		{"appRef.name a number", setIn("appRef", "name", int64(1)), want("spec.appRef.name", "must be of type string")},

		// schedule: what the CRD can tell is not a 5-field expression
		{"schedule empty", set("schedule", ""), want("spec.schedule", "5-field cron expression")},
		{"schedule @every", set("schedule", "@every 5m"), want("spec.schedule", "5-field cron expression")},
		{"schedule @reboot", set("schedule", "@reboot"), want("spec.schedule", "5-field cron expression")},
		{"schedule descriptor in upper case", set("schedule", "@Daily"), want("spec.schedule", "5-field cron expression")},
		{"schedule separated by tabs", set("schedule", "0\t3\t*\t*\t*"), want("spec.schedule", "5-field cron expression")},
		{"schedule with a leading space", set("schedule", " 0 3 * * *"), want("spec.schedule", "5-field cron expression")},
		{"schedule with a trailing space", set("schedule", "0 3 * * * "), want("spec.schedule", "5-field cron expression")},
		{"schedule longer than 100", set("schedule", "0 3 * * "+strings.Repeat("1,", 50)+"2"), want("spec.schedule", "may not be more than 100 bytes")},
		{"schedule a number", set("schedule", int64(3)), want("spec.schedule", "must be of type string")},

		// retention
		{"keepLast negative", setIn("retention", "keepLast", int64(-1)), want("spec.retention.keepLast", "greater than or equal to 1")},
		{"keepLast past int32", setIn("retention", "keepLast", int64(1)<<32), want("spec.retention.keepLast", "less than or equal to 100")},
		{"keepLast a string", setIn("retention", "keepLast", "7"), want("spec.retention.keepLast", "must be of type integer")},
		{"retention a number", set("retention", int64(7)), want("spec.retention", "must be of type object")},

		// deletionPolicy
		{"deletionPolicy empty", set("deletionPolicy", ""), want("spec.deletionPolicy", `supported values: "Delete", "Retain"`)},
		{"deletionPolicy in lower case", set("deletionPolicy", "retain"), want("spec.deletionPolicy", `supported values: "Delete", "Retain"`)},

		// booleans
		{"suspend a string", set("suspend", "true"), want("spec.suspend", "must be of type boolean")},
		{"suspend a number", set("suspend", int64(1)), want("spec.suspend", "must be of type boolean")},
		{"backupOnChange a string", set("backupOnChange", "yes"), want("spec.backupOnChange", "must be of type boolean")},
		{"backupBeforeAppDeletion a string", set("backupBeforeAppDeletion", "false"), want("spec.backupBeforeAppDeletion", "must be of type boolean")},
	}
}
