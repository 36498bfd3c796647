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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// The phase tests' own intervals differ from the suite's, so a requeue that
// used the wrong one shows.
const (
	phasePendingPoll = 5 * time.Second
	phaseDriftCheck  = 10 * time.Minute
)

// What a phase's error asks of the pass (pass.Run, pass.Conclude).
const (
	outcomeNone     = "no error"
	outcomeWaiting  = "pass.Waiting"
	outcomeTerminal = "terminal error"
	outcomeBackoff  = "error for the backoff"
)

// phaseOutcome classifies a phase's error the way pass.Conclude does, and
// names an error that is both waiting and terminal, which nothing may return.
func phaseOutcome(err error) (string, time.Duration) {
	var w *pass.Waiting
	waiting := errors.As(err, &w)
	terminal := errors.Is(err, reconcile.TerminalError(nil))
	switch {
	case err == nil:
		return outcomeNone, 0
	case waiting && terminal:
		return outcomeWaiting + " and " + outcomeTerminal, w.After
	case waiting:
		return outcomeWaiting, w.After
	case terminal:
		return outcomeTerminal, 0
	}
	return outcomeBackoff, 0
}

// phaseDNS is the DNS service a case runs against.
type phaseDNS struct {
	sim    *simulator.Server
	client dns.Client
	// shared is set for the suite's simulator, whose records outlive the
	// case and must be removed.
	shared bool
}

// sharedDNS is the suite's simulator and client, for cases without faults.
func sharedDNS() phaseDNS {
	return phaseDNS{sim: sim, client: dnsClient, shared: true}
}

