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

// Command bench measures the MyApp operator at scale against a baseline
// reconciler written the way the common tutorial does (test/bench/baseline),
// each alone on the same local cluster (the harness's cluster tier) and DNS
// simulator: `make bench`. It is not part of `make test`.
//
// Every request the manager makes to the API server goes through a counting
// proxy that only the manager uses; every DNS request goes through a
// counting middleware in front of the simulator. docs/benchmarks.md explains
// the phases and holds the figures.
package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// The measured phases: the cluster floor, an operator's create, steady,
// restart, hand-over and unrelated-memory phases.

// floor measures the cluster alone: N bare Deployments with a Service each,
// created until Available, then deleted until gone.
func (b *bench) floor(ctx context.Context) (map[string]Phase, error) {
	out := map[string]Phase{}
	namespaces := b.namespaces("floor")
	if err := b.createNamespaces(ctx, namespaces); err != nil {
		return nil, err
	}
	logf("Floor: creating %d bare Deployments with Services", b.cfg.n)
	start := time.Now()
	err := b.parallel(b.cfg.n, func(i int) error {
		ns, name := namespaces[i%len(namespaces)], fmt.Sprintf("app-%04d", i)
		labels := map[string]string{appLabel: name}
		dep := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
				},
			},
		}
		if err := b.c.Create(ctx, dep); err != nil {
			return err
		}
		return b.c.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}},
		})
	})
	if err != nil {
		return nil, err
	}
	if err := b.poll(ctx, "floor Deployments Available", func() (bool, string, error) {
		var deps appsv1.DeploymentList
		if err := b.c.List(ctx, &deps); err != nil {
			return false, "", err
		}
		available := 0
		for _, d := range deps.Items {
			if strings.HasPrefix(d.Namespace, "floor-") && d.Status.AvailableReplicas >= 1 {
				available++
			}
		}
		return available >= b.cfg.n, fmt.Sprintf("%d/%d available", available, b.cfg.n), nil
	}); err != nil {
		return nil, err
	}
	out["converge"] = Phase{Seconds: time.Since(start).Seconds()}
	logf("Floor: converged in %.1fs; deleting", out["converge"].Seconds)

	start = time.Now()
	for _, ns := range namespaces {
		if err := b.c.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(ns),
			client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			return nil, err
		}
		var svcs corev1.ServiceList
		if err := b.c.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for i := range svcs.Items {
			if err := client.IgnoreNotFound(b.c.Delete(ctx, &svcs.Items[i])); err != nil {
				return nil, err
			}
		}
	}
	if err := b.poll(ctx, "floor cleanup", func() (bool, string, error) {
		left := 0
		for _, ns := range namespaces {
			var deps appsv1.DeploymentList
			var pods corev1.PodList
			if err := b.c.List(ctx, &deps, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			if err := b.c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
				return false, "", err
			}
			left += len(deps.Items) + len(pods.Items)
		}
		return left == 0, fmt.Sprintf("%d Deployments and pods left", left), nil
	}); err != nil {
		return nil, err
	}
	out["cleanup"] = Phase{Seconds: time.Since(start).Seconds()}
	logf("Floor: cleaned up in %.1fs", out["cleanup"].Seconds)
	return out, nil
}

