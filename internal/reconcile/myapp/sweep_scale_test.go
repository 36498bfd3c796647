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
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

// appsExcept is an API reader that shows, at every <ns>/<name>, a MyApp
// with the UID the sweep's records name, except at the names in gone: a
// cluster of 20,000 live MyApps without 20,000 objects in a test's API
// server. The sweep's judgement is still its own: it reads each owner.
type appsExcept struct {
	client.Reader
	gone map[types.NamespacedName]bool
}

func (r appsExcept) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.gone[key] {
		return apierrors.NewNotFound(appsv1alpha1.GroupVersion.WithResource("myapps").GroupResource(), key.Name)
	}
	app := obj.(*appsv1alpha1.MyApp)
	app.Namespace, app.Name, app.UID = key.Namespace, key.Name, scaleUID(key.Name)
	return nil
}

func scaleUID(name string) types.UID {
	return types.UID("0f8fad5b-d9cb-469f-a165-" + strings.TrimPrefix(name, "application-"))
}

// TestSweepHandlesTwentyThousandRecords (audit 2 S5): the sweep lists an
// installation's records in pages (more than one response of the service may
// carry), so it judges every one of 20,000 records and deletes exactly the
// orphans among them, the last ones on the last page too, and keeps another
// installation's records and those of every MyApp that exists.
func TestSweepHandlesTwentyThousandRecords(t *testing.T) {
	g := NewWithT(t)
	const ours, theirs = 20000, 400
	gone := map[types.NamespacedName]bool{}
	orphans := map[string]bool{}
	owner := func(i int) string {
		if i%51 == 0 && i/51 < theirs {
			return fmt.Sprintf("myapp-operator/other-cluster/namespace-%05d/application-%05d/uid", i, i)
		}
		name := fmt.Sprintf("application-%012d", i)
		key := types.NamespacedName{Namespace: fmt.Sprintf("namespace-%05d", i), Name: name}
		if i%2500 == 7 || i == ours+theirs-1 {
			gone[key] = true
			orphans[fmt.Sprintf("r%05d.example.com", i)] = true
		}
		return fmt.Sprintf("myapp-operator/%s/%s/%s/%s", testOwnerID, key.Namespace, key.Name, scaleUID(name))
	}
	sim, url := simtest.StartWithRecords(t, simulator.Options{Token: simToken}, ours+theirs, owner)
	c, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken), MaxRetries: 1, MaxRetryWait: 100 * time.Millisecond})
	g.Expect(err).NotTo(HaveOccurred())

	s := &OrphanSweeper{OwnerID: testOwnerID, DNS: c, Reader: appsExcept{gone: gone}, Pace: time.Nanosecond, Log: logr.Discard()}
	removed, err := s.sweepOnce(t.Context())
	g.Expect(err).NotTo(HaveOccurred(), "the sweep lists and judges every record")
	g.Expect(removed).To(Equal(len(orphans)))

	left := map[string]bool{}
	for _, rec := range sim.Records() {
		left[rec.Name] = true
	}
	g.Expect(left).To(HaveLen(ours + theirs - len(orphans)))
	for name := range orphans {
		g.Expect(left).NotTo(HaveKey(name), "the orphan %s is deleted", name)
	}
	t.Logf("%d records, %d of them orphans, all deleted; %d kept", ours+theirs, len(orphans), len(left))
}

// TestSweepJudgesOnlyWatchedNamespaces (issue 23 item 6): with
// --watch-namespaces the sweep judges only records whose MyApp lives in a
// watched namespace. A record of another namespace belongs to another
// install (same owner ID or not), whose MyApp this one's RBAC may not even
// read; it is kept although its MyApp looks gone from here.
func TestSweepJudgesOnlyWatchedNamespaces(t *testing.T) {
	g := NewWithT(t)
	gone := map[types.NamespacedName]bool{}
	owner := func(i int) string {
		ns := []string{"team-a", "team-b"}[i%2]
		name := fmt.Sprintf("application-%012d", i)
		gone[types.NamespacedName{Namespace: ns, Name: name}] = true
		return fmt.Sprintf("myapp-operator/%s/%s/%s/%s", testOwnerID, ns, name, scaleUID(name))
	}
	sim, url := simtest.StartWithRecords(t, simulator.Options{Token: simToken}, 6, owner)
	c, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken), MaxRetries: 1, MaxRetryWait: 100 * time.Millisecond})
	g.Expect(err).NotTo(HaveOccurred())

	s := &OrphanSweeper{OwnerID: testOwnerID, DNS: c, Reader: appsExcept{gone: gone}, Pace: time.Nanosecond,
		Log: logr.Discard(), WatchNamespaces: []string{"team-a"}}
	removed, err := s.sweepOnce(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(Equal(3), "the three orphans of team-a")
	left := make([]string, 0, len(sim.Records()))
	for _, rec := range sim.Records() {
		left = append(left, rec.Owner)
	}
	g.Expect(left).To(HaveLen(3))
	for _, o := range left {
		g.Expect(o).To(ContainSubstring("/team-b/"), "the unwatched namespace's records are kept")
	}
}
