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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/restore"
)

// Reconcilers hold a worker while a client waits, so their clients give an
// attempt a few seconds and retry little and briefly; a longer wait the
// service asks for comes back as an error the reconciler turns into
// RequeueAfter.
const (
	externalAttemptTimeout = 3 * time.Second
	externalMaxRetries     = 2
	externalMaxRetryWait   = 2 * time.Second
)

// setupControllers builds the external clients and registers the
// controllers with the manager.
func setupControllers(ctx context.Context, mgr ctrl.Manager, opts *options) error {
	dnsClient, err := newDNSClient(ctx, mgr, opts)
	if err != nil {
		return fmt.Errorf("configuring the DNS client: %w", err)
	}
	claim, err := setupOwnerIDClaim(ctx, mgr, opts, dnsClient)
	if err != nil {
		return err
	}
	var takeovers myapp.TakeoverGuard
	var sweepGuard myapp.SweepGuard
	if claim != nil {
		takeovers, sweepGuard = claim, claim
	}
	if err := (&myapp.Reconciler{
		Base: pass.Base{
			MaxConcurrentReconciles: opts.maxConcurrentReconciles,
		},
		Takeovers:            takeovers,
		DNS:                  dnsClient,
		DNSClass:             dnsClassOf(dnsClient),
		OwnerID:              opts.myApp.ownerID,
		ReplaceLeakedRecords: opts.myApp.orphanSweepInterval > 0,
		DefaultTarget:        opts.myApp.defaultTarget,
		IngressClassName:     opts.myApp.ingressClassName,
		PendingPollInterval:  opts.myApp.pendingPollInterval,
		DriftCheckInterval:   opts.myApp.driftCheckInterval,
		DriftCheck:           myapp.DriftCheckMode(opts.myApp.driftCheck),
		RecordTTL:            int32(opts.myApp.recordTTL), //nolint:gosec // validated to the service's TTL range
	}).SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the MyApp controller: %w", err)
	}
	if opts.myApp.orphanSweepInterval > 0 {
		if err := (&myapp.OrphanSweeper{
			DNS:             dnsClient,
			OwnerID:         opts.myApp.ownerID,
			Reader:          mgr.GetAPIReader(),
			Interval:        opts.myApp.orphanSweepInterval,
			WatchNamespaces: opts.watchNamespaces,
			Claim:           sweepGuard,
		}).SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the DNS orphan sweep: %w", err)
		}
	}

	backupClient, err := newBackupClient(mgr, opts)
	if err != nil {
		return fmt.Errorf("configuring the backup client: %w", err)
	}
	if err := (&backupconfig.Reconciler{
		Base: pass.Base{
			MaxConcurrentReconciles: opts.maxConcurrentReconciles,
		},
		Backups: backupClient,
		// Each backup keeps the MyApp's children as its controller renders
		// them, and the owner ID a restore takes its DNS record over with.
		OwnerID:                  opts.myApp.ownerID,
		RenderChildren:           myapp.RenderChildren,
		IngressClassName:         opts.myApp.ingressClassName,
		BackupPollInterval:       opts.backupPollInterval,
		BackupTimeout:            opts.backupTimeout,
		FinalBackupAttempts:      opts.finalBackupAttempts,
		FinalBackupTeardownLimit: opts.finalBackupTeardownLimit,
		WatchNamespaces:          opts.watchNamespaces,
	}).SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the BackupConfig controller: %w", err)
	}
	// Restores read the same backup service, and judge a backup's
	// installation by the same owner ID the records carry.
	if err := (&restore.Reconciler{
		Base: pass.Base{
			MaxConcurrentReconciles: opts.maxConcurrentReconciles,
		},
		Backups:            backupClient,
		OwnerID:            opts.myApp.ownerID,
		BackupPollInterval: opts.backupPollInterval,
	}).SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the Restore controller: %w", err)
	}
	return nil
}

// externalConfig is the client configuration of one external service.
func externalConfig(mgr ctrl.Manager, opts *options, svc serviceOptions, name string) external.Config {
	return external.Config{
		BaseURL:        svc.url,
		Token:          tokenSource(mgr.GetAPIReader(), svc, tokenSecretKey),
		CAFile:         opts.externalCAFile,
		AttemptTimeout: externalAttemptTimeout,
		MaxRetries:     externalMaxRetries,
		MaxRetryWait:   externalMaxRetryWait,
		MaxRetryAfter:  opts.maxRetryAfter,
		Logger:         ctrl.Log.WithName("external").WithName(name),
	}
}

// tokenSource reads a token Secret through the API reader, not the cache:
// caching Secrets would need list and watch on every Secret in the cluster,
// where a single get on one named Secret is all the manager is granted. The
// token source keeps what it read for 30 seconds, so external calls do not
// each cost a read from the API server.
func tokenSource(r client.Reader, svc serviceOptions, dataKey string) external.TokenSource {
	if svc.tokenSecret != "" {
		key, _ := parseNamespacedName(svc.tokenSecret) // validated with the flags
		return external.NewSecretTokenSource(r, key, dataKey)
	}
	return external.NewFileTokenSource(svc.tokenFile)
}
