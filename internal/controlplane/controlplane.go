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

// Package controlplane starts a Kubernetes control plane for tests and local runs
// from the binaries `make controlplane` builds from source.
//
// Two tiers are offered. The envtest tier is kube-apiserver and etcd with the
// project's CRDs installed: enough for API validation and for controllers
// whose tests only need the API. The cluster tier adds kube-controller-manager,
// kube-scheduler and kwok managing fake nodes, so that Deployments become
// Available, pods run, garbage collection follows owner references and
// namespaces finish deleting, as on a real cluster.
//
// Every process this package starts keeps its state under one run directory and
// names it on its command line. Stop ends them all; a run whose owner died
// without stopping (a crash, a test binary killed by -timeout) is swept by the
// next Start, so processes never pile up on a developer's machine or in CI.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Tier selects how much of a cluster Start brings up.
type Tier string

const (
	// TierEnvtest is kube-apiserver and etcd with the CRDs installed.
	TierEnvtest Tier = "envtest"
	// TierCluster is the envtest tier plus kube-controller-manager,
	// kube-scheduler and kwok managing fake nodes.
	TierCluster Tier = "cluster"
)

// KubernetesVersion is the version `make controlplane` builds:
// $ENVTEST_K8S_VERSION when set, otherwise the Makefile's ENVTEST_K8S_VERSION,
// the one place the version is written; "unknown" when neither says.
func KubernetesVersion() string {
	if v := os.Getenv("ENVTEST_K8S_VERSION"); v != "" {
		return v
	}
	makefile, err := os.ReadFile(filepath.Join(RepoRoot(), "Makefile"))
	if err != nil {
		return "unknown"
	}
	if m := makefileVersion.FindSubmatch(makefile); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// makefileVersion matches the Makefile's ENVTEST_K8S_VERSION line.
var makefileVersion = regexp.MustCompile(`(?m)^ENVTEST_K8S_VERSION \?= (\S+)$`)

// ServiceClusterIPRange is the API server's service range: a /16 holds
// 65,534 ClusterIP Services, room for the 5,000 MyApps (one Service each)
// that a local cluster must hold.
const ServiceClusterIPRange = "10.96.0.0/16"

// EtcdQuotaBackendBytes is etcd's backend quota: 8 GiB.
const EtcdQuotaBackendBytes = 8 << 30

// Options configure Start. The zero value starts the envtest tier with the
// repository's CRDs from the binaries in KUBEBUILDER_ASSETS or the default
// setup-envtest store.
type Options struct {
	// Tier is the tier to start; TierEnvtest when empty.
	Tier Tier

	// CRDDirectoryPaths are installed before Start returns. Defaults to the
	// repository's config/crd/bases.
	CRDDirectoryPaths []string

	// BinaryAssetsDirectory holds the control-plane binaries. Defaults to
	// $KUBEBUILDER_ASSETS, then setup-envtest's default store for
	// KubernetesVersion.
	BinaryAssetsDirectory string

	// Nodes is the number of fake nodes kwok manages in the cluster tier.
	// Defaults to 1.
	Nodes int

	// ControllerManagerQPS, when set, is kube-controller-manager's
	// --kube-api-qps (burst twice that) instead of its default of 20, so a
	// benchmark measures the operator rather than the cluster's own
	// controllers. `make run` and `make bench` set
	// LocalClusterControllerManagerQPS.
	ControllerManagerQPS int

	// StateRoot is where run directories are created. Defaults to
	// $TMPDIR/myapp-controlplane.
	StateRoot string

	// StartTimeout bounds the whole start, including waiting for the nodes to
	// become Ready. Defaults to two minutes.
	StartTimeout time.Duration
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config

	// Dir is the run directory: component logs are in Dir/logs.
	Dir string

	env        *envtest.Environment
	kubeconfig []byte
	assets     string

	mu        sync.Mutex
	processes []*process
	reaper    *process
	stopped   bool
}

// Start brings up a control plane of the tier opts asks for and waits until it
// is usable. It sweeps the processes of earlier runs whose owner died first.
// On error, everything it had started is stopped again.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	if err := sweepStaleRuns(opts.StateRoot); err != nil {
		return nil, fmt.Errorf("sweeping stale control-plane runs in %s: %w", opts.StateRoot, err)
	}
	dir, err := newRunDir(opts.StateRoot)
	if err != nil {
		return nil, err
	}

	cp := &ControlPlane{Dir: dir, assets: opts.BinaryAssetsDirectory}
	if err := cp.start(ctx, opts); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context, opts Options) error {
	logs := filepath.Join(cp.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	etcdLog, err := os.Create(filepath.Join(logs, "etcd.log"))
	if err != nil {
		return err
	}
	apiserverLog, err := os.Create(filepath.Join(logs, "kube-apiserver.log"))
	if err != nil {
		return err
	}

	// The data and certificate directories sit inside the run directory so
	// that both processes name it on their command lines, which is how a
	// later sweep recognises them if this run is never stopped.
	cp.env = &envtest.Environment{
		BinaryAssetsDirectory: opts.BinaryAssetsDirectory,
		CRDDirectoryPaths:     opts.CRDDirectoryPaths,
		ErrorIfCRDPathMissing: true,
		ControlPlane: envtest.ControlPlane{
			Etcd: &envtest.Etcd{
				DataDir: filepath.Join(cp.Dir, "etcd"),
				Out:     etcdLog,
				Err:     etcdLog,
			},
			APIServer: &envtest.APIServer{
				CertDir: filepath.Join(cp.Dir, "apiserver"),
				Out:     apiserverLog,
				Err:     apiserverLog,
			},
		},
		ControlPlaneStartTimeout: opts.StartTimeout,
		ControlPlaneStopTimeout:  20 * time.Second,
	}
	// envtest's default service range is a /24: the 254th ClusterIP Service
	// would fail, far short of what `make run` and the benchmarks create.
	cp.env.ControlPlane.APIServer.Configure().Set("service-cluster-ip-range", ServiceClusterIPRange)
	// etcd's default backend quota of 2 GiB is near what 10,000 MyApps, their
	// children, pods and events take with the history kept between
	// compactions (make bench BENCH_N=10000); past it etcd refuses every
	// write. The data directory is a temporary one, so the space is lent,
	// not kept.
	cp.env.ControlPlane.Etcd.Configure().Set("quota-backend-bytes", strconv.Itoa(EtcdQuotaBackendBytes))
	for _, d := range []string{cp.env.ControlPlane.Etcd.DataDir, cp.env.ControlPlane.APIServer.CertDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	cfg, err := cp.env.Start()
	if err != nil {
		return fmt.Errorf("starting kube-apiserver and etcd (logs in %s): %w", logs, err)
	}
	// A generous rate limit: tests and controllers share this config and
	// client-go's default of 5 QPS makes a busy test wait on itself.
	cfg.QPS, cfg.Burst = 200, 400
	cp.Config = cfg
	cp.kubeconfig = cp.env.KubeConfig
	if cp.reaper, err = startReaper(cp.Dir, processesUsing(cp.Dir), logs); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cp.Dir, "kubeconfig"), cp.kubeconfig, 0o600); err != nil {
		return err
	}

	if opts.Tier == TierCluster {
		if err := cp.startCluster(ctx, opts); err != nil {
			return err
		}
	}
	return nil
}

