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
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// The DNS phase's memory. When a read is due is decided in dnsplan (due.go
// there says why reads are rare); this file keeps what that decision
// needs from one pass to the next, in this manager only: what each MyApp's
// last read left and when its record is next read, the drift checks'
// seconds, the MyApps the drift pass or a hand-over asks to read, and the
// notes of hand-overs a receiver has not settled. A restarted manager
// remembers nothing, which dnsplan takes into account.

// remember keeps what a pass that ended as dnsplan says leaves for the
// next: for a pass that read, what the read left in the status, the timed
// read dnsplan chose and the hand-over notes still open; for a status a
// restarted manager trusts instead of reading, its next timed read. It
// returns the wait until the timed read the memory holds, zero for none.
func (r *Reconciler) remember(o observation, out dnsplan.Outcome, show dnsplan.Show) time.Duration {
	next := r.nextRead(o, show)
	switch {
	case show.Next == dnsplan.NextKeep || out.Kind == dnsplan.KindWaitingForAddress || o.Deleting:
	case out.Trust:
		r.dnsChecks.set(o.key, dnsCheck{uid: o.app.UID, host: o.Host, seen: seenOf(o.app), next: next, adopt: o.Adopt})
	default:
		seen := seenOf(o.app)
		seen.reason = show.Reason
		c := dnsCheck{uid: o.app.UID, host: out.Read, readFrom: o.ResourceVersion, seen: seen, next: next, readAt: o.Now,
			adopt: o.Adopt, polls: show.Polls, lostOwed: out.LostOwed}
		if out.Holder.App != nil {
			holder := snapshotOf(*out.Holder.App)
			c.holder = &holder
		}
		r.dnsChecks.set(o.key, c)
		r.dnsChecks.settleGifts(o.key, o.app.UID, o.Gifts, out.Gifts)
	}
	return untilNext(next, o.Now)
}

// nextRead is the time of the read dnsplan chose: the one the memory holds,
// soon (the pending poll), the poll doubled per re-check in a row up to the
// drift interval, the MyApp's drift check, or none; each jittered so MyApps
// do not poll the service in lockstep.
func (r *Reconciler) nextRead(o observation, show dnsplan.Show) time.Time {
	switch show.Next {
	case dnsplan.NextKeep:
		return o.Memory.Next
	case dnsplan.NextDrift:
		return r.dnsChecks.driftCheck(o.key, o.app.UID, r.DriftCheckInterval, o.Now)
	}
	r.dnsChecks.unschedule(o.key)
	switch show.Next {
	case dnsplan.NextPoll:
		return o.Now.Add(wait.Jitter(r.PendingPollInterval, pass.JitterFactor))
	case dnsplan.NextBackoff:
		d := r.PendingPollInterval
		for range show.Polls {
			if d >= r.DriftCheckInterval {
				break
			}
			d *= 2
		}
		return o.Now.Add(min(wait.Jitter(d, pass.JitterFactor), r.DriftCheckInterval))
	}
	return time.Time{}
}

// snapshotOf is what about a MyApp holding a contested host is remembered,
// to tell whether it changed.
func snapshotOf(app dnsplan.App) dnsplan.HolderSnapshot {
	return dnsplan.HolderSnapshot{Key: app.Key, UID: app.UID, Host: app.Host, Holds: strings.Join(app.Holds, ","),
		Deleting: app.Deleting}
}

// dnsSchedule is the memory of the DNS phase, for every MyApp.
type dnsSchedule struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]dnsCheck
	// slots counts the drift checks scheduled in each second (Unix time),
	// and slotOf is the second each MyApp's check holds (driftCheck).
	slots  map[int64]int
	slotOf map[types.NamespacedName]int64
	// drifted are the MyApps whose record the drift pass found different
	// from what the last read left, or missing; woken those a change of a
	// MyApp holding or wanting a host they care about woke (hostWaiters).
	// Their next pass reads the record.
	drifted map[types.NamespacedName]struct{}
	woken   map[types.NamespacedName]struct{}
	// gifts are the notes of hand-overs to each MyApp: kept across its
	// failed passes, dropped once settled or once the MyApp is gone.
	gifts map[types.NamespacedName]giftNotes
}

// giftNotes are the hand-over notes of the MyApp with uid.
type giftNotes struct {
	uid   types.UID
	notes []dnsplan.Gift
}

// dnsCheck is what one MyApp's last read left.
type dnsCheck struct {
	uid types.UID
	// host is the spec.host the read was for.
	host string
	// readFrom is the resourceVersion of the MyApp the reading pass started
	// from; empty for a status trusted after a restart.
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
	// as the cache showed it; nil when there is none.
	holder *dnsplan.HolderSnapshot
	// adopt is whether the MyApp asked to adopt its record at the read.
	adopt bool
	// polls and lostOwed are dnsplan.Memory's.
	polls    int
	lostOwed bool
}

