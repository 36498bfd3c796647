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

package restoreplan

import (
	"testing"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// TestABackupIDNamingAnotherNamespaceIsRefusedBeforeAnyRead: the promise
// of docs/spec/restore.md ("Tenancy"), over every observation of the
// bounded space with a backupID whose form names another namespace (the s3
// provider's <namespace>/<uid>/<name>): a Restore that has chosen no backup
// reads nothing, pins nothing and fails with BackupOfAnotherNamespace; and
// one whose ID names its own namespace is never refused for it unless its
// labels or its content say otherwise.
func TestABackupIDNamingAnotherNamespaceIsRefusedBeforeAnyRead(t *testing.T) {
	checked, broken := 0, 0
	report := func(rule string, o Observation, p Plan) {
		if broken++; broken <= 3 {
			t.Errorf("%s\nobservation: %s id-namespace=%q\nplan: %+v", rule, describe(o), o.IDNamespace, p)
		}
	}
	eachObservation(func(o Observation) {
		if o.Phase.Finished() || o.Pinned != "" {
			return
		}
		checked++
		o.IDNamespace = otherNamespace
		if p := Make(o); p.Need != NeedNothing || p.Pin || p.Action != ActFail ||
			p.Show.Reason != backupv1alpha1.BackupOfAnotherNamespaceReason {
			report("a backupID of another namespace is refused with BackupOfAnotherNamespace before anything is read", o, p)
		}
		o.IDNamespace = ownNamespace
		if p := Make(o); p.Show.Reason == backupv1alpha1.BackupOfAnotherNamespaceReason && !ofAnotherNamespace(o) {
			report("a backupID of the Restore's namespace is not refused as another namespace's", o, p)
		}
	})
	t.Logf("%d observations of a Restore that has chosen no backup checked; %d broke a promise", checked, broken)
}
