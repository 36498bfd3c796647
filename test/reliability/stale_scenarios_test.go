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
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// staleScenario is a lifecycle split at the event a stale read reaches back
// across: before brings it to that moment and names the object whose reads
// go stale, after makes the event happen and finishes the lifecycle.
type staleScenario struct {
	name   string
	sample bool // part of the sample in make test
	before func(s *scenario) staleTarget
	after  func(s *scenario)
}

func (s *scenario) target(kind, name string, event staleEvent) staleTarget {
	return staleTarget{kind: kind, key: types.NamespacedName{Namespace: s.ns, Name: name}, event: event}
}

// withBackedUpApp creates MyApp web and a BackupConfig with a final backup
// of it, and waits for the baseline backup: the MyApp then carries both
// controllers' finalizers.
func withBackedUpApp(s *scenario) (*appsv1alpha1.MyApp, *backupv1alpha1.BackupConfig) {
	app := s.newMyApp("web")
	s.create(app)
	s.waitFor("the MyApp becomes Ready", s.readyAt(app))
	bc := s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyDelete)
	s.create(bc)
	s.waitFor("the baseline backup succeeds", backedUp(bc, app))
	return app, bc
}

func readyApp(s *scenario, name string) *appsv1alpha1.MyApp {
	app := s.newMyApp(name)
	s.create(app)
	s.waitFor("the MyApp "+name+" becomes Ready", s.readyAt(app))
	return app
}

var staleScenarios = func() []staleScenario {
	// Objects a scenario's before hands to its after.
	var app, other *appsv1alpha1.MyApp
	var bc *backupv1alpha1.BackupConfig
	return []staleScenario{{
		// The controllers see the old incarnation of a MyApp deleted and
		// created again under its name, as a cache that missed the delete
		// and the create would show it.
		name:   "recreate",
		sample: true,
		before: func(s *scenario) staleTarget {
			app, bc = withBackedUpApp(s)
			return s.target("MyApp", "web", newIncarnation)
		},
		after: func(s *scenario) {
			s.remove(app)
			s.waitFor("the MyApp is gone after its final backup", gone(app))
			app = s.newMyApp("web")
			s.create(app)
			s.waitFor("the new MyApp becomes Ready", s.readyAt(app))
			s.waitFor("the new MyApp is backed up", backedUp(bc, app))
		},
	}, {
		// The controllers see a deleted MyApp as not deleted yet.
		name: "delete-begins",
		before: func(s *scenario) staleTarget {
			app, bc = withBackedUpApp(s)
			return s.target("MyApp", "web", firstChange(deletionBegan))
		},
		after: func(s *scenario) {
			s.remove(app)
			s.waitFor("the MyApp is gone after its final backup", gone(app))
		},
	}, {
		// The MyApp controller sees its MyApp with the status before its own
		// last status write.
		name:   "own-status",
		sample: true,
		before: func(s *scenario) staleTarget {
			app = readyApp(s, "web")
			return s.target("MyApp", "web", firstChange(statusChanged))
		},
		after: func(s *scenario) {
			update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = "nginx:1.28" })
			s.waitFor("the MyApp is Ready with the new image", s.readyAt(app))
		},
	}, {
		// Both controllers see the MyApp without the final-backup hold the
		// BackupConfig controller has just put on it.
		name:   "hold-added",
		sample: true,
		before: func(s *scenario) staleTarget {
			app = readyApp(s, "web")
			return s.target("MyApp", "web", firstChange(finalizersChanged))
		},
		after: func(s *scenario) {
			bc = s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyDelete)
			s.create(bc)
			s.waitFor("the baseline backup succeeds", backedUp(bc, app))
			s.remove(app)
			s.waitFor("the MyApp is gone after its final backup", gone(app))
		},
	}, {
		// Both controllers see the deleting MyApp with the finalizers it had
		// before the first one was removed.
		name: "hold-released",
		before: func(s *scenario) staleTarget {
			app, bc = withBackedUpApp(s)
			s.remove(app)
			return s.target("MyApp", "web", firstChange(finalizersChanged))
		},
		after: func(s *scenario) {
			s.waitFor("the MyApp is gone after its final backup", gone(app))
		},
	}, {
		// The BackupConfig controller sees the BackupConfig with the appRef
		// it had before the user moved it to another MyApp.
		name:   "appref",
		sample: true,
		before: func(s *scenario) staleTarget {
			app, bc = withBackedUpApp(s)
			other = readyApp(s, "api")
			return s.target("BackupConfig", "web-backup", firstChange(appRefChanged))
		},
		after: func(s *scenario) {
			update(s, bc, func(b *backupv1alpha1.BackupConfig) { b.Spec.AppRef.Name = "api" })
			s.waitFor("the other MyApp is backed up", backedUp(bc, other))
			s.remove(app)
			s.waitFor("the first MyApp, no longer referenced, is gone", gone(app))
			s.remove(other)
			s.waitFor("the other MyApp is gone after its final backup", gone(other))
		},
	}, {
		// A MyApp waiting for the host another MyApp holds sees the holder
		// as it was before its deletion began.
		name: "host-holder",
		before: func(s *scenario) staleTarget {
			app = readyApp(s, "web")
			other = s.newMyApp("api")
			other.Spec.Host = app.Spec.Host
			s.create(other)
			s.waitFor("the second MyApp waits for the host", dnsReason(other, appsv1alpha1.HostConflictReason))
			return s.target("MyApp", "web", firstChange(deletionBegan))
		},
		after: func(s *scenario) {
			s.remove(app)
			s.waitFor("the holder is gone", gone(app))
			s.waitFor("the second MyApp takes the host over", s.readyAt(other))
		},
	}, {
		// The MyApp controller sees its Deployment as it was before its own
		// last write to it.
		name: "child-deployment",
		before: func(s *scenario) staleTarget {
			app = readyApp(s, "web")
			return s.target("Deployment", "web", firstChange(anyChange))
		},
		after: func(s *scenario) {
			update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = "nginx:1.28" })
			s.waitFor("the MyApp is Ready with the new image", s.readyAt(app))
		},
	}, {
		name: "child-service",
		before: func(s *scenario) staleTarget {
			app = readyApp(s, "web")
			return s.target("Service", "web", firstChange(anyChange))
		},
		after: func(s *scenario) {
			update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.ServicePort = 8080 })
			s.waitFor("the MyApp is Ready on the new port", s.readyAt(app))
		},
	}, {
		name: "child-ingress",
		before: func(s *scenario) staleTarget {
			app = readyApp(s, "web")
			return s.target("Ingress", "web", firstChange(anyChange))
		},
		after: func(s *scenario) {
			update(s, app, func(a *appsv1alpha1.MyApp) { a.Spec.Host = "moved." + s.ns + ".example.com" })
			s.waitFor("the MyApp is Ready on the new host", s.readyAt(app))
		},
	}}
}()

