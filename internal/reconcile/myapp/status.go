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
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// eventReason is the reason of an event, as in every controller of the
// project (pass.EventReason).
type eventReason = pass.EventReason

// Reasons of events that have no condition of their own.
const (
	eventChildCreated      eventReason = "ChildCreated"
	eventChildUpdated      eventReason = "ChildUpdated"
	eventDNSRecordCreated  eventReason = "DNSRecordCreated"
	eventDNSRecordUpdated  eventReason = "DNSRecordUpdated"
	eventDNSRecordDeleted  eventReason = "DNSRecordDeleted"
	eventDNSRecordOrphaned eventReason = "DNSRecordOrphaned"
	eventDNSRecordReleased eventReason = "DNSRecordReleased"
	eventSuspended         eventReason = "Suspended"
	eventResumed           eventReason = "Resumed"
)

// Warnings that explain a condition carry the condition's reason.
const (
	eventChildConflict    = eventReason(appsv1alpha1.ChildConflictReason)
	eventChildWriteFailed = eventReason(appsv1alpha1.ChildWriteFailedReason)
	eventHostConflict     = eventReason(appsv1alpha1.HostConflictReason)
)

// event records an event about app; related is the child it concerns, or nil.
func (r *Reconciler) event(app *appsv1alpha1.MyApp, related runtime.Object, eventType string, reason eventReason,
	action, note string, args ...any) {
	pass.Eventf(r.Recorder, app, related, eventType, reason, action, note, args...)
}

// setConditions derives DNSReady and Ready from what the pass learned, and
// the kstatus conditions from them, at now. A condition the pass learned
// nothing about stays as it was: a pass that met a stale cache has nothing
// new to say.
func setConditions(s *scope, now time.Time) {
	app, rd := s.app, s.readiness
	switch {
	case rd.dns != nil:
		setDNSCondition(app, rd.dns.ok, rd.dns.reason, rd.dns.message)
	case rd.dnsStands:
		// The status stands as the last read left it, and this pass, which
		// decided so for the current spec, says DNSReady holds for its
		// generation (a condition at an older one reads as out of date).
		if c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition); c != nil {
			c.ObservedGeneration = app.Generation
		}
	}
	switch {
	case rd.deleting:
		setReadyConditionFalse(app, appsv1alpha1.DeletingReason, "The MyApp is being deleted")
	case rd.suspended:
		setSuspendedReadyCondition(app)
	case rd.child != nil:
		setReadyConditionFalse(app, rd.child.reason, rd.child.message)
	case rd.childrenWritten:
		setReadyCondition(app, s.deployment)
	default:
		// Ready stands as the last pass left it, and so do Reconciling and
		// Stalled, which follow it.
		return
	}
	setProgressConditions(app, rd, now)
}

// setProgressConditions derives the kstatus conditions, Reconciling and
// Stalled, from Ready and DNSReady as this pass set them, by the rules
// every kind shares (pass.SetProgressConditions): present, True and at the
// generation acted on while they apply, absent otherwise, so a Ready MyApp
// carries neither. kstatus (Helm 4's --wait, Flux, Argo CD through the
// shipped health check) reads Stalled as Failed and Reconciling as
// InProgress; status.observedGeneration tells it whether the spec was
// looked at at all. A suspended pass acts on no generation (docs/status.md):
// nothing is judged, and Reconciling says which changes wait.
func setProgressConditions(app *appsv1alpha1.MyApp, rd readiness, now time.Time) {
	p := pass.Progress{Generation: app.Generation, Suspended: rd.suspended,
		ActedOn: pass.ActedGeneration(app.Generation, app.Status.ObservedGeneration, rd.suspended)}
	if !rd.suspended {
		if reason, message, ok := stallOf(app, rd); ok {
			p.Stalled = &pass.Cause{Reason: reason, Message: message}
		} else if ready := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.ReadyCondition); ready != nil &&
			ready.Status != metav1.ConditionTrue {
			// The DNS condition's reason says more than Ready's
			// DNSNotReady: the record is PENDING, or the service is being
			// retried.
			reason, message := ready.Reason, ready.Message
			if dns := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition); reason == appsv1alpha1.DNSNotReadyReason &&
				dns != nil && dns.Status != metav1.ConditionTrue {
				reason = dns.Reason
			}
			p.InProgress = &pass.Cause{Reason: reason, Message: message}
		}
	}
	pass.SetProgressConditions(&app.Status.Conditions, p, now)
}

