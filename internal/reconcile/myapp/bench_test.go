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
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// BenchmarkSteadyStateReconcile measures the pass every MyApp at rest costs
// on each drift check: reads from the informer cache, one read from the DNS
// service, and no write. The clock moves one drift interval per pass, so
// every pass is a check. It runs against the suite's control plane and
// simulator, so it includes a real HTTP round trip.
func BenchmarkSteadyStateReconcile(b *testing.B) {
	ns := fixtures.CreateNamespace(b, k8sClient, "bench")
	ctx := b.Context()
	app := newMyApp(ns, "web")
	if err := k8sClient.Create(ctx, app); err != nil {
		b.Fatal(err)
	}
	fixtures.EventuallyReady(ctx, gomega.NewWithT(b), k8sClient, timeout, app)
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)}
	writesBefore := writes.count(ns)

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		suiteClock.step(driftCheckInterval)
		if _, err := reconciler.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := writes.count(ns) - writesBefore; n != 0 {
		b.Fatalf("a steady-state reconcile wrote %d times", n)
	}
}

// mapReader is a cache of MyApps that hands out its objects without a copy,
// as the manager's cache does under client.UnsafeDisableDeepCopy.
type mapReader struct {
	client.Reader
	apps map[client.ObjectKey]*appsv1alpha1.MyApp
}

func (m mapReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	app, ok := m.apps[key]
	if !ok {
		return apierrors.NewNotFound(appsv1alpha1.GroupVersion.WithResource("myapps").GroupResource(), key.Name)
	}
	*obj.(*appsv1alpha1.MyApp) = *app
	return nil
}

// BenchmarkDriftPassCompare measures the drift pass's comparison of a page
// of listed records with what their MyApps last read (drift_list.go), at
// 10,000 records at rest: the cost per record of a pass, without the list
// request. One op is a whole pass over the 10,000.
func BenchmarkDriftPassCompare(b *testing.B) {
	const n = 10000
	r := &Reconciler{OwnerID: testOwnerID, DriftCheck: DriftCheckList, RecordTTL: DefaultRecordTTL,
		DriftCheckInterval: DefaultDriftCheckInterval}
	apps := make(map[client.ObjectKey]*appsv1alpha1.MyApp, n)
	records := make([]dns.Record, 0, n)
	for i := range n {
		app := newMyApp(fmt.Sprintf("ns-%04d", i%100), fmt.Sprintf("app-%05d", i))
		app.UID = uuid.NewUUID()
		owner := wantedOwner(testOwnerID, app)
		app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: app.Spec.Host, Type: dns.TypeA, Value: defaultTarget,
			Owner: owner, State: appsv1alpha1.DNSRecordActive, LastObservedState: appsv1alpha1.DNSRecordActive}
		setDNSCondition(app, true, appsv1alpha1.RecordActiveReason, "active")
		key := client.ObjectKeyFromObject(app)
		apps[key] = app
		r.dnsChecks.set(key, dnsCheck{uid: app.UID, host: app.Spec.Host, seen: seenOf(app)})
		records = append(records, dns.Record{Name: app.Spec.Host, Type: dns.TypeA, Value: defaultTarget,
			TTL: DefaultRecordTTL, Owner: owner, State: dns.StateActive})
	}
	l := &driftLister{r: r, reader: mapReader{apps: apps}, events: make(chan event.GenericEvent, n), log: logr.Discard()}
	ctx := b.Context()
	fetched := time.Now()

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		listed := sets.New[types.NamespacedName]()
		for i := range records {
			drifted, err := l.judge(ctx, &records[i], fetched, listed)
			if err != nil || drifted {
				b.Fatalf("record %s: drifted %v, %v", records[i].Name, drifted, err)
			}
		}
		if listed.Len() != n {
			b.Fatalf("%d of %d listed", listed.Len(), n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
