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
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// TestCleanupTrackerNamesEachWaitingMyApp checks the per-object series the
// MyAppDNSCleanupStuck alert reads: it holds the deletion time of each MyApp
// whose cleanup waits, and goes when the cleanup is done or the MyApp is
// forgotten, so that no alert outlives its object.
func TestCleanupTrackerNamesEachWaitingMyApp(t *testing.T) {
	g := NewWithT(t)
	deleted := metav1.NewTime(time.Unix(1_700_000_000, 0))
	app := func(name string) *appsv1alpha1.MyApp {
		return &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: "metrics", Name: name, DeletionTimestamp: &deleted}}
	}
	var tracker cleanupTracker
	tracker.waiting(app("done"))
	tracker.waiting(app("forgotten"))
	g.Expect(testutil.ToFloat64(cleanupStarted.WithLabelValues("metrics", "done"))).To(Equal(1_700_000_000.0))
	g.Expect(testutil.ToFloat64(cleanupStarted.WithLabelValues("metrics", "forgotten"))).To(Equal(1_700_000_000.0))

	tracker.done(app("done"))
	tracker.forget(types.NamespacedName{Namespace: "metrics", Name: "forgotten"})
	// DeleteLabelValues reports whether the series still existed.
	g.Expect(cleanupStarted.DeleteLabelValues("metrics", "done")).To(BeFalse(), "a finished cleanup drops its series")
	g.Expect(cleanupStarted.DeleteLabelValues("metrics", "forgotten")).To(BeFalse(), "a forgotten MyApp drops its series")
}
