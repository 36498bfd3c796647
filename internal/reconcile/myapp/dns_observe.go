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
	"net"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// observeDNS is what the pass knows before it reads anything: the spec,
// the status, the Ingress, the configuration and the memory. It calls no
// service and decides nothing; the only read is the cache's view of the
// MyApp a remembered conflict was with, so dnsplan can tell whether it
// changed.
func (r *Reconciler) observeDNS(ctx context.Context, s *scope) observation {
	app := s.app
	key := client.ObjectKeyFromObject(app)
	memory, ask, gifts := r.dnsChecks.recall(key, app.UID)
	seen := seenOf(app).plan()
	if wasSuspended(app) {
		ask |= dnsplan.AskResumed // what changed while suspended is read now
	}
	if reconcileRequested(app) {
		ask |= dnsplan.AskRequested
	}
	o := observation{Observation: dnsplan.Observation{
		Now: r.Clock.Now(), Self: selfOf(r.OwnerID, app), Host: app.Spec.Host, Generation: app.Generation,
		ResourceVersion: app.ResourceVersion, Orphan: app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan,
		Deleting: !app.DeletionTimestamp.IsZero(), Address: addressOf(s.ingress), Default: targetOf(r.DefaultTarget),
		TTL: r.RecordTTL, Status: seen, Routed: routedHosts(s.ingress), Memory: memory, Asked: ask,
		Adopt: wantsAdoption(app), ReplaceLeaks: r.ReplaceLeakedRecords, ListsDrift: r.listsDrift(app), Gifts: gifts,
		Class: r.DNSClass, RestoredFrom: restoredFrom(app), TakeoverWaits: r.takeoverWaits(), Transfer: transferOf(app),
	}, app: app, base: s.base, key: key, records: map[string]dns.Record{}}
	if c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition); c != nil {
		o.ReasonGeneration = c.ObservedGeneration
	}
	if o.Deleting {
		o.DeletingSince = app.DeletionTimestamp.Time
	}
	if memory != nil && memory.Holder != nil {
		o.HolderNow = r.holderNow(ctx, *memory.Holder)
	}
	return o
}

// takeoverWaits is why no takeover of an earlier MyApp's record may be made
// now (Takeovers), "" when one may.
func (r *Reconciler) takeoverWaits() string {
	if r.Takeovers == nil {
		return ""
	}
	if ok, why := r.Takeovers.TakeoversAllowed(); !ok {
		return why
	}
	return ""
}

// restoredFrom is the UID of the MyApp a Restore created this one from, as
// the Restore's mark names it; "" for a MyApp no Restore created. The mark
// is the authority dnsplan takes over that MyApp's record on: a user may
// set it by hand only where they could annotate the MyApp to adopt the
// record anyway (the same namespace and name, this installation).
func restoredFrom(app *appsv1alpha1.MyApp) string {
	return app.Annotations[backupv1alpha1.RestoredFromUIDAnnotation]
}

// addressOf is the Ingress's load-balancer address, when it has one the
// DNS service can hold: an IPv4 address for an A record, or a host name
// for a CNAME (the service has no AAAA).
func addressOf(ing *networkingv1.Ingress) dnsplan.Target {
	if ing == nil {
		return dnsplan.Target{}
	}
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		if ip := ipv4(lb.IP); ip != "" {
			return dnsplan.Target{Type: dns.TypeA, Value: ip}
		}
		if lb.Hostname != "" {
			return dnsplan.Target{Type: dns.TypeCNAME, Value: canonicalName(lb.Hostname)}
		}
	}
	return dnsplan.Target{}
}

// routedHosts are the hosts ing routes now.
func routedHosts(ing *networkingv1.Ingress) []string {
	if ing == nil || ing.UID == "" {
		return nil
	}
	var hosts []string
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP != nil {
			hosts = append(hosts, rule.Host)
		}
	}
	return hosts
}

// targetOf is the configured --dns-default-target as a record's target;
// zero when none is set.
func targetOf(target string) dnsplan.Target {
	if target == "" {
		return dnsplan.Target{}
	}
	if ip := ipv4(target); ip != "" {
		return dnsplan.Target{Type: dns.TypeA, Value: ip}
	}
	return dnsplan.Target{Type: TargetType(target), Value: target}
}