// ownDNS starts a simulator for one case, with a client built as the
// suite's is. A fault on the suite's simulator would also reach the
// manager's passes over other tests' MyApps, and a Retry-After would close
// the gate of the client they share for its whole length.
func ownDNS(t *testing.T) phaseDNS {
	t.Helper()
	s, url := simtest.Start(t, simulator.Options{Token: simToken})
	c, err := httpdns.New(external.Config{
		BaseURL:      url,
		Token:        external.StaticTokenSource(simToken),
		MaxRetries:   1,
		MaxRetryWait: 100 * time.Millisecond,
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return phaseDNS{sim: s, client: c}
}

// records returns the simulator's records called name.
func (d phaseDNS) records(name string) []simulator.Record {
	var out []simulator.Record
	for _, r := range d.sim.Records() {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// removeAtEnd deletes the records called name from the suite's simulator
// once the test is over, whoever owns them: a record of a MyApp that never
// existed is a leak the sweep tests would otherwise count.
func (d phaseDNS) removeAtEnd(t *testing.T, name string) {
	if !d.shared {
		return
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx := context.WithoutCancel(t.Context())
		for _, r := range d.records(name) {
			if err := d.client.Delete(ctx, name, r.Owner); err != nil {
				t.Errorf("removing record %s of %s: %v", name, r.Owner, err)
			}
		}
	})
}

// seed writes a record straight through the client, as another writer
// would, and returns what the service stored.
func (d phaseDNS) seed(t *testing.T, g *WithT, name, value, owner string) dns.Record {
	t.Helper()
	stored, err := d.client.Upsert(t.Context(), dns.Record{Name: name, Type: TargetType(value), Value: value,
		TTL: DefaultRecordTTL, Owner: owner})
	g.Expect(err).NotTo(HaveOccurred())
	return stored
}

// seedActive is seed, once the service reports the record ACTIVE.
func (d phaseDNS) seedActive(t *testing.T, g *WithT, name, value, owner string) dns.Record {
	t.Helper()
	d.seed(t, g, name, value, owner)
	var rec dns.Record
	g.Eventually(func() dns.RecordState {
		rec, _ = d.client.Get(t.Context(), name)
		return rec.State
	}, timeout, interval).Should(Equal(dns.StateActive))
	return rec
}

// newPhaseReconciler builds a Reconciler for calling phases directly. Its
// DNS schedule is its own and empty, so a case's first call always reads.
func newPhaseReconciler(c client.Client, d dns.Client, target string) (*Reconciler, *events.FakeRecorder) {
	rec := events.NewFakeRecorder(100)
	r := &Reconciler{
		Base: pass.Base{
			Client:    c,
			APIReader: c,
			Recorder:  rec,
			Clock:     suiteClock,
		},
		OwnerID:             testOwnerID,
		DNS:                 d,
		DefaultTarget:       target,
		PendingPollInterval: phasePendingPoll,
		DriftCheckInterval:  phaseDriftCheck,
	}
	r.setDefaults()
	return r, rec
}

// phaseApp is a new MyApp in a namespace of its own, as a pass reads it.
// It is never created in the API server, so no manager reconciles it and
// races the phase for its host.
func phaseApp(t *testing.T, name string, opts ...fixtures.MyAppOption) *appsv1alpha1.MyApp {
	t.Helper()
	app := newMyApp(newNamespace(t), name, opts...)
	app.UID = uuid.NewUUID()
	app.Generation = 1
	app.ResourceVersion = "1"
	return app
}

// recordedEvents drains what the fake recorder holds.
func recordedEvents(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// withDNSReady gives app a DNSReady condition as an earlier pass left it.
func withDNSReady(app *appsv1alpha1.MyApp, ready bool, reason string) {
	setDNSCondition(app, ready, reason, "set by an earlier pass")
}

// expectDNSReady checks the DNSReady condition setConditions derived.
func expectDNSReady(g *WithT, app *appsv1alpha1.MyApp, status metav1.ConditionStatus, reason, message string) {
	cond := conditionOf(app, appsv1alpha1.DNSReadyCondition)
	g.Expect(cond).NotTo(BeNil(), "DNSReady is set")
	g.Expect(cond.Status).To(Equal(status), "DNSReady: %s", cond.Message)
	g.Expect(cond.Reason).To(Equal(reason), "DNSReady: %s", cond.Message)
	g.Expect(cond.Message).To(ContainSubstring(message))
	g.Expect(cond.ObservedGeneration).To(Equal(app.Generation))
}

// expectWait checks the wait an error asks for: a Retry-After's, never
// sooner than the service asked and at most retryAfterJitter later, so the
// MyApps it held do not all call at the instant the gate opens.
func expectWait(g *WithT, after, want time.Duration) {
	g.Expect(after).To(And(BeNumerically(">=", want),
		BeNumerically("<=", time.Duration(float64(want)*(1+retryAfterJitter)))), "the wait the error asks for")
}

// pendingPollRange is where a PENDING record's requeue falls: the poll
// interval jittered upwards (pass.JitterFactor), less the instant the phase
// took.
func pendingPollRange(g *WithT, result ctrl.Result) {
	g.Expect(result.RequeueAfter).To(And(
		BeNumerically(">", phasePendingPoll-500*time.Millisecond),
		BeNumerically("<=", time.Duration(float64(phasePendingPoll)*(1+pass.JitterFactor)))),
		"the pending poll interval, within its jitter")
}

// driftCheckRange is where a settled record's requeue falls: its point of
// the drift interval, never later than one interval away.
func driftCheckRange(g *WithT, result ctrl.Result) {
	g.Expect(result.RequeueAfter).To(And(BeNumerically(">", 0), BeNumerically("<=", phaseDriftCheck)),
		"the next drift check")
}

// phaseRun is what one call of a phase came to, for a case's checks.
type phaseRun struct {
	app     *appsv1alpha1.MyApp
	host    string
	s       *scope
	result  ctrl.Result
	err     error
	dns     phaseDNS
	counted *countingDNS
	events  []string
	seeded  dns.Record
}

// recordOwnerOf is the owner of app's records in installation id while it
// lives under deletionPolicy Delete.
func recordOwnerOf(id string, app *appsv1alpha1.MyApp) string { return selfOf(id, app).Owner() }

// orphanedRecordOwnerOf is the owner of app's records under deletionPolicy
// Orphan.
func orphanedRecordOwnerOf(id string, app *appsv1alpha1.MyApp) string {
	return selfOf(id, app).Orphaned()
}

// orphanedOwnerPrefix starts the owner of a record marked orphaned.
const orphanedOwnerPrefix = dnsplan.OrphanedOwnerPrefix
