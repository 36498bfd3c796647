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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/apiproxy"
)

const (
	// image is every pod's; kwok runs nothing.
	image    = "nginx:1.27"
	appLabel = "app"
	// operatorName names the operator in --operators and the report.
	operatorName = "operator"
	// phaseSteady and phaseRestart name two phases in --phases, the
	// results and the report.
	phaseSteady  = "steady"
	phaseRestart = "restart"
	opGet        = "get"
	opDelete     = "delete"

	simToken = "benchtoken"
	// target is where every record points: kwok's Ingresses get no address.
	target = "192.0.2.10"
	// propagation is the simulator's PENDING time, as in `make run`.
	propagation = 3 * time.Second
)

type config struct {
	n             int
	namespaces    int
	unrelated     int
	manager       string
	steady        time.Duration
	restartWindow time.Duration
	timeout       time.Duration
	kcmQPS        int
	out           string
	operators     string
	// phases holds the optional phases to run; convergence and cleanup
	// always run.
	phases        map[string]bool
	failoverKills int
	// failoverArgs are more flags for the failover phase's managers, such
	// as a shorter --leader-election-retry-period.
	failoverArgs  []string
	priorityEdits int
	// heapProfiles saves the operator's heap profile beside each memory
	// figure (its manager serves them on --pprof-bind-address).
	heapProfiles bool
}

// optionalPhases are the phases --phases picks from, in the order they run.
var optionalPhases = []string{"floor", phaseSteady, phaseRestart, "unrelated", "priority", "failover"}

// phase tells whether an optional phase runs.
func (c config) phase(name string) bool { return c.phases[name] }

