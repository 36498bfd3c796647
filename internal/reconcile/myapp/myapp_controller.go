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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// driftEventBuffer is how many drifted MyApps the drift pass may hand the
// controller before it waits for the controller to take them.
const driftEventBuffer = 1024

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "myapp"

// Reconciler reconciles a MyApp. Its APIReader reads from the API server,
// not the cache, where a stale read could give up a MyApp's DNS name or
// hand a record to the wrong MyApp (adoption), and for a child the
// label-scoped cache does not hold (a create that finds its name taken).
// Its Clock tells when the DNS record is next due to be read.
type Reconciler struct {
	pass.Base
	// DNS is the external DNS service.
	DNS dns.Client
	// DNSClass is the DNS provider's class as measured at start: the zero
	// value (atomic) for the HTTP service and RFC 2136, last-writer-wins
	// for a webhook provider that applies every batch unconditionally. A
	// conflict's DNSReady message says so there (dnsplan.Outcome.Class).
	DNSClass dnsplan.Class
	// OwnerID is this installation's owner ID (ValidateOwnerID), part of
	// the owner of every record it writes: clusters sharing one DNS service
	// each need their own, so none sweeps, replaces or adopts another's
	// records. Required.
	OwnerID string
	// ReplaceLeakedRecords lets a MyApp delete a record, holding its
	// spec.host, that an earlier MyApp of its namespace and name left
	// behind without deletionPolicy Orphan, instead of waiting in
	// HostConflict for the orphan sweep. Set it only where the sweep runs:
	// both judge a record of this installation (OwnerID) by whether its
	// MyApp is alive in this cluster.
	ReplaceLeakedRecords bool

	// Takeovers, when set, says whether a MyApp may take an earlier
	// MyApp's record over now (adopt it, replace its leak, take it over
	// as restored): OwnerIDClaim, which allows it only once this
	// installation is known to be its owner ID's only user. Nil allows
	// every takeover (the claim is off).
	Takeovers TakeoverGuard

	// DefaultTarget is what a record points at while the Ingress has no
	// load-balancer address: an IP address (an A record) or a host name (a
	// CNAME). Empty means wait for the address.
	DefaultTarget string
	// IngressClassName, when set, is the class of every Ingress.
	IngressClassName string
	// PendingPollInterval and DriftCheckInterval default to
	// DefaultPendingPollInterval and DefaultDriftCheckInterval.
	PendingPollInterval time.Duration
	DriftCheckInterval  time.Duration
	// DriftCheck is how ACTIVE records are checked for drift once per
	// DriftCheckInterval: DriftCheckList (a leader-only drift pass lists
	// the records, drift_list.go) or DriftCheckRead (each record read).
	// Empty means DriftCheckRead; the manager's --dns-drift-check defaults
	// to DriftCheckList.
	DriftCheck DriftCheckMode
	// RecordTTL defaults to DefaultRecordTTL.
	RecordTTL int32

	cleanup cleanupTracker
	// childTroubles is the child-write failure each MyApp was last warned
	// about, so a pass on a cache without that pass's status write does
	// not warn again.
	childTroubles childTroubles
	dnsChecks     dnsSchedule
	// driftEvents brings the MyApps the drift pass found drifted.
	driftEvents chan event.GenericEvent
	// driftLists is how the drift pass's lists fare (drift_list.go): the
	// pass writes it, and every pass of a MyApp reads it.
	driftLists driftListHealth
}

// The role grants only the verbs the code uses. MyApps and their status are
// only ever patched (finalizers with an optimistic lock, status with a merge
// patch). Children are created, and updated by controllerutil.CreateOrUpdate;
// the Ingress's rules are also patched to route only the hosts the MyApp
// holds. Garbage collection deletes children, so the manager cannot delete a
// Deployment, Service or Ingress. The finalizers subresource's update lets
// the owner references set blockOwnerDeletion.
// +kubebuilder:rbac:groups=apps.myapp.dev,resources=myapps,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps.myapp.dev,resources=myapps/status,verbs=patch
// +kubebuilder:rbac:groups=apps.myapp.dev,resources=myapps/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller: MyApps are the root, and an
// edit to or deletion of an owned child brings its MyApp back at once.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.DNS == nil {
		return errors.New("the MyApp controller needs a DNS client")
	}
	if err := ValidateOwnerID(r.OwnerID); err != nil {
		return fmt.Errorf("the MyApp controller needs this installation's owner ID: %w", err)
	}
	switch r.DriftCheck {
	case "", DriftCheckRead, DriftCheckList:
	default:
		return fmt.Errorf("unknown DNS drift check %q: want %q or %q", r.DriftCheck, DriftCheckList, DriftCheckRead)
	}
	r.FromManager(mgr, ControllerName)
	r.setDefaults()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &appsv1alpha1.MyApp{}, hostIndex,
		func(obj client.Object) []string { return []string{obj.(*appsv1alpha1.MyApp).Spec.Host} }); err != nil {
		return fmt.Errorf("indexing MyApps by host: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &appsv1alpha1.MyApp{}, heldIndex, heldIndexValues); err != nil {
		return fmt.Errorf("indexing MyApps by held host: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if r.DriftCheck == DriftCheckList {
		r.driftEvents = make(chan event.GenericEvent, driftEventBuffer)
		b = b.WatchesRawSource(source.Channel(r.driftEvents, &handler.EnqueueRequestForObject{}))
		if err := mgr.Add(&driftLister{
			r: r, reader: mgr.GetCache(), events: r.driftEvents, log: mgr.GetLogger().WithName("dns-drift-pass"),
		}); err != nil {
			return fmt.Errorf("adding the DNS drift pass: %w", err)
		}
	}
	return b.
		For(&appsv1alpha1.MyApp{}).
		// A MyApp waiting for a host another MyApp holds comes back when
		// that one moves or goes, not on its next drift check.
		Watches(&appsv1alpha1.MyApp{}, r.hostWaiters()).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&networkingv1.Ingress{}).
		WithOptions(r.ControllerOptions()).
		Named(ControllerName).
		Complete(r)
}