// setSuspendedReadyCondition is Ready of a suspended pass, at the last
// generation a pass acted on (status.observedGeneration, which a suspended
// pass does not advance).
func setSuspendedReadyCondition(app *appsv1alpha1.MyApp) {
	setConditionAt(app, appsv1alpha1.ReadyCondition, false, appsv1alpha1.SuspendedReason, "The MyApp is suspended: the "+
		"operator writes nothing to its children or the DNS service. Set spec.suspend to false to resume.",
		app.Status.ObservedGeneration)
}

// stallOf returns the reason and message of what keeps the MyApp from
// getting better without a change, if anything does: an object in the way
// of a child, a spec the API server refuses, and what dnsplan said is
// stalled (a host another owner holds for good, a DNS request the service
// rejects). A conflict that may end by itself (a cycle of moves under way)
// is not. A MyApp being deleted is never stalled (kstatus reports it
// Terminating). When the DNS phase decided nothing new (the status stands),
// DNSReady's stall stands with it.
func stallOf(app *appsv1alpha1.MyApp, rd readiness) (reason, message string, ok bool) {
	if rd.deleting {
		return "", "", false
	}
	if rd.child != nil {
		if rd.child.reason == appsv1alpha1.ChildConflictReason || rd.child.stalled {
			return rd.child.reason, rd.child.message, true
		}
		return "", "", false
	}
	if rd.dns != nil {
		return rd.dns.reason, rd.dns.message, rd.dns.stalled
	}
	dns := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition)
	stalled := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.StalledCondition)
	if dns == nil || dns.Status == metav1.ConditionTrue || dns.ObservedGeneration != app.Generation || stalled == nil ||
		stalled.Reason != dns.Reason {
		return "", "", false
	}
	return dns.Reason, dns.Message, true
}

// stalledAtGeneration reports whether the pass found the current spec
// stalled. Such a pass has looked at the generation and concluded, so
// status.observedGeneration says so: kstatus reads Stalled as Failed only
// for an observed generation, and would otherwise show a spec no retry can
// fix as forever in progress.
func stalledAtGeneration(app *appsv1alpha1.MyApp) bool {
	c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.StalledCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == app.Generation
}

// dnsFailed records that a call to the DNS service failed, and when the
// next attempt comes (nil: none is scheduled).
func (s *scope) dnsFailed(retryIn *time.Duration) {
	s.readiness.dnsFailure = &dnsFailure{retryIn: retryIn}
}

// setDNSFailures keeps status.dnsFailures: one more failure, with its time
// and the time of the retry, for a pass whose call failed; cleared by a
// pass whose DNS phase decided without a failure. A pass that decided
// nothing about the record leaves it as it was.
//
// A failure counts only when it is the planned retry (pass.BeforeRetry): a
// pass before the recorded next retry time (one that this very status
// write started, since every status write is an event), or after a failure
// no retry was planned for, leaves the status as it is. Otherwise each
// failed pass would write the status, and each write start another pass at
// once, around the controller's backoff.
func setDNSFailures(app *appsv1alpha1.MyApp, rd readiness, now time.Time) {
	prev := (*pass.Failures)(app.Status.DNSFailures)
	switch {
	case rd.dnsFailure != nil && prev.BeforeRetry(now):
		// Not the planned retry: the count stands.
	case rd.dnsFailure != nil:
		var next time.Time
		if rd.dnsFailure.retryIn != nil {
			next = now.Add(*rd.dnsFailure.retryIn)
		}
		app.Status.DNSFailures = (*appsv1alpha1.FailureStatus)(pass.CountFailure(prev, now, next))
	case rd.dns != nil:
		app.Status.DNSFailures = nil
	}
}

func setCondition(app *appsv1alpha1.MyApp, condType string, status bool, reason, message string) {
	setConditionAt(app, condType, status, reason, message, app.Generation)
}

// setConditionAt sets a condition for the generation it was decided at. A
// condition whose status changes takes the time of the write, not the
// reconciler's clock.
func setConditionAt(app *appsv1alpha1.MyApp, condType string, ok bool, reason, message string, generation int64) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	pass.SetCondition(&app.Status.Conditions, condType, status, reason, message, generation, time.Now())
}

func setDNSCondition(app *appsv1alpha1.MyApp, ready bool, reason, message string) {
	setCondition(app, appsv1alpha1.DNSReadyCondition, ready, reason, message)
}

func setReadyConditionFalse(app *appsv1alpha1.MyApp, reason, message string) {
	setCondition(app, appsv1alpha1.ReadyCondition, false, reason, message)
}

