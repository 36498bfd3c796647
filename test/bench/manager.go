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
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/test/bench/baseline"
)

// baselineCommand makes the bench binary run the baseline manager, so the
// baseline is a process of its own like the operator.
const baselineCommand = "baseline-manager"

// baselineName names the baseline in --operators, the report and its work
// queue.
const baselineName = "baseline"

// managerProcess is a running manager, the operator's or the baseline's.
type managerProcess struct {
	name        string
	cmd         *exec.Cmd
	metricsAddr string
	// pprofAddr serves the manager's profiles, with --heap-profiles.
	pprofAddr string
	exited    chan struct{}
}

// startManager starts a manager whose requests go through the bench's
// counting proxy; extra are more flags of the operator's manager.
func (b *bench) startManager(name string, extra ...string) (*managerProcess, error) {
	return b.startManagerVia(name, b.kubeconfig, name, extra...)
}

// startManagerVia starts a manager with its own kubeconfig (its own counting
// proxy) and log file, .local/bench/<logName>.log.
func (b *bench) startManagerVia(name, kubeconfig, logName string, extra ...string) (*managerProcess, error) {
	metricsAddr, err := controlplane.FreeAddress()
	if err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	pprofAddr := ""
	switch name {
	case operatorName:
		if b.cfg.heapProfiles {
			if pprofAddr, err = controlplane.FreeAddress(); err != nil {
				return nil, err
			}
			extra = append([]string{"--pprof-bind-address=" + pprofAddr}, extra...)
		}
		args := make([]string, 0, 9+len(extra))
		args = append(args,
			"--kubeconfig="+kubeconfig,
			"--dns-url="+b.simURL, "--dns-token-file="+b.tokenFile,
			"--backup-url="+b.simURL, "--backup-token-file="+b.tokenFile,
			"--dns-default-target="+target,
			"--metrics-bind-address="+metricsAddr, "--metrics-secure=false",
			"--health-probe-bind-address=0")
		cmd = exec.Command(b.cfg.manager, append(args, extra...)...)
		if pprofAddr != "" {
			// One sample per 4 KiB allocated instead of 512 KiB, so that a
			// profile of a few dozen MiB tells its parts apart. The samples'
			// records live outside the Go heap the figures measure.
			cmd.Env = append(os.Environ(), "GODEBUG=memprofilerate=4096")
		}
	case baselineName:
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(self, baselineCommand,
			"--kubeconfig="+kubeconfig,
			"--dns-url="+b.simURL, "--dns-token-file="+b.tokenFile,
			"--target="+target, "--metrics-bind-address="+metricsAddr)
	default:
		return nil, fmt.Errorf("unknown operator %q: use operator or baseline", name)
	}
	logFile, err := os.OpenFile(filepath.Join(b.dir, logName+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = controlplane.KilledWithParent()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	m := &managerProcess{name: name, cmd: cmd, metricsAddr: metricsAddr, pprofAddr: pprofAddr, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(m.exited)
	}()
	return m, nil
}

// stop sends SIGTERM, as a kubelet would, and waits for the exit.
func (m *managerProcess) stop() {
	if m == nil {
		return
	}
	select {
	case <-m.exited:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(40 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
}

// kill sends SIGKILL, as a node's failure would end it, and waits for the
// exit.
func (m *managerProcess) kill() {
	if m == nil {
		return
	}
	select {
	case <-m.exited:
		return
	default:
	}
	_ = m.cmd.Process.Kill()
	<-m.exited
}

// metrics scrapes the manager's Prometheus endpoint into name{labels} ->
// value.
func (m *managerProcess) metrics() (map[string]float64, error) {
	resp, err := http.Get("http://" + m.metricsAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 64<<20))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// metric sums the series of a metric whose labels contain every one of
// labels.
func metric(all map[string]float64, name string, labels ...string) float64 {
	sum := 0.0
	for series, v := range all {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(series, l)
		}
		if ok {
			sum += v
		}
	}
	return sum
}

func (m *managerProcess) waitMetrics(ctx context.Context) error {
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(200 * time.Millisecond) {
		select {
		case <-m.exited:
			return fmt.Errorf("%w: see its log", errStopped)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if _, err := m.metrics(); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s serves no metrics after a minute", m.name)
}

// controllerName is the work queue name of the measured controller.
func (m *managerProcess) controllerName() string {
	if m.name == baselineName {
		return baselineName
	}
	return "myapp"
}

// waitDrained returns how long after its start the manager's work queue
// first had taken in every MyApp and was empty again, or window if it never
// was within it.
func (m *managerProcess) waitDrained(ctx context.Context, n int, window time.Duration) time.Duration {
	start := time.Now()
	label := `name="` + m.controllerName() + `"`
	for time.Since(start) < window && ctx.Err() == nil {
		if all, err := m.metrics(); err == nil {
			adds := metric(all, "workqueue_adds_total", label)
			depth := metric(all, "workqueue_depth", label)
			busy := metric(all, "controller_runtime_active_workers", `controller="`+m.controllerName()+`"`)
			if adds >= float64(n) && depth == 0 && busy == 0 {
				return time.Since(start)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return window
}

// memory lets the manager settle for 10 seconds, then reads its RSS and its
// Go heap: the lowest allocated heap of five scrapes a second apart, and the
// live heap the last garbage collection left (half the next GC target at
// the default GOGC of 100), which garbage does not blur.
func (m *managerProcess) memory(ctx context.Context) Mem {
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	mem := Mem{}
	for i := range 5 {
		if all, err := m.metrics(); err == nil {
			heap := metric(all, "go_memstats_heap_alloc_bytes")
			if i == 0 || heap < mem.HeapBytes {
				mem.HeapBytes = heap
			}
			mem.LiveHeapBytes = metric(all, "go_memstats_next_gc_bytes") / 2
		}
		time.Sleep(time.Second)
	}
	mem.RSSBytes = rss(m.cmd.Process.Pid)
	logf("%s: heap %.1f MiB (live %.1f MiB), RSS %.1f MiB", m.name, mem.HeapBytes/(1<<20),
		mem.LiveHeapBytes/(1<<20), mem.RSSBytes/(1<<20))
	return mem
}

// saveHeapProfile writes the manager's heap profile to
// dir/<name>-heap-<label>.pb.gz when it serves its profiles. The figures
// of memory come first: the profile is taken after them, after a garbage
// collection (gc=1), so its in-use figures leave out garbage not yet swept.
func (m *managerProcess) saveHeapProfile(dir, label string) {
	if m.pprofAddr == "" {
		return
	}
	path := filepath.Join(dir, m.name+"-heap-"+label+".pb.gz")
	resp, err := http.Get("http://" + m.pprofAddr + "/debug/pprof/heap?gc=1")
	if err != nil {
		logf("%s: no heap profile: %v", m.name, err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		logf("%s: no heap profile: %v", m.name, err)
		return
	}
	logf("%s: heap profile in %s", m.name, path)
}

func rss(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}

// runBaselineManager is the baseline's main: a manager as the tutorial
// sets one up (controller-runtime's defaults: no client-side rate limit,
// cluster-wide caches).
func runBaselineManager(args []string) int {
	fs := flag.NewFlagSet(baselineCommand, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig")
	dnsURL := fs.String("dns-url", "", "DNS service")
	tokenFile := fs.String("dns-token-file", "", "DNS token")
	target := fs.String("target", "", "record target")
	metricsAddr := fs.String("metrics-bind-address", "0", "metrics")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctrl.SetLogger(zap.New())
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fail(err)
	}
	cfg.QPS = -1
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = appsv1alpha1.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fail(err)
	}
	dnsClient, err := httpdns.New(external.Config{BaseURL: *dnsURL, Token: external.NewFileTokenSource(*tokenFile)})
	if err != nil {
		return fail(err)
	}
	if err := (&baseline.Reconciler{Client: mgr.GetClient(), DNS: dnsClient, Target: *target}).SetupWithManager(mgr); err != nil {
		return fail(err)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		return fail(err)
	}
	return 0
}
