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
	"slices"
	"sync"
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

// The drift pass's health. The gauges have no labels but are vectors, so
// that only a manager that runs the pass (the leader, in list mode) exports
// them: a standby's zero would read as a pass that never succeeded.
var (
	driftPassFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "myapp_dns_drift_pass_failures_total",
		Help: "Lists (pages, or RFC 2136 zone transfers) of the DNS drift pass that failed; each is retried with a backoff.",
	})
	driftPassLastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_dns_drift_pass_last_success_timestamp_seconds",
		Help: "When the DNS drift pass last listed every record, in Unix seconds; until the first success, when the pass started " +
			"on this leader. Exported only by the manager that runs the pass.",
	}, nil)
	driftPassInterval = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_dns_drift_pass_interval_seconds",
		Help: "The DNS drift interval (--dns-drift-interval) of the pass, in seconds, so an alert can count intervals. " +
			"Exported only by the manager that runs the pass.",
	}, nil)
	driftPassFallback = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "myapp_dns_drift_pass_fallback",
		Help: "1 while the DNS drift pass's list has failed for over an interval and each record is read at its own point " +
			"of the interval instead, 0 otherwise. Exported only by the manager that runs the pass.",
	}, nil)
)

func init() {
	metrics.Registry.MustRegister(driftRecordsFound, driftPassFailures, driftPassLastSuccess, driftPassInterval, driftPassFallback)
}

// listsDrift reports whether app's ACTIVE record is checked by the drift
// pass rather than by a timed read: the pass lists it (listedByDriftPass)
// and its lists work. Once they have failed for a whole interval it
// answers false until a pass lists every record again, so each record's
// next read is scheduled at its own point of the interval, as in
// DriftCheckRead; the pass has the records whose last read scheduled none
// read once each, at those points (readAtDriftPoints).
func (r *Reconciler) listsDrift(app *appsv1alpha1.MyApp) bool {
	return r.listedByDriftPass(app) && !r.driftLists.fallingBack()
}

// listedByDriftPass reports whether the drift pass judges app's record from
// its list. The records of deletionPolicy Orphan MyApps carry the orphaned
// owner, outside the prefix the pass lists, so they keep their timed read.
func (r *Reconciler) listedByDriftPass(app *appsv1alpha1.MyApp) bool {
	return r.DriftCheck == DriftCheckList && app.Spec.DeletionPolicy != appsv1alpha1.DeletionPolicyOrphan
}

// driftListHealth is how the drift pass's lists fare: the pass writes it,
// and listsDrift reads it for every MyApp the controller passes.
type driftListHealth struct {
	mu sync.Mutex
	// failingSince is when the current run of failed lists began; zero
	// while they succeed.
	failingSince time.Time
	// fallback is set once the lists have failed for an interval, and
	// cleared when a pass lists every record again.
	fallback bool
	// episode counts the fallbacks, so the reads scheduled for one stop
	// when it ends, even if another begins before they notice.
	episode int
}

func (h *driftListHealth) fallingBack() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fallback
}

// inEpisode reports whether the fallback that episode numbers still lasts.
func (h *driftListHealth) inEpisode(episode int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fallback && h.episode == episode
}

// failed notes a failed list at now, and returns when the run of failures
// began.
func (h *driftListHealth) failed(now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failingSince.IsZero() {
		h.failingSince = now
	}
	return h.failingSince
}

// fallBack sets fallback and returns the episode it began, or 0 when it
// was set already.
func (h *driftListHealth) fallBack() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fallback {
		return 0
	}
	h.fallback = true
	h.episode++
	return h.episode
}

// succeeded notes a list that came. It does not end the fallback by
// itself: only a whole pass does (passSucceeded).
func (h *driftListHealth) succeeded() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failingSince = time.Time{}
}

