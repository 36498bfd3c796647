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
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// observation is what the DNS phase read: the planner's input, and what
// the apply side needs to show it.
type observation struct {
	dnsplan.Observation
	app *appsv1alpha1.MyApp
	// records are the service's answers, by name (dnsplan.Record drops the
	// fields the plan does not need).
	records map[string]dns.Record
	// holder is the MyApp holding spec.host in a conflict, as the cache
	// shows it, for the schedule (dns_schedule.go); nil when none.
	holder *holderSnapshot
	// readErr is the first failed read; its name is missing from Records.
	readErr error
}

// observeDNS reads what the plan depends on, and nothing else: the records
// at the names this MyApp knows (spec.host, the hosts its status shows
// held, the host it last read), never a list of the owner's records (for
// RFC 2136 a list is a whole-zone transfer); a live read of this MyApp
// where adoption or leak replacement is possible, and of the MyApps that
// want a host it holds. reads is false for a pass that need not read the
// service (not due and not moving): the plan then lets the status stand.
func (r *Reconciler) observeDNS(ctx context.Context, s *scope, reads bool) (observation, error) {
	o := r.newObservation(s, reads)
	if !reads || (o.Deleting && o.Orphan && o.Marked) || (!o.Deleting && o.Target == (dnsplan.Target{})) {
		return o, nil
	}
	for _, name := range o.Names() {
		if err := r.readRecord(ctx, &o, name); err != nil {
			if !o.Deleting {
				return o, err
			}
			if o.readErr == nil {
				o.readErr = err
			}
		}
	}
	if o.Deleting {
		return o, nil
	}
	if err := r.observeHolder(ctx, s, &o); err != nil {
		return o, err
	}
	if err := r.observeReceivers(ctx, s, &o); err != nil {
		return o, err
	}
	return o, r.observeCycle(ctx, s, &o)
}

// newObservation is what the pass knows before it reads anything: the
// spec, the status, the Ingress, the policy and the schedule's memory.
func (r *Reconciler) newObservation(s *scope, reads bool) observation {
	app := s.app
	o := observation{Observation: dnsplan.Observation{
		Now:       r.Clock.Now(),
		Self:      selfOf(r.OwnerID, app),
		Host:      app.Spec.Host,
		Orphan:    app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan,
		Deleting:  !app.DeletionTimestamp.IsZero(),
		TTL:       r.RecordTTL,
		Due:       reads,
		Held:      heldHosts(app),
		Routed:    routedHosts(s.ingress),
		Records:   map[string]dnsplan.Record{},
		Receivers: map[string]dnsplan.Peer{},
		Adopt:     wantsAdoption(app),

		ReplaceLeaks: r.ReplaceLeakedRecords,
	}, app: app, records: map[string]dns.Record{}}
	if o.Deleting {
		o.DeletingSince = app.DeletionTimestamp.Time
		st := app.Status.DNS
		o.Marked = st != nil && st.Owner == orphanedRecordOwnerOf(r.OwnerID, app) && st.Name == app.Spec.Host && len(st.Previous) == 0
	}
	if recordType, value, ok := r.desiredTarget(s.ingress); ok {
		o.Target = dnsplan.Target{Type: recordType, Value: value}
	}
	if last, ok := r.dnsChecks.get(client.ObjectKeyFromObject(app), app.UID); ok && last.host != app.Spec.Host {
		o.Waited = last.host
	}
	return o
}

// maxCycle bounds the chain of moves observeCycle follows.
const maxCycle = 8

// observeCycle sets GiveFirst: in a conflict, while this MyApp holds
// another host that a live MyApp wants, it follows the chain from
// spec.host's holder (the cache names each MyApp and its spec.host; the
// service each next holder, one Get per step, at most maxCycle steps). The
// chain closes when a holder wants a host this MyApp holds; this MyApp
// gives first only if its key is the smallest in the cycle.
func (r *Reconciler) observeCycle(ctx context.Context, s *scope, o *observation) error {
	app := s.app
	rec := o.Records[o.Host]
	if rec.Name == "" || ownedBy(r.OwnerID, app, rec.Owner) || len(o.Receivers) == 0 {
		return nil
	}
	me := client.ObjectKeyFromObject(app).String()
	smallest := true
	owner := rec.Owner
	for range maxCycle {
		holder := r.holderMyApp(ctx, owner)
		if holder == nil || !holder.DeletionTimestamp.IsZero() || holder.UID == app.UID {
			return nil
		}
		if client.ObjectKeyFromObject(holder).String() < me {
			smallest = false
		}
		if _, wanted := o.Receivers[holder.Spec.Host]; wanted && slices.Contains(o.Held, holder.Spec.Host) {
			o.GiveFirst = smallest
			return nil
		}
		next, err := r.DNS.Get(ctx, holder.Spec.Host)
		if errors.Is(err, external.ErrNotFound) || (err == nil && next.Owner == owner) {
			return nil // free, or held by the MyApp that wants it: no cycle
		}
		if err != nil {
			return err
		}
		owner = next.Owner
	}
	return nil
}

