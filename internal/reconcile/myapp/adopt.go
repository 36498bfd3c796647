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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// Reasons of the events about adopting and orphaning records.
const (
	// eventDNSRecordAdopted: the MyApp took over the record of an earlier
	// MyApp of its namespace and name, as its annotation asked.
	eventDNSRecordAdopted eventReason = "DNSRecordAdopted"
)

// adoptOrConflict handles spec.host held by another owner (current). It
// adopts the record when the MyApp's annotation asks for it and the holder
// is an earlier MyApp of the same namespace and name that no longer exists,
// and returns the adopted record to carry on with (or an empty one if the
// record went meanwhile). Otherwise it reports HostConflict and done is
// true: the caller returns result and err.
func (r *Reconciler) adoptOrConflict(ctx context.Context, s *scope, current dns.Record) (
	rec dns.Record, done bool, result ctrl.Result, err error) {
	app := s.app
	former, ok := formerSelf(app, current.Owner)
	// Without the annotation only a leak is taken out of the way: a record
	// of an earlier MyApp of this name that was not orphaned on purpose,
	// which the orphan sweep would delete anyway, and only where the sweep
	// runs (its rule is that no other cluster shares the DNS service).
	replaceLeak := ok && !former.orphaned && r.ReplaceLeakedRecords
	if !ok || (!wantsAdoption(app) && !replaceLeak) {
		result, err = r.hostConflict(ctx, s, current.Owner)
		return current, true, result, err
	}

	// Live, not cached: the MyApp this pass works on may be a deleted one
	// the cache still shows, and the holder the live MyApp of this name.
	// Names are unique, so if this MyApp is the one the API server has, the
	// holder's UID belongs to no live MyApp.
	live := &appsv1alpha1.MyApp{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(app), live); err != nil {
		if apierrors.IsNotFound(err) {
			return current, true, ctrl.Result{}, nil // this MyApp is gone; nothing to adopt for
		}
		return current, true, ctrl.Result{}, fmt.Errorf("reading MyApp %s before adopting its DNS record: %w",
			client.ObjectKeyFromObject(app), err)
	}
	if live.UID != app.UID {
		result, err = r.hostConflict(ctx, s, current.Owner)
		return current, true, result, err
	}

	if !wantsAdoption(app) {
		return r.replaceLeakedRecord(ctx, s, current, former)
	}

	owner := recordOwner(app)
	log.FromContext(ctx).Info("Adopting DNS record of an earlier MyApp of this name", "name", current.Name,
		"holder", current.Owner, "annotation", appsv1alpha1.AdoptDNSRecordAnnotation)
	adopted, err := r.DNS.Transfer(ctx, current.Name, current.Owner, owner)
	var ext *external.Error
	switch {
	case errors.As(err, &ext) && ext.Kind == external.KindConflict:
		// Someone else took it between the read and the transfer.
		result, err = r.hostConflict(ctx, s, ext.Owner)
		return current, true, result, err
	case errors.Is(err, external.ErrNotFound):
		return dns.Record{}, false, ctrl.Result{}, nil // gone meanwhile: the caller creates it
	case err != nil:
		result, err = r.handleDNSError(ctx, s, "adopt", err)
		return current, true, result, err
	}
	what := "an earlier MyApp"
	if former.orphaned {
		what = "an earlier MyApp deleted with deletionPolicy Orphan"
	}
	r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordAdopted, "AdoptDNSRecord",
		"Adopted DNS record %s from %s of this name (uid %s), as the annotation %s asks",
		current.Name, what, former.uid, appsv1alpha1.AdoptDNSRecordAnnotation)
	return adopted, false, ctrl.Result{}, nil
}

