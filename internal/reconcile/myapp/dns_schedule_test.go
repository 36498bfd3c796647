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
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// TestDriftChecksAfterARestartSpreadEvenly schedules the drift checks of
// 1,000 settled MyApps the way a restarted manager does, all at once, and
// counts them per second: no second may hold more than twice the mean
// (issue 13's restart target). A hash of the UID alone spreads them like
// random arrivals, which put 9 into some second against a mean of 3.3.
func TestDriftChecksAfterARestartSpreadEvenly(t *testing.T) {
	g := NewWithT(t)
	const n = 1000
	interval := DefaultDriftCheckInterval
	now := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)
	var schedule dnsSchedule
	perSecond := map[int64]int{}
	for i := range n {
		key := types.NamespacedName{Namespace: fmt.Sprintf("ns%d", i%4), Name: fmt.Sprintf("app%d", i)}
		next := schedule.driftCheck(key, uuid.NewUUID(), interval, now)
		g.Expect(next).To(BeTemporally(">", now))
		g.Expect(next.Sub(now)).To(BeNumerically("<=", interval+interval/10), "a check is never put off by much")
		perSecond[next.Unix()]++
	}
	mean := float64(n) / interval.Seconds()
	peak := 0
	for _, c := range perSecond {
		peak = max(peak, c)
	}
	g.Expect(float64(peak)).To(BeNumerically("<=", 2*mean), "peak %d/s against a mean of %.1f/s", peak, mean)

	// The schedule holds one slot per MyApp: moving a MyApp's check frees
	// its old slot, and forgetting it frees its slot.
	key := types.NamespacedName{Namespace: "ns0", Name: "app0"}
	uid := uuid.NewUUID()
	schedule.driftCheck(key, uid, interval, now)
	schedule.driftCheck(key, uid, interval, now.Add(interval))
	schedule.forget(key)
	total := 0
	for _, c := range schedule.slots {
		total += c
	}
	g.Expect(total).To(Equal(n - 1))
}

// TestDriftChecksAreSpreadOverTheInterval: each MyApp's drift check has a
// point of the interval fixed by its UID, spread evenly over the interval.
func TestDriftChecksAreSpreadOverTheInterval(t *testing.T) {
	g := NewWithT(t)
	const interval = 5 * time.Minute
	const apps, buckets = 10000, 10
	// UIDs as the API server makes them; a fixed seed keeps the test
	// deterministic.
	rnd := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, buckets)
	for range apps {
		var b [16]byte
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		uid := types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]))
		phase := driftPhase(uid, interval)
		g.Expect(phase).To(And(BeNumerically(">=", 0), BeNumerically("<", interval)))
		g.Expect(driftPhase(uid, interval)).To(Equal(phase), "the same UID always gets the same phase")
		counts[int(phase*buckets/interval)]++
	}
	// Each tenth of the interval holds a tenth of the checks, within 10%:
	// a restart peak is the mean rate, not N reads at once.
	for i, n := range counts {
		g.Expect(n).To(BeNumerically("~", apps/buckets, apps/buckets/10), "bucket %d", i)
	}

	// The next check is the first point at the phase after now, so a
	// restart at any time schedules it within one interval.
	uid := types.UID("0b7c3b9e-8a5f-4c43-9f64-3d7f6a1a2b3c")
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	next := nextDriftCheck(uid, interval, now)
	g.Expect(next.After(now)).To(BeTrue())
	g.Expect(next.Sub(now)).To(BeNumerically("<=", interval))
	g.Expect((time.Duration(next.UnixNano()) % interval)).To(Equal(driftPhase(uid, interval)))
	g.Expect(nextDriftCheck(uid, interval, next)).To(Equal(next.Add(interval)), "from a check, the next is one interval on")
}

// TestAHandOverNoteAddedDuringAPassOutlivesIt: the giver notes a hand-over
// right after its call, while the receiver may be in a pass of its own that
// recalled its notes before; settling what that pass saw keeps the note it
// did not see. (Family 10 found a receiver's pass drop such a note, and the
// host the giver was owed go to a waiter.)
func TestAHandOverNoteAddedDuringAPassOutlivesIt(t *testing.T) {
	g := NewWithT(t)
	var d dnsSchedule
	key, uid := types.NamespacedName{Namespace: "ns", Name: "b"}, uuid.NewUUID()
	old := dnsplan.Gift{Host: "h0", Giver: "ns/c"}
	d.noteGift(key, uid, old)
	_, _, seen := d.recall(key, uid)
	late := dnsplan.Gift{Host: "h1", Giver: "ns/a", For: "h2"}
	d.noteGift(key, uid, late) // the giver's note, while the pass runs
	d.settleGifts(key, uid, seen, nil)
	_, _, now := d.recall(key, uid)
	g.Expect(now).To(ConsistOf(late), "the note the pass did not see stays; the one it settled goes")
}
