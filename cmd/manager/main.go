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

// Command manager runs the myapp-operator controllers.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(backupv1alpha1.AddToScheme(scheme))
}

func main() {
	// The hidden --print-flags-markdown writes docs/flags.md (make generate);
	// it is not in the flag set, so it is not in the page it prints.
	if len(os.Args) == 2 && os.Args[1] == printFlagsMarkdown {
		fs, _, _ := newFlagSet()
		fmt.Print(flagsMarkdown(fs))
		return
	}
	if err := run(ctrl.SetupSignalHandler(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// newFlagSet builds the manager's flag set: its own options and
// controller-runtime's logging flags. docs/flags.md is generated from it.
func newFlagSet() (*flag.FlagSet, *options, *zap.Options) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	opts := bindOptions(fs)
	zapOpts := &zap.Options{Development: false}
	zapOpts.BindFlags(fs)
	return fs, opts, zapOpts
}

// run parses args, builds the manager and runs it until ctx is done. It
// returns nil after a clean shutdown.
func run(ctx context.Context, args []string) error {
	fs, opts, zapOpts := newFlagSet()
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := opts.validate(); err != nil {
		return fmt.Errorf("invalid flags: %w", err)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(zapOpts)))
	log := ctrl.Log.WithName("setup")
	setMemoryLimit(log, "/sys/fs/cgroup")

	// HTTP/2 is off unless asked for: the HTTP/2 Stream Cancellation and
	// Rapid Reset CVEs (GHSA-qppj-fm5r-hxr3, GHSA-4374-p667-p6c8) make it a
	// liability on the metrics endpoint for no gain.
	var tlsOpts []func(*tls.Config)
	if !opts.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{
		BindAddress:   opts.metricsAddr,
		SecureServing: opts.secureMetrics,
		TLSOpts:       tlsOpts,
	}
	if opts.secureMetrics {
		// Only callers allowed to GET /metrics by RBAC may scrape.
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	cfg, err := loadConfig(opts)
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsOpts,
		// The cache holds only the children the operator labelled, without
		// their managedFields (which the operator never reads), with the
		// strings every MyApp's objects repeat held once (myapp.CacheTransform):
		// its memory grows with the MyApps, not with the cluster.
		Cache: cache.Options{
			ByObject:          myapp.CacheByObject(),
			DefaultTransform:  myapp.CacheTransform(),
			DefaultNamespaces: watchedNamespaces(opts.watchNamespaces),
		},
		HealthProbeBindAddress:        opts.probeAddr,
		PprofBindAddress:              opts.pprofAddr,
		LeaderElection:                opts.leaderElect,
		LeaderElectionID:              opts.leaderElectionID,
		LeaderElectionNamespace:       opts.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.leaseDuration,
		RenewDeadline:                 &opts.renewDeadline,
		RetryPeriod:                   &opts.retryPeriod,
		GracefulShutdownTimeout:       &opts.gracefulShutdownTimeout,
		Controller: config.Controller{
			EnableWarmup:     &opts.warmStandby,
			UsePriorityQueue: &opts.priorityQueue,
		},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}

	ownerID, ownerIDFrom, err := resolveOwnerID(ctx, mgr.GetAPIReader(), opts.myApp.ownerID)
	if err != nil {
		return err
	}
	opts.myApp.ownerID = ownerID
	exportOwnerID(ownerID)
	if err := setupControllers(ctx, mgr, opts); err != nil {
		return err
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}

	log.Info("Starting manager", "leaderElection", opts.leaderElect, "metricsAddress", opts.metricsAddr,
		"probeAddress", opts.probeAddr, "ownerID", ownerID, "ownerIDFrom", ownerIDFrom, "watchNamespaces", opts.watchNamespaces)
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("running the manager: %w", err)
	}
	log.Info("Manager stopped")
	return nil
}

// loadConfig reads the kubeconfig file when one is named, and otherwise
// follows controller-runtime's usual search ($KUBECONFIG, in-cluster,
// ~/.kube/config). Either way the client-side rate limit comes from the
// flags alone: client-go's default of 5 QPS would throttle the manager far
// below what the API server's priority and fairness allow it, and did so
// only when --kubeconfig was given.
func loadConfig(opts *options) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if opts.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", opts.kubeconfig)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0 // off, as ctrl.GetConfig sets it
	if opts.kubeAPIQPS > 0 {
		cfg.QPS = float32(opts.kubeAPIQPS)
		cfg.Burst = opts.kubeAPIBurst
		if cfg.Burst == 0 {
			cfg.Burst = max(1, int(2*opts.kubeAPIQPS))
		}
	}
	return cfg, nil
}

// watchedNamespaces is the cache's namespaces for --watch-namespaces: nil
// (every namespace) when none are named. Both controllers see only what the
// cache holds, so they reconcile, and the final-backup safety net releases,
// only in these namespaces; the manager's role needs no more than them.
func watchedNamespaces(names []string) map[string]cache.Config {
	if len(names) == 0 {
		return nil
	}
	out := make(map[string]cache.Config, len(names))
	for _, ns := range names {
		out[ns] = cache.Config{}
	}
	return out
}