// dnsReason holds once app's DNSReady condition has reason.
func dnsReason(app *appsv1alpha1.MyApp, reason string) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition); c == nil || c.Reason != reason {
			return fmt.Errorf("DNSReady is %v, not %s", c, reason)
		}
		return nil
	}
}

// runStale runs sc once with reads from site (every site when empty) served
// stale, and returns the oracle's report and the wrapper.
func runStale(t *testing.T, sc staleScenario, site string) (Report, *staleReads) {
	s := newScenario(t)
	w := newStaleReads(site)
	s.clientFor = w.install
	s.startManager(newCrashGate(0))
	w.arm(sc.before(s))
	sc.after(s)
	return s.oracle.settle(t), w
}

// TestStaleReads is family 2. Each scenario runs first with every cache read
// of its target served stale after its event, which also lists the call
// sites that read the target; the full campaign then runs it once per call
// site, with only that site's reads stale.
func TestStaleReads(t *testing.T) {
	reads := map[string]bool{}
	for _, sc := range staleScenarios {
		if !full() && !sc.sample {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			var tally tally
			var sites []string
			point := func(t *testing.T, site string) {
				r, w := runStale(t, sc, site)
				tally.add(t, r, w.Served() > 0)
				for _, s := range w.AllSites() {
					reads[s] = true
				}
				if site == "" {
					sites = w.Sites()
				}
				t.Logf("stale reads served: %d; sites that read the target after the event: %s",
					w.Served(), strings.Join(w.Sites(), "; "))
				judge(t, r, fmt.Sprintf("stale reads of %s from %s", sc.name, siteName(site)))
			}
			t.Run("every-site", func(t *testing.T) { point(t, "") })
			if full() {
				for _, site := range sites {
					t.Run(site, func(t *testing.T) { point(t, site) })
				}
			}
			t.Logf("RESULT family=2 scenario=%s sites=%d %s", sc.name, len(sites), tally)
		})
	}
	all := slices.Sorted(maps.Keys(reads))
	t.Logf("cache reads the controllers made (%d call sites):\n%s", len(all), strings.Join(all, "\n"))
}

func siteName(site string) string {
	if site == "" {
		return "every site"
	}
	return site
}