// measure runs one operator through every phase.
func (b *bench) measure(ctx context.Context, name string) (OperatorResult, error) {
	res := OperatorResult{Name: name, Phases: map[string]Phase{}, Memory: map[string]Mem{}}
	m, err := b.startManager(name)
	if err != nil {
		return res, err
	}
	// m is replaced by the restart: stop whichever runs at the end.
	defer func() { m.stop() }()
	if err := m.waitMetrics(ctx); err != nil {
		return res, err
	}
	res.Memory["0 MyApps"] = m.memory(ctx)
	m.saveHeapProfile(b.dir, "0")

	namespaces := b.namespaces("bench-" + name)
	if err := b.createNamespaces(ctx, namespaces); err != nil {
		return res, err
	}
	logf("%s: creating %d MyApps", name, b.cfg.n)
	res.Phases["converge"], _, err = b.counted(func() error {
		if err := b.parallel(b.cfg.n, func(i int) error {
			ns := namespaces[i%len(namespaces)]
			app := &appsv1alpha1.MyApp{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%04d", i), Namespace: ns},
				Spec: appsv1alpha1.MyAppSpec{
					Replicas: ptr.To[int32](1),
					Image:    image,
					Host:     fmt.Sprintf("app-%04d.%s.bench.example.com", i, ns),
				},
			}
			return b.c.Create(ctx, app)
		}); err != nil {
			return err
		}
		return b.poll(ctx, name+" convergence", func() (bool, string, error) { return b.converged(ctx) })
	})
	if err != nil {
		return res, err
	}
	logf("%s: converged in %.1fs", name, res.Phases["converge"].Seconds)
	res.Memory[fmt.Sprintf("%d MyApps", b.cfg.n)] = m.memory(ctx)
	m.saveHeapProfile(b.dir, strconv.Itoa(b.cfg.n))

	if m, err = b.steadyAndRestart(ctx, name, &res, m); err != nil {
		return res, err
	}

	if b.cfg.phase("unrelated") && b.cfg.unrelated > 0 {
		// The restarted manager, measured before and after, so the
		// difference is the unrelated objects' alone.
		res.Memory[fmt.Sprintf("%d MyApps after restart", b.cfg.n)] = m.memory(ctx)
		mem, err := b.unrelatedMemory(ctx, name, m)
		if err != nil {
			return res, err
		}
		res.Memory[fmt.Sprintf("%d MyApps after restart + %d unrelated objects", b.cfg.n, b.cfg.unrelated)] = mem
	}

	if name == operatorName {
		if m, err = b.handoverPhases(ctx, &res, m, namespaces); err != nil {
			return res, err
		}
	}

	logf("%s: deleting the MyApps", name)
	res.Phases["cleanup"], _, err = b.counted(func() error {
		for _, ns := range namespaces {
			if err := b.deleteAllMyApps(ctx, ns); err != nil {
				return err
			}
		}
		return b.poll(ctx, name+" cleanup", func() (bool, string, error) {
			var apps appsv1alpha1.MyAppList
			if err := b.c.List(ctx, &apps); err != nil {
				return false, "", err
			}
			records := len(b.sim.Records())
			return len(apps.Items) == 0 && records == 0, fmt.Sprintf("%d MyApps, %d records left", len(apps.Items), records), nil
		})
	})
	if err != nil {
		return res, err
	}
	logf("%s: cleaned up in %.1fs", name, res.Phases["cleanup"].Seconds)
	return res, nil
}

// deleteAllMyApps deletes every MyApp of ns with one collection delete. At
// 10,000 MyApps a namespace holds 2,500, and marking them all deleted can
// outlast the API server's one-minute request timeout, which ends the
// request with a stream error while the server goes on deleting; the
// delete is then asked again (what is already marked is skipped) until
// one returns.
func (b *bench) deleteAllMyApps(ctx context.Context, ns string) error {
	for attempt := 1; ; attempt++ {
		err := b.c.DeleteAllOf(ctx, &appsv1alpha1.MyApp{}, client.InNamespace(ns))
		if err == nil || ctx.Err() != nil || attempt == 10 {
			return err
		}
		logf("  deleting the MyApps of %s: %v; asking again", ns, err)
	}
}

// steadyAndRestart runs the steady state and the restart phases (those in
// --phases) and returns the manager running after them.
func (b *bench) steadyAndRestart(ctx context.Context, name string, res *OperatorResult,
	m *managerProcess) (*managerProcess, error) {
	if b.cfg.phase(phaseSteady) {
		logf("%s: steady state for %s", name, b.cfg.steady)
		res.Phases[phaseSteady], _, _ = b.counted(func() error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(b.cfg.steady):
				return nil
			}
		})
	}

	if b.cfg.phase(phaseRestart) {
		logf("%s: restart", name)
		m.stop()
		var times []time.Time
		var drained time.Duration
		var err error
		res.Phases[phaseRestart], times, err = b.counted(func() error {
			start := time.Now()
			if m, err = b.startManager(name); err != nil {
				return err
			}
			drained = m.waitDrained(ctx, b.cfg.n, b.cfg.restartWindow)
			if d := b.cfg.restartWindow - time.Since(start); d > 0 {
				time.Sleep(d)
			}
			return nil
		})
		if err != nil {
			return m, err
		}
		peak, mean := rates(times, b.cfg.restartWindow)
		res.Phases[phaseRestart] = withExtra(res.Phases[phaseRestart], map[string]float64{
			"drainSeconds": drained.Seconds(), "dnsPeakPerSecond": peak, "dnsMeanPerSecond": mean,
		})
	}
	return m, nil
}

