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
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileDelete deals with the MyApp's DNS records, then removes its
// finalizer: under deletionPolicy Delete the records are deleted; under
// Orphan they are left, marked orphaned (records written under Orphan are
// marked already, so an outage cannot hold or spoil such a deletion). The
// records are found by the names this MyApp knows, read with Get, never by
// listing the owner's records. The children are not touched: their owner
// references hand them to the garbage collector once the MyApp is gone.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	if !controllerutil.ContainsFinalizer(app, appsv1alpha1.DNSCleanupFinalizer) {
		r.cleanup.forget(client.ObjectKeyFromObject(app))
		return ctrl.Result{}, nil
	}
	r.cleanup.waiting(app)
	s.readiness.deleting = true
	orphan := app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan
	if !orphan {
		s.dnsState(false, appsv1alpha1.DeletingRecordReason,
			fmt.Sprintf("Deleting the DNS record for %s before the MyApp goes", app.Spec.Host))
	}

	o, p, done, result, err := r.releaseRecords(ctx, s)
	if !done {
		return result, err
	}
	switch {
	case orphan && p.Outcome.Unmarked:
		log.FromContext(ctx).Error(o.readErr, "Could not mark the DNS record as orphaned within the wait; leaving it unmarked",
			"wait", dnsplan.OrphanMarkWait)
		r.event(app, nil, corev1.EventTypeWarning, eventDNSRecordOrphaned, "DeleteDNSRecord",
			"Left the DNS record for %s in the DNS service (deletionPolicy is Orphan) but could not mark it as "+
				"orphaned within %s: %s; the orphan-record sweep deletes it once the service answers, unless a MyApp of "+
				"this name adopts it first", app.Spec.Host, dnsplan.OrphanMarkWait, dnsErrorAdvice(o.readErr))
	case orphan:
		log.FromContext(ctx).Info("Leaving DNS records in place", "deletionPolicy", app.Spec.DeletionPolicy)
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordOrphaned, "DeleteDNSRecord",
			"Left the DNS record for %s in the DNS service: deletionPolicy is Orphan. It is owned by %q, which the "+
				"orphan-record sweep never deletes; a MyApp of this name annotated %s=true can adopt it",
			app.Spec.Host, orphanedRecordOwnerOf(r.OwnerID, app), appsv1alpha1.AdoptDNSRecordAnnotation)
	default:
		app.Status.DNS = nil
	}

	log.FromContext(ctx).Info("Removing the DNS cleanup finalizer")
	if err := pass.RemoveFinalizer(ctx, r.Client, app, appsv1alpha1.DNSCleanupFinalizer); err != nil {
		if apierrors.IsNotFound(err) {
			s.gone = true
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// With no finalizer left the API server deletes the MyApp at once.
	s.gone = len(app.Finalizers) == 0
	r.cleanup.done(app)
	return ctrl.Result{}, nil
}

// releaseRecords observes the records of a MyApp being deleted, plans what
// its policy asks and makes the calls. done is false when the pass must end
// with result and err.
func (r *Reconciler) releaseRecords(ctx context.Context, s *scope) (
	o observation, p dnsplan.Plan, done bool, result ctrl.Result, err error) {
	app := s.app
	orphan := app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan
	if o, err = r.observeDNS(ctx, s, true); err != nil {
		result, err = r.handleDNSError(ctx, s, "read", err)
		return o, p, false, result, err
	}
	r.findLostRecords(ctx, &o)
	p = dnsplan.Make(o.Observation)
	if p.Outcome.Kind == dnsplan.KindDeletionWaits {
		action := "delete"
		if orphan {
			action = "mark"
		}
		result, err = r.handleDNSError(ctx, s, action, o.readErr)
		return o, p, false, result, err
	}
	// A name read as absent is deleted under each identity of this MyApp
	// (dnsplan's planDelete); one event tells of it.
	deleted := sets.New[string]()
	for _, c := range p.Calls {
		if _, err := r.callDNS(ctx, app, c); err != nil {
			if errors.Is(err, external.ErrConflict) || (c.Op == dnsplan.OpTransfer && errors.Is(err, external.ErrNotFound)) {
				continue // someone else's record now, or gone: never ours to delete or mark
			}
			result, err = r.handleDNSError(ctx, s, callAction(c), err)
			return o, p, false, result, err
		}
		if c.Op == dnsplan.OpDelete {
			if deleted.Has(c.Name) {
				continue
			}
			deleted.Insert(c.Name)
		}
		r.callEvent(app, c)
	}
	return o, p, true, ctrl.Result{}, nil
}

// findLostRecords adds to o the records of this MyApp under names it no
// longer knows, which only a list of the owner's records can find: a pass
// that wrote a record and then lost its status write and its memory (a
// crash, or a failed status write), followed by a change of spec.host. The
// list is made only then: this manager has not read the MyApp's record
// since it started or since a status write failed (a status trusted after a
// restart is no read), the spec changed since creation, and the status does
// not show spec.host held. Every other pass
// reads the names it knows. A failed list is not an error: the record is
// left to the next such pass, or to the orphan sweep once the MyApp is gone.
func (r *Reconciler) findLostRecords(ctx context.Context, o *observation) {
	app := o.app
	if last, known := r.dnsChecks.get(client.ObjectKeyFromObject(app), app.UID); (known && last.readFrom != "") || app.Generation == 1 ||
		heldHost(app) == app.Spec.Host || (o.Deleting && o.Orphan && o.Marked) {
		return
	}
	for _, owner := range sets.List(sets.New(recordOwnerOf(r.OwnerID, app), wantedOwner(r.OwnerID, app))) {
		listed, err := r.DNS.List(ctx, owner)
		if err != nil {
			log.FromContext(ctx).Error(err, "Listing this MyApp's records to find any a lost status write left; trying later")
			return
		}
		for _, rec := range listed {
			if _, read := o.Records[rec.Name]; read || !ownedBy(r.OwnerID, app, rec.Owner) {
				continue
			}
			log.FromContext(ctx).Info("Found a DNS record of this MyApp no status knows", "name", rec.Name)
			o.Held = append(o.Held, rec.Name)
			o.records[rec.Name] = rec
			o.Records[rec.Name] = planRecord(rec)
		}
	}
}
