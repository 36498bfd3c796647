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
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// TestOwnerIDClaimEventsGoBesideTheLeaderElection: with leader election the
// claim's events are about the leader-election Lease, in the namespace its
// events are in; without it, about the kube-system Namespace (nil here).
func TestOwnerIDClaimEventsGoBesideTheLeaderElection(t *testing.T) {
	g := NewWithT(t)
	g.Expect(leaderElectionLease(&options{leaderElectionID: "myapp-operator.myapp.dev"})).To(BeNil())
	lease := leaderElectionLease(&options{leaderElect: true, leaderElectionNamespace: "myapp-system", leaderElectionID: "myapp-operator.myapp.dev"})
	g.Expect(lease).NotTo(BeNil())
	g.Expect(lease.Namespace).To(Equal("myapp-system"))
	g.Expect(lease.Name).To(Equal("myapp-operator.myapp.dev"))
	g.Expect(lease.GroupVersionKind().Kind).To(Equal("Lease"))
}

// TestClaimTextKeepsWhatAClaimHolds: a host name or UID goes into a claim as
// it is; characters a claim cannot hold are dropped and the length capped,
// since the text is only there for people.
func TestClaimTextKeepsWhatAClaimHolds(t *testing.T) {
	g := NewWithT(t)
	g.Expect(claimText("myapp-operator-7d9f8-abcde")).To(Equal("myapp-operator-7d9f8-abcde"))
	g.Expect(claimText("0d9c6f52-1c1e-4c8e-9a35-2b7e0f3c1a77")).To(Equal("0d9c6f52-1c1e-4c8e-9a35-2b7e0f3c1a77"))
	g.Expect(claimText("host name with spaces\n")).To(Equal("hostnamewithspaces"))
	g.Expect(claimText("é" + strings.Repeat("a", 300))).To(HaveLen(253))
}

// TestOwnerIDClaimIsReadBackFourTimesPerSweep: the claim's interval is the
// flag's, or a quarter of the sweep interval when that is shorter, so the
// two intervals a new leader's claim must stand before it sweeps never
// delay its first sweep.
func TestOwnerIDClaimIsReadBackFourTimesPerSweep(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct{ claim, sweep, want time.Duration }{
		{time.Minute, time.Hour, time.Minute},
		{time.Minute, 3 * time.Second, 750 * time.Millisecond},
		{time.Minute, 0, time.Minute},
		{10 * time.Second, time.Hour, 10 * time.Second},
	} {
		opts := &options{myApp: myAppOptions{ownerIDClaimInterval: tc.claim, orphanSweepInterval: tc.sweep}}
		g.Expect(ownerIDClaimInterval(opts)).To(Equal(tc.want), "claim %s, sweep %s", tc.claim, tc.sweep)
	}
}
