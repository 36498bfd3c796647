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
	"slices"
	"testing"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// TestHeldAfterAFailedCall checks what the status shows held after a pass
// whose call failed: a call refused by the service changed nothing; one
// whose outcome is unknown may have applied, so a name it would make this
// MyApp's is shown held (the next read settles it) and a name it would
// give away or delete stays held.
func TestHeldAfterAFailedCall(t *testing.T) {
	own := self.Owner()
	peer := Self{Installation: "here", Namespace: "ns", Name: "other", UID: "uid-2"}.Owner()
	holdingA := Seen{Record: &appsv1alpha1.DNSRecordStatus{Name: "a", Owner: own}}
	for _, tc := range []struct {
		name    string
		status  Seen
		host    string
		call    Call
		unknown bool
		want    []string
	}{
		{"a refused create holds nothing", Seen{}, "b", Call{Op: OpUpsert, Name: "b", Record: Record{Name: "b", Owner: own}}, false, nil},
		{"a create with no answer may hold its name", Seen{}, "b", Call{Op: OpUpsert, Name: "b", Record: Record{Name: "b", Owner: own}}, true, []string{"b"}},
		{"a create with no answer during a move", holdingA, "b", Call{Op: OpUpsert, Name: "b", Record: Record{Name: "b", Owner: own}}, true, []string{"b", "a"}},
		{"a refused hand-over keeps the host", holdingA, "b", Call{Op: OpTransfer, Name: "a", From: own, To: peer}, false, []string{"a"}},
		{"a hand-over with no answer keeps the host", holdingA, "b", Call{Op: OpTransfer, Name: "a", From: own, To: peer}, true, []string{"a"}},
		{"a release with no answer keeps the host", holdingA, "b", Call{Op: OpDelete, Name: "a", Owner: own}, true, []string{"a"}},
		{"a takeover with no answer may hold its name", Seen{}, "b", Call{Op: OpTransfer, Name: "b", From: "legacy", To: own}, true, []string{"b"}},
	} {
		o := Observation{Self: self, Host: tc.host, Status: tc.status, Generation: 1,
			Records: map[string]Record{"a": {Name: "a", Owner: own}, "b": {}}}
		if tc.status.Record == nil {
			o.Records = map[string]Record{"b": {}}
		}
		done := Call{Op: OpUpsert, Name: "c", Record: Record{Name: "c", Owner: peer}} // another's: changes nothing held
		p := Plan{Calls: []Call{done, tc.call}}
		holds, previous := p.HeldAfter(o, 1, tc.unknown)
		var got []string
		if holds != "" {
			got = append([]string{holds}, previous...)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: held %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestADebtEndsWhenTheDebtorTakesItsHostBack: a MyApp owes b to the giver
// that gave it a host for it; once its spec.host changes back to b and it
// holds b, the debt ends, so a later change of spec.host does not hand b
// to that giver, which may meanwhile be waiting outside a swap b closes.
func TestADebtEndsWhenTheDebtorTakesItsHostBack(t *testing.T) {
	w := &tworld{id: "here", svc: service{}, faults: map[string]readFault{}, selfLive: true}
	debtor := &wapp{key: "ns/b", uid: "u-b", host: "b", held: []string{"b"}, routed: []string{"b"},
		gifts: []Gift{{Giver: "ns/a", For: "b"}}}
	giver := &wapp{key: "ns/a", uid: "u-a", host: "b"}
	w.apps = []*wapp{debtor, giver}
	w.svc["b"] = Record{Name: "b", Type: "A", Value: wantedIP, TTL: 300, Owner: debtor.owner("here")}
	o, p, err := w.plan(w.observe(debtor))
	if err != nil {
		t.Fatal(err)
	}
	if p.Outcome.Kind != KindHeld || p.Outcome.Holds != "b" {
		t.Fatalf("the debtor does not hold b: %+v", p.Outcome)
	}
	if len(p.Outcome.Gifts) != 0 {
		t.Errorf("the debt for b is still open once the debtor holds b as spec.host: %+v (gifts %v)", p.Outcome.Gifts, o.Gifts)
	}
}
