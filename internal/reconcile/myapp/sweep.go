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

package myapp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

const (
	// DefaultOrphanSweepInterval is how often the records this operator
	// owns are checked for MyApps that are gone.
	DefaultOrphanSweepInterval = time.Hour
	// DefaultOrphanSweepPace is the pause between two records of one sweep,
	// so a sweep that finds many reads the API server and calls the DNS
	// service at a trickle, not in a burst.
	DefaultOrphanSweepPace = 200 * time.Millisecond
)

// orphanedRecordsDeleted counts the records the sweep removed.
var orphanedRecordsDeleted = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "myapp_dns_orphaned_records_deleted_total",
	Help: "DNS records deleted by the orphan sweep because the MyApp that owned them is gone.",
})

func init() {
	metrics.Registry.MustRegister(orphanedRecordsDeleted)
}

// OrphanSweeper deletes the DNS records of MyApps that are gone without
// their finalizer having cleaned up: one removed by hand, or one whose
// namespace was force-deleted. Nothing else would ever look at such a record
// again, since no MyApp reconcile names its owner.
//
// A record is judged by a live read of the MyApp its owner names, never by
// the cache: a cache that has not seen a new MyApp yet would otherwise get
// its record deleted. Records left on purpose (deletionPolicy Orphan) carry
// the orphaned owner, outside the swept prefix, and are never touched.
//
// The sweep lists only this installation's records, those under
// "myapp-operator/<OwnerID>/": clusters sharing one DNS service, each with
// its own owner ID, never judge each other's records. Two clusters that
// share an owner ID by mistake would; the sweep runs only while the
// installation's claim of its ID (Claim) shows no other installation. Records written
// before owner IDs existed are not listed either: the sweep cannot tell
// which cluster wrote them, so it leaves them to their MyApp, which takes
// them over on its next pass.
type OrphanSweeper struct {
	// DNS is the external DNS service.
	DNS dns.Client
	// OwnerID is this installation's owner ID, as the MyApp controller's.
	// Required.
	OwnerID string
	// Reader reads MyApps from the API server, bypassing any cache: the
	// manager's GetAPIReader().
	Reader client.Reader
	// Interval is the time between two sweeps; the first comes after a
	// random part of it. Defaults to DefaultOrphanSweepInterval.
	Interval time.Duration
	// Pace is the pause between two records of one sweep. Defaults to
	// DefaultOrphanSweepPace.
	Pace time.Duration
	// Log receives a line per record deleted and per sweep that found any.
	Log logr.Logger
	// WatchNamespaces, when set, is the manager's --watch-namespaces: only
	// records whose MyApp lives in one of these namespaces are judged. The
	// others belong to another install's namespaces, never this one's.
	WatchNamespaces []string
	// Claim, when set, is asked before every sweep whether this
	// installation alone uses its owner ID (OwnerIDClaim): a sweep run by
	// two installations with one ID would delete each other's records.
	Claim SweepGuard
}

// SweepGuard says whether the orphan sweep may run now. OwnerIDClaim is
// one.
type SweepGuard interface {
	// SweepAllowed reports whether a sweep may run now, and why not.
	SweepAllowed(ctx context.Context) (allowed bool, why string)
}

// watches reports whether the sweep judges records of MyApps in namespace.
func (s *OrphanSweeper) watches(namespace string) bool {
	return len(s.WatchNamespaces) == 0 || slices.Contains(s.WatchNamespaces, namespace)
}

var _ manager.LeaderElectionRunnable = &OrphanSweeper{}

// SetupWithManager adds the sweeper to the manager, which runs it on the
// leader only.
func (s *OrphanSweeper) SetupWithManager(mgr manager.Manager) error {
	if s.DNS == nil {
		return errors.New("the orphan sweep needs a DNS client")
	}
	if err := ValidateOwnerID(s.OwnerID); err != nil {
		return fmt.Errorf("the orphan sweep needs this installation's owner ID: %w", err)
	}
	if s.Reader == nil {
		s.Reader = mgr.GetAPIReader()
	}
	if s.Log.GetSink() == nil {
		s.Log = mgr.GetLogger().WithName("dns-orphan-sweep")
	}
	return mgr.Add(s)
}

// NeedLeaderElection makes only the leader sweep: two replicas sweeping
// would only double the calls.
func (*OrphanSweeper) NeedLeaderElection() bool { return true }