// Stop ends every process of the control plane and removes its run
// directory. It is safe to call more than once and from a signal handler.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.stopped {
		return nil
	}
	cp.stopped = true

	var errs []error
	// Stop the cluster components first, newest first, so that none of them
	// spends its last seconds logging a vanished API server.
	for i := len(cp.processes) - 1; i >= 0; i-- {
		if err := cp.processes[i].stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if cp.env != nil {
		if err := cp.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping kube-apiserver and etcd: %w", err))
		}
	}
	if cp.reaper != nil {
		// SIGKILL skips the reaper's trap: envtest has stopped its
		// processes gracefully already.
		_ = cp.reaper.cmd.Process.Kill()
		<-cp.reaper.done
	}
	// Anything still naming the run directory (a grandchild, or a process
	// envtest lost track of) goes too, before the directory does.
	if err := killProcessesUsing(cp.Dir); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		if err := os.RemoveAll(cp.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Kubeconfig returns a kubeconfig for a cluster administrator.
func (cp *ControlPlane) Kubeconfig() []byte { return cp.kubeconfig }

// WriteKubeconfig writes a cluster-administrator kubeconfig to path, creating
// its directory.
func (cp *ControlPlane) WriteKubeconfig(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, cp.kubeconfig, 0o600)
}

// Kubectl is the path of the kubectl built with the control plane.
func (cp *ControlPlane) Kubectl() string { return filepath.Join(cp.assets, "kubectl") }