// replaceLeakedRecord deletes the record an earlier MyApp of this name left
// behind when it went without its cleanup (the API server can remove a
// MyApp whose finalizer a stale pass had just seen, kubernetes#77988, or
// someone stripped the finalizer by hand). The caller has checked by a live
// read that this MyApp is the live one of its name, so no MyApp holds that
// UID: the record is the leak the orphan sweep would delete, and the new
// MyApp need not wait in HostConflict until the sweep comes round. The
// delete is owner-checked; the caller then creates the record afresh.
func (r *Reconciler) replaceLeakedRecord(ctx context.Context, s *scope, current dns.Record, former recordOwnerRef) (
	rec dns.Record, done bool, result ctrl.Result, err error) {
	log.FromContext(ctx).Info("Deleting the DNS record an earlier MyApp of this name leaked", "name", current.Name,
		"holder", current.Owner)
	err = r.DNS.Delete(ctx, current.Name, current.Owner)
	var ext *external.Error
	switch {
	case errors.As(err, &ext) && ext.Kind == external.KindConflict:
		// Someone else took it between the read and the delete.
		result, err = r.hostConflict(ctx, s, ext.Owner)
		return current, true, result, err
	case err != nil:
		result, err = r.handleDNSError(ctx, s, "delete the leaked", err)
		return current, true, result, err
	}
	r.event(s.app, nil, corev1.EventTypeNormal, eventDNSRecordDeleted, "DeleteDNSRecord",
		"Deleted DNS record %s, left behind by an earlier MyApp of this name (uid %s) that no longer exists",
		current.Name, former.uid)
	return dns.Record{}, false, ctrl.Result{}, nil
}

// markRecordsOrphaned hands every record app owns to its orphaned owner
// before a deletion with deletionPolicy Orphan lets it go, so the orphan
// sweep, which takes a record of a missing MyApp for a leak, leaves it
// alone, and a later MyApp of this name can adopt it.
//
// Orphan is also the way out of a deletion stuck on a DNS service that is
// gone for good, so a failing service does not hold the MyApp: the records
// stay unmarked, a warning event says the sweep may delete them once the
// service answers again, and it returns nil. Only a throttled service,
// which asks for a short wait, holds the deletion until it may be called:
// it returns a pass.Wait.
func (r *Reconciler) markRecordsOrphaned(ctx context.Context, s *scope) error {
	app := s.app
	owner, marked := recordOwner(app), orphanedRecordOwner(app)
	err := r.transferOwnedRecords(ctx, app, owner, marked)
	if errors.Is(err, external.ErrThrottled) {
		retry := wait.Jitter(r.PendingPollInterval, pass.JitterFactor)
		if retryAfter, ok := external.RetryAfter(err); ok && retryAfter > 0 {
			retry = retryAfter
		}
		log.FromContext(ctx).Info("DNS service is throttling; marking the orphaned record once it may be called",
			"retryAfter", retry)
		return pass.Wait(retry, err)
	}
	if err != nil {
		log.FromContext(ctx).Error(err, "Could not mark the DNS record as orphaned; leaving it unmarked")
		r.event(app, nil, corev1.EventTypeWarning, eventDNSRecordOrphaned, "DeleteDNSRecord",
			"Left the DNS record for %s in the DNS service (deletionPolicy is Orphan) but could not mark it as "+
				"orphaned: %s; the orphan-record sweep deletes it once the service answers, unless a MyApp of this "+
				"name adopts it first", app.Spec.Host, dnsErrorAdvice(err))
		return nil
	}
	r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordOrphaned, "DeleteDNSRecord",
		"Left the DNS record for %s in the DNS service: deletionPolicy is Orphan. It is now owned by %q, which the "+
			"orphan-record sweep never deletes; a MyApp of this name annotated %s=true can adopt it",
		app.Spec.Host, marked, appsv1alpha1.AdoptDNSRecordAnnotation)
	return nil
}

// transferOwnedRecords transfers every record from owns, found as
// deleteRecordsExcept finds them (the service's list by owner, the status,
// spec.host), to "to". Records that are gone or held by someone else are
// skipped.
func (r *Reconciler) transferOwnedRecords(ctx context.Context, app *appsv1alpha1.MyApp, from, to string) error {
	owned, err := r.DNS.List(ctx, from)
	if err != nil {
		return err
	}
	names := []string{app.Spec.Host}
	if app.Status.DNS != nil && app.Status.DNS.Owner == from {
		names = append(names, app.Status.DNS.Name)
	}
	for _, rec := range owned {
		names = append(names, rec.Name)
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		_, err := r.DNS.Transfer(ctx, name, from, to)
		if errors.Is(err, external.ErrNotFound) || errors.Is(err, external.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		log.FromContext(ctx).Info("Marked DNS record as orphaned", "name", name, "owner", to)
	}
	return nil
}
