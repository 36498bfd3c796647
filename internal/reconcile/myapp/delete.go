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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileDelete deals with the MyApp's DNS records through the DNS loop
// (runDNS; dnsplan decides), then removes its finalizer: under
// deletionPolicy Delete the records are deleted; under Orphan they are
// left, marked orphaned (records written under Orphan are marked already,
// so an outage cannot hold or spoil such a deletion). The records are
// found by the names this MyApp knows, never by listing the owner's
// records unless a lost status write may have hidden one. The children are
// not touched: their owner references hand them to the garbage collector
// once the MyApp is gone.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	if !controllerutil.ContainsFinalizer(app, appsv1alpha1.DNSCleanupFinalizer) {
		r.cleanup.forget(client.ObjectKeyFromObject(app))
		return ctrl.Result{}, nil
	}
	r.cleanup.waiting(app)
	s.readiness.deleting = true
	run := r.runDNS(ctx, s)
	if result, err := r.showDNS(ctx, s, run); err != nil || run.p.Outcome.Kind != dnsplan.KindReleased {
		return result, err
	}
	r.announceRelease(ctx, run)
	log.FromContext(ctx).Info("Removing the DNS cleanup finalizer")
	if err := pass.RemoveFinalizer(ctx, r.Client, app, appsv1alpha1.DNSCleanupFinalizer); err != nil {
		s.gone = apierrors.IsNotFound(err)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// With no finalizer left the API server deletes the MyApp at once.
	s.gone = len(app.Finalizers) == 0
	r.cleanup.done(app)
	return ctrl.Result{}, nil
}

// announceRelease says what a deletion left behind before its finalizer
// goes: under Orphan, the records left in place (a warning when the wait
// to mark them ran out), under Delete nothing, so status.dns is cleared.
func (r *Reconciler) announceRelease(ctx context.Context, run dnsRun) {
	o := run.o
	app := o.app
	switch {
	case o.Orphan && run.p.Outcome.Unmarked:
		log.FromContext(ctx).Error(o.readErr, "Could not mark the DNS record as orphaned within the wait; leaving it unmarked",
			"wait", dnsplan.OrphanMarkWait)
		r.event(app, nil, corev1.EventTypeWarning, eventDNSRecordOrphaned, "DeleteDNSRecord",
			"Left the DNS record for %s in the DNS service (deletionPolicy is Orphan) but could not mark it as "+
				"orphaned within %s: %s; the orphan-record sweep deletes it once the service answers, unless a MyApp of "+
				"this name adopts it first", app.Spec.Host, dnsplan.OrphanMarkWait,
			failureAdvice(o, dnsplan.Failure{Reason: dnsReasons.For(o.readErr)}))
	case o.Orphan:
		log.FromContext(ctx).Info("Leaving DNS records in place", "deletionPolicy", app.Spec.DeletionPolicy)
		r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordOrphaned, "DeleteDNSRecord",
			"Left the DNS record for %s in the DNS service: deletionPolicy is Orphan. It is owned by %q, which the "+
				"orphan-record sweep never deletes; a MyApp of this name annotated %s=true can adopt it",
			app.Spec.Host, o.Self.Orphaned(), appsv1alpha1.AdoptDNSRecordAnnotation)
	default:
		app.Status.DNS = nil
	}
}
