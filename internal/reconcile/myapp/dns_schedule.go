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
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// A MyApp is reconciled for many reasons that have nothing to do with its DNS
// record: each child it creates, each Deployment status change during a
// rollout, each of its own status writes. Reading the record on every one of
// those passes would cost the DNS service several calls per MyApp while it
// converges, and after a manager restart one call per MyApp within a second.
// So the record is read only when a read is due:
//
//   - the host or the target changed, or the status does not show what the
//     last read left (nothing read yet, a status edited or not yet in the
//     cache), or the last call failed;
//   - a PENDING record's poll time came;
//   - an ACTIVE record's drift check, or a host conflict's re-check, came:
//     once per drift interval at a point of it fixed by the MyApp's UID, so
//     checks are spread evenly over the interval and stay so across restarts
//     without writing a time into the status. When drift is found by list
//     (DriftCheckList, drift_list.go) an ACTIVE record has no such check:
//     the drift pass lists the records once per interval, and a record it
//     finds different from what the last read left, or does not find, is
//     read at once;
//   - the MyApp holding the contested host changed (it moved, released its
//     record or went away);
//   - the adoption annotation (adopt.go) was set or removed.
//
// What the last read left lives in memory. A restarted manager remembers
// nothing and trusts a status that shows a settled record (ACTIVE and as
// wanted, or a conflict judged for the current spec): it waits for that
// MyApp's next drift check instead of reading every record at once.

// dnsSchedule remembers, per MyApp, what the last read of its record left in
// the status and when the record is next due.
type dnsSchedule struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]dnsCheck
	// slots counts the drift checks scheduled in each second (Unix time),
	// and slotOf is the second each MyApp's check holds (driftCheck).
	slots  map[int64]int
	slotOf map[types.NamespacedName]int64
	// drifted are the MyApps whose record the drift pass found different
	// from what the last read left, or missing: their next pass reads it.
	drifted map[types.NamespacedName]struct{}
}

// dnsCheck is what one MyApp's last read left.
type dnsCheck struct {
	uid types.UID
	// host is the spec.host the read was for.
	host string
	// readFrom is the resourceVersion of the MyApp the reading pass started
	// from. A pass that starts from it again runs on a cache that has not
	// caught up with that pass's status write yet: its status is older than
	// what the read found, not different from it.
	readFrom string
	// seen is the DNS part of the status the read left.
	seen dnsSeen
	// next is when the record is next read; zero when no timed read is
	// due (an ACTIVE record whose drift the drift pass finds by list).
	next time.Time
	// readAt is when the read was made; zero for a status trusted after a
	// restart, which an earlier manager read.
	readAt time.Time
	// holder is the MyApp holding spec.host when the read found a conflict,
	// as the cache showed it; nil when there is no conflict or the holder is
	// not a live MyApp.
	holder *holderSnapshot
	// adopt is whether the MyApp asked to adopt its record at the read.
	adopt bool
}

// dnsSeen is the part of a MyApp's status a read of its record decides.
type dnsSeen struct {
	record appsv1alpha1.DNSRecordStatus
	reason string
}

// holderSnapshot is what about the MyApp holding a contested host decides
// whether it may release the host.
type holderSnapshot struct {
	key  types.NamespacedName
	uid  types.UID
	host string
	// dnsName is the hosts its status shows held, joined.
	dnsName  string
	deleting bool
}

// equal reports whether two reads left the same status.
func (s dnsSeen) equal(other dnsSeen) bool {
	return s.reason == other.reason && equality.Semantic.DeepEqual(s.record, other.record)
}

func seenOf(app *appsv1alpha1.MyApp) dnsSeen {
	var s dnsSeen
	if app.Status.DNS != nil {
		s.record = *app.Status.DNS
	}
	if c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition); c != nil {
		s.reason = c.Reason
	}
	return s
}

// seenAfter is the DNS part of the status this pass leaves: the record in
// the status as the pass left it, and the DNSReady reason it decided, which
// setConditions writes only once the pass is over.
func seenAfter(s *scope) dnsSeen {
	seen := seenOf(s.app)
	if s.readiness.dns != nil {
		seen.reason = s.readiness.dns.reason
	}
	return seen
}

func snapshotOf(holder *appsv1alpha1.MyApp) *holderSnapshot {
	s := &holderSnapshot{
		key:      client.ObjectKeyFromObject(holder),
		uid:      holder.UID,
		host:     holder.Spec.Host,
		deleting: !holder.DeletionTimestamp.IsZero(),
	}
	if holder.Status.DNS != nil {
		s.dnsName = strings.Join(append([]string{holder.Status.DNS.Name}, holder.Status.DNS.Previous...), ",")
	}
	return s
}

func (d *dnsSchedule) get(key types.NamespacedName, uid types.UID) (dnsCheck, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.entries[key]
	return c, ok && c.uid == uid
}

