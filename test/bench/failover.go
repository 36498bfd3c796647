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

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/apiproxy"
)

const (
	// leaseNamespace holds the failover phase's leader-election Lease.
	leaseNamespace = "bench-leader-election"
	// leaseName is the manager's default --leader-election-id.
	leaseName = "myapp-operator.myapp.dev"
	// notReached marks a time the phase timeout ran out before.
	notReached = -1
)

// PriorityRun is the priority phase with the priority queue on or off: a
// restart of the single manager, edits spread over its drain.
type PriorityRun struct {
	PriorityQueue bool `json:"priorityQueue"`
	// DrainSeconds is the time from the restart until the work queue had
	// taken in every MyApp and was empty with no worker busy.
	DrainSeconds float64 `json:"drainSeconds"`
	// QueueStartSeconds is when the work queue took in its first MyApp,
	// after the restart: the first edit is made then.
	QueueStartSeconds float64 `json:"queueStartSeconds"`
	// EditAfterSeconds is when each edit was made, after the restart.
	EditAfterSeconds []float64 `json:"editAfterSeconds"`
	// EditSeconds is how long each edit took to reach its Deployment, -1
	// if it did not within the phase timeout.
	EditSeconds []float64 `json:"editSeconds"`
}

// FailoverRun is the failover phase with the warm standby on or off.
type FailoverRun struct {
	WarmStandby bool `json:"warmStandby"`
	// CreateSeconds are MyApps created at once with a healthy leader, each
	// until it was Ready with its record ACTIVE: the normal creation time.
	CreateSeconds []float64 `json:"createSeconds"`
	// Kills are the SIGKILLed leaders, Graceful the SIGTERMed one.
	Kills    []Handover `json:"kills"`
	Graceful Handover   `json:"graceful"`
}

// Handover is one change of leader. Every time is counted from the signal
// sent to the leader; -1 is not reached within the phase timeout.
type Handover struct {
	// LeaseSeconds: until the Lease's holderIdentity named the standby.
	LeaseSeconds float64 `json:"leaseSeconds"`
	// FirstReconcileSeconds: until the new leader's
	// controller_runtime_reconcile_total of the MyApp controller rose.
	FirstReconcileSeconds float64 `json:"firstReconcileSeconds"`
	// FirstWriteSeconds: until the new leader's first write through its
	// proxy, the Lease and events aside.
	FirstWriteSeconds float64 `json:"firstWriteSeconds"`
	// CreatedReadySeconds: until a MyApp created at the signal was Ready
	// with its record ACTIVE (kills only).
	CreatedReadySeconds float64 `json:"createdReadySeconds,omitempty"`
	// EditSeconds: until an image edit made at the signal reached the
	// MyApp's Deployment.
	EditSeconds float64 `json:"editSeconds"`
	// StandbyAPI is what the new leader asked the API server while it was
	// the standby, from its start to the signal.
	StandbyAPI map[string]int `json:"standbyApi,omitempty"`
	// LeaderAPI is what it asked from the signal until every time above was
	// measured.
	LeaderAPI map[string]int `json:"leaderApi,omitempty"`
}

// editTarget names the MyApp the next edit changes: consecutive edits are
// spread over the MyApps (and so over the initial list's order).
func (b *bench) editTarget(namespaces []string) client.ObjectKey {
	b.edits++
	i := (b.edits*7919 + 13) % b.cfg.n
	return client.ObjectKey{Namespace: namespaces[i%len(namespaces)], Name: fmt.Sprintf("app-%04d", i)}
}

// edit sets a new image on a MyApp and returns the image.
func (b *bench) edit(ctx context.Context, key client.ObjectKey, tag string) (string, error) {
	img := image + "-" + tag
	patch := fmt.Appendf(nil, `{"spec":{"image":%q}}`, img)
	app := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	return img, b.c.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
}

// waitUntil calls cond every interval until it holds and returns when it
// did, or false once the phase timeout ran out.
func (b *bench) waitUntil(ctx context.Context, every time.Duration, cond func() bool) (time.Time, bool) {
	deadline := time.Now().Add(b.cfg.timeout)
	for {
		if cond() {
			return time.Now(), true
		}
		if time.Now().After(deadline) {
			return time.Time{}, false
		}
		select {
		case <-ctx.Done():
			return time.Time{}, false
		case <-time.After(every):
		}
	}
}

