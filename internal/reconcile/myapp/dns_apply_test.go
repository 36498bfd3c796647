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
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestDNSPhaseShowsWhatTheServiceSaid runs the DNS phase alone, over a
// hand-built scope, against the simulator as it answers and fails: what
// only the apply side can show, the requests it makes, the retry each
// failure asks of the pass, the routes it leaves and the events it sends.
// What the phase decides is dnsplan's, checked over every observation
// there.
func TestDNSPhaseShowsWhatTheServiceSaid(t *testing.T) {
	const foreignOwner = "external-dns/team-billing"

	type phaseCase struct {
		name string
		// defaultTarget is the Reconciler's; empty means none.
		defaultTarget string
		// ingress is the Ingress the children phase left in the scope.
		ingress *networkingv1.Ingress
		// inject, when set, runs the case on a simulator of its own with
		// this fault.
		inject func(*simulator.Server)
		// seed writes a record before the phase runs and returns it.
		seed func(t *testing.T, g *WithT, d phaseDNS, app *appsv1alpha1.MyApp) dns.Record

		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
		wantOutcome string
		wantAfter   time.Duration
		// check asserts the rest.
		check func(t *testing.T, g *WithT, c phaseRun)
	}

	cases := []phaseCase{{
		name:        "no address and no default target waits for the address",
		wantStatus:  metav1.ConditionFalse,
		wantReason:  appsv1alpha1.WaitingForAddressReason,
		wantMessage: "no load-balancer address yet",
		wantOutcome: outcomeNone,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.result).To(BeZero(), "the Ingress's status update brings the MyApp back")
			g.Expect(c.counted.getsOf(c.host)).To(BeZero(), "the service is not asked")
			g.Expect(c.dns.records(c.host)).To(BeEmpty())
			g.Expect(c.s.routes).To(BeNil(), "the Ingress's routes stay as they are")
			g.Expect(c.app.Status.DNS).To(BeNil())
		},
	}, {
		name:          "a new host is registered and pending",
		defaultTarget: defaultTarget,
		wantStatus:    metav1.ConditionFalse,
		wantReason:    appsv1alpha1.RecordPendingReason,
		wantMessage:   "accepted A ",
		wantOutcome:   outcomeNone,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.dns.records(c.host)).To(ConsistOf(And(
				HaveField("Owner", recordOwner(c.app)), HaveField("Type", dns.TypeA),
				HaveField("Value", defaultTarget), HaveField("TTL", DefaultRecordTTL))))
			pendingPollRange(g, c.result)
			g.Expect(c.s.routes).To(Equal(sets.New(c.host)), "the host is held, so the Ingress routes it")
			g.Expect(c.app.Status.DNS).To(HaveValue(And(
				HaveField("Name", c.host), HaveField("Owner", recordOwner(c.app)),
				HaveField("State", appsv1alpha1.DNSRecordPending))))
			g.Expect(c.events).To(ConsistOf(HavePrefix("Normal DNSRecordCreated ")))
		},
	}, {
		name:          "a record already active is left as it is",
		defaultTarget: defaultTarget,
		seed: func(t *testing.T, g *WithT, d phaseDNS, app *appsv1alpha1.MyApp) dns.Record {
			return d.seedActive(t, g, app.Spec.Host, defaultTarget, recordOwner(app))
		},
		wantStatus:  metav1.ConditionTrue,
		wantReason:  appsv1alpha1.RecordActiveReason,
		wantMessage: "is active in the DNS service",
		wantOutcome: outcomeNone,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			driftCheckRange(g, c.result)
			g.Expect(c.s.routes).To(Equal(sets.New(c.host)))
			g.Expect(c.app.Status.DNS).To(HaveValue(And(
				HaveField("State", appsv1alpha1.DNSRecordActive),
				HaveField("LastObservedState", appsv1alpha1.DNSRecordActive))))
			g.Expect(c.dns.records(c.host)).To(ConsistOf(HaveField("UpdatedAt", c.seeded.UpdatedAt)),
				"a record as wanted is not written")
			g.Expect(c.events).To(BeEmpty())
		},
	}, {
		name:          "a host another owner holds is a conflict",
		defaultTarget: defaultTarget,
		seed: func(t *testing.T, g *WithT, d phaseDNS, app *appsv1alpha1.MyApp) dns.Record {
			return d.seedActive(t, g, app.Spec.Host, "198.51.100.7", foreignOwner)
		},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  appsv1alpha1.HostConflictReason,
		wantMessage: fmt.Sprintf("by owner %q", foreignOwner),
		wantOutcome: outcomeNone,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			driftCheckRange(g, c.result)
			g.Expect(c.dns.records(c.host)).To(ConsistOf(And(
				HaveField("Owner", foreignOwner), HaveField("Value", "198.51.100.7"),
				HaveField("UpdatedAt", c.seeded.UpdatedAt))), "the other record is never touched")
			g.Expect(c.s.routes).NotTo(BeNil(), "the phase decided the routes")
			g.Expect(c.s.routes.Has(c.host)).To(BeFalse(), "the Ingress does not route a host it does not hold")
			g.Expect(c.app.Status.DNS).To(BeNil())
			g.Expect(c.events).To(ConsistOf(HavePrefix("Warning HostConflict ")))
		},
	}, {
		name:          "a throttling service's Retry-After is the wait",
		defaultTarget: defaultTarget,
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 429, RetryAfter: 30 * time.Second})
		},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  appsv1alpha1.DNSThrottledReason,
		wantMessage: "Could not read the DNS record",
		wantOutcome: outcomeWaiting,
		wantAfter:   30 * time.Second,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.dns.sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpGet, 429)).To(Equal(1),
				"a Retry-After over the client's wait is handed back, not slept through")
			g.Expect(external.KindOf(c.err)).To(Equal(external.KindThrottled))
			g.Expect(c.s.routes).To(BeNil())
			g.Expect(c.events).To(ConsistOf(HavePrefix("Warning DNSThrottled ")))
		},
	}, {
		name:          "a service that is down is retried with backoff",
		defaultTarget: defaultTarget,
		inject:        func(s *simulator.Server) { s.SetOutage(simulator.ServiceDNS, true) },
		wantStatus:    metav1.ConditionFalse,
		wantReason:    appsv1alpha1.DNSServiceUnavailableReason,
		wantMessage:   "Could not read the DNS record",
		wantOutcome:   outcomeBackoff,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.dns.sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpGet, 503)).To(Equal(2),
				"the client's one retry, then the pass's backoff")
			g.Expect(external.KindOf(c.err)).To(Equal(external.KindTransient))
			g.Expect(c.s.routes).To(BeNil())
		},
	}, {
		name:          "a 500 on the write is retried with backoff",
		defaultTarget: defaultTarget,
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpUpsert, simulator.Fault{Status: 500})
		},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  appsv1alpha1.DNSServiceUnavailableReason,
		wantMessage: "Could not write the DNS record",
		wantOutcome: outcomeBackoff,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.dns.sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpUpsert, 500)).To(Equal(2))
			g.Expect(c.dns.records(c.host)).To(BeEmpty(), "a refused write stores nothing")
			g.Expect(c.s.routes).To(BeNil())
			g.Expect(c.app.Status.DNS).To(BeNil())
		},
	}, {
		name:          "a 503 asking for a long wait is waited out",
		defaultTarget: defaultTarget,
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpUpsert, simulator.Fault{Status: 503, RetryAfter: time.Minute})
		},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  appsv1alpha1.DNSServiceUnavailableReason,
		wantMessage: "Could not write the DNS record",
		wantOutcome: outcomeWaiting,
		wantAfter:   time.Minute,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.dns.sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpUpsert, 503)).To(Equal(1))
			g.Expect(c.s.routes).To(BeNil())
		},
	}, {
		name:          "a read the service rejects as invalid is terminal",
		defaultTarget: defaultTarget,
		inject: func(s *simulator.Server) {
			s.SetFault(simulator.ServiceDNS, simulator.OpGet, simulator.Fault{Status: 422})
		},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  appsv1alpha1.DNSRequestRejectedReason,
		wantMessage: "rejected the request as invalid",
		wantOutcome: outcomeTerminal,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.dns.sim.RequestCountStatus(simulator.ServiceDNS, simulator.OpGet, 422)).To(Equal(1),
				"an invalid request is not repeated")
			g.Expect(external.KindOf(c.err)).To(Equal(external.KindInvalid))
			g.Expect(c.s.routes).To(BeNil())
			g.Expect(c.events).To(ConsistOf(HavePrefix("Warning DNSRequestRejected ")))
		},
	}, {
		// No fault: the service's own validation refuses a label that ends
		// in a hyphen, which is what the load balancer reported.
		name: "a target the service refuses is terminal",
		ingress: &networkingv1.Ingress{Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
			Ingress: []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb-.example.net"}},
		}}},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  appsv1alpha1.DNSRequestRejectedReason,
		wantMessage: "Could not write the DNS record",
		wantOutcome: outcomeTerminal,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			var ext *external.Error
			g.Expect(errors.As(c.err, &ext)).To(BeTrue())
			g.Expect(ext.StatusCode).To(Equal(400), "the service, not the client, refused it")
			g.Expect(c.dns.records(c.host)).To(BeEmpty())
			g.Expect(c.s.routes).To(BeNil())
		},
	}}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := sharedDNS()
			if tc.inject != nil {
				d = ownDNS(t)
				tc.inject(d.sim)
			}
			app := phaseApp(t, "web")
			d.removeAtEnd(t, app.Spec.Host)
			var seeded dns.Record
			if tc.seed != nil {
				seeded = tc.seed(t, g, d, app)
			}
			counted := newCountingDNS(d.client)
			r, rec := newPhaseReconciler(k8sClient, counted, tc.defaultTarget)
			s := &scope{app: app, ingress: tc.ingress}

			result, err := r.reconcileDNSRecord(t.Context(), s)
			setConditions(s, time.Now())

			outcome, after := phaseOutcome(err)
			g.Expect(outcome).To(Equal(tc.wantOutcome), "error: %v", err)
			expectWait(g, after, tc.wantAfter)
			if err != nil {
				g.Expect(result).To(BeZero(), "an error carries the requeue, not the result")
			}
			expectDNSReady(g, app, tc.wantStatus, tc.wantReason, tc.wantMessage)
			tc.check(t, g, phaseRun{
				app: app, host: app.Spec.Host, s: s, result: result, err: err,
				dns: d, counted: counted, events: recordedEvents(rec), seeded: seeded,
			})
		})
	}
}