func (d *dnsSchedule) set(key types.NamespacedName, c dnsCheck) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil {
		d.entries = map[types.NamespacedName]dnsCheck{}
	}
	d.entries[key] = c
	delete(d.drifted, key)
}

// keys are the MyApps whose read is remembered.
func (d *dnsSchedule) keys() []types.NamespacedName {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(d.entries))
	for k := range d.entries {
		out = append(out, k)
	}
	return out
}

// markDrifted makes key's next pass read its record: the drift pass found
// it different from what the last read left, or missing.
func (d *dnsSchedule) markDrifted(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.drifted == nil {
		d.drifted = map[types.NamespacedName]struct{}{}
	}
	d.drifted[key] = struct{}{}
}

// isDrifted reports whether the drift pass asked key's record to be read.
func (d *dnsSchedule) isDrifted(key types.NamespacedName) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.drifted[key]
	return ok
}

// unschedule frees the second key's drift check held, if any.
func (d *dnsSchedule) unschedule(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.releaseSlot(key)
}

// heldAtLastRead is the host the last read of app's record found it holding,
// as a set of routes: the status in the cache may not show that read's
// write yet, and routing from it would take the route away and put it back.
func (d *dnsSchedule) heldAtLastRead(app *appsv1alpha1.MyApp) sets.Set[string] {
	st := app.Status.DNS
	if last, ok := d.get(client.ObjectKeyFromObject(app), app.UID); ok && app.ResourceVersion == last.readFrom {
		st = &last.seen.record
	}
	return sets.New(heldHostsIn(st, app)...)
}

// forget drops what was remembered of key: its next pass reads the record
// unless the status shows it settled.
func (d *dnsSchedule) forget(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.entries, key)
	delete(d.drifted, key)
	d.releaseSlot(key)
}

// driftPhase is the point of every drift interval at which the MyApp with
// uid is checked, counted from the Unix epoch. A hash spreads the MyApps of
// a cluster evenly over the interval, and the same UID always gets the same
// point, so a restart changes nobody's schedule.
func driftPhase(uid types.UID, interval time.Duration) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return time.Duration(h.Sum64() % uint64(interval))
}

// nextDriftCheck is the MyApp's first drift check after now.
func nextDriftCheck(uid types.UID, interval time.Duration, now time.Time) time.Time {
	into := (time.Duration(now.UnixNano()) - driftPhase(uid, interval)) % interval
	if into < 0 {
		into += interval
	}
	return now.Add(interval - into)
}

// dnsReadDue says whether this pass must read the MyApp's record, given
// the type and value it should have; if not, untilDue is how long until
// it must.
func (r *Reconciler) dnsReadDue(ctx context.Context, app *appsv1alpha1.MyApp, recordType, value string) (due bool, untilDue time.Duration) {
	now := r.Clock.Now()
	st := app.Status.DNS
	asWanted := st != nil && st.Name == app.Spec.Host && st.Owner == wantedOwner(r.OwnerID, app) && len(st.Previous) == 0 &&
		st.Type == recordType && st.Value == value
	seen := seenOf(app)
	conflict := seen.reason == appsv1alpha1.HostConflictReason

	if r.readAsked(app) {
		return true, 0
	}
	last, known := r.dnsChecks.get(client.ObjectKeyFromObject(app), app.UID)
	if !known {
		return r.dueAfterRestart(app, asWanted, seen, now)
	}
	switch {
	case last.host != app.Spec.Host:
		return true, 0
	case conflict && last.adopt != wantsAdoption(app):
		return true, 0 // the annotation asking to adopt the record came or went (adopt.go)
	case !last.seen.equal(seen) && app.ResourceVersion != last.readFrom:
		return true, 0 // the status is not what the last read left
	case !conflict && !asWanted && last.seen.equal(seen):
		return true, 0 // the target changed
	case last.holder != nil && r.holderChanged(ctx, *last.holder):
		return true, 0
	case !last.next.IsZero() && !now.Before(last.next):
		return true, 0
	}
	return false, untilNext(last.next, now)
}

// untilNext is the wait until next, or 0 (no timed pass) when next is zero.
func untilNext(next, now time.Time) time.Duration {
	if next.IsZero() {
		return 0
	}
	return next.Sub(now)
}

// activeDriftCheck is when the ACTIVE record of app is next read for drift:
// its drift check (driftCheck), or, where the drift pass lists the records
// (listsDrift), never by itself (zero): the drift pass has it read when the
// list shows it changed or gone.
func (r *Reconciler) activeDriftCheck(app *appsv1alpha1.MyApp, now time.Time) time.Time {
	key := client.ObjectKeyFromObject(app)
	if r.listsDrift(app) {
		r.dnsChecks.unschedule(key)
		return time.Time{}
	}
	return r.dnsChecks.driftCheck(key, app.UID, r.DriftCheckInterval, now)
}

