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
	"math/rand/v2"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// DriftCheckMode is how the ACTIVE records of MyApps are checked for changes
// made outside the operator.
type DriftCheckMode string

const (
	// DriftCheckList lists this installation's records once per drift
	// interval, a page at a time spread over the interval (one streamed zone
	// transfer for RFC 2136), and reads only the records that differ from
	// what their MyApp's last read left, or that the list lacks. The DNS
	// service sees a few lists per interval instead of one read per record.
	DriftCheckList DriftCheckMode = "list"
	// DriftCheckRead reads each ACTIVE record once per drift interval, at a
	// point of it fixed by its MyApp's UID.
	DriftCheckRead DriftCheckMode = "read"
)

// driftRecordsFound counts the records the drift pass found changed or gone.
var driftRecordsFound = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "myapp_dns_drift_found_total",
	Help: "DNS records the drift pass found different from what their MyApp last read (changed) or not listed at all (missing).",
}, []string{"kind"})

func init() {
	metrics.Registry.MustRegister(driftRecordsFound)
}

// listsDrift reports whether app's ACTIVE record is checked by the drift
// pass rather than by a timed read. The records of deletionPolicy Orphan
// MyApps carry the orphaned owner, outside the prefix the pass lists, so
// they keep their timed read.
func (r *Reconciler) listsDrift(app *appsv1alpha1.MyApp) bool {
	return r.DriftCheck == DriftCheckList && app.Spec.DeletionPolicy != appsv1alpha1.DeletionPolicyOrphan
}

// driftLister is the drift pass of DriftCheckList: once per drift interval
// it lists the records this installation owns and compares each with what
// the last read of its MyApp's record left (dnsSchedule), or, for a MyApp
// this manager has not read yet, with its status. A MyApp whose record
// differs in type, value, TTL, owner or state, or whose ACTIVE record the
// whole list did not hold, is marked drifted and sent to the controller,
// whose pass then reads the record and repairs it (dnsplan). A MyApp whose
// record matches is not read at all.
//
// A record the operator itself wrote during the pass is not judged by it:
// one read after its page was fetched is left alone, and only MyApps last
// read before the pass started can be missing from it. A page that fails
// is retried with a backoff; the pass is judged complete, and anything
// missing from it, only once every page came.
type driftLister struct {
	r *Reconciler
	// reader reads MyApps: the manager's cache.
	reader client.Reader
	// events brings a drifted MyApp to the controller.
	events chan<- event.GenericEvent
	log    logr.Logger
	// pages is how many pages the last complete pass listed, to spread the
	// next one's over the interval.
	pages int
}

var _ manager.LeaderElectionRunnable = &driftLister{}

// NeedLeaderElection makes only the leader list: the standby's schedule
// would read nothing anyway.
func (*driftLister) NeedLeaderElection() bool { return true }

// Start runs a pass once per drift interval until ctx ends. The first comes
// after a random part of the first half of the interval, so managers
// restarted together do not list at once.
func (l *driftLister) Start(ctx context.Context) error {
	interval := l.r.DriftCheckInterval
	timer := time.NewTimer(rand.N(interval/2 + 1)) //nolint:gosec // spreading load needs no secure randomness
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		started := time.Now()
		if err := l.passOnce(ctx); err != nil && ctx.Err() == nil {
			l.log.Error(err, "DNS drift pass failed")
		}
		// Passes start once per interval, so each record is compared once
		// per interval however long the listing took.
		timer.Reset(max(0, interval-time.Since(started)))
	}
}

