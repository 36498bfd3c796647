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
	"slices"
	"testing"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass/proptest"
)

// TestACutTransferIsFinishedFirstAndOnlyByItsRecord ranges over a MyApp
// (ns/web, uid-1) that holds or wants host a, live or being deleted, under
// either policy; the record at a held by this MyApp, its orphaned self,
// another MyApp (ns/api), no owner (a transfer cut between its batches),
// or absent; and status.dnsTransfer naming a transfer of a from this MyApp
// to its orphaned self, to ns/api, from its orphaned self to itself, a
// transfer of another name, or none. It states the promises of a cut
// transfer:
//   - the name a recorded transfer names is read, whatever else is due;
//   - a name held by no owner is touched only when a transfer recorded for
//     it exists, then first, by exactly that transfer, from and to as
//     recorded;
//   - nothing is finished that reads otherwise: a name held by an owner, or
//     absent, gets no finishing call.
func TestACutTransferIsFinishedFirstAndOnlyByItsRecord(t *testing.T) {
	me := &wapp{key: "ns/web", uid: "uid-1"}
	mine, orphaned := me.self("here").Owner(), me.self("here").Orphaned()
	api := (&wapp{key: "ns/api", uid: "uid-9"}).self("here").Owner()
	holders := []string{mine, orphaned, api, unmanaged, ""}
	transfers := []*Transfer{nil, {Name: "a", From: mine, To: orphaned}, {Name: "a", From: mine, To: api},
		{Name: "a", From: orphaned, To: mine}, {Name: "b", From: mine, To: api}}
	c := proptest.New(t, "cut transfers")
	for _, holder := range holders {
		for _, tr := range transfers {
			for _, deleting := range []bool{false, true} {
				for _, orphan := range []bool{false, true} {
					for _, wants := range []string{"a", "c"} {
						describe := func() string {
							return fmt.Sprintf("holder %q transfer %v deleting %t orphan %t wants %s", holder, tr, deleting, orphan, wants)
						}
						c.ObserveErr(describe, checkCutTransfer(holder, tr, deleting, orphan, wants))
					}
				}
			}
		}
	}
	c.Report()
}

// checkCutTransfer builds the world of one case and checks its plan.
func checkCutTransfer(holder string, tr *Transfer, deleting, orphan bool, wants string) error {
	w := &tworld{id: "here", svc: service{}, faults: map[string]readFault{}, selfLive: true, now: time.Unix(1_800_000_000, 0)}
	me := &wapp{key: "ns/web", uid: "uid-1", host: wants, held: []string{"a"}, orphan: orphan, delete: deleting, transfer: tr}
	w.apps = append(w.apps, me, &wapp{key: "ns/api", uid: "uid-9", host: "a"})
	if holder != "" {
		w.svc["a"] = Record{Name: "a", Type: "A", Value: wantedIP, TTL: 300, Owner: holder, Active: true, Unowned: holder == unmanaged}
	}
	o := w.observe(me)
	if tr != nil && !slices.Contains(o.Names(), tr.Name) {
		return proptest.Broke("the name a recorded transfer names is read", "names %v", o.Names())
	}
	_, p, err := w.plan(o)
	if err != nil {
		return err
	}
	return checkFinishCalls(holder, tr, p)
}

// checkFinishCalls checks p's calls against the promises of a cut
// transfer, for the record at a held by holder and the transfer recorded.
func checkFinishCalls(holder string, tr *Transfer, p Plan) error {
	for i, c := range p.Calls {
		onCut := c.Name == "a" && holder == unmanaged
		switch {
		case c.Why == WhyFinish && !onCut:
			return proptest.Broke("nothing is finished that reads otherwise", "call %d: %s %s (%s)", i, c.Op, c.Name, c.Why)
		case onCut && i == 0 && (tr == nil || tr.Name != "a" || c.Op != OpTransfer || c.From != tr.From || c.To != tr.To):
			return proptest.Broke("a name held by no owner is touched first by exactly the transfer recorded for it",
				"call %d: %s %s %s->%s with status.dnsTransfer %v", i, c.Op, c.Name, c.From, c.To, tr)
		}
	}
	if holder == unmanaged && tr != nil && tr.Name == "a" && p.Need == NeedNothing &&
		(len(p.Calls) == 0 || p.Calls[0].Why != WhyFinish) {
		return proptest.Broke("a name held by no owner is touched first by exactly the transfer recorded for it",
			"no finishing call: %v", describeCalls(p.Calls))
	}
	return nil
}
