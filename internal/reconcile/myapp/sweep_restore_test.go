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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestSweepSparesOnlyTheRecordARestoredMyAppTakesOver: a record left by a
// MyApp whose finalizer went by hand (a force-deleted namespace) is the
// sweep's, unless the MyApp now living under that namespace and name was
// restored from it and the record is the one it takes over: its
// restored-from-uid mark names the record's UID, the record is its
// spec.host's, and its status does not show that takeover done. A record of
// the marked UID under another host (the old MyApp's, left from before a
// move) is a leak no pass will take, and is swept, as is a record of an
// earlier MyApp the mark does not name. Once resumed, the MyApp takes its
// host's record over and its status records the takeover done.
//
// The restored MyApp is suspended at first, so its own passes leave every
// record alone and only the sweep judges them.
func TestSweepSparesOnlyTheRecordARestoredMyAppTakesOver(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	const restoredFrom = "0b7a4f60-0000-4000-8000-0000000000a1"
	host := "web-now." + ns + ".example.com"
	restored := newMyApp(ns, "web", fixtures.WithHost(host))
	restored.Annotations = map[string]string{backupv1alpha1.RestoredFromUIDAnnotation: restoredFrom}
	restored.Spec.Suspend = true
	g.Expect(k8sClient.Create(t.Context(), restored)).To(Succeed())

	seed := func(name, uid string) string {
		host := name + "." + ns + ".example.com"
		_, err := dnsClient.Upsert(t.Context(), dns.Record{Name: host, Type: dns.TypeA, Value: defaultTarget, TTL: 300,
			Owner: "myapp-operator/" + testOwnerID + "/" + ns + "/web/" + uid})
		g.Expect(err).NotTo(HaveOccurred())
		return host
	}
	marked := seed("web-now", restoredFrom)
	elsewhere := seed("web-then", restoredFrom)
	unmarked := seed("web-before", "0b7a4f60-0000-4000-8000-0000000000a2")

	_, err := newTestSweeper(time.Hour).sweepOnce(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(recordsNamed(marked)).To(HaveLen(1), "the record of spec.host the restored MyApp takes over is not the sweep's to delete")
	g.Expect(recordsNamed(elsewhere)).To(BeEmpty(), "a record of the marked UID under another host is a leak, and swept")
	g.Expect(recordsNamed(unmarked)).To(BeEmpty(), "an earlier MyApp's record the mark does not name is swept")

	g.Expect(k8sClient.Patch(t.Context(), restored, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"suspend":false}}`)))).To(Succeed())
	eventuallyReady(t, g, restored)
	got := &appsv1alpha1.MyApp{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(restored), got)).To(Succeed())
	g.Expect(got.Status.DNS).NotTo(BeNil())
	g.Expect(got.Status.DNS.TakeoverDoneFor).To(Equal(restoredFrom), "the status records the takeover done")
	g.Expect(recordsNamed(marked)).To(ConsistOf(HaveField("Owner", HaveSuffix("/"+string(got.UID)))))
}
