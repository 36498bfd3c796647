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
	"cmp"
	"context"
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// reconcileDNSRecord makes the DNS service hold a record for spec.host,
// owned by this MyApp and pointing at its target, and releases the hosts it
// held before once spec.host is routed; it leaves in s.routes the hosts the
// Ingress may route. It runs the phase's one loop (runDNS) and shows what
// the loop came to (showDNS): a crash between a write and the status
// update that records it is repaired by the next pass instead of leaking
// or duplicating.
func (r *Reconciler) reconcileDNSRecord(ctx context.Context, s *scope) (ctrl.Result, error) {
	run := r.runDNS(ctx, s)
	return r.showDNS(ctx, s, run)
}

// maxRounds bounds the rounds of one run: the needs a plan may have (a
// list, the records, the live read of itself, the wanters, the chain of
// holders one link a round) and one more observation after a race.
const maxRounds = 2*(4+dnsplan.MaxChain) + 1

// errNoPlan ends a run whose plan still needs something after maxRounds:
// dnsplan asks each need once and the chain at most MaxChain times, so it
// means a plan that broke that promise.
var errNoPlan = errors.New("the DNS plan kept asking for reads")

// errNotConfirmed is why a deletion under Orphan waits on a held host that
// read as absent: the read may be stale, so the record cannot be proved
// marked yet.
var errNotConfirmed = errors.New("the DNS service does not show a record this MyApp holds; the read may be stale")

// runDNS is the DNS phase's one loop, for a live MyApp and a deletion
// alike: it observes (dns_observe.go), and plans (dnsplan, pure, which
// decides everything); then it either answers what the plan needs and plans
// again, or makes the plan's calls (dns_apply.go). A call that races
// another writer (a conflict, or a transfer whose record went) makes a live
// pass observe once more and plan again; a second race, or any other
// failure, ends the run with its error. A deletion that must wait on names
// it could not read ends with the error of the first.
func (r *Reconciler) runDNS(ctx context.Context, s *scope) dnsRun {
	o := r.observeDNS(ctx, s)
	raced := false
	for range maxRounds {
		p := dnsplan.Make(o.Observation)
		if p.Need != dnsplan.NeedNothing {
			if err := r.answerDNS(ctx, &o, p.Need); err != nil {
				return dnsRun{o: o, p: p, err: err}
			}
			continue
		}
		done, err := r.callDNS(ctx, &o, p)
		if err != nil && !raced && isRace(p.Calls[done], err) {
			log.FromContext(ctx).Info("DNS record changed under this pass; observing it again", "name", p.Calls[done].Name)
			raced, o = true, r.observeDNS(ctx, s)
			continue
		}
		if err == nil && p.Outcome.Kind == dnsplan.KindDeletionWaits {
			err = cmp.Or(o.readErr, errNotConfirmed)
		}
		return dnsRun{o: o, p: p, done: done, err: err}
	}
	return dnsRun{o: o, err: fmt.Errorf("MyApp %s: %w", o.key, errNoPlan)}
}