func main() {
	if len(os.Args) > 1 && os.Args[1] == baselineCommand {
		os.Exit(runBaselineManager(os.Args[2:]))
	}
	// The bench's own clients log nothing; the managers log to their files.
	ctrllog.SetLogger(logr.Discard())
	var cfg config
	flag.IntVar(&cfg.n, "n", 100, "How many MyApps (and bare Deployments for the floor).")
	flag.IntVar(&cfg.namespaces, "namespaces", 4, "How many namespaces the MyApps are spread over.")
	flag.IntVar(&cfg.unrelated, "unrelated", 5000,
		"How many unrelated Deployments, Services and Ingresses (a third each) for the memory figure; 0 skips it.")
	flag.StringVar(&cfg.manager, "manager", "bin/manager", "The operator's manager binary.")
	flag.DurationVar(&cfg.steady, "steady", 2*time.Minute, "How long the steady state is watched.")
	flag.DurationVar(&cfg.restartWindow, "restart-window", time.Minute, "How long requests are counted after a restart.")
	flag.DurationVar(&cfg.timeout, "timeout", 0,
		"How long one phase may take; 0 is 15 minutes plus 200 ms per MyApp (48 minutes at 10,000).")
	flag.IntVar(&cfg.kcmQPS, "controller-manager-qps", controlplane.LocalClusterControllerManagerQPS,
		"kube-controller-manager's --kube-api-qps, so the cluster is not what is measured.")
	flag.StringVar(&cfg.out, "out", "", "Where the raw figures go as JSON; default .local/bench/bench-<n>.json.")
	flag.StringVar(&cfg.operators, "operators", "operator,baseline", "Which operators to measure, in order.")
	phases := flag.String("phases", strings.Join(optionalPhases, ","),
		"Which optional phases run (convergence and cleanup always do), any of "+strings.Join(optionalPhases, ",")+
			"; priority and failover measure the operator only. The floor is what convergence is compared with.")
	flag.IntVar(&cfg.failoverKills, "failover-kills", 3,
		"How many times the failover phase SIGKILLs the leader, with the warm standby on and again off.")
	flag.Func("failover-args", "More flags for the failover phase's managers, space-separated "+
		"(for example --leader-election-retry-period=800ms); they apply to both warm-standby settings.",
		func(v string) error { cfg.failoverArgs = append(cfg.failoverArgs, strings.Fields(v)...); return nil })
	flag.IntVar(&cfg.priorityEdits, "priority-edits", 5,
		"How many edits the priority phase makes after each restart, with the priority queue on and off.")
	flag.BoolVar(&cfg.heapProfiles, "heap-profiles", false,
		"Start the operator's manager with --pprof-bind-address and save its heap profile after each memory figure, "+
			"as .local/bench/operator-heap-<n>.pb.gz (go tool pprof -sample_index=inuse_space -top).")
	flag.Parse()
	cfg.phases = map[string]bool{}
	for p := range strings.SplitSeq(*phases, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !slices.Contains(optionalPhases, p) {
			fmt.Fprintf(os.Stderr, "bench: unknown phase %q in --phases: use any of %s\n", p, strings.Join(optionalPhases, ","))
			os.Exit(2)
		}
		cfg.phases[p] = true
	}
	if cfg.n < 1 || cfg.namespaces < 1 || cfg.failoverKills < 0 || cfg.priorityEdits < 0 {
		fmt.Fprintln(os.Stderr, "bench: -n and --namespaces must be at least 1, --failover-kills and --priority-edits at least 0")
		os.Exit(2)
	}
	if cfg.timeout == 0 {
		cfg.timeout = 15*time.Minute + time.Duration(cfg.n)*200*time.Millisecond
	}
	if cfg.out == "" {
		cfg.out = filepath.Join(".local", "bench", fmt.Sprintf("bench-%d.json", cfg.n))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// bench is one run: a cluster, the simulator and the counters.
type bench struct {
	cfg        config
	dir        string
	cp         *controlplane.ControlPlane
	c          client.Client // the bench's own, not counted
	scheme     *runtime.Scheme
	edits      int // edits made so far, so the next edits another MyApp
	sim        *simulator.Server
	simURL     string
	dns        *dnsCounter
	proxy      *apiproxy.Proxy
	kubeconfig string // through the counting proxy
	tokenFile  string
}

// Result is everything one run measured; it is written as JSON.
type Result struct {
	N         int              `json:"n"`
	Machine   string           `json:"machine"`
	Started   time.Time        `json:"started"`
	Floor     map[string]Phase `json:"floor"`
	Operators []OperatorResult `json:"operators"`
}

// OperatorResult is one operator's phases and memory.
type OperatorResult struct {
	Name   string           `json:"name"`
	Phases map[string]Phase `json:"phases"`
	Memory map[string]Mem   `json:"memory"`
	// Priority is the priority phase: one run with the priority queue
	// off, one on.
	Priority []PriorityRun `json:"priority,omitempty"`
	// Failover is the failover phase: one run with the warm standby on,
	// one off.
	Failover []FailoverRun `json:"failover,omitempty"`
}

// Phase is one phase's time and requests.
type Phase struct {
	Seconds float64 `json:"seconds"`
	// API counts the manager's requests by "verb resource".
	API         map[string]int `json:"api,omitempty"`
	APIFailures map[string]int `json:"apiFailures,omitempty"`
	// DNS counts requests to the DNS service by operation.
	DNS         map[string]int `json:"dns,omitempty"`
	DNSFailures int            `json:"dnsFailures,omitempty"`
	// Extra holds a phase's own figures (restart peak and mean, drain time).
	Extra map[string]float64 `json:"extra,omitempty"`
}

// Mem is the manager's memory at one point.
type Mem struct {
	HeapBytes     float64 `json:"heapBytes"`
	LiveHeapBytes float64 `json:"liveHeapBytes"`
	RSSBytes      float64 `json:"rssBytes"`
}

func run(ctx context.Context, cfg config) error {
	b := &bench{cfg: cfg}
	var err error
	if b.dir, err = filepath.Abs(filepath.Join(".local", "bench")); err != nil {
		return err
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return err
	}
	logf("Starting the cluster tier (kube-controller-manager at %d QPS, %d fake nodes)", cfg.kcmQPS, fakeNodes(cfg.n))
	b.cp, err = controlplane.Start(ctx, controlplane.Options{
		Tier:                 controlplane.TierCluster,
		StateRoot:            filepath.Join(b.dir, "controlplane"),
		ControllerManagerQPS: cfg.kcmQPS,
		Nodes:                fakeNodes(cfg.n),
	})
	if err != nil {
		return err
	}
	defer func() { _ = b.cp.Stop() }()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = appsv1alpha1.AddToScheme(scheme)
	b.scheme = scheme
	if b.c, err = b.cp.NewClient(client.Options{Scheme: scheme}); err != nil {
		return err
	}
	if err := b.startSimulator(); err != nil {
		return err
	}
	if b.proxy, err = apiproxy.Start(b.cp.Config); err != nil {
		return err
	}
	defer func() { _ = b.proxy.Close() }()
	if err := b.writeFiles(); err != nil {
		return err
	}

	res := Result{N: cfg.n, Machine: machine(), Started: time.Now().UTC()}
	if cfg.phase("floor") {
		if res.Floor, err = b.floor(ctx); err != nil {
			return fmt.Errorf("cluster floor: %w", err)
		}
	}
	var measureErr error
	for _, name := range strings.Split(cfg.operators, ",") {
		r, err := b.measure(ctx, name)
		// A phase that failed keeps the figures of the phases before it:
		// at 10,000 MyApps they took most of an hour.
		res.Operators = append(res.Operators, r)
		if err != nil {
			measureErr = fmt.Errorf("%s: %w", name, err)
			break
		}
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfg.out, data, 0o644); err != nil {
		return err
	}
	printReport(os.Stdout, res)
	logf("Raw figures in %s", cfg.out)
	return measureErr
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (b *bench) startSimulator() error {
	b.sim = simulator.New(simulator.Options{Token: simToken, PropagationDelay: propagation})
	b.dns = &dnsCounter{next: b.sim, ops: map[string]int{}}
	addr, err := controlplane.FreeAddress()
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: b.dns, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ListenAndServe() }()
	b.simURL = "http://" + addr
	return wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			resp, err := http.Get(b.simURL + "/healthz")
			if err != nil {
				return false, nil //nolint:nilerr // not listening yet
			}
			_ = resp.Body.Close()
			return true, nil
		})
}

