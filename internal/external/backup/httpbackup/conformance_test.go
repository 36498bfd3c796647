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

package httpbackup_test

import (
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

// TestAnIDOfAnyWrongFormIsNotFound: a backup ID the service never gave
// (a typo, the s3 provider's <namespace>/<uid>/<name> form, a path that
// climbs, an empty one) names no backup, so Get and Content answer it as
// not found, and a Restore naming it fails BackupNotFound instead of
// retrying for ever.
func TestAnIDOfAnyWrongFormIsNotFound(t *testing.T) {
	_, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url)
	if _, err := c.Start(t.Context(), start("shop", "shop/prod", "exists")); err != nil {
		t.Fatal(err)
	}
	for _, id := range append(backuptest.WrongIDs(), "shop/bc-1/web", "bk-000002") {
		g := NewWithT(t)
		_, err := c.Get(t.Context(), id)
		g.Expect(err).To(MatchError(external.ErrNotFound), "Get(%q)", id)
		_, err = c.Content(t.Context(), id)
		g.Expect(err).To(MatchError(external.ErrNotFound), "Content(%q)", id)
	}
}

// TestConformance runs the backup.Client contract against the simulator.
func TestConformance(t *testing.T) {
	backuptest.RunConformance(t, backuptest.Harness{
		OwnerID: "cluster-a",
		New: func(t *testing.T, transport http.RoundTripper) backup.Client {
			_, url := simtest.Start(t, simulator.Options{Token: testToken})
			return newClient(t, url, func(c *external.Config) { c.Transport = transport })
		},
		// The client keeps no clock: only the service's can be off.
		Skewed: func(t *testing.T, server, _ time.Duration) (backup.Client, backup.Client) {
			_, url := simtest.Start(t, simulator.Options{Token: testToken, Clock: offsetClock(server)})
			return newClient(t, url), newClient(t, url)
		},
	})
}

// offsetClock is the real clock off by its value.
type offsetClock time.Duration

func (o offsetClock) Now() time.Time                  { return time.Now().Add(time.Duration(o)) }
func (o offsetClock) Since(t time.Time) time.Duration { return o.Now().Sub(t) }