// reconcileRequested reports whether the MyApp carries a
// reconcile.myapp.dev/requested-at value no pass has handled yet.
func reconcileRequested(app *appsv1alpha1.MyApp) bool {
	v, ok := app.Annotations[appsv1alpha1.ReconcileRequestAnnotation]
	return ok && v != app.Status.LastHandledReconcileAt
}

// acknowledgeReconcileRequest records the reconcile.myapp.dev/requested-at
// value as handled once a pass has done what it asks: read the DNS record,
// or dealt with the records of a MyApp being deleted. A pass whose read
// failed, that waits for an address, or that stopped before the DNS phase
// leaves it to the next one, so CI waiting for the value knows the record
// was looked at.
func acknowledgeReconcileRequest(app *appsv1alpha1.MyApp, rd readiness) {
	if !reconcileRequested(app) || !rd.dnsRead {
		return
	}
	app.Status.LastHandledReconcileAt = app.Annotations[appsv1alpha1.ReconcileRequestAnnotation]
}

// wasSuspended reports whether the status shows the MyApp suspended, as
// the last pass left it.
func wasSuspended(app *appsv1alpha1.MyApp) bool {
	c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.ReadyCondition)
	return c != nil && c.Reason == appsv1alpha1.SuspendedReason
}

// hasReadyCondition reports whether Ready already says reason and message,
// so a retry that meets the same trouble sends no second event.
func hasReadyCondition(app *appsv1alpha1.MyApp, reason, message string) bool {
	c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.ReadyCondition)
	return c != nil && c.Reason == reason && c.Message == message
}

// setReplicaStatus copies the Deployment's ready pods into the status, with
// the summary the READY REPLICAS column shows: ready of wanted, as "2/2".
// Both change only when a pod turns ready or the wanted count changes.
func setReplicaStatus(app *appsv1alpha1.MyApp, dep *appsv1.Deployment) {
	var ready int32
	if dep != nil {
		ready = dep.Status.ReadyReplicas
	}
	app.Status.ReadyReplicas = ready
	app.Status.ReadyReplicasSummary = fmt.Sprintf("%d/%d", ready, ptr.Deref(app.Spec.Replicas, 1))
}

// setReadyCondition derives Ready from the Deployment and DNSReady: true only
// when the Deployment is available at the current spec and the record is
// active. The message carries no rollout counters: they change with every
// pod, and each change would cost a status write; status.readyReplicas
// shows them.
func setReadyCondition(app *appsv1alpha1.MyApp, dep *appsv1.Deployment) {
	if !deploymentRolledOut(dep) {
		setReadyConditionFalse(app, appsv1alpha1.DeploymentUnavailableReason, fmt.Sprintf(
			"Deployment %s is rolling out the current spec (status.readyReplicasSummary shows its progress); "+
				"check its pods' events if this persists", app.Name))
		return
	}
	dnsCond := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition)
	if dnsCond == nil || dnsCond.Status != metav1.ConditionTrue {
		msg := "The DNS record is not active yet"
		if dnsCond != nil {
			msg = "The app runs, but its DNS record is not active: " + dnsCond.Message
		}
		setReadyConditionFalse(app, appsv1alpha1.DNSNotReadyReason, msg)
		return
	}
	setCondition(app, appsv1alpha1.ReadyCondition, true, appsv1alpha1.AvailableReason,
		fmt.Sprintf("The app is available at %s", app.Spec.Host))
}

// deploymentRolledOut is true when the Deployment runs the current template
// on exactly the wanted number of available pods and reports Available:
// Available alone holds during a rolling update too, while old pods serve.
func deploymentRolledOut(dep *appsv1.Deployment) bool {
	if dep == nil || dep.Status.ObservedGeneration < dep.Generation {
		return false
	}
	want := ptr.Deref(dep.Spec.Replicas, 1)
	if dep.Status.UpdatedReplicas != want || dep.Status.Replicas != want || dep.Status.AvailableReplicas != want {
		return false
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// childConflictMessage is Ready's message for an object in the way of a
// child.
func childConflictMessage(err *childConflictError) string {
	return fmt.Sprintf("%s %s already exists and is not controlled by this MyApp; the operator never adopts it: "+
		"delete or rename it, or rename the MyApp", err.kind, err.name)
}

// childConflictError names an object with a child's name that the MyApp
// does not control. The operator never adopts or overwrites an object it did
// not create.
type childConflictError struct {
	kind, name string
}

func (e *childConflictError) Error() string {
	return fmt.Sprintf("%s %s exists and is not controlled by this MyApp", e.kind, e.name)
}