// TestAConflictSaysWhoHoldsTheHostAndWhatIsHandedOver runs the DNS phase
// of a MyApp whose spec.host another owner holds: the words of its
// message and its events, the warning sent once, and a hand-over made
// only to a MyApp the API server shows wanting the host, whatever the
// cache says.
func TestAConflictSaysWhoHoldsTheHostAndWhatIsHandedOver(t *testing.T) {
	const foreignOwner = "external-dns/team-billing"

	type conflictCase struct {
		name string
		// prepare sets the MyApp up as the pass found it, seeds records,
		// and returns the holder's owner identity and, for a live MyApp
		// holding the host, that MyApp.
		prepare func(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) (holder string, live *appsv1alpha1.MyApp)

		wantMessage []string
		// wantRoutes are the hosts the Ingress may route afterwards.
		wantRoutes func(app *appsv1alpha1.MyApp) sets.Set[string]
		// wantEvents are the prefixes of the events sent.
		wantEvents []string
		// requeue checks the result; nil means the next drift check.
		requeue func(g *WithT, result ctrl.Result)
		check   func(t *testing.T, g *WithT, c phaseRun)
		// apiView, when set, is the live holder as the API server has it,
		// distinct from what the cache shows: the APIReader is then a
		// client of its own.
		apiView func(live *appsv1alpha1.MyApp) *appsv1alpha1.MyApp
	}

	// previousHost is the host a MyApp moving to spec.host still holds.
	previousHost := func(app *appsv1alpha1.MyApp) string { return "previous." + app.Namespace + ".example.com" }
	holdPrevious := func(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) {
		host := previousHost(app)
		sharedDNS().removeAtEnd(t, host)
		sharedDNS().seedActive(t, g, host, defaultTarget, recordOwner(app))
		app.Generation = 2
		app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: host, Type: dns.TypeA, Value: defaultTarget,
			Owner: recordOwner(app), State: appsv1alpha1.DNSRecordActive, LastObservedState: appsv1alpha1.DNSRecordActive}
		withDNSReady(app, true, appsv1alpha1.RecordActiveReason)
	}
	// liveHolder is a MyApp holding spec.host that the reconciler's client
	// shows, and that wants the host named.
	liveHolder := func(app *appsv1alpha1.MyApp, wants string) *appsv1alpha1.MyApp {
		// Named after this MyApp ("web"): in a cycle of moves the smallest
		// name gives first, and these cases are about this MyApp giving.
		holder := newMyApp(app.Namespace, "xholder", fixtures.WithHost(wants))
		holder.UID = uuid.NewUUID()
		holder.Generation = 1
		holder.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: app.Spec.Host, Owner: recordOwner(holder),
			State: appsv1alpha1.DNSRecordActive}
		return holder
	}
	noRoutes := func(*appsv1alpha1.MyApp) sets.Set[string] { return sets.New[string]() }
	previousRouted := func(app *appsv1alpha1.MyApp) sets.Set[string] { return sets.New(previousHost(app)) }

	cases := []conflictCase{{
		name: "a holder that is not a MyApp, when the trouble starts",
		prepare: func(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) (string, *appsv1alpha1.MyApp) {
			withDNSReady(app, false, appsv1alpha1.RecordPendingReason)
			return foreignOwner, nil
		},
		wantMessage: []string{fmt.Sprintf("by owner %q", foreignOwner), "choose another host"},
		wantRoutes:  noRoutes,
		wantEvents:  []string{"Warning HostConflict Host "},
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(c.app.Status.DNS).To(BeNil())
		},
	}, {
		name: "a holder that is not a MyApp, already reported",
		prepare: func(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) (string, *appsv1alpha1.MyApp) {
			withDNSReady(app, false, appsv1alpha1.HostConflictReason)
			return foreignOwner, nil
		},
		wantMessage: []string{fmt.Sprintf("by owner %q", foreignOwner)},
		wantRoutes:  noRoutes,
		wantEvents:  nil,
	}, {
		name: "a live MyApp moving to the previous host gets it handed over",
		prepare: func(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) (string, *appsv1alpha1.MyApp) {
			holdPrevious(t, g, app)
			holder := liveHolder(app, previousHost(app))
			return recordOwner(holder), holder
		},
		wantMessage: []string{"%PREVIOUS% was handed over to MyApp %NS%/xholder, which wants it"},
		wantRoutes:  noRoutes,
		wantEvents:  []string{"Normal DNSRecordHandedOver ", "Warning HostConflict "},
		requeue:     pendingPollRange,
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(recordsNamed(previousHost(c.app))).To(ConsistOf(HaveField("Owner", ContainSubstring("/xholder/"))),
				"the previous record is handed to the MyApp that wants it, never deleted for it to take")
			g.Expect(c.counted.deletesBy(recordOwner(c.app))).To(BeZero())
			g.Expect(c.app.Status.DNS).To(BeNil())
		},
	}, {
		// The cache shows the holder moving to the previous host; the API
		// server says it is not (the edit was reverted): nothing is handed
		// over on the cache's word.
		name: "a holder the cache shows moving but the API server does not keeps the previous host",
		prepare: func(t *testing.T, g *WithT, app *appsv1alpha1.MyApp) (string, *appsv1alpha1.MyApp) {
			holdPrevious(t, g, app)
			holder := liveHolder(app, previousHost(app))
			return recordOwner(holder), holder
		},
		apiView: func(live *appsv1alpha1.MyApp) *appsv1alpha1.MyApp {
			reverted := live.DeepCopy()
			reverted.Spec.Host = "somewhere-else.example.com"
			return reverted
		},
		wantMessage: []string{"by MyApp %NS%/xholder (uid ", "%PREVIOUS% stays registered and routed meanwhile"},
		wantRoutes:  previousRouted,
		wantEvents:  []string{"Warning HostConflict Host "},
		check: func(t *testing.T, g *WithT, c phaseRun) {
			g.Expect(recordsNamed(previousHost(c.app))).To(ConsistOf(HaveField("Owner", recordOwner(c.app))),
				"the previous record stays this MyApp's")
		},
	}}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			app := phaseApp(t, "web")
			holder, live := tc.prepare(t, g, app)
			// A client of its own, indexed as the manager's cache is, shows
			// the live holder, which no manager may reconcile while the
			// phase runs.
			builder := fake.NewClientBuilder().WithScheme(fixtures.Scheme()).
				WithIndex(&appsv1alpha1.MyApp{}, hostIndex, func(o client.Object) []string {
					return []string{o.(*appsv1alpha1.MyApp).Spec.Host}
				})
			if live != nil {
				builder = builder.WithObjects(live)
			}
			c := builder.Build()
			// The holder's record at spec.host, as the phase reads it.
			sharedDNS().removeAtEnd(t, app.Spec.Host)
			sharedDNS().seed(t, g, app.Spec.Host, "198.51.100.7", holder)
			counted := newCountingDNS(dnsClient)
			r, rec := newPhaseReconciler(c, counted, defaultTarget)
			if tc.apiView != nil {
				r.APIReader = fake.NewClientBuilder().WithScheme(fixtures.Scheme()).WithObjects(tc.apiView(live)).Build()
			}
			// The last read was for another host: this pass reads.
			r.dnsChecks.set(client.ObjectKeyFromObject(app), dnsCheck{uid: app.UID, host: "elsewhere.example.com"})
			s := &scope{app: app}

			result, err := r.reconcileDNSRecord(t.Context(), s)
			setConditions(s, time.Now())

			g.Expect(err).NotTo(HaveOccurred())
			requeue := tc.requeue
			if requeue == nil {
				requeue = driftCheckRange
			}
			requeue(g, result)
			expectDNSReady(g, app, metav1.ConditionFalse, appsv1alpha1.HostConflictReason, "Host "+app.Spec.Host)
			msg := conditionOf(app, appsv1alpha1.DNSReadyCondition).Message
			names := strings.NewReplacer("%NS%", app.Namespace, "%PREVIOUS%", previousHost(app))
			for _, want := range tc.wantMessage {
				g.Expect(msg).To(ContainSubstring(names.Replace(want)))
			}
			g.Expect(s.routes).To(Equal(tc.wantRoutes(app)), "routes: %v", sets.List(s.routes))
			got := recordedEvents(rec)
			g.Expect(got).To(HaveLen(len(tc.wantEvents)), "events: %q", got)
			for i, want := range tc.wantEvents {
				g.Expect(got[i]).To(HavePrefix(want))
			}
			if tc.check != nil {
				tc.check(t, g, phaseRun{app: app, host: app.Spec.Host, s: s, result: result, counted: counted, events: got})
			}
		})
	}
}