// User is a user provisioned by AddUser.
type User struct {
	// Config authenticates as the user.
	Config *rest.Config
	// Kubeconfig is the same as a kubeconfig file's content.
	Kubeconfig []byte
}

// AddUser provisions a user with the given groups (a client certificate);
// RBAC decides what it may do.
func (cp *ControlPlane) AddUser(name string, groups ...string) (*User, error) {
	u, err := cp.env.AddUser(envtest.User{Name: name, Groups: groups}, cp.Config)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := u.KubeConfig()
	if err != nil {
		return nil, err
	}
	return &User{Config: u.Config(), Kubeconfig: kubeconfig}, nil
}

// NewClient returns a client for the control plane with the given scheme.
func (cp *ControlPlane) NewClient(opts client.Options) (client.Client, error) {
	return client.New(cp.Config, opts)
}

func (o Options) withDefaults() (Options, error) {
	if o.Tier == "" {
		o.Tier = TierEnvtest
	}
	if o.Tier != TierEnvtest && o.Tier != TierCluster {
		return o, fmt.Errorf("unknown tier %q: use %q or %q", o.Tier, TierEnvtest, TierCluster)
	}
	if o.CRDDirectoryPaths == nil {
		o.CRDDirectoryPaths = []string{filepath.Join(RepoRoot(), "config", "crd", "bases")}
	}
	if o.BinaryAssetsDirectory == "" {
		o.BinaryAssetsDirectory = DefaultBinaryAssetsDirectory()
	}
	for _, b := range o.binaries() {
		if _, err := os.Stat(filepath.Join(o.BinaryAssetsDirectory, b)); err != nil {
			return o, fmt.Errorf("control-plane binary %s is missing in %s: run `make controlplane` to build it", b, o.BinaryAssetsDirectory)
		}
	}
	if o.Nodes == 0 {
		o.Nodes = 1
	}
	if o.StateRoot == "" {
		o.StateRoot = filepath.Join(os.TempDir(), "myapp-controlplane")
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	return o, nil
}

func (o Options) binaries() []string {
	bins := []string{"etcd", "kube-apiserver"}
	if o.Tier == TierCluster {
		bins = append(bins, "kube-controller-manager", "kube-scheduler", "kwok", kwokStagesFile)
	}
	return bins
}

// DefaultBinaryAssetsDirectory is $KUBEBUILDER_ASSETS when set, otherwise
// the directory `make controlplane` installs KubernetesVersion into.
func DefaultBinaryAssetsDirectory() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	store := os.Getenv("ENVTEST_STORE")
	if store == "" {
		data := os.Getenv("XDG_DATA_HOME")
		if data == "" {
			home, _ := os.UserHomeDir()
			data = filepath.Join(home, ".local", "share")
		}
		store = filepath.Join(data, "kubebuilder-envtest")
	}
	return filepath.Join(store, "k8s", KubernetesVersion()+"-"+runtime.GOOS+"-"+runtime.GOARCH)
}

// RepoRoot is the root of this repository, found from this source file so it
// works from any package's test directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// newRunDir creates a run directory and records this process as its owner,
// so a sweep can tell a live run from an abandoned one.
func newRunDir(root string) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(root, "run-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(ownerRecord(os.Getpid())), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}
