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

package backuptest

import "strings"

// WrongIDs are backup IDs of every wrong form a person or a tool may give a
// Restore: empty, a typo, another provider's form, too few or too many
// parts, empty parts, a path that climbs, characters no ID holds, a bad
// escape, and one far longer than any ID. No provider stores a backup under
// any of them, so each must be answered as not found, never as a failure a
// retry could mend.
func WrongIDs() []string {
	return []string{
		"",
		" ",
		"bk-000042",
		"bk-",
		"bk-000042 ",
		"shop",
		"shop/bc-1",
		"shop/bc-1/",
		"/bc-1/web",
		"shop//web",
		"//",
		".",
		"..",
		"../../etc/passwd",
		"shop/../web",
		"shop/bc-1/..",
		"Shop/bc-1/web",
		"shop/bc 1/web",
		"shop/bc-1/%zz",
		"shop/bc-1/a/b",
		"shop/bc-1/web?x=1",
		"shop/bc-1/web#x",
		"shop\x00/bc-1/web",
		"шоп/bc-1/web",
		"s3://backups/shop/bc-1/web",
		strings.Repeat("a", 5000),
		"shop/" + strings.Repeat("b", 300) + "/web",
	}
}