// secondsSince is at - t0 in seconds, or notReached.
func secondsSince(t0, at time.Time, ok bool) float64 {
	if !ok {
		return notReached
	}
	return at.Sub(t0).Seconds()
}

// waitImage waits until the MyApp's Deployment runs img.
func (b *bench) waitImage(ctx context.Context, key client.ObjectKey, img string) (time.Time, bool) {
	return b.waitUntil(ctx, 100*time.Millisecond, func() bool {
		var dep appsv1.Deployment
		if err := b.c.Get(ctx, key, &dep); err != nil {
			return false
		}
		c := dep.Spec.Template.Spec.Containers
		return len(c) > 0 && c[0].Image == img
	})
}

// createMyApp creates a MyApp like the converged ones and returns its host.
func (b *bench) createMyApp(ctx context.Context, key client.ObjectKey) (string, error) {
	host := fmt.Sprintf("%s.%s.bench.example.com", key.Name, key.Namespace)
	return host, b.c.Create(ctx, &appsv1alpha1.MyApp{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Spec:       appsv1alpha1.MyAppSpec{Replicas: ptr.To[int32](1), Image: image, Host: host},
	})
}

// waitServed waits until the MyApp is Ready and its record ACTIVE in the
// simulator.
func (b *bench) waitServed(ctx context.Context, key client.ObjectKey, host string) (time.Time, bool) {
	return b.waitUntil(ctx, 200*time.Millisecond, func() bool {
		var app appsv1alpha1.MyApp
		if err := b.c.Get(ctx, key, &app); err != nil ||
			!meta.IsStatusConditionTrue(app.Status.Conditions, appsv1alpha1.ReadyCondition) {
			return false
		}
		for _, r := range b.sim.Records() {
			if strings.TrimSuffix(r.Name, ".") == host {
				return r.State == simulator.StateActive
			}
		}
		return false
	})
}

// priorityPhase restarts the single manager with the priority queue off,
// then on (the default, so the manager left running is the usual one),
// and each time edits MyApps at even steps over spread (the restart phase's
// drain) from when the work queue took in its first MyApp. It returns
// the manager running at its end, whatever happened.
func (b *bench) priorityPhase(ctx context.Context, m *managerProcess, namespaces []string,
	spread time.Duration) ([]PriorityRun, *managerProcess, error) {
	var runs []PriorityRun
	edits := b.cfg.priorityEdits
	for _, on := range []bool{false, true} {
		logf("operator: priority phase: restart with --priority-queue=%t, %d edits over %s", on, edits, spread)
		m.stop()
		start := time.Now()
		next, err := b.startManager(operatorName, fmt.Sprintf("--priority-queue=%t", on))
		if err != nil {
			return runs, m, err
		}
		m = next
		drained := make(chan time.Duration, 1)
		go func() { drained <- m.waitDrained(ctx, b.cfg.n, b.cfg.timeout) }()
		run := PriorityRun{PriorityQueue: on, EditAfterSeconds: make([]float64, edits), EditSeconds: make([]float64, edits)}
		// The edits start when the initial list starts to fill the work
		// queue: an edit made before the cache synced arrives as part of
		// the initial list, whatever the queue.
		first, ok := b.waitUntil(ctx, 50*time.Millisecond, func() bool {
			all, err := m.metrics()
			return err == nil && metric(all, "workqueue_adds_total", `name="myapp"`) > 0
		})
		if !ok {
			return runs, m, fmt.Errorf("the restarted manager's work queue took in nothing within %s", b.cfg.timeout)
		}
		run.QueueStartSeconds = first.Sub(start).Seconds()
		var wg sync.WaitGroup
		for i := range edits {
			if d := time.Until(first.Add(time.Duration(i) * spread / time.Duration(edits))); d > 0 {
				time.Sleep(d)
			}
			key := b.editTarget(namespaces)
			img, err := b.edit(ctx, key, fmt.Sprintf("pq-%t-%d", on, i))
			if err != nil {
				wg.Wait()
				return runs, m, fmt.Errorf("editing %s: %w", key, err)
			}
			made := time.Now()
			run.EditAfterSeconds[i] = made.Sub(start).Seconds()
			wg.Go(func() {
				at, ok := b.waitImage(ctx, key, img)
				run.EditSeconds[i] = secondsSince(made, at, ok)
			})
		}
		wg.Wait()
		run.DrainSeconds = (<-drained).Seconds()
		logf("operator: priority queue %t: edits reached their Deployments after %s s; drained in %.1f s",
			on, floats(run.EditSeconds), run.DrainSeconds)
		runs = append(runs, run)
	}
	return runs, m, nil
}