// writeFiles writes the token and a kubeconfig that reaches the API server
// through the counting proxy.
func (b *bench) writeFiles() error {
	b.tokenFile = filepath.Join(b.dir, "token")
	if err := os.WriteFile(b.tokenFile, []byte(simToken+"\n"), 0o600); err != nil {
		return err
	}
	b.kubeconfig = filepath.Join(b.dir, "kubeconfig")
	return writeKubeconfig(b.kubeconfig, b.proxy.URL)
}

// writeKubeconfig writes a kubeconfig that reaches the API server through
// the counting proxy at proxyURL.
func writeKubeconfig(path, proxyURL string) error {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: %q}}]
users: [{name: bench, user: {}}]
contexts: [{name: bench, context: {cluster: bench, user: bench}}]
current-context: bench
`, proxyURL)
	return os.WriteFile(path, []byte(kc), 0o600)
}

// fakeNodes is how many fake nodes the cluster has: one up to half a node's
// pod capacity (as every run before 10,000 had), then enough for twice N
// pods, so the failover phase's extra MyApps and a rolling update's surge
// always find room.
func fakeNodes(n int) int {
	if n <= controlplane.FakeNodePods/2 {
		return 1
	}
	return (2*n + controlplane.FakeNodePods - 1) / controlplane.FakeNodePods
}

// pollEvery is how often a phase checks that it is done: every second, as
// always, up to 2,000 MyApps; then every N/2,000 seconds, so that listing
// every MyApp does not load the cluster it measures (5 s at 10,000).
func (b *bench) pollEvery() time.Duration {
	return max(time.Second, time.Duration(b.cfg.n)*time.Second/2000)
}

// dnsCounter counts DNS requests by operation, with their times, in front
// of the simulator.
type dnsCounter struct {
	next     http.Handler
	mu       sync.Mutex
	ops      map[string]int
	failures int
	times    []time.Time
}

func (d *dnsCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/dns/") {
		d.next.ServeHTTP(w, r)
		return
	}
	op := ""
	named := strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 3 // dns/v1/records/<name>
	switch {
	case r.Method == http.MethodPut:
		op = "upsert"
	case r.Method == http.MethodDelete:
		op = opDelete
	case named:
		op = opGet
	default:
		op = "list"
	}
	sw := &apiproxy.StatusWriter{ResponseWriter: w, Status: http.StatusOK}
	d.next.ServeHTTP(sw, r)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ops[op]++
	if sw.Status >= 400 && (op != opGet || sw.Status != http.StatusNotFound) {
		d.failures++
	}
	d.times = append(d.times, time.Now())
}

func (d *dnsCounter) snapshot() (map[string]int, int, []time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ops, failures, times := d.ops, d.failures, d.times
	d.ops, d.failures, d.times = map[string]int{}, 0, nil
	return ops, failures, times
}

// counted runs fn and returns its time and every request made meanwhile.
func (b *bench) counted(fn func() error) (Phase, []time.Time, error) {
	b.proxy.Reset()
	b.dns.snapshot()
	start := time.Now()
	err := fn()
	p := Phase{Seconds: time.Since(start).Seconds(), API: map[string]int{}, APIFailures: map[string]int{}}
	counts, failures := b.proxy.Reset()
	for k, v := range counts {
		p.API[k.String()] = v
	}
	for k, v := range failures {
		p.APIFailures[k.String()] = v
	}
	var times []time.Time
	p.DNS, p.DNSFailures, times = b.dns.snapshot()
	return p, times, err
}

func (b *bench) namespaces(prefix string) []string {
	out := make([]string, b.cfg.namespaces)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func (b *bench) createNamespaces(ctx context.Context, names []string) error {
	for _, ns := range names {
		if err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs fn for 0..n-1 on 8 workers and returns the first error.
func (b *bench) parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// poll calls check every second until it is done, logging its progress
// every 15 seconds, for at most the phase timeout.
func (b *bench) poll(ctx context.Context, what string, check func() (bool, string, error)) error {
	start, lastLog := time.Now(), time.Now()
	progress := ""
	err := wait.PollUntilContextTimeout(ctx, b.pollEvery(), b.cfg.timeout, true, func(context.Context) (bool, error) {
		done, p, err := check()
		if err != nil {
			// A list that failed once (a timeout of a loaded API server at
			// 10,000) is tried again, not the end of an hour's run; one
			// that keeps failing ends the phase at its timeout, named.
			done, p = false, "last check failed: "+err.Error()
		}
		progress = p
		if time.Since(lastLog) > 15*time.Second {
			logf("  %s: %s after %s", what, p, time.Since(start).Round(time.Second))
			lastLog = time.Now()
		}
		return done, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w (%s)", what, err, progress)
	}
	return nil
}

// rates returns the peak and mean DNS requests per second over window.
func rates(times []time.Time, window time.Duration) (peak, mean float64) {
	if len(times) == 0 {
		return 0, 0
	}
	perSecond := map[int64]int{}
	start := times[0].Unix()
	for _, t := range times {
		perSecond[t.Unix()-start]++
	}
	for _, n := range perSecond {
		peak = max(peak, float64(n))
	}
	return peak, float64(len(times)) / window.Seconds()
}

func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.HasPrefix(line, "model name") {
				model = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
				break
			}
		}
	}
	load := ""
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = ", load " + strings.Join(strings.Fields(string(data))[:3], " ")
	}
	return fmt.Sprintf("%s, %d cores%s", model, numCPU(), load)
}

func numCPU() int {
	out, err := exec.Command("nproc").Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return n
}

// errStopped is returned by a manager that exited by itself.
var errStopped = errors.New("the manager exited")

// sortedNames returns a map's keys sorted.
func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
