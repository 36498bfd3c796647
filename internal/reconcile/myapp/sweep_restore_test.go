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

package myapp

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestSweepSparesTheRecordARestoredMyAppTakesOver: a record left by a MyApp
// whose finalizer went by hand (a force-deleted namespace) is the sweep's,
// unless the MyApp now living under that namespace and name was restored
// from it: its restored-from-uid mark names the record's UID, and it takes
// the record over with a transfer, so its name never stops resolving. A
// record of an earlier MyApp the mark does not name is still swept.
//
// The live MyApp wants another host, so its own passes leave both records
// alone and only the sweep judges them.
func TestSweepSparesTheRecordARestoredMyAppTakesOver(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	const restoredFrom = "0b7a4f60-0000-4000-8000-0000000000a1"
	restored := newMyApp(ns, "web", fixtures.WithHost("web-now."+ns+".example.com"))
	restored.Annotations = map[string]string{backupv1alpha1.RestoredFromUIDAnnotation: restoredFrom}
	createReadyMyApp(t, g, restored)

	seed := func(name, uid string) string {
		host := name + "." + ns + ".example.com"
		_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: host, Type: dns.TypeA, Value: defaultTarget, TTL: 300,
			Owner: "myapp-operator/" + testOwnerID + "/" + ns + "/web/" + uid})
		g.Expect(err).NotTo(HaveOccurred())
		return host
	}
	marked := seed("web-then", restoredFrom)
	unmarked := seed("web-before", "0b7a4f60-0000-4000-8000-0000000000a2")

	_, err := newTestSweeper(time.Hour).sweepOnce(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(recordsNamed(marked)).To(HaveLen(1), "the record the restored MyApp's mark names is not the sweep's to delete")
	g.Expect(recordsNamed(unmarked)).To(BeEmpty(), "an earlier MyApp's record the mark does not name is swept")
}