// TestDNSFailuresAreShownAndRetried shows a run the DNS service's error
// ended, for every kind of error the clients return: DNSReady's reason and
// advice, status.dns's state, a warning once, the error kept for the log,
// and the retry dnsplan chose for it.
func TestDNSFailuresAreShownAndRetried(t *testing.T) {
	// dnsErr is an error as the DNS client builds it from an answer.
	dnsErr := func(kind external.Kind, status int, message string) *external.Error {
		return &external.Error{Kind: kind, Service: dns.ServiceName, Operation: "get", StatusCode: status,
			Message: message, Attempts: 1}
	}
	withRetryAfter := func(e *external.Error, d time.Duration) *external.Error {
		e.RetryAfter = d
		return e
	}
	network := dnsErr(external.KindTransient, 0, "request failed")
	network.Err, network.Attempts = syscall.ECONNREFUSED, 2

	cases := []struct {
		name        string
		err         error
		deleting    bool
		priorReason string
		wantReason  string
		wantAdvice  string
		wantOutcome string
		wantAfter   time.Duration
	}{{
		name:        "429 with a Retry-After waits that long",
		err:         withRetryAfter(dnsErr(external.KindThrottled, 429, "slow down"), 30*time.Second),
		wantReason:  appsv1alpha1.DNSThrottledReason,
		wantAdvice:  "rate-limiting",
		wantOutcome: outcomeWaiting,
		wantAfter:   30 * time.Second,
	}, {
		name:        "a call the client's gate held back waits what is left",
		err:         withRetryAfter(dnsErr(external.KindThrottled, 0, "not sent: the service asked to wait"), 1500*time.Millisecond),
		wantReason:  appsv1alpha1.DNSThrottledReason,
		wantAdvice:  "rate-limiting",
		wantOutcome: outcomeWaiting,
		wantAfter:   1500 * time.Millisecond,
	}, {
		name:        "429 without a Retry-After backs off",
		err:         dnsErr(external.KindThrottled, 429, "slow down"),
		wantReason:  appsv1alpha1.DNSThrottledReason,
		wantAdvice:  "rate-limiting",
		wantOutcome: outcomeBackoff,
	}, {
		name:        "503 backs off",
		err:         dnsErr(external.KindTransient, 503, "dns service is unavailable"),
		wantReason:  appsv1alpha1.DNSServiceUnavailableReason,
		wantAdvice:  "unreachable or failing",
		wantOutcome: outcomeBackoff,
	}, {
		name:        "503 asking for a long wait waits that long",
		err:         withRetryAfter(dnsErr(external.KindTransient, 503, "maintenance"), time.Minute),
		wantReason:  appsv1alpha1.DNSServiceUnavailableReason,
		wantAdvice:  "unreachable or failing",
		wantOutcome: outcomeWaiting,
		wantAfter:   time.Minute,
	}, {
		name:        "a refused connection backs off",
		err:         network,
		wantReason:  appsv1alpha1.DNSServiceUnavailableReason,
		wantAdvice:  "unreachable or failing",
		wantOutcome: outcomeBackoff,
	}, {
		name:        "an error from outside the client backs off",
		err:         fmt.Errorf("calling the DNS service: %w", context.DeadlineExceeded),
		wantReason:  appsv1alpha1.DNSServiceUnavailableReason,
		wantAdvice:  "unreachable or failing",
		wantOutcome: outcomeBackoff,
	}, {
		name:        "a refused token backs off",
		err:         dnsErr(external.KindUnauthorized, 403, "the bearer token is not valid"),
		wantReason:  appsv1alpha1.DNSUnauthorizedReason,
		wantAdvice:  "--dns-token-file",
		wantOutcome: outcomeBackoff,
	}, {
		name:        "422 is terminal",
		err:         dnsErr(external.KindInvalid, 422, "value is not an IPv4 address"),
		wantReason:  appsv1alpha1.DNSRequestRejectedReason,
		wantAdvice:  "check spec.host",
		wantOutcome: outcomeTerminal,
	}, {
		name:        "a request the client refused to send is terminal",
		err:         dnsErr(external.KindInvalid, 0, "record value is required"),
		wantReason:  appsv1alpha1.DNSRequestRejectedReason,
		wantAdvice:  "check spec.host",
		wantOutcome: outcomeTerminal,
	}, {
		name:        "a wrapped rejection is still terminal",
		err:         fmt.Errorf("listing records: %w", dnsErr(external.KindInvalid, 400, "bad owner")),
		wantReason:  appsv1alpha1.DNSRequestRejectedReason,
		wantAdvice:  "check spec.host",
		wantOutcome: outcomeTerminal,
	}, {
		name:        "a rejection while the MyApp is deleted is retried with the way out",
		err:         dnsErr(external.KindInvalid, 405, "method not allowed"),
		deleting:    true,
		wantReason:  appsv1alpha1.DNSRequestRejectedReason,
		wantAdvice:  deleteRejectedAdvice,
		wantOutcome: outcomeBackoff,
	}, {
		name:        "throttling while the MyApp is deleted still waits",
		err:         withRetryAfter(dnsErr(external.KindThrottled, 429, "slow down"), 8*time.Second),
		deleting:    true,
		wantReason:  appsv1alpha1.DNSThrottledReason,
		wantAdvice:  "rate-limiting",
		wantOutcome: outcomeWaiting,
		wantAfter:   8 * time.Second,
	}, {
		name:        "trouble already reported sends no second warning",
		err:         dnsErr(external.KindTransient, 502, "bad gateway"),
		priorReason: appsv1alpha1.DNSServiceUnavailableReason,
		wantReason:  appsv1alpha1.DNSServiceUnavailableReason,
		wantAdvice:  "unreachable or failing",
		wantOutcome: outcomeBackoff,
	}}

	for _, tc := range cases {
		for _, hadStatus := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/status %t", tc.name, hadStatus), func(t *testing.T) {
				g := NewWithT(t)
				app := newMyApp("phases", "web")
				app.UID, app.Generation = uuid.NewUUID(), 3
				if tc.deleting {
					app.DeletionTimestamp = &metav1.Time{Time: time.Now()}
					app.Finalizers = []string{appsv1alpha1.DNSCleanupFinalizer}
				}
				if tc.priorReason != "" {
					withDNSReady(app, false, tc.priorReason)
				}
				if hadStatus {
					app.Status.DNS = &appsv1alpha1.DNSRecordStatus{Name: app.Spec.Host, Type: dns.TypeA,
						Value: defaultTarget, Owner: recordOwner(app),
						State: appsv1alpha1.DNSRecordActive, LastObservedState: appsv1alpha1.DNSRecordActive}
				}
				// No client and no DNS service: showing a failure calls neither.
				r, rec := newPhaseReconciler(nil, nil, defaultTarget)
				s := &scope{app: app}

				result, err := r.showDNSFailure(t.Context(), s, dnsRun{o: r.observeDNS(t.Context(), s), err: tc.err})
				setConditions(s, time.Now())

				g.Expect(result).To(BeZero(), "an error carries the requeue, not the result")
				outcome, after := phaseOutcome(err)
				g.Expect(outcome).To(Equal(tc.wantOutcome), "error: %v", err)
				expectWait(g, after, tc.wantAfter)
				g.Expect(err).To(MatchError(tc.err), "the service's error stays reachable, for the log")

				action := "read"
				if tc.deleting {
					action = "delete"
				}
				expectDNSReady(g, app, metav1.ConditionFalse, tc.wantReason,
					"Could not "+action+" the DNS record for "+app.Spec.Host+": ")
				g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition).Message).To(ContainSubstring(tc.wantAdvice))
				if tc.deleting && tc.wantReason == appsv1alpha1.DNSRequestRejectedReason {
					g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition).Message).To(HaveSuffix(deleteRejectedAdvice))
				}

				if hadStatus {
					g.Expect(app.Status.DNS).To(HaveValue(And(
						HaveField("State", appsv1alpha1.DNSRecordUnknown),
						HaveField("LastObservedState", appsv1alpha1.DNSRecordActive),
						HaveField("Name", app.Spec.Host))), "the record's state is not known after a failed call")
				} else {
					g.Expect(app.Status.DNS).To(BeNil(), "no status is made up")
				}
				g.Expect(s.routes).To(BeNil(), "the Ingress's routes stay as they are")

				got := recordedEvents(rec)
				if tc.priorReason == tc.wantReason {
					g.Expect(got).To(BeEmpty(), "a warning goes out when the trouble starts")
				} else {
					g.Expect(got).To(ConsistOf(HavePrefix(corev1.EventTypeWarning + " " + tc.wantReason + " ")))
				}
			})
		}
	}
}