// readRecord reads the record called name into o.
func (r *Reconciler) readRecord(ctx context.Context, o *observation, name string) error {
	rec, err := r.DNS.Get(ctx, name)
	if errors.Is(err, external.ErrNotFound) {
		rec, err = dns.Record{}, nil
	}
	if err != nil {
		return err
	}
	o.records[name] = rec
	o.Records[name] = planRecord(rec)
	return nil
}

// planRecord is rec as the plan sees it.
func planRecord(rec dns.Record) dnsplan.Record {
	if rec.Name == "" {
		return dnsplan.Record{}
	}
	return dnsplan.Record{Name: rec.Name, Type: rec.Type, Value: rec.Value, TTL: rec.TTL, Owner: rec.Owner,
		Active: rec.State == dns.StateActive}
}

// observeHolder learns about spec.host's holder when another owner holds
// it: whether it is an earlier MyApp of this name, and then, where the
// record may be adopted or replaced, whether the API server (not the cache:
// the MyApp in hand may be a deleted one the cache still shows) has this
// MyApp as the live one of its name.
func (r *Reconciler) observeHolder(ctx context.Context, s *scope, o *observation) error {
	app := s.app
	rec := o.Records[o.Host]
	if rec.Name == "" || ownedBy(r.OwnerID, app, rec.Owner) {
		return nil
	}
	if holderApp := r.holderMyApp(ctx, rec.Owner); holderApp != nil {
		o.holder = snapshotOf(holderApp)
	}
	former, ok := formerSelf(r.OwnerID, app, rec.Owner)
	if !ok {
		return nil
	}
	o.Former = &dnsplan.Former{Orphaned: former.orphaned}
	if !o.Adopt && (!o.ReplaceLeaks || former.orphaned) {
		return nil
	}
	live := &appsv1alpha1.MyApp{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(app), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // this MyApp is gone: not live, nothing to adopt for
		}
		return fmt.Errorf("reading MyApp %s before adopting its DNS record: %w", client.ObjectKeyFromObject(app), err)
	}
	o.SelfLive = live.UID == app.UID && live.DeletionTimestamp.IsZero()
	return nil
}

// observeReceivers finds, for each host this MyApp holds other than
// spec.host, the live MyApp that wants it: the cache names the candidates
// (by spec.host), and the API server confirms each, so no host is handed
// over on a stale view. Several candidates: the first by namespace and name.
func (r *Reconciler) observeReceivers(ctx context.Context, s *scope, o *observation) error {
	app := s.app
	for _, h := range o.Held {
		if h == o.Host {
			continue
		}
		var wanting appsv1alpha1.MyAppList
		if err := r.Client.List(ctx, &wanting, client.MatchingFields{hostIndex: h}); err != nil {
			return fmt.Errorf("listing the MyApps that want host %s: %w", h, err)
		}
		candidates := wanting.Items
		slices.SortFunc(candidates, func(a, b appsv1alpha1.MyApp) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
		for i := range candidates {
			c := &candidates[i]
			if c.UID == app.UID || !c.DeletionTimestamp.IsZero() || c.Spec.Host != h {
				continue
			}
			live := &appsv1alpha1.MyApp{}
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(c), live); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return fmt.Errorf("reading MyApp %s before handing it host %s: %w", client.ObjectKeyFromObject(c), h, err)
			}
			if live.UID != c.UID || live.Spec.Host != h || !live.DeletionTimestamp.IsZero() {
				continue
			}
			o.Receivers[h] = dnsplan.Peer{Key: client.ObjectKeyFromObject(live).String(), Owner: wantedOwner(r.OwnerID, live)}
			break
		}
	}
	return nil
}

// holderMyApp is the live MyApp (from the cache) that the owner identity
// holder names, or nil when holder is not a MyApp's or that MyApp is gone.
func (r *Reconciler) holderMyApp(ctx context.Context, holder string) *appsv1alpha1.MyApp {
	ref, ok := parseRecordOwner(holder)
	if !ok || (!ref.legacy() && ref.installation != r.OwnerID) {
		return nil // not a MyApp of this cluster
	}
	app := &appsv1alpha1.MyApp{}
	if err := r.Client.Get(ctx, ref.key, app); err != nil || app.UID != ref.uid {
		return nil
	}
	return app
}

// movingHosts reports whether app holds, or may hold, hosts other than
// spec.host: its record must then be read in every pass until the move is
// done.
func movingHosts(app *appsv1alpha1.MyApp) bool {
	held := sets.New(heldHosts(app)...)
	return held.Len() > 1 || (held.Len() == 1 && !held.Has(app.Spec.Host))
}