// Reconcile brings one MyApp's children and DNS record to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	app := &appsv1alpha1.MyApp{}
	// The DNS cleanup finalizer goes on before a record is written.
	if ok, res, err := r.Begin(ctx, req, app, appsv1alpha1.DNSCleanupFinalizer, func() error {
		r.cleanup.forget(req.NamespacedName)
		r.dnsChecks.forgetAll(req.NamespacedName)
		r.childTroubles.forget(req.NamespacedName)
		return nil
	}); !ok {
		return res, err
	}

	s := &scope{app: app, base: app.DeepCopy()}
	var out pass.Outcome
	defer func() {
		if s.gone {
			return
		}
		now := r.Clock.Now()
		setConditions(s, now)
		acknowledgeReconcileRequest(app, s.readiness)
		setDNSFailures(app, s.readiness, now)
		// A suspended pass acts on no generation (docs/status.md): the
		// generation acted on stays the observed one.
		if retErr == nil && out.Complete || stalledAtGeneration(app) {
			app.Status.ObservedGeneration = pass.ActedGeneration(app.Generation, app.Status.ObservedGeneration, s.readiness.suspended)
		}
		// The status is written with the caller's context: it records what
		// happened even when the phases ran out of time.
		if _, err := pass.PatchStatus(ctx, &r.Base, s.base, app, myAppStatus); err != nil {
			// What the DNS phase remembers was never written: read again.
			r.dnsChecks.forget(req.NamespacedName)
			r.childTroubles.forget(req.NamespacedName)
			retErr = errors.Join(retErr, err)
		}
	}()

	phaseCtx, cancel := context.WithTimeout(ctx, r.ReconcileTimeout)
	defer cancel()
	switch {
	case !app.DeletionTimestamp.IsZero():
		// Suspend never blocks a deletion: the DNS cleanup runs as usual.
		out = pass.Run(phaseCtx, s, r.reconcileDelete)
	case app.Spec.Suspend:
		out = r.reconcileSuspended(s)
	default:
		out = r.reconcileNormal(phaseCtx, s)
	}
	return out.Return()
}

// reconcileSuspended is the whole pass of a suspended MyApp: it writes
// nothing but its status (Ready says Suspended), and announces the suspend
// once with a Normal event. Edits to the MyApp or its children wait for the
// resume. The pass is complete, but acts on no generation: the status says
// which changes wait (setSuspendedConditions).
func (r *Reconciler) reconcileSuspended(s *scope) pass.Outcome {
	if !wasSuspended(s.app) {
		r.event(s.app, nil, corev1.EventTypeNormal, eventSuspended, "Suspend",
			"Suspended: nothing is written to the children or the DNS service until spec.suspend is false")
	}
	s.readiness.suspended = true
	return pass.Outcome{Complete: true}
}

// reconcileNormal runs the phases of a live MyApp in order (pass.Run).
// Children come first: the DNS record points at the Ingress's address. The
// Ingress's routes follow the DNS phase whatever it came to, since a DNS
// service that fails or asks to wait must not keep a new Ingress from being
// created; its error or wait ends the pass once they are written.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) pass.Outcome {
	if wasSuspended(s.app) {
		// The DNS phase reads the record at once (dnsplan.AskResumed): what
		// changed while suspended is found now, not at the next drift check.
		r.event(s.app, nil, corev1.EventTypeNormal, eventResumed, "Resume",
			"Resumed: the children and the DNS record are brought to the spec")
	}
	defer r.reportCreated(s)
	return pass.Run(ctx, s,
		r.reconcileChildren,
		pass.NotBlocking(r.reconcileDNSRecord),
		r.reconcileIngressRoutes,
	)
}

// myAppStatus is a MyApp's status, for pass.PatchStatus. A status patch is
// a plain merge patch: every field of it is derived from the children, the
// DNS service or the spec.
func myAppStatus(app *appsv1alpha1.MyApp) any { return app.Status }
