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

package reliability

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// TestTheLastSpecCheckReadsTheContent plants, with no manager running,
// backups that must not count as a backup of a MyApp's last spec (an older
// spec under the labels of the last generation, the last spec by another
// BackupConfig, the last spec of another MyApp) and expects
// backedUpWithSpec to find none; then a final backup labelled with the
// generation the API server gives a MyApp whose deletion began (one past
// its last spec's), holding the last spec, which must count. Judged by
// the generation label, as before B10, the bcfirst lifecycles reported
// that backup missing.
func TestTheLastSpecCheckReadsTheContent(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	s := newScenario(t)
	backups, err := httpbackup.New(external.Config{BaseURL: s.url, Token: external.StaticTokenSource(simToken)})
	g.Expect(err).NotTo(HaveOccurred())

	const uid = types.UID("app-uid")
	bc := &backupv1alpha1.BackupConfig{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "web-backup", UID: "bc-uid"}}
	other := &backupv1alpha1.BackupConfig{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "other", UID: "other-uid"}}
	last := s.newMyApp("web").Spec
	last.Image = "nginx:1.28"
	older := *last.DeepCopy()
	older.Image = "nginx:1.27"

	plant := func(by *backupv1alpha1.BackupConfig, app types.UID, generation string, spec appsv1alpha1.MyAppSpec) {
		t.Helper()
		owner := backupOwner(by)
		key := owner + "/final/" + string(app) + "/" + generation
		content, err := backupcontent.EncodePayload(&backupcontent.Payload{
			Metadata: backupcontent.PayloadMetadata{Trigger: string(backupv1alpha1.TriggerAppDeletion),
				MyAppUID: string(app), TakenAt: time.Now(),
				BackupConfig: backupcontent.ObjectIdentity{Namespace: s.ns, Name: by.Name, UID: string(by.UID)},
				OwnerID:      ownerID, Owner: owner, IdempotencyKey: key},
			MyApp: backupcontent.AppSnapshot{APIVersion: "apps.myapp.dev/v1alpha1", Kind: "MyApp", Namespace: s.ns,
				Name: "web", Spec: spec},
		})
		g.Expect(err).NotTo(HaveOccurred())
		_, err = backups.Start(ctx, backup.StartRequest{App: "web", Owner: owner, IdempotencyKey: key, Namespace: s.ns,
			Payload: content, Labels: map[string]string{
				"backup.myapp.dev/myapp-uid":        string(app),
				"backup.myapp.dev/myapp-generation": generation,
			}})
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func() bool {
			for _, b := range s.sim.Backups() {
				if b.IdempotencyKey == key {
					return b.Phase == simulator.PhaseSucceeded
				}
			}
			return false
		}).Should(BeTrue(), "backup %s succeeds", key)
	}
	found := func() bool {
		held, err := s.backedUpWithSpec(ctx, bc, uid, last)
		g.Expect(err).NotTo(HaveOccurred())
		return held
	}

	plant(bc, uid, "2", older)
	plant(other, uid, "2", last)
	plant(bc, "another-app-uid", "2", last)
	g.Expect(found()).To(BeFalse(), "an older spec, another BackupConfig's backup or another MyApp's counted")

	plant(bc, uid, "3", last)
	g.Expect(found()).To(BeTrue(), "the final backup of the last spec, at the deletion's generation, was missed")
}