// passOnce lists the records once and sends every drifted MyApp to the
// controller.
func (l *driftLister) passOnce(ctx context.Context) error {
	start := l.r.Clock.Now()
	listed := sets.New[types.NamespacedName]()
	changed := 0
	pages, err := l.walk(ctx, func(page []dns.Record, fetched time.Time) error {
		for i := range page {
			drifted, err := l.judge(ctx, &page[i], fetched, listed)
			if err != nil {
				return err
			}
			if drifted {
				changed++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	l.pages = pages
	missing, err := l.findMissing(ctx, start, listed)
	if err != nil {
		return err
	}
	if changed+missing > 0 {
		l.log.Info("DNS drift pass found records to repair", "changed", changed, "missing", missing,
			"listed", listed.Len(), "pages", pages)
	}
	return nil
}

// walk hands each page of this installation's records to judge, with the
// time it was fetched, and returns how many pages there were. Pages of a
// pager are spread over the first half of the interval, after the size of
// the last pass; a failed page is retried with a backoff until ctx ends.
func (l *driftLister) walk(ctx context.Context, judge func([]dns.Record, time.Time) error) (int, error) {
	prefix := installationPrefix(l.r.OwnerID)
	pager, ok := l.r.DNS.(dns.OwnerPrefixPager)
	if !ok {
		// One list: for RFC 2136 a streamed zone transfer.
		var recs []dns.Record
		err := l.retry(ctx, func() error {
			var err error
			recs, err = l.r.DNS.ListByOwnerPrefix(ctx, prefix)
			return err
		})
		if err != nil {
			return 0, err
		}
		return 1, judge(recs, l.r.Clock.Now())
	}
	pace := l.pace()
	var at dns.PageToken
	for pages := 1; ; pages++ {
		var (
			recs []dns.Record
			next dns.PageToken
			more bool
		)
		err := l.retry(ctx, func() error {
			var err error
			recs, next, more, err = pager.ListPageByOwnerPrefix(ctx, prefix, at)
			return err
		})
		if err != nil {
			return pages, err
		}
		if err := judge(recs, l.r.Clock.Now()); err != nil {
			return pages, err
		}
		if !more {
			return pages, nil
		}
		at = next
		if err := sleep(ctx, pace); err != nil {
			return pages, err
		}
	}
}

// pace is the pause between two pages: the last pass's pages spread over
// half the interval, or, before any pass completed, a twentieth of it (a
// second at most).
func (l *driftLister) pace() time.Duration {
	interval := l.r.DriftCheckInterval
	if l.pages > 1 {
		return interval / time.Duration(2*l.pages)
	}
	return min(time.Second, interval/20)
}

// retry calls list until it succeeds or ctx ends, waiting from a fiftieth of
// the interval (a second at most), doubling, up to a quarter of it.
func (l *driftLister) retry(ctx context.Context, list func() error) error {
	interval := l.r.DriftCheckInterval
	wait := min(time.Second, interval/50)
	for {
		err := list()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.log.Error(err, "Listing DNS records for the drift pass failed; retrying the page", "after", wait)
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, max(interval/4, time.Second))
	}
}

// sleep waits d, or until ctx ends, which it returns as an error: the drift
// pass's pages and the orphan sweep's records are paced with it.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// expected is what the drift pass compares app's listed record with: what
// the last read of it left, or the status for a MyApp this manager has not
// read; ok is false when the record is not at rest (not ACTIVE and as
// wanted), which other passes look after. readAt is when that read was
// made (zero for a status).
func (l *driftLister) expected(app *appsv1alpha1.MyApp) (want appsv1alpha1.DNSRecordStatus, readAt time.Time, known, ok bool) {
	seen := seenOf(app)
	if last, found := l.r.dnsChecks.get(client.ObjectKeyFromObject(app), app.UID); found {
		seen, readAt, known = last.seen, last.readAt, true
	}
	want = seen.record
	ok = app.DeletionTimestamp.IsZero() && l.r.listsDrift(app) && seen.reason == appsv1alpha1.RecordActiveReason &&
		want.State == appsv1alpha1.DNSRecordActive && want.Name == app.Spec.Host && len(want.Previous) == 0 &&
		want.Owner == wantedOwner(l.r.OwnerID, app)
	return want, readAt, known, ok
}

// judge compares one listed record with what its MyApp expects, notes the
// MyApp as listed, and marks and sends it when they differ. A record whose
// owner names no live MyApp of this installation is the orphan sweep's.
func (l *driftLister) judge(ctx context.Context, rec *dns.Record, fetched time.Time, listed sets.Set[types.NamespacedName]) (bool, error) {
	ref, ok := parseRecordOwner(rec.Owner)
	if !ok || ref.orphaned || ref.installation != l.r.OwnerID {
		return false, nil
	}
	app := &appsv1alpha1.MyApp{}
	if err := l.reader.Get(ctx, ref.key, app, client.UnsafeDisableDeepCopy); err != nil || app.UID != ref.uid {
		return false, nil //nolint:nilerr // not in the cache: gone (the sweep's) or not watched
	}
	want, readAt, _, ok := l.expected(app)
	if !ok || rec.Name != want.Name {
		return false, nil
	}
	listed.Insert(ref.key)
	if readAt.After(fetched) {
		return false, nil // read since the page was fetched: the page is older than what the MyApp knows
	}
	if !recordDiffers(rec, &want, l.r.RecordTTL) {
		return false, nil
	}
	driftRecordsFound.WithLabelValues("changed").Inc()
	return true, l.send(ctx, ref.key)
}

// recordDiffers reports whether rec is not the ACTIVE record want shows,
// with the TTL the operator writes.
func recordDiffers(rec *dns.Record, want *appsv1alpha1.DNSRecordStatus, ttl int32) bool {
	return rec.Type != want.Type || rec.Value != want.Value || rec.Owner != want.Owner || rec.TTL != ttl ||
		rec.State != dns.StateActive
}

// findMissing sends every MyApp at rest that the complete list did not hold
// and whose record was last read before the pass started; it returns how
// many. Only MyApps this manager has passed can be judged (the others read
// on their own), so it walks the schedule's memory, not every MyApp.
func (l *driftLister) findMissing(ctx context.Context, start time.Time, listed sets.Set[types.NamespacedName]) (int, error) {
	missing := 0
	app := &appsv1alpha1.MyApp{}
	for _, key := range l.r.dnsChecks.keys() {
		if listed.Has(key) {
			continue
		}
		*app = appsv1alpha1.MyApp{}
		if err := l.reader.Get(ctx, key, app, client.UnsafeDisableDeepCopy); err != nil {
			continue // gone, or not in the cache yet: nothing to judge
		}
		_, readAt, known, ok := l.expected(app)
		// One read since the pass started may have written its record after
		// its page was fetched.
		if !ok || !known || !readAt.Before(start) {
			continue
		}
		driftRecordsFound.WithLabelValues("missing").Inc()
		missing++
		if err := l.send(ctx, key); err != nil {
			return missing, err
		}
	}
	return missing, nil
}

// send marks key drifted and brings it to the controller.
func (l *driftLister) send(ctx context.Context, key types.NamespacedName) error {
	l.r.dnsChecks.markDrifted(key)
	obj := &appsv1alpha1.MyApp{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case l.events <- event.GenericEvent{Object: obj}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