// canonicalName is a host name in the one spelling the DNS service takes:
// lower case, without the trailing dot of a fully qualified name. Names are
// case-insensitive (RFC 4343), and a load balancer may report either form;
// written as reported, "LB-1.Example.net." would be refused as invalid.
func canonicalName(name string) string {
	return strings.TrimSuffix(strings.ToLower(name), ".")
}

// ipv4 is s in dotted IPv4 form when it is an IPv4 address, also one written
// IPv4-mapped in IPv6 (::ffff:192.0.2.1), which the DNS service refuses in
// an A record; otherwise "".
func ipv4(s string) string {
	if ip := net.ParseIP(s); ip != nil && ip.To4() != nil {
		return ip.To4().String()
	}
	return ""
}

// TargetType is the record type for a target: A for an IPv4 address, CNAME
// for anything else (a host name).
func TargetType(target string) string {
	if ipv4(target) != "" {
		return dns.TypeA
	}
	return dns.TypeCNAME
}

// answerDNS reads what the plan needs, into o: one reader per need.
func (r *Reconciler) answerDNS(ctx context.Context, o *observation, need dnsplan.Need) error {
	o.Answered |= need
	switch need {
	case dnsplan.NeedLost:
		r.readLost(ctx, o)
	case dnsplan.NeedRecords:
		return r.readRecords(ctx, o)
	case dnsplan.NeedLiveSelf:
		return r.readLiveSelf(ctx, o)
	case dnsplan.NeedWanters:
		return r.readWanters(ctx, o)
	case dnsplan.NeedChain:
		return r.readChain(ctx, o)
	default:
		return fmt.Errorf("the DNS plan of MyApp %s needs %d, which nothing reads", o.key, need)
	}
	return nil
}

// readRecords reads the record at each name the pass knows: spec.host, the
// hosts its status shows held, the host it last read, the hosts handed to
// it; never a list of the owner's records (for RFC 2136 a list is a
// whole-zone transfer). A live pass ends on a failed read; a deletion reads
// on, noting a name the service refuses as invalid apart, since no record
// can be there.
func (r *Reconciler) readRecords(ctx context.Context, o *observation) error {
	o.Records, o.Refused, o.Unread = map[string]dnsplan.Record{}, map[string]bool{}, map[string]bool{}
	for _, name := range o.Names() {
		rec, err := r.DNS.Get(ctx, name)
		switch {
		case errors.Is(err, external.ErrNotFound):
			rec = dns.Record{}
		case err != nil && !o.Deleting:
			return err
		case err != nil:
			o.Refused[name] = external.KindOf(err) == external.KindInvalid
			o.Unread[name] = !o.Refused[name]
			if o.readErr == nil {
				o.readErr = err
			}
			continue
		}
		o.fold(name, rec)
	}
	return nil
}

// fold takes a record the service answered, by a read or a call, into o.
func (o *observation) fold(name string, rec dns.Record) {
	o.records[name] = rec
	o.Records[name] = planRecord(rec)
}

// planRecord is rec as the plan sees it.
func planRecord(rec dns.Record) dnsplan.Record {
	if rec.Name == "" {
		return dnsplan.Record{}
	}
	return dnsplan.Record{Name: rec.Name, Type: rec.Type, Value: rec.Value, TTL: rec.TTL, Owner: rec.Owner,
		Active: rec.State == dns.StateActive, Unowned: rec.Owner == dns.UnmanagedOwner}
}

// transferOf is status.dnsTransfer as the plan sees it: a transfer made in
// two batches that this MyApp started, nil for none.
func transferOf(app *appsv1alpha1.MyApp) *dnsplan.Transfer {
	t := app.Status.DNSTransfer
	if t == nil {
		return nil
	}
	return &dnsplan.Transfer{Name: t.Name, From: t.From, To: t.To}
}

// readLost lists the records of this MyApp's owners, for those under names
// it does not know. A failed list is not the pass's failure: the plan goes
// on without it, and the next pass that reads lists again.
func (r *Reconciler) readLost(ctx context.Context, o *observation) {
	names := o.Names()
	for _, owner := range []string{o.Self.Owner(), o.Self.Orphaned()} {
		listed, err := r.DNS.List(ctx, owner)
		if err != nil {
			log.FromContext(ctx).Error(err, "Listing this MyApp's records to find any a lost status write left; trying again at the next read")
			o.LostFailed = true
			return
		}
		for _, rec := range listed {
			if o.Self.Owns(rec.Owner) && !slices.Contains(names, rec.Name) {
				log.FromContext(ctx).Info("Found a DNS record of this MyApp no status knows", "name", rec.Name)
				o.Lost = append(o.Lost, planRecord(rec))
			}
		}
	}
}

