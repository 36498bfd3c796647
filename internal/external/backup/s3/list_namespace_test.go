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

package s3_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// startRequestIn is startRequest for a backup of a MyApp in namespace.
func startRequestIn(t testing.TB, namespace, uid, rest string) backup.StartRequest {
	t.Helper()
	owner := "backupconfig/" + uid
	key := owner + "/" + rest
	payload, err := backupcontent.EncodePayload(&backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger: "Manual", MyAppUID: "app-" + uid, MyAppGeneration: 1,
			TakenAt:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: namespace, Name: "nightly", UID: uid},
			OwnerID:      "cluster-a", Owner: owner, IdempotencyKey: key,
		},
		MyApp: backupcontent.AppSnapshot{APIVersion: "apps.myapp.dev/v1alpha1", Kind: "MyApp", Namespace: namespace, Name: "web"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return backup.StartRequest{
		App: namespace + "-web", Owner: owner, IdempotencyKey: key, Namespace: namespace, Payload: payload,
		Labels: map[string]string{backup.LabelNamespace: namespace},
	}
}

// TestListOfOneNamespaceReadsOnlyThatNamespace: List("", InNamespace(ns)),
// the restore's storage source, lists and reads only
// <prefix>/<owner-id>/<ns>/, not the whole installation: a client that has
// not seen the backups (a rebuilt cluster) makes one list request and one
// ranged GET per backup of that namespace, and answers only its backups, however
// many other namespaces hold.
func TestListOfOneNamespaceReadsOnlyThatNamespace(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	srv := s3Server(t)
	bucket := newBucket(t, srv)
	writer := newClient(t, srv, clientOptions{bucket: bucket, prefix: "backups"})
	for i := range 2 {
		_, err := writer.Start(ctx, startRequestIn(t, "shop", "bc-1", fmt.Sprint("manual/", i)))
		g.Expect(err).NotTo(HaveOccurred())
	}
	for _, ns := range []string{"bank", "shopfront"} {
		for i := range 3 {
			_, err := writer.Start(ctx, startRequestIn(t, ns, "bc-"+ns, fmt.Sprint("manual/", i)))
			g.Expect(err).NotTo(HaveOccurred())
		}
	}

	var count counter
	reader := newClient(t, srv, clientOptions{bucket: bucket, prefix: "backups", transport: count.transport()})
	listed, err := reader.List(ctx, "", backup.InNamespace("shop"))
	g.Expect(err).NotTo(HaveOccurred())
	// The requests first: the old listing read every namespace's objects.
	g.Expect(count.method(http.MethodGet)).To(Equal(3),
		"one list request, and one ranged GET (the object's metadata) per backup of the namespace")
	g.Expect(count.requests.Load()).To(BeEquivalentTo(3))
	g.Expect(listed).To(HaveLen(2))
	for _, b := range listed {
		g.Expect(b.Labels).To(HaveKeyWithValue(backup.LabelNamespace, "shop"), "backup %s", b.ID)
	}
	t.Logf("List of one namespace of three: %d requests, %d bytes sent, %d received",
		count.requests.Load(), count.sent.Load(), count.received.Load())
}