// readAsked reports whether something asks for a read whatever the
// schedule says.
func (r *Reconciler) readAsked(app *appsv1alpha1.MyApp) bool {
	switch {
	case wasSuspended(app):
		return true // the first pass after a resume: the record may have changed meanwhile
	case reconcileRequested(app):
		return true // reconcile.myapp.dev/requested-at has a value not handled yet
	}
	return r.dnsChecks.isDrifted(client.ObjectKeyFromObject(app)) // the drift pass found the record changed or gone
}

// dueAfterRestart decides for a MyApp this manager has not read the record
// of yet (it just started): a status that shows a settled record is trusted
// until the MyApp's next drift check; anything else is read now.
func (r *Reconciler) dueAfterRestart(app *appsv1alpha1.MyApp, asWanted bool, seen dnsSeen, now time.Time) (bool, time.Duration) {
	st := app.Status.DNS
	cond := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition)
	// A conflict the MyApp asks to adopt out of is read once more: the
	// annotation may have come after the conflict was judged.
	settled := asWanted && st.State == appsv1alpha1.DNSRecordActive && seen.reason == appsv1alpha1.RecordActiveReason ||
		seen.reason == appsv1alpha1.HostConflictReason && cond.ObservedGeneration == app.Generation && !wantsAdoption(app)
	if !settled {
		return true, 0
	}
	var next time.Time
	if seen.reason == appsv1alpha1.HostConflictReason {
		next = r.dnsChecks.driftCheck(client.ObjectKeyFromObject(app), app.UID, r.DriftCheckInterval, now)
	} else {
		next = r.activeDriftCheck(app, now)
	}
	r.dnsChecks.set(client.ObjectKeyFromObject(app), dnsCheck{
		uid: app.UID, host: app.Spec.Host, seen: seen, next: next, adopt: wantsAdoption(app),
	})
	return false, untilNext(next, now)
}

// holderChanged reports whether the MyApp holding a contested host is no
// longer as the last read found it, in the cache: it may have released the
// host. Any doubt is a change; it costs one read.
func (r *Reconciler) holderChanged(ctx context.Context, was holderSnapshot) bool {
	holder := &appsv1alpha1.MyApp{}
	if err := r.Client.Get(ctx, was.key, holder); err != nil {
		return true
	}
	return *snapshotOf(holder) != was
}

// rememberDNSCheck records what this pass's read left in the status, and
// when the record is next due; it returns the wait until then.
func (r *Reconciler) rememberDNSCheck(s *scope, next time.Time, holder *holderSnapshot) time.Duration {
	app := s.app
	now := r.Clock.Now()
	r.dnsChecks.set(client.ObjectKeyFromObject(app), dnsCheck{
		uid: app.UID, host: app.Spec.Host, readFrom: app.ResourceVersion, seen: seenAfter(s), next: next, holder: holder,
		adopt: wantsAdoption(app), readAt: now,
	})
	return untilNext(next, now)
}

// driftCheck is when the MyApp with key and uid is next checked for drift:
// its point of the interval (driftPhase), moved on to the next second that
// has room when its own second is full. A hash alone spreads the checks like
// random arrivals, which bunch: 1,000 MyApps over 5 minutes put 9 checks
// into some second against a mean of 3.3. So each second takes at most 1.5
// times the mean rate of the MyApps scheduled (at least 2, so that few
// MyApps stay at their own points; the seconds still hold more than all of
// them), and the DNS service sees well under twice its mean rate after a
// restart, when every settled MyApp is scheduled at once, also over a
// window that takes in the seconds the manager needs to start. A check
// moves by a few seconds at most; it keeps its second across restarts as
// long as the second has room.
func (d *dnsSchedule) driftCheck(key types.NamespacedName, uid types.UID, interval time.Duration, now time.Time) time.Time {
	next := nextDriftCheck(uid, interval, now)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.slots == nil {
		d.slots, d.slotOf = map[int64]int{}, map[types.NamespacedName]int64{}
	}
	d.releaseSlot(key)
	perSecond := max(2, 3*(len(d.slotOf)+1)*int(time.Second)/(2*int(max(interval, time.Second))))
	slot := next.Unix()
	for d.slots[slot] >= perSecond {
		slot++
	}
	d.slots[slot]++
	d.slotOf[key] = slot
	if slot != next.Unix() {
		next = time.Unix(slot, 0)
	}
	return next
}

// releaseSlot frees the second key's drift check held; d.mu is held.
func (d *dnsSchedule) releaseSlot(key types.NamespacedName) {
	slot, ok := d.slotOf[key]
	if !ok {
		return
	}
	delete(d.slotOf, key)
	if d.slots[slot]--; d.slots[slot] <= 0 {
		delete(d.slots, slot)
	}
}