// readLiveSelf reads this MyApp from the API server, not the cache (the
// MyApp in hand may be a deleted one the cache still shows), before a
// record of an earlier MyApp of its name is adopted or replaced.
func (r *Reconciler) readLiveSelf(ctx context.Context, o *observation) error {
	live := &appsv1alpha1.MyApp{}
	if err := r.APIReader.Get(ctx, o.key, live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // this MyApp is gone: not live, nothing to adopt for
		}
		return fmt.Errorf("reading MyApp %s before adopting its DNS record: %w", o.key, err)
	}
	o.SelfLive = live.UID == o.app.UID && live.DeletionTimestamp.IsZero()
	return nil
}

// readWanters reads, for each host this MyApp may hand over, the MyApps
// that want it: the cache names the candidates (by spec.host), and the API
// server shows each as it is, so no host is handed over on a stale view.
// It reads the MyApps that handed this one a host too, which may get it
// back.
func (r *Reconciler) readWanters(ctx context.Context, o *observation) error {
	o.Wanters, o.Givers = map[string][]dnsplan.App{}, map[string]dnsplan.App{}
	for _, g := range o.Gifts {
		giver := &appsv1alpha1.MyApp{}
		if err := r.APIReader.Get(ctx, keyOf(g.Giver), giver); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading MyApp %s, which handed this one a host: %w", g.Giver, err)
		}
		o.Givers[g.Giver] = appView(giver)
	}
	for _, h := range o.GivableHosts() {
		var wanting appsv1alpha1.MyAppList
		if err := r.Client.List(ctx, &wanting, client.MatchingFields{hostIndex: h}); err != nil {
			return fmt.Errorf("listing the MyApps that want host %s: %w", h, err)
		}
		for i := range wanting.Items {
			c := &wanting.Items[i]
			if c.UID == o.app.UID {
				continue
			}
			live := &appsv1alpha1.MyApp{}
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(c), live); err != nil {
				if apierrors.IsNotFound(err) {
					continue
				}
				return fmt.Errorf("reading MyApp %s before handing it host %s: %w", client.ObjectKeyFromObject(c), h, err)
			}
			if live.UID == c.UID {
				o.Wanters[h] = append(o.Wanters[h], appView(live))
			}
		}
	}
	return nil
}

// readChain reads the next link of the chain of holders from spec.host: the
// record at the host the last link's MyApp wants (spec.host's, read
// already, for the first), and the MyApp its owner names, as the cache
// shows it.
func (r *Reconciler) readChain(ctx context.Context, o *observation) error {
	link := dnsplan.Link{Host: o.Host, Owner: o.Records[o.Host].Owner}
	if n := len(o.Chain); n > 0 {
		link.Host = o.Chain[n-1].App.Host
		rec, err := r.DNS.Get(ctx, link.Host)
		if err != nil && !errors.Is(err, external.ErrNotFound) {
			return err
		}
		link.Owner = rec.Owner
	}
	if ref, ok := dnsplan.ParseOwner(link.Owner); ok {
		holder := &appsv1alpha1.MyApp{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, holder); err == nil {
			view := appView(holder)
			link.App = &view
		}
	}
	o.Chain = append(o.Chain, link)
	return nil
}

// appView is app as a plan sees another MyApp.
func appView(app *appsv1alpha1.MyApp) dnsplan.App {
	return dnsplan.App{
		Key: client.ObjectKeyFromObject(app).String(), UID: string(app.UID), Host: app.Spec.Host,
		Orphan:    app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan,
		Suspended: app.Spec.Suspend, Deleting: !app.DeletionTimestamp.IsZero(), Holds: heldHosts(app),
	}
}

// holderNow is the MyApp a remembered conflict was with, as the cache shows
// it now; nil when it is gone or cannot be read (which counts as a change).
func (r *Reconciler) holderNow(ctx context.Context, was dnsplan.HolderSnapshot) *dnsplan.HolderSnapshot {
	ns, name, _ := strings.Cut(was.Key, "/")
	holder := &appsv1alpha1.MyApp{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, holder); err != nil {
		return nil
	}
	now := snapshotOf(appView(holder))
	return &now
}

// keyOf reads a "<namespace>/<name>" key.
func keyOf(key string) types.NamespacedName {
	ns, name, _ := strings.Cut(key, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}
