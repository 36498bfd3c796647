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
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// dnsLabel is what the backup service accepts as an app name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func TestServiceAppName(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name, namespace, app, want string
	}{
		{name: "short", namespace: "shop", app: "web", want: "shop-web"},
		{name: "hyphens in the name are kept", namespace: "shop", app: "web-v2", want: "shop-web-v2"},
		{name: "dots get a hash", namespace: "shop", app: "web.v2"},
		{name: "hyphens in the namespace get a hash", namespace: "shop-web", app: "v2"},
		{name: "another split of the same hyphens", namespace: "shop-web-v2", app: "x"},
		{name: "and another", namespace: "shop-web", app: "v2-x"},
		{name: "and one with dots", namespace: "shop-web", app: "v2.x"},
		{name: "long names are shortened with a hash", namespace: "shop", app: long},
		{name: "long names stay distinct", namespace: "shop", app: long + "b"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got := serviceAppName(tt.namespace, tt.app)
			g.Expect(got).To(MatchRegexp(dnsLabel.String()))
			if tt.want != "" {
				g.Expect(got).To(Equal(tt.want))
			}
			g.Expect(seen).NotTo(HaveKey(got))
			seen[got] = true
		})
	}
}

func TestIdempotencyKeysAreStableAndDistinct(t *testing.T) {
	g := NewWithT(t)
	bc := &backupv1alpha1.BackupConfig{ObjectMeta: metav1.ObjectMeta{UID: "11111111-2222-3333-4444-555555555555"}}
	app := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{UID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", Generation: 3}}
	owner := ownerFor(bc)
	slot := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)

	other := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{UID: "ffffffff-bbbb-cccc-dddd-eeeeeeeeeeee", Generation: 3}}

	keys := []string{
		changeKey(owner, app),
		scheduleKey(owner, app.UID, slot),
		finalKey(owner, app.UID, 1),
		finalKey(owner, app.UID, 2),
		// The same slot of another MyApp (spec.appRef changed) is another
		// backup, and so is a retry of a failed change backup.
		scheduleKey(owner, other.UID, slot),
		changeRetryKey(owner, app, 2),
	}
	// A restart derives the same keys from the same state.
	g.Expect(changeKey(owner, app.DeepCopy())).To(Equal(keys[0]))
	g.Expect(scheduleKey(owner, app.UID, slot.In(time.FixedZone("CET", 3600)))).To(Equal(keys[1]))
	g.Expect(changeRetryKey(owner, app, 1)).To(Equal(keys[0]))
	g.Expect(changeAttempt(keys[0])).To(Equal(int32(1)))
	g.Expect(changeAttempt(keys[5])).To(Equal(int32(2)))
	g.Expect(changeAttempt(keys[1])).To(BeZero())
	g.Expect(keys).To(HaveLen(6))
	distinct := map[string]bool{}
	for _, k := range keys {
		g.Expect(k).To(HavePrefix(owner + "/"))
		g.Expect(len(k)).To(BeNumerically("<=", 255))
		distinct[k] = true
	}
	g.Expect(distinct).To(HaveLen(len(keys)))
	g.Expect(keys[2]).To(HavePrefix(finalKeyPrefix(owner, app.UID)))
}