// passSucceeded ends the fallback, once a pass listed every record, and
// reports whether there was one.
func (h *driftListHealth) passSucceeded() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	was := h.fallback
	h.fallback, h.failingSince = false, time.Time{}
	return was
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
//
// A list that keeps failing (a server that refuses zone transfers, a list
// endpoint that fails) must not stop drift repair: once the lists have
// failed for a whole interval, the pass falls back to reading each record
// at its own point of the interval, as DriftCheckRead does (listsDrift),
// until a pass lists every record again. Each failed list is counted
// (myapp_dns_drift_pass_failures_total), and the time of the last complete
// pass is exported for an alert (MyAppDNSDriftPassFailing).
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
	// Until a pass succeeds, the last success is this start, so the alert
	// counts the intervals since then.
	driftPassLastSuccess.WithLabelValues().Set(float64(l.r.Clock.Now().Unix()))
	driftPassInterval.WithLabelValues().Set(interval.Seconds())
	driftPassFallback.WithLabelValues().Set(0)
	defer func() {
		// Another replica's pass takes over; this one's series would only
		// grow stale.
		driftPassLastSuccess.DeleteLabelValues()
		driftPassInterval.DeleteLabelValues()
		driftPassFallback.DeleteLabelValues()
	}()
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
	driftPassLastSuccess.WithLabelValues().Set(float64(l.r.Clock.Now().Unix()))
	if l.r.driftLists.passSucceeded() {
		driftPassFallback.WithLabelValues().Set(0)
		l.log.Info("DNS drift pass listed every record again; records are checked by list, not read each interval",
			"listed", listed.Len())
	}
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
// the interval (a second at most), doubling, up to a quarter of it. Once
// the lists have failed for a whole interval it falls back to timed reads
// (fallBack), at that moment, not at the next try.
func (l *driftLister) retry(ctx context.Context, list func() error) error {
	interval := l.r.DriftCheckInterval
	health := &l.r.driftLists
	wait := min(time.Second, interval/50)
	for {
		err := list()
		if err == nil {
			health.succeeded()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		driftPassFailures.Inc()
		failingSince := health.failed(l.r.Clock.Now())
		l.log.Error(err, "Listing DNS records for the drift pass failed; retrying the page", "after", wait,
			"failingFor", l.r.Clock.Since(failingSince).Round(time.Millisecond))
		pause := wait
		if untilFallback := failingSince.Add(interval).Sub(l.r.Clock.Now()); untilFallback <= 0 {
			l.fallBack(ctx)
		} else {
			pause = min(pause, untilFallback)
		}
		if err := sleep(ctx, pause); err != nil {
			return err
		}
		if pause == wait {
			wait = min(2*wait, max(interval/4, time.Second))
		}
	}
}

// fallBack starts the fallback to timed reads, once per run of failures:
// from now on listsDrift is false, so every read the controller makes
// schedules the record's next one at its point of the interval, and the
// records at rest, whose last read scheduled none, are read once each at
// their points (readAtDriftPoints).
func (l *driftLister) fallBack(ctx context.Context) {
	episode := l.r.driftLists.fallBack()
	if episode == 0 {
		return
	}
	driftPassFallback.WithLabelValues().Set(1)
	l.log.Info("DNS drift pass has not listed the records for an interval; each record is read at its point of the "+
		"interval until a list succeeds", "interval", l.r.DriftCheckInterval)
	go l.readAtDriftPoints(ctx, episode)
}

// readAtDriftPoints sends each MyApp at rest whose last read scheduled no
// timed read (the drift pass was to list it) to the controller at its
// point of the next interval, marked drifted so that the pass reads the
// record; that read schedules the next one itself. It stops when ctx ends
// or a pass lists every record again, ending the fallback episode.
func (l *driftLister) readAtDriftPoints(ctx context.Context, episode int) {
	type due struct {
		at  time.Time
		key types.NamespacedName
	}
	now := l.r.Clock.Now()
	var queue []due
	app := &appsv1alpha1.MyApp{}
	for _, key := range l.r.dnsChecks.keys() {
		*app = appsv1alpha1.MyApp{}
		if err := l.reader.Get(ctx, key, app, client.UnsafeDisableDeepCopy); err != nil {
			continue // gone, or not in the cache yet: its first pass reads the record
		}
		last, known := l.r.dnsChecks.get(key, app.UID)
		if _, _, _, atRest := l.expected(app); !known || !atRest || !last.next.IsZero() {
			continue // a timed read is due anyway, or another pass looks after the record
		}
		queue = append(queue, due{at: nextDriftCheck(app.UID, l.r.DriftCheckInterval, now), key: key})
	}
	slices.SortFunc(queue, func(a, b due) int { return a.at.Compare(b.at) })
	health := &l.r.driftLists
	for _, d := range queue {
		if err := sleep(ctx, d.at.Sub(l.r.Clock.Now())); err != nil {
			return
		}
		if !health.inEpisode(episode) {
			return // the lists work again: the pass judges the rest
		}
		if err := l.send(ctx, d.key); err != nil {
			return
		}
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
	ok = app.DeletionTimestamp.IsZero() && l.r.listedByDriftPass(app) && seen.reason == appsv1alpha1.RecordActiveReason &&
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

// recordDiffers reports whether rec is not the record want shows, with the
// TTL the operator writes. The listed state is not compared: a list judges
// it for every record at once, from the zone's serial for RFC 2136, so one
// secondary a serial behind (an unrelated update not transferred yet) makes
// every record of a long list PENDING. A record whose type, value, owner
// and TTL match what its MyApp's last read found ACTIVE was not changed
// since; a read of each would only find it so, at a read and a reconcile
// per MyApp per interval.
func recordDiffers(rec *dns.Record, want *appsv1alpha1.DNSRecordStatus, ttl int32) bool {
	return rec.Type != want.Type || rec.Value != want.Value || rec.Owner != want.Owner || rec.TTL != ttl
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