// Start sweeps until ctx ends. The first sweep waits a random part of the
// interval, so managers restarted together (a rollout, a node drain) do not
// all list the DNS service at once, and later ones are jittered. A failed
// sweep is logged and tried again at the next interval: nothing is lost by
// waiting, since an orphaned record stays orphaned.
func (s *OrphanSweeper) Start(ctx context.Context) error {
	interval := s.interval()
	timer := time.NewTimer(firstSweepDelay(interval))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		if _, err := s.sweepOnce(ctx); err != nil && ctx.Err() == nil {
			s.Log.Error(err, "Orphaned DNS record sweep failed; trying again at the next interval", "interval", interval)
		}
		timer.Reset(wait.Jitter(interval, pass.JitterFactor))
	}
}

// firstSweepDelay is the wait before the first sweep after a start: between
// half the interval and the whole of it.
func firstSweepDelay(interval time.Duration) time.Duration {
	half := interval / 2
	return half + rand.N(interval-half) //nolint:gosec // spreading load needs no secure randomness
}

func (s *OrphanSweeper) interval() time.Duration {
	if s.Interval > 0 {
		return s.Interval
	}
	return DefaultOrphanSweepInterval
}

func (s *OrphanSweeper) pace() time.Duration {
	if s.Pace > 0 {
		return s.Pace
	}
	return DefaultOrphanSweepPace
}

// sweepOnce lists the records this installation owns and deletes those
// whose MyApp is gone, one at a time with a pause between records. It
// returns how many it deleted. A record it cannot judge (an unreadable
// owner, another installation's, a failed read) is kept; a failed delete
// ends the sweep, since the DNS service is then most likely failing for the
// rest too.
func (s *OrphanSweeper) sweepOnce(ctx context.Context) (int, error) {
	if err := ValidateOwnerID(s.OwnerID); err != nil {
		return 0, fmt.Errorf("sweeping without this installation's owner ID: %w", err)
	}
	if s.Claim != nil {
		if allowed, why := s.Claim.SweepAllowed(ctx); !allowed {
			s.Log.Info("Not sweeping orphaned DNS records", "reason", why, "ownerID", s.OwnerID)
			return 0, nil
		}
	}
	records, err := s.DNS.ListByOwnerPrefix(ctx, installationPrefix(s.OwnerID))
	if err != nil {
		return 0, fmt.Errorf("listing the operator's DNS records: %w", err)
	}
	removed := 0
	defer func() {
		if removed > 0 {
			s.Log.Info("Swept orphaned DNS records", "deleted", removed, "checked", len(records))
		}
	}()
	for i, rec := range records {
		if i > 0 {
			if err := sleep(ctx, s.pace()); err != nil {
				return removed, err
			}
		}
		owner, ok := parseRecordOwner(rec.Owner)
		if !ok || owner.orphaned || owner.installation != s.OwnerID {
			continue // not an owner this installation wrote: never ours to judge
		}
		if !s.watches(owner.key.Namespace) {
			continue // a namespace this install does not watch: not ours to judge
		}
		gone, err := s.ownerGone(ctx, owner, rec.Name)
		if err != nil {
			s.Log.Error(err, "Could not read the MyApp that owns a DNS record; keeping the record",
				"record", rec.Name, "myApp", owner.key)
			continue
		}
		if !gone {
			continue
		}
		s.Log.Info("Deleting DNS record of a MyApp that is gone", "record", rec.Name, "owner", rec.Owner)
		// The delete names the owner the record was listed with, so a
		// record adopted or re-registered since the list is refused, not
		// deleted.
		err = s.DNS.Delete(ctx, rec.Name, rec.Owner)
		if errors.Is(err, external.ErrConflict) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("deleting DNS record %s: %w", rec.Name, err)
		}
		removed++
		orphanedRecordsDeleted.Inc()
	}
	return removed, nil
}

// ownerGone reports whether the record at name, owned by owner, belongs to
// a MyApp that no longer exists: its namespace and name hold no MyApp, or
// one with another UID (a later MyApp of the same name). dnsplan.Swept
// decides, and spares one record of another UID: the one a MyApp a Restore
// created from the owner's MyApp (its restored-from-uid mark names the
// owner's UID) takes over with a Transfer on its next pass, its spec.host's,
// until its status shows that takeover done. That record is its name, which
// must keep resolving. It reads the API server directly.
func (s *OrphanSweeper) ownerGone(ctx context.Context, owner recordOwnerRef, name string) (bool, error) {
	app := &appsv1alpha1.MyApp{}
	err := s.Reader.Get(ctx, owner.key, app)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	ref := dnsplan.OwnerRef{Installation: owner.installation, Namespace: owner.key.Namespace, Name: owner.key.Name,
		UID: string(owner.uid)}
	return dnsplan.Swept(ref, name, &dnsplan.Resident{UID: string(app.UID), Host: app.Spec.Host,
		RestoredFrom: restoredFrom(app), Status: app.Status.DNS}), nil
}
