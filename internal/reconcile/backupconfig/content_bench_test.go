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

package backupconfig

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// BenchmarkBackupContent is what building a backup's content costs a
// start, in CPU and memory: rendering the children, encoding and gzipping
// the document, for a MyApp with ten env vars, resources and a DNS record.
// It makes no call: the objects are the pass's own.
func BenchmarkBackupContent(b *testing.B) {
	r := &Reconciler{OwnerID: testOwnerID, RenderChildren: myapp.RenderChildren}
	env := make([]corev1.EnvVar, 0, 10)
	for _, name := range []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"} {
		env = append(env, corev1.EnvVar{Name: "SETTING_" + name, Value: "value-of-setting-" + name})
	}
	app := fixtures.NewMyApp("shop", "web", fixtures.WithReplicas(3), fixtures.WithEnv(env...))
	app.UID, app.Generation = "6f1c0a52-0d3e-4d7a-9a43-5b1e2c7d9f10", 4
	app.Labels = map[string]string{"team": "checkout"}
	app.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: app.Spec.Host, Type: "A", Value: "192.0.2.10",
		Owner: "myapp-operator/" + testOwnerID + "/shop/web/" + string(app.UID)}
	bc := fixtures.NewBackupConfig("shop", "web-nightly", "web")
	bc.UID = "0c9d8e7f-1a2b-4c3d-8e9f-a0b1c2d3e4f5"
	s := &scope{bc: bc, app: app, owner: ownerFor(bc), now: time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)}
	key := scheduleKey(s.owner, app.UID, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))

	var size int
	b.ReportAllocs()
	for b.Loop() {
		data, err := r.backupContent(s, backupv1alpha1.TriggerSchedule, key)
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size), "content-bytes")
	if _, err := backupcontent.DecodePayload(mustContent(b, r, s, key)); err != nil {
		b.Fatal(err)
	}
}

func mustContent(b *testing.B, r *Reconciler, s *scope, key string) []byte {
	b.Helper()
	data, err := r.backupContent(s, backupv1alpha1.TriggerSchedule, key)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
