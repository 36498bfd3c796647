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
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// hostConflict reports that another owner holds spec.host. The other record
// is never touched, and the Ingress does not route the host. The host is
// read again at this MyApp's drift check, or sooner when the MyApp holding
// it changes.
//
// Two MyApps swapping hosts would wait for each other for ever, each keeping
// its old record until it holds the new one. So when the holder is a live
// MyApp whose spec.host is now the host this MyApp holds, this MyApp
// releases its record first; in every other case it keeps its old host, so
// a host change never leaves the app without a name.
func (r *Reconciler) hostConflict(ctx context.Context, s *scope, holder string) (ctrl.Result, error) {
	app := s.app
	held := heldHost(app)
	if held == app.Spec.Host {
		// The status says this MyApp holds spec.host, but the service says
		// otherwise: the record was deleted and taken outside the operator.
		app.Status.DNS, held = nil, ""
	}
	s.routes = sets.New[string]()
	if held != "" {
		s.routes.Insert(held)
	}

	var snapshot *holderSnapshot
	if holderApp := r.holderMyApp(ctx, holder); holderApp != nil {
		snapshot = snapshotOf(holderApp)
		if held != "" && holderApp.Spec.Host == held {
			// Confirm with the API server, not the cache, before giving up
			// a name.
			live := &appsv1alpha1.MyApp{}
			err := r.APIReader.Get(ctx, snapshot.key, live)
			if err == nil && live.UID == holderApp.UID && live.Spec.Host == held && live.DeletionTimestamp.IsZero() {
				return r.releaseForSwap(ctx, s, live)
			}
		}
	}

	who := describeOwner(holder)
	log.FromContext(ctx).Info("Host is registered by another owner; leaving it alone", "host", app.Spec.Host, "holder", holder)
	msg := fmt.Sprintf("Host %s is already registered in the DNS service by %s; %s",
		app.Spec.Host, who, hostConflictAdvice(app, holder))
	if held != "" {
		msg += fmt.Sprintf("; %s stays registered and routed meanwhile", held)
	}
	if pass.TroubleStarts(app.Status.Conditions, appsv1alpha1.DNSReadyCondition, appsv1alpha1.HostConflictReason) {
		r.event(app, nil, corev1.EventTypeWarning, eventHostConflict, "CreateDNSRecord", "%s", msg)
	}
	s.dnsState(false, appsv1alpha1.HostConflictReason, msg)
	next := r.dnsChecks.driftCheck(client.ObjectKeyFromObject(app), app.UID, r.DriftCheckInterval, r.Clock.Now())
	return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, snapshot)}, nil
}

// holderMyApp is the live MyApp (from the cache) that the owner identity
// holder names, or nil when holder is not a MyApp's or that MyApp is gone.
func (r *Reconciler) holderMyApp(ctx context.Context, holder string) *appsv1alpha1.MyApp {
	parts := strings.Split(strings.TrimPrefix(holder, ownerPrefix), "/")
	if !strings.HasPrefix(holder, ownerPrefix) || len(parts) != 3 {
		return nil
	}
	app := &appsv1alpha1.MyApp{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: parts[0], Name: parts[1]}, app); err != nil ||
		string(app.UID) != parts[2] {
		return nil
	}
	return app
}

// releaseForSwap deletes this MyApp's records so the holder of spec.host,
// which is moving to the host this MyApp held, can take it and release
// spec.host in turn. This MyApp reads spec.host again soon after.
func (r *Reconciler) releaseForSwap(ctx context.Context, s *scope, holder *appsv1alpha1.MyApp) (ctrl.Result, error) {
	app := s.app
	released := heldHost(app)
	log.FromContext(ctx).Info("Releasing the previous host to the MyApp moving to it, which holds this MyApp's new host",
		"host", app.Spec.Host, "released", released, "holder", klog.KObj(holder))
	if err := r.deleteRecordsExcept(ctx, app, app.Spec.Host); err != nil {
		return r.handleDNSError(ctx, s, "release the previous", err)
	}
	app.Status.DNS = nil
	s.routes = sets.New[string]()
	msg := fmt.Sprintf("Host %s is held by MyApp %s/%s, which is moving to %s, the host this MyApp held; "+
		"%s was released so the two can swap, and %s is registered once it is free",
		app.Spec.Host, holder.Namespace, holder.Name, released, released, app.Spec.Host)
	r.event(app, nil, corev1.EventTypeNormal, eventDNSRecordReleased, "DeleteDNSRecord", "%s", msg)
	s.dnsState(false, appsv1alpha1.HostConflictReason, msg)
	next := r.Clock.Now().Add(wait.Jitter(r.PendingPollInterval, pass.JitterFactor))
	return ctrl.Result{RequeueAfter: r.rememberDNSCheck(s, next, snapshotOf(holder))}, nil
}

// hostConflictAdvice is what a HostConflict message tells the user to do.
// When the holder is an earlier MyApp of the same name, the way out is the
// adoption annotation, which the message names.
func hostConflictAdvice(app *appsv1alpha1.MyApp, holder string) string {
	if _, ok := formerSelf(app, holder); ok {
		if wantsAdoption(app) {
			return "that MyApp still exists, so the record is not adopted; delete it or choose another host"
		}
		return fmt.Sprintf("if that MyApp no longer exists (deleted with deletionPolicy Orphan, or this MyApp was "+
			"restored), annotate this MyApp with %s=true to adopt the record", appsv1alpha1.AdoptDNSRecordAnnotation)
	}
	return "choose another host, or delete that MyApp or record first"
}
