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

package dnsplan

import (
	"fmt"
	"testing"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// everyDueObservation calls check for every observation of the due space:
// the status (nothing; the record ACTIVE as wanted; PENDING; pointing
// elsewhere; a conflict judged at this generation or an older one; a move
// under way), the memory (none after a restart; the status as it read it,
// or another; for spec.host or another host; its timed read past or not;
// a remembered holder, unchanged, changed or gone), what asks for a read,
// the adoption annotation now and at the read, and whether the pass
// starts from the resourceVersion the reading pass started from.
func everyDueObservation(check func(o Observation)) {
	now := time.Unix(1_800_000_000, 0)
	rec := func(name, value, state string, previous ...string) *appsv1alpha1.DNSRecordStatus {
		return &appsv1alpha1.DNSRecordStatus{Name: name, Type: "A", Value: value, Owner: me,
			State: appsv1alpha1.DNSRecordState(state), LastObservedState: appsv1alpha1.DNSRecordState(state), Previous: previous}
	}
	type statusCase struct {
		seen Seen
		gen  int64
	}
	statuses := []statusCase{
		{Seen{}, 0},
		{Seen{rec("a", wantedIP, "Active"), appsv1alpha1.RecordActiveReason}, 2},
		{Seen{rec("a", wantedIP, "Pending"), appsv1alpha1.RecordPendingReason}, 2},
		{Seen{rec("a", staleIP, "Active"), appsv1alpha1.RecordActiveReason}, 2},
		{Seen{nil, appsv1alpha1.HostConflictReason}, 2},
		{Seen{nil, appsv1alpha1.HostConflictReason}, 1},
		{Seen{rec("b", wantedIP, "Active"), appsv1alpha1.HostConflictReason}, 2},
		{Seen{rec("a", wantedIP, "Active", "b"), appsv1alpha1.RecordActiveReason}, 2},
	}
	holder := HolderSnapshot{Key: "ns-p/peer", UID: "uid-9", Host: "a", Holds: "a"}
	moved := holder
	moved.Host = "b"
	for _, st := range statuses {
		for memCase := range 7 {
			for _, asked := range []Ask{0, AskResumed, AskRequested, AskDrifted, AskWoken} {
				for holderCase := range 4 {
					for _, adopt := range []bool{false, true} {
						for _, sameRV := range []bool{false, true} {
							o := Observation{Now: now, Self: self, Host: "a", Generation: 2, ResourceVersion: "8",
								Address: Target{Type: "A", Value: wantedIP}, TTL: 300, Status: st.seen,
								ReasonGeneration: st.gen, Asked: asked, Adopt: adopt}
							if memCase > 0 {
								m := &Memory{Host: "a", ReadFrom: "7", Seen: st.seen, Next: now.Add(time.Minute), Adopt: adopt}
								switch memCase {
								case 2:
									m.Seen = Seen{rec("a", wantedIP, "Pending"), appsv1alpha1.RecordPendingReason}
								case 3:
									m.Host = "z"
								case 4:
									m.Next = now.Add(-time.Second)
								case 5:
									m.Next = time.Time{}
								case 6:
									m.Adopt = !adopt
								}
								if sameRV {
									m.ReadFrom = o.ResourceVersion
								}
								if holderCase > 0 {
									m.Holder = &holder
								}
								o.Memory = m
							}
							switch holderCase {
							case 1:
								o.HolderNow = &holder
							case 2:
								o.HolderNow = &moved
							}
							check(o)
						}
					}
				}
			}
		}
	}
}

// TestReadsAreDueOnlyWhenTheirRulesSay checks the read-due rules over the
// due space, each as a promise of its own: what asks for a read gets one;
// a move under way, a changed host, target or holder, a status the last
// read did not leave and a timed read that came each bring one; a restarted
// manager trusts only a settled status and remembers it; and a pass none of
// these apply to reads nothing.
func TestReadsAreDueOnlyWhenTheirRulesSay(t *testing.T) {
	c := proptest.New(t, "observations of the due space")
	everyDueObservation(func(o Observation) {
		due, trust := o.due()
		c.ObserveErr(func() string {
			return fmt.Sprintf("observation: status %+v (gen %d) memory %+v asked %d holder now %+v adopt %t",
				o.Status, o.ReasonGeneration, o.Memory, o.Asked, o.HolderNow, o.Adopt)
		}, checkDue(o, due, trust))
	})
	c.Report()
}

// dueFacts are the test's own readings of the status, for the promises.
type dueFacts struct {
	settledActive, judgedConflict, moving, conflict, asWanted bool
}

func factsOf(o Observation) dueFacts {
	st := o.Status.Record
	conflict := o.Status.Reason == appsv1alpha1.HostConflictReason
	return dueFacts{
		settledActive: st != nil && st.Name == "a" && st.Value == wantedIP && len(st.Previous) == 0 &&
			st.State == appsv1alpha1.DNSRecordActive && o.Status.Reason == appsv1alpha1.RecordActiveReason,
		judgedConflict: conflict && o.ReasonGeneration == o.Generation && !o.Adopt,
		moving:         st != nil && (st.Name != "a" || len(st.Previous) > 0),
		conflict:       conflict,
		asWanted:       st != nil && st.Name == "a" && st.Value == wantedIP && st.Owner == me && len(st.Previous) == 0,
	}
}

func checkDue(o Observation, due, trust bool) error {
	f := factsOf(o)
	switch {
	case trust && due:
		return proptest.Broke("a status is trusted only when no read is due", "trusts a status it reads anyway")
	case trust && o.Memory != nil:
		return proptest.Broke("a status is trusted only when no read is remembered", "")
	case o.Asked != 0 && !due:
		return proptest.Broke("what asks for a read gets one", "asked %d, reads nothing", o.Asked)
	case f.moving && !due:
		return proptest.Broke("a move under way brings a read", "")
	case o.Memory == nil:
		return checkRestart(o, f, due, trust)
	}
	return checkRemembered(o, f, due)
}

// checkRestart: a restarted manager trusts only a settled status, and
// reads nothing else at once.
func checkRestart(o Observation, f dueFacts, due, trust bool) error {
	settled := f.settledActive || f.judgedConflict
	switch {
	case !due && !settled:
		return proptest.Broke("a restarted manager trusts only a settled status", "")
	case o.Asked == 0 && !f.moving && settled && !trust:
		return proptest.Broke("a restarted manager reads a settled status only when asked", "")
	}
	return nil
}

// checkRemembered: each change since the last read brings a read, and the
// steady state brings none.
func checkRemembered(o Observation, f dueFacts, due bool) error {
	m := o.Memory
	holderChanged := m.Holder != nil && (o.HolderNow == nil || *o.HolderNow != *m.Holder)
	timed := !m.Next.IsZero() && !o.Now.Before(m.Next)
	for _, trigger := range []struct {
		holds bool
		what  string
	}{
		{m.Host != o.Host, "spec.host changed since the last read"},
		{f.conflict && m.Adopt != o.Adopt, "the adoption annotation changed during a conflict"},
		{!m.Seen.Equal(o.Status) && m.ReadFrom != o.ResourceVersion, "the status is not what the last read left"},
		{!f.conflict && !f.asWanted && o.Status.Record != nil && m.Seen.Equal(o.Status), "the target changed"},
		{holderChanged, "the holder changed or went"},
		{timed, "the timed read came"},
	} {
		if trigger.holds && !due {
			return proptest.Broke(trigger.what+" brings a read", "")
		}
	}
	if steadyState(o, f, holderChanged, timed) && due {
		return proptest.Broke("the steady state brings no read", "")
	}
	return nil
}

// steadyState: the status is what the last read left, for the same host,
// target, annotation and holder, before the timed read, and nothing asks.
func steadyState(o Observation, f dueFacts, holderChanged, timed bool) bool {
	m := o.Memory
	return m.Host == o.Host && m.Seen.Equal(o.Status) && m.Adopt == o.Adopt && (f.asWanted || f.conflict) &&
		!holderChanged && !timed && o.Asked == 0 && !f.moving
}