// dnsSeen is the part of a MyApp's status a read of its record decides.
type dnsSeen struct {
	record appsv1alpha1.DNSRecordStatus
	reason string
}

// seenOf is the DNS part of app's status.
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

// plan is s as dnsplan compares it.
func (s dnsSeen) plan() dnsplan.Seen {
	out := dnsplan.Seen{Reason: s.reason}
	if s.record.Name != "" {
		record := s.record
		out.Record = &record
	}
	return out
}

// memory is c as dnsplan reads it.
func (c dnsCheck) memory() *dnsplan.Memory {
	return &dnsplan.Memory{Host: c.host, ReadFrom: c.readFrom, Seen: c.seen.plan(), Next: c.next, Holder: c.holder,
		Adopt: c.adopt, Polls: c.polls, LostOwed: c.lostOwed}
}

func (d *dnsSchedule) get(key types.NamespacedName, uid types.UID) (dnsCheck, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.entries[key]
	return c, ok && c.uid == uid
}

// recall is what a pass of the MyApp key with uid remembers: its last read
// (nil for none), why its record is asked to be read, and its notes.
func (d *dnsSchedule) recall(key types.NamespacedName, uid types.UID) (*dnsplan.Memory, dnsplan.Ask, []dnsplan.Gift) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var m *dnsplan.Memory
	if c, ok := d.entries[key]; ok && c.uid == uid {
		m = c.memory()
	}
	var ask dnsplan.Ask
	if _, ok := d.drifted[key]; ok {
		ask |= dnsplan.AskDrifted
	}
	if _, ok := d.woken[key]; ok {
		ask |= dnsplan.AskWoken
	}
	var gifts []dnsplan.Gift
	if g, ok := d.gifts[key]; ok && g.uid == uid {
		gifts = slices.Clone(g.notes)
	}
	return m, ask, gifts
}

// set remembers what a read of key left; the asks it answered are done.
func (d *dnsSchedule) set(key types.NamespacedName, c dnsCheck) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil {
		d.entries = map[types.NamespacedName]dnsCheck{}
	}
	d.entries[key] = c
	delete(d.drifted, key)
	delete(d.woken, key)
}

// settleGifts replaces, once a pass that read the notes seen settled what
// they said, those notes with the ones still open (kept). A note another
// MyApp's pass added meanwhile, which this pass did not see, stays: a
// hand-over is noted right after its call, while the receiver may be in a
// pass of its own.
func (d *dnsSchedule) settleGifts(key types.NamespacedName, uid types.UID, seen, kept []dnsplan.Gift) {
	d.mu.Lock()
	defer d.mu.Unlock()
	g, ok := d.gifts[key]
	if !ok || g.uid != uid {
		g = giftNotes{uid: uid}
	}
	notes := append([]dnsplan.Gift{}, kept...)
	for _, n := range g.notes {
		if !slices.Contains(seen, n) {
			notes = append(notes, n)
		}
	}
	if len(notes) == 0 {
		delete(d.gifts, key)
		return
	}
	if d.gifts == nil {
		d.gifts = map[types.NamespacedName]giftNotes{}
	}
	d.gifts[key] = giftNotes{uid: uid, notes: notes}
}

// noteGift adds a hand-over note to the MyApp key with uid.
func (d *dnsSchedule) noteGift(key types.NamespacedName, uid types.UID, note dnsplan.Gift) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gifts == nil {
		d.gifts = map[types.NamespacedName]giftNotes{}
	}
	g := d.gifts[key]
	if g.uid != uid {
		g = giftNotes{uid: uid}
	}
	g.notes = append(g.notes, note)
	d.gifts[key] = g
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

// wake makes key's next pass read its record, and its conflict's re-check
// start again from the shortest wait: a MyApp holding or wanting a host it
// cares about changed.
func (d *dnsSchedule) wake(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.woken == nil {
		d.woken = map[types.NamespacedName]struct{}{}
	}
	d.woken[key] = struct{}{}
}

// unschedule frees the second key's drift check held, if any.
func (d *dnsSchedule) unschedule(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.releaseSlot(key)
}

// forget drops what was remembered of key's last read: its next pass reads
// the record unless the status shows it settled. Hand-over notes stay: a
// failed pass has not settled them.
func (d *dnsSchedule) forget(key types.NamespacedName) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.entries, key)
	delete(d.drifted, key)
	delete(d.woken, key)
	d.releaseSlot(key)
}

// forgetAll drops everything remembered of key: the MyApp is gone.
func (d *dnsSchedule) forgetAll(key types.NamespacedName) {
	d.forget(key)
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.gifts, key)
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

// untilNext is the wait until next, or 0 (no timed pass) when next is zero.
func untilNext(next, now time.Time) time.Duration {
	if next.IsZero() {
		return 0
	}
	return next.Sub(now)
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
