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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
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
