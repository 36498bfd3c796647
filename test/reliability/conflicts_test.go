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
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

const (
	// otherFinalizer is another controller's finalizer on the MyApp.
	otherFinalizer = "other.example.com/hold"
	otherLabel     = "other.example.com/team"
	otherNote      = "other.example.com/note"
)

// conflictCounting counts the conflicts (409) the controllers' writes get.
type conflictCounting struct {
	client.Client
	conflicts *atomic.Int64
}

func (c conflictCounting) count(err error) error {
	if apierrors.IsConflict(err) {
		c.conflicts.Add(1)
	}
	return err
}

func (c conflictCounting) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.count(c.Client.Update(ctx, obj, opts...))
}

func (c conflictCounting) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.count(c.Client.Patch(ctx, obj, patch, opts...))
}

func (c conflictCounting) Status() client.SubResourceWriter {
	return conflictCountingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type conflictCountingStatus struct {
	client.SubResourceWriter
	c conflictCounting
}

func (s conflictCountingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.count(s.SubResourceWriter.Update(ctx, obj, opts...))
}

func (s conflictCountingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.count(s.SubResourceWriter.Patch(ctx, obj, patch, opts...))
}

// writers are the others writing to one MyApp at the same time as the
// controllers, each counting its writes and the conflicts it got. What each
// wrote last is what must be there once the scenario settles.
type writers struct {
	s   *scenario
	key types.NamespacedName
	// c is the writers' own client, with no client-side rate limit: a
	// limiter that cannot grant a request before the run's deadline fails it
	// early, which would read as a writer's error rather than its stop.
	c   client.Client
	rng *rand.Rand
	rmu sync.Mutex

	mu        sync.Mutex
	writes    map[string]int
	conflicts map[string]int
	spec      appsv1alpha1.MyAppSpec // the spec written last
	label     string
	holding   bool // whether otherFinalizer is on
}

func (w *writers) intn(n int) int {
	w.rmu.Lock()
	defer w.rmu.Unlock()
	return w.rng.IntN(n)
}

func (w *writers) tally(ctx context.Context, who string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		// The writer was stopped mid-write.
	case err == nil:
		w.writes[who]++
	case apierrors.IsConflict(err):
		w.conflicts[who]++
	default:
		w.s.t.Errorf("%s: %v", who, err)
	}
}

// update is a read-modify-write with the resource version, as a user's
// kubectl edit or another controller's Update is.
func (w *writers) update(ctx context.Context, who string, change func(*appsv1alpha1.MyApp)) error {
	app := &appsv1alpha1.MyApp{}
	if err := w.c.Get(ctx, w.key, app); err != nil {
		return err
	}
	change(app)
	// Another writer's think time between its read and its write.
	time.Sleep(time.Duration(w.intn(30)) * time.Millisecond)
	err := w.c.Update(ctx, app)
	w.tally(ctx, who, err)
	return err
}

// finalizer toggles another controller's finalizer.
func (w *writers) finalizer(ctx context.Context) {
	err := w.update(ctx, "finalizer", func(app *appsv1alpha1.MyApp) {
		if !controllerutil.RemoveFinalizer(app, otherFinalizer) {
			controllerutil.AddFinalizer(app, otherFinalizer)
		}
	})
	if err == nil {
		w.mu.Lock()
		w.holding = !w.holding
		w.mu.Unlock()
	}
}

// spec edits the image, the replicas or the host, as a user would.
func (w *writers) specEdit(ctx context.Context) {
	images := []string{"nginx:1.27", "nginx:1.28", "nginx:1.29"}
	hosts := []string{"web." + w.s.ns + ".example.com", "www." + w.s.ns + ".example.com"}
	var spec appsv1alpha1.MyAppSpec
	err := w.update(ctx, "spec", func(app *appsv1alpha1.MyApp) {
		switch w.intn(3) {
		case 0:
			app.Spec.Image = images[w.intn(len(images))]
		case 1:
			app.Spec.Replicas = new(int32(1 + w.intn(3)))
		default:
			app.Spec.Host = hosts[w.intn(len(hosts))]
		}
		spec = *app.Spec.DeepCopy()
	})
	if err == nil {
		w.mu.Lock()
		w.spec = spec
		w.mu.Unlock()
	}
}

// staleStatus writes back a status read a moment ago, over whatever the
// controller wrote meanwhile: a merge patch of the whole status, no
// resource version, as a careless status writer would.
func (w *writers) staleStatus(ctx context.Context) {
	app := &appsv1alpha1.MyApp{}
	if err := w.c.Get(ctx, w.key, app); err != nil {
		w.tally(ctx, "status", err)
		return
	}
	time.Sleep(time.Duration(100+w.intn(200)) * time.Millisecond)
	body, err := json.Marshal(map[string]any{"status": app.Status})
	if err != nil {
		w.s.t.Error(err)
		return
	}
	w.tally(ctx, "status", w.c.Status().Patch(ctx, app, client.RawPatch(types.MergePatchType, body)))
}

