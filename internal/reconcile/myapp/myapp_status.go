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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// eventReason is the reason of an event. An event that reports a
// condition's trouble carries the condition's reason (appsv1alpha1's
// XxxReason); the ones below are for events that no condition carries.
type eventReason string

// Reasons of events that have no condition of their own.
const (
	eventChildCreated      eventReason = "ChildCreated"
	eventChildUpdated      eventReason = "ChildUpdated"
	eventDNSRecordCreated  eventReason = "DNSRecordCreated"
	eventDNSRecordUpdated  eventReason = "DNSRecordUpdated"
	eventDNSRecordDeleted  eventReason = "DNSRecordDeleted"
	eventDNSRecordOrphaned eventReason = "DNSRecordOrphaned"
	eventDNSRecordReleased eventReason = "DNSRecordReleased"
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
	r.Recorder.Eventf(app, related, eventType, string(reason), action, note, args...)
}

func setCondition(app *appsv1alpha1.MyApp, condType string, status bool, reason, message string) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&app.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             s,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: app.Generation,
	})
}

func setDNSCondition(app *appsv1alpha1.MyApp, ready bool, reason, message string) {
	setCondition(app, appsv1alpha1.DNSReadyCondition, ready, reason, message)
}

func setReadyConditionFalse(app *appsv1alpha1.MyApp, reason, message string) {
	setCondition(app, appsv1alpha1.ReadyCondition, false, reason, message)
}

func isDNSConditionReason(app *appsv1alpha1.MyApp, reason string) bool {
	return hasConditionReason(app, appsv1alpha1.DNSReadyCondition, reason)
}

func isReadyConditionReason(app *appsv1alpha1.MyApp, reason string) bool {
	return hasConditionReason(app, appsv1alpha1.ReadyCondition, reason)
}

func hasConditionReason(app *appsv1alpha1.MyApp, condType, reason string) bool {
	c := meta.FindStatusCondition(app.Status.Conditions, condType)
	return c != nil && c.Reason == reason
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

// setChildWriteFailedCondition reports a child write the API server refused
// or failed; message names the child and carries the server's answer.
func setChildWriteFailedCondition(app *appsv1alpha1.MyApp, message string) {
	setReadyConditionFalse(app, appsv1alpha1.ChildWriteFailedReason, message)
}

// setChildConflictCondition reports an object in the way of a child.
func setChildConflictCondition(app *appsv1alpha1.MyApp, err *childConflictError) {
	setReadyConditionFalse(app, appsv1alpha1.ChildConflictReason, fmt.Sprintf(
		"%s %s already exists and is not controlled by this MyApp; the operator never adopts it: "+
			"delete or rename it, or rename the MyApp", err.kind, err.name))
}