// handoverPhases runs the operator's priority and failover phases (those in
// --phases) and returns the manager running after them.
func (b *bench) handoverPhases(ctx context.Context, res *OperatorResult, m *managerProcess,
	namespaces []string) (*managerProcess, error) {
	if b.cfg.phase("priority") && b.cfg.priorityEdits > 0 {
		// Spread the edits over a drain as long as the restart's, or a
		// second when the restart phase did not run.
		spread := max(time.Second, time.Duration(res.Phases[phaseRestart].Extra["drainSeconds"]*float64(time.Second)))
		var err error
		res.Priority, m, err = b.priorityPhase(ctx, m, namespaces, spread)
		if err != nil {
			return m, fmt.Errorf("priority phase: %w", err)
		}
	}

	if b.cfg.phase("failover") && b.cfg.failoverKills > 0 {
		m.stop()
		var err error
		if res.Failover, err = b.failoverPhase(ctx, namespaces); err != nil {
			return m, fmt.Errorf("failover phase: %w", err)
		}
		// A single manager again for the cleanup, as in every other run,
		// its restart drained before the cleanup is counted.
		if m, err = b.startManager(operatorName); err != nil {
			return m, err
		}
		if err := m.waitMetrics(ctx); err != nil {
			return m, err
		}
		m.waitDrained(ctx, b.cfg.n, b.cfg.timeout)
	}
	return m, nil
}

func withExtra(p Phase, extra map[string]float64) Phase {
	p.Extra = extra
	return p
}

// converged is true when every MyApp is Ready and every record ACTIVE in
// the DNS service, whatever the operator writes in its status.
func (b *bench) converged(ctx context.Context) (bool, string, error) {
	var apps appsv1alpha1.MyAppList
	if err := b.c.List(ctx, &apps); err != nil {
		return false, "", err
	}
	ready := 0
	for i := range apps.Items {
		if meta.IsStatusConditionTrue(apps.Items[i].Status.Conditions, appsv1alpha1.ReadyCondition) {
			ready++
		}
	}
	active := 0
	for _, r := range b.sim.Records() {
		if r.State == simulator.StateActive {
			active++
		}
	}
	return ready >= b.cfg.n && active >= b.cfg.n, fmt.Sprintf("%d Ready, %d records ACTIVE", ready, active), nil
}

// unrelatedMemory creates Deployments, Services and Ingresses the operator
// has nothing to do with, measures the manager, and deletes them again.
func (b *bench) unrelatedMemory(ctx context.Context, name string, m *managerProcess) (Mem, error) {
	namespaces := b.namespaces("unrelated-" + name)
	if err := b.createNamespaces(ctx, namespaces); err != nil {
		return Mem{}, err
	}
	logf("%s: creating %d unrelated objects", name, b.cfg.unrelated)
	err := b.parallel(b.cfg.unrelated, func(i int) error {
		ns, objName := namespaces[i%len(namespaces)], fmt.Sprintf("other-%05d", i)
		labels := map[string]string{appLabel: objName}
		var obj client.Object
		switch i % 3 {
		case 0:
			obj = &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: ns, Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](0),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
					},
				},
			}
		case 1:
			obj = &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: ns, Labels: labels},
				Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}},
			}
		default:
			obj = &networkingv1.Ingress{
				ObjectMeta: metav1.ObjectMeta{Name: objName, Namespace: ns, Labels: labels},
				Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: objName, Port: networkingv1.ServiceBackendPort{Number: 80}},
				}},
			}
		}
		return b.c.Create(ctx, obj)
	})
	if err != nil {
		return Mem{}, err
	}
	mem := m.memory(ctx)
	logf("%s: deleting the unrelated objects", name)
	for _, ns := range namespaces {
		if err := b.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return mem, err
		}
	}
	return mem, b.poll(ctx, "unrelated namespaces gone", func() (bool, string, error) {
		left := 0
		for _, ns := range namespaces {
			err := b.c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
			if err == nil {
				left++
			} else if !apierrors.IsNotFound(err) {
				return false, "", err
			}
		}
		return left == 0, fmt.Sprintf("%d namespaces left", left), nil
	})
}