// labels sets a label and an annotation of its own with a merge patch.
func (w *writers) labels(ctx context.Context) {
	v := fmt.Sprintf("v%d", w.intn(1000))
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q},"annotations":{%q:%q}}}`, otherLabel, v, otherNote, v)
	app := &appsv1alpha1.MyApp{}
	app.Name, app.Namespace = w.key.Name, w.key.Namespace
	err := w.c.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(patch)))
	if err == nil {
		w.mu.Lock()
		w.label = v
		w.mu.Unlock()
	}
	w.tally(ctx, "labels", err)
}

// run keeps every writer writing until stop is done. Each write runs to its
// end under ctx: a write cut off by stop could land on the server after its
// writer gave up on it, and the record of what was written last would be
// wrong.
func (w *writers) run(stop, ctx context.Context) {
	var wg sync.WaitGroup
	for _, write := range []func(context.Context){w.finalizer, w.specEdit, w.staleStatus, w.labels} {
		wg.Go(func() {
			for stop.Err() == nil {
				write(ctx)
				time.Sleep(time.Duration(20+w.intn(100)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
}

// survived checks that what the writers wrote last is there: the controllers
// kept the others' finalizer, labels and annotations and the user's spec.
func (w *writers) survived(ctx context.Context) error {
	app := &appsv1alpha1.MyApp{}
	if err := w.c.Get(ctx, w.key, app); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case controllerutil.ContainsFinalizer(app, otherFinalizer) != w.holding:
		return fmt.Errorf("finalizer %s: want on=%t, finalizers %v", otherFinalizer, w.holding, app.Finalizers)
	case w.label != "" && (app.Labels[otherLabel] != w.label || app.Annotations[otherNote] != w.label):
		return fmt.Errorf("label and annotation: want %s, have %q and %q", w.label, app.Labels[otherLabel], app.Annotations[otherNote])
	case app.Spec.Image != w.spec.Image || *app.Spec.Replicas != *w.spec.Replicas || app.Spec.Host != w.spec.Host:
		return fmt.Errorf("spec: want %s x%d on %s, have %s x%d on %s", w.spec.Image, *w.spec.Replicas, w.spec.Host,
			app.Spec.Image, *app.Spec.Replicas, app.Spec.Host)
	}
	for _, c := range app.Status.Conditions {
		if c.Status != metav1.ConditionTrue || c.ObservedGeneration != app.Generation {
			return fmt.Errorf("condition %s is %s at generation %d of %d: %s %s", c.Type, c.Status,
				c.ObservedGeneration, app.Generation, c.Reason, c.Message)
		}
	}
	return nil
}

// TestConcurrentWriters is family 7. While the controllers run, four other
// writers change the same MyApp for a while: another controller toggles its
// finalizer (an Update with the resource version), a user edits the image,
// replicas and host, someone writes back a status read a moment before, and
// someone merges in labels and annotations. The MyApp also carries the
// BackupConfig controller's final-backup hold. Then the writers stop; once
// the scenario settles the MyApp must be Ready for the last spec, with the
// others' finalizer, label and annotation as they left them and no condition
// other than True, and the oracle must count nothing. Deleting it afterwards
// must take the final backup and leave nothing behind.
func TestConcurrentWriters(t *testing.T) {
	d := time.Duration(scale(4, 60)) * time.Second
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	s := newScenario(t)
	var controllerConflicts atomic.Int64
	s.clientFor = func(mgr ctrl.Manager) client.Client {
		return conflictCounting{Client: mgr.GetClient(), conflicts: &controllerConflicts}
	}
	s.startManager(newCrashGate(0))
	app, _ := withBackedUpApp(s)

	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	c, err := client.New(cfg, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	w := &writers{
		s: s, c: c, key: client.ObjectKeyFromObject(app), rng: rand.New(rand.NewPCG(seed, 0)),
		writes: map[string]int{}, conflicts: map[string]int{}, spec: *app.Spec.DeepCopy(),
	}
	stop, cancel := context.WithTimeout(t.Context(), d)
	w.run(stop, t.Context())
	cancel()
	t.Logf("writes %v, conflicts %v, the controllers' conflicts %d", w.writes, w.conflicts, controllerConflicts.Load())

	s.waitFor("the others' writes survive and the MyApp is Ready", w.survived)
	r := s.oracle.settle(t)
	var tally tally
	tally.add(t, r, true)
	judge(t, r, "concurrent writers")

	// Deleting it ends the other controller's hold first, then the final
	// backup lets it go.
	if w.holding {
		update(s, app, func(a *appsv1alpha1.MyApp) { controllerutil.RemoveFinalizer(a, otherFinalizer) })
	}
	s.remove(app)
	s.waitFor("the MyApp is gone after its final backup", gone(app))
	r = s.oracle.settle(t)
	tally.add(t, r, true)
	judge(t, r, "deleting after concurrent writers")

	var writes, conflicts int
	for who := range w.writes {
		writes += w.writes[who]
	}
	for who := range w.conflicts {
		conflicts += w.conflicts[who]
	}
	t.Logf("RESULT family=7 case=concurrent-writers seconds=%d writes=%d writer_conflicts=%d controller_conflicts=%d %s",
		int(d.Seconds()), writes, conflicts, controllerConflicts.Load(), tally)
}