// foManager is a manager of the failover phase with its own counting proxy,
// so the figures say which manager made a request.
type foManager struct {
	*managerProcess
	proxy *apiproxy.Proxy
	id    string // its Lease holderIdentity, once it led
}

func (f *foManager) close() {
	f.stop()
	_ = f.proxy.Close()
}

// reconciles is the manager's count of MyApp reconciles so far.
func (f *foManager) reconciles() float64 {
	all, err := f.metrics()
	if err != nil {
		return 0
	}
	return metric(all, "controller_runtime_reconcile_total", `controller="myapp"`)
}

// failoverPhase runs the failover measurements with the warm standby on,
// then off. The single manager is stopped before it.
func (b *bench) failoverPhase(ctx context.Context, namespaces []string) ([]FailoverRun, error) {
	err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: leaseNamespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	lw, err := b.watchLease(ctx)
	if err != nil {
		return nil, err
	}
	defer lw.stop()
	var runs []FailoverRun
	for _, warm := range []bool{true, false} {
		run, err := b.failover(ctx, lw, namespaces, warm)
		runs = append(runs, run)
		if err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// failover is the failover phase with one setting: a leader and a
// standby, the leader SIGKILLed K times (a new standby started after each),
// then SIGTERMed once.
func (b *bench) failover(ctx context.Context, lw *leaseWatcher, namespaces []string, warm bool) (FailoverRun, error) {
	run := FailoverRun{WarmStandby: warm}
	setting := "cold"
	if warm {
		setting = "warm"
	}
	var all []*foManager
	defer func() {
		// Whatever still runs (after the SIGTERM, the new leader alone)
		// stops and releases the lease for the next setting's leader.
		for i := len(all) - 1; i >= 0; i-- {
			all[i].close()
		}
	}()
	start := func() (*foManager, error) {
		proxy, err := apiproxy.Start(b.cp.Config)
		if err != nil {
			return nil, err
		}
		seq := len(all) + 1
		kubeconfig := filepath.Join(b.dir, fmt.Sprintf("kubeconfig-failover-%s-%d", setting, seq))
		if err := writeKubeconfig(kubeconfig, proxy.URL); err != nil {
			_ = proxy.Close()
			return nil, err
		}
		args := append([]string{"--leader-elect", "--leader-election-namespace=" + leaseNamespace,
			fmt.Sprintf("--warm-standby=%t", warm)}, b.cfg.failoverArgs...)
		m, err := b.startManagerVia(operatorName, kubeconfig, fmt.Sprintf("operator-failover-%s-%d", setting, seq), args...)
		if err != nil {
			_ = proxy.Close()
			return nil, err
		}
		f := &foManager{managerProcess: m, proxy: proxy}
		all = append(all, f)
		return f, m.waitMetrics(ctx)
	}

	logf("operator: failover, warm standby %t: a leader", warm)
	since := time.Now()
	leader, err := start()
	if err != nil {
		return run, err
	}
	id, _, ok := lw.waitHolder(ctx, since, "", b.cfg.timeout)
	if !ok {
		return run, fmt.Errorf("no manager took the lease within %s", b.cfg.timeout)
	}
	leader.id = id
	leader.waitDrained(ctx, b.cfg.n, b.cfg.timeout)
	standby, err := start()
	if err != nil {
		return run, err
	}
	b.waitStandby(ctx, standby, warm)

	// The normal creation time, with a healthy leader: three MyApps at once.
	var created []client.ObjectKey
	run.CreateSeconds = make([]float64, 3)
	var wg sync.WaitGroup
	for i := range run.CreateSeconds {
		key := client.ObjectKey{Namespace: namespaces[0], Name: fmt.Sprintf("failover-%s-ref-%d", setting, i)}
		t0 := time.Now()
		host, err := b.createMyApp(ctx, key)
		if err != nil {
			wg.Wait()
			return run, err
		}
		created = append(created, key)
		wg.Go(func() {
			at, ok := b.waitServed(ctx, key, host)
			run.CreateSeconds[i] = secondsSince(t0, at, ok)
		})
	}
	wg.Wait()
	logf("operator: failover, warm standby %t: MyApps created with a healthy leader served after %s s",
		warm, floats(run.CreateSeconds))

	for k := 1; k <= b.cfg.failoverKills; k++ {
		key := client.ObjectKey{Namespace: namespaces[0], Name: fmt.Sprintf("failover-%s-%d", setting, k)}
		created = append(created, key)
		h, id, err := b.handover(ctx, lw, leader, standby, namespaces, fmt.Sprintf("fo-%s-%d", setting, k), &key)
		run.Kills = append(run.Kills, h)
		if err != nil {
			return run, err
		}
		logf("operator: failover, warm standby %t, kill %d: lease %.1fs, first reconcile %.1fs, first write %.1fs, "+
			"created MyApp served %.1fs, edit at its Deployment %.1fs", warm, k, h.LeaseSeconds,
			h.FirstReconcileSeconds, h.FirstWriteSeconds, h.CreatedReadySeconds, h.EditSeconds)
		leader = standby
		leader.id = id
		if standby, err = start(); err != nil {
			return run, err
		}
		b.waitStandby(ctx, standby, warm)
	}

	h, _, err := b.handover(ctx, lw, leader, standby, namespaces, fmt.Sprintf("fo-%s-term", setting), nil)
	run.Graceful = h
	if err != nil {
		return run, err
	}
	logf("operator: failover, warm standby %t, SIGTERM: lease %.1fs, first reconcile %.1fs, first write %.1fs, "+
		"edit at its Deployment %.1fs", warm, h.LeaseSeconds, h.FirstReconcileSeconds, h.FirstWriteSeconds, h.EditSeconds)

	// The MyApps this setting created go, with their records, while the
	// new leader runs, so the cleanup phase finds only the N MyApps.
	for _, key := range created {
		app := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
		if err := client.IgnoreNotFound(b.c.Delete(ctx, app)); err != nil {
			return run, err
		}
	}
	if _, ok := b.waitUntil(ctx, 500*time.Millisecond, func() bool {
		for _, key := range created {
			if err := b.c.Get(ctx, key, &appsv1alpha1.MyApp{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return len(b.sim.Records()) <= b.cfg.n
	}); !ok {
		return run, fmt.Errorf("the failover phase's MyApps were not deleted within %s", b.cfg.timeout)
	}
	return run, nil
}

// waitStandby waits until a new standby is ready to take over: a warm one
// until its MyApp work queue took in every MyApp (its watches started and
// their caches synced), then, warm or cold, 2 s plus 1 s per 2,000 MyApps.
func (b *bench) waitStandby(ctx context.Context, f *foManager, warm bool) {
	if warm {
		if _, ok := b.waitUntil(ctx, 200*time.Millisecond, func() bool {
			all, err := f.metrics()
			return err == nil && metric(all, "workqueue_adds_total", `name="myapp"`) >= float64(b.cfg.n)
		}); !ok {
			logf("operator: the warm standby's work queue did not take in %d MyApps within %s", b.cfg.n, b.cfg.timeout)
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(2*time.Second + time.Duration(b.cfg.n)*time.Second/2000):
	}
}

// handover stops the leader (SIGKILL when created names a MyApp to create
// at the kill, SIGTERM otherwise), edits a MyApp at the same moment, and
// measures the standby's takeover. It returns the new leader's identity.
func (b *bench) handover(ctx context.Context, lw *leaseWatcher, leader, standby *foManager, namespaces []string,
	tag string, created *client.ObjectKey) (Handover, string, error) {
	var h Handover
	standbyAPI, _ := standby.proxy.Reset()
	h.StandbyAPI = apiMap(standbyAPI)
	before := standby.reconciles()
	editKey := b.editTarget(namespaces)

	t0 := time.Now()
	if created != nil {
		leader.kill()
	} else {
		_ = leader.cmd.Process.Signal(syscall.SIGTERM)
	}
	host := ""
	if created != nil {
		var err error
		if host, err = b.createMyApp(ctx, *created); err != nil {
			return h, "", err
		}
	}
	img, err := b.edit(ctx, editKey, tag)
	if err != nil {
		return h, "", err
	}

	var wg sync.WaitGroup
	var id string
	wg.Go(func() {
		var at time.Time
		var ok bool
		id, at, ok = lw.waitHolder(ctx, t0, leader.id, b.cfg.timeout)
		h.LeaseSeconds = secondsSince(t0, at, ok)
	})
	wg.Go(func() {
		at, ok := b.waitUntil(ctx, 100*time.Millisecond, func() bool { return standby.reconciles() > before })
		h.FirstReconcileSeconds = secondsSince(t0, at, ok)
	})
	if created != nil {
		wg.Go(func() {
			at, ok := b.waitServed(ctx, *created, host)
			h.CreatedReadySeconds = secondsSince(t0, at, ok)
		})
	}
	wg.Go(func() {
		at, ok := b.waitImage(ctx, editKey, img)
		h.EditSeconds = secondsSince(t0, at, ok)
	})
	wg.Wait()
	first := standby.proxy.FirstWriteAt()
	h.FirstWriteSeconds = secondsSince(t0, first, !first.IsZero())
	leaderAPI, _ := standby.proxy.Reset()
	h.LeaderAPI = apiMap(leaderAPI)
	leader.close()
	if id == "" {
		return h, "", fmt.Errorf("the standby did not take the lease within %s", b.cfg.timeout)
	}
	return h, id, nil
}

func apiMap(counts map[apiproxy.Request]int) map[string]int {
	out := make(map[string]int, len(counts))
	for k, v := range counts {
		out[k.String()] = v
	}
	return out
}

// leaseWatcher watches the failover phase's Lease and keeps every change of
// its holderIdentity with the time it was seen.
type leaseWatcher struct {
	mu      sync.Mutex
	changes []holderChange
	cancel  context.CancelFunc
}

type holderChange struct {
	holder string
	at     time.Time
}

func (b *bench) watchLease(ctx context.Context) (*leaseWatcher, error) {
	wc, err := client.NewWithWatch(b.cp.Config, client.Options{Scheme: b.scheme})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	lw := &leaseWatcher{cancel: cancel}
	go func() {
		for ctx.Err() == nil {
			w, err := wc.Watch(ctx, &coordinationv1.LeaseList{}, client.InNamespace(leaseNamespace),
				client.MatchingFields{"metadata.name": leaseName})
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				lease, ok := ev.Object.(*coordinationv1.Lease)
				if !ok {
					continue
				}
				holder := ptr.Deref(lease.Spec.HolderIdentity, "")
				if ev.Type == watch.Deleted {
					holder = ""
				}
				lw.observe(holder, time.Now())
			}
			w.Stop()
		}
	}()
	return lw, nil
}

func (lw *leaseWatcher) stop() { lw.cancel() }

func (lw *leaseWatcher) observe(holder string, at time.Time) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if n := len(lw.changes); n == 0 || lw.changes[n-1].holder != holder {
		lw.changes = append(lw.changes, holderChange{holder: holder, at: at})
	}
}

// waitHolder waits for the first holder seen since then that is neither
// empty (a released lease) nor not, and returns it and when it was seen.
func (lw *leaseWatcher) waitHolder(ctx context.Context, since time.Time, not string,
	timeout time.Duration) (string, time.Time, bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		lw.mu.Lock()
		for _, c := range lw.changes {
			if !c.at.Before(since) && c.holder != "" && c.holder != not {
				lw.mu.Unlock()
				return c.holder, c.at, true
			}
		}
		lw.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	return "", time.Time{}, false
}

// floats formats times for the log.
func floats(v []float64) string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = fmt.Sprintf("%.1f", f)
	}
	return strings.Join(parts, ", ")
}
