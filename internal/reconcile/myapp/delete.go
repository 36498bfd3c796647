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
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// reconcileDelete removes the MyApp's DNS records and then its finalizer.
// The children are not touched: their owner references hand them to the
// garbage collector once the MyApp is gone.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	app := s.app
	if !controllerutil.ContainsFinalizer(app, appsv1alpha1.DNSCleanupFinalizer) {
		r.cleanup.forget(client.ObjectKeyFromObject(app))
		return ctrl.Result{}, nil
	}
	r.cleanup.waiting(app)
	s.readiness.deleting = true

	if app.Spec.DeletionPolicy == appsv1alpha1.DeletionPolicyOrphan {
		log.FromContext(ctx).Info("Leaving DNS records in place", "deletionPolicy", app.Spec.DeletionPolicy)
		// Marked as orphaned on purpose, so the orphan sweep leaves them.
		if err := r.markRecordsOrphaned(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	} else {
		s.dnsState(false, appsv1alpha1.DeletingRecordReason,
			fmt.Sprintf("Deleting the DNS record for %s before the MyApp goes", app.Spec.Host))
		if done, result, err := r.deleteAllRecords(ctx, s); !done {
			return result, err
		}
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

// deleteAllRecords deletes every record this MyApp owns, at the cost of one
// delete per record and one list. The candidates come from the status and
// spec.host, deleted without asking the service first; the service's list
// by owner then confirms. Whatever it still lists (a record an interrupted
// host change left that no status shows, or one an eventually consistent
// list still shows) is deleted and listed again. done is false when the pass
// must end with result and err: a call failed, or records are still listed.
func (r *Reconciler) deleteAllRecords(ctx context.Context, s *scope) (done bool, result ctrl.Result, err error) {
	app := s.app
	candidates, known := sets.New(app.Spec.Host), sets.New[string]()
	if held := heldHost(app); held != "" {
		candidates.Insert(held)
		known.Insert(held)
	}
	for range 2 {
		if err := r.deleteRecordNames(ctx, app, candidates, known); err != nil {
			result, err := r.handleDNSError(ctx, s, "delete", err)
			return false, result, err
		}
		// The deletes succeeded; confirm with the service that nothing it
		// holds still names this owner before letting the MyApp go.
		left, err := r.DNS.List(ctx, recordOwner(app))
		if err != nil {
			result, err := r.handleDNSError(ctx, s, "confirm the deletion of", err)
			return false, result, err
		}
		if len(left) == 0 {
			return true, ctrl.Result{}, nil
		}
		candidates = sets.New[string]()
		for _, rec := range left {
			candidates.Insert(rec.Name)
		}
		known = candidates
		log.FromContext(ctx).Info("DNS service still lists records of this MyApp; deleting them", "names", sets.List(candidates))
	}
	log.FromContext(ctx).Info("DNS service still lists records of this MyApp; checking again", "count", candidates.Len())
	return false, ctrl.Result{RequeueAfter: wait.Jitter(r.PendingPollInterval, pass.JitterFactor)}, nil
}
