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

package reliability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// The campaign's clients (startManager): one call makes at most two attempts
// of attemptTimeout each, with a backoff of at most maxRetryWait between
// them, and honours a Retry-After for at most maxRetryAfter.
const (
	attemptTimeout = 2 * time.Second
	maxRetryAfter  = 5 * time.Second
	callBound      = 2*attemptTimeout + 100*time.Millisecond
	// heldLimit is how soon a MyApp or BackupConfig changed while every call
	// to its service hangs must say so: its own pass may queue behind one
	// pass of another object, which may make a few calls, each of them
	// given up after callBound. A worker held by a hung call for longer
	// than that would not let it report at all.
	heldLimit = 4*callBound + 5*time.Second
	// reportLimit bounds how long any fault may go unreported.
	reportLimit = 30 * time.Second
	// consistencyDelay is how long reads and lists miss a new object in the
	// read-after-create-404 fault, and lagGrace the BackupConfig cleanup
	// grace its scenarios run with: the grace must cover the lag (the
	// Reconciler's CleanupGrace; cmd/manager keeps the 10 s default), or a
	// backup started just before the deletion is not listed in time and is
	// left behind.
	consistencyDelay = 3 * time.Second
	lagGrace         = consistencyDelay + time.Second
)

// faultClass is what a condition must say while a fault is in place.
type faultClass string

const (
	classUnavailable  faultClass = "unavailable"
	classThrottled    faultClass = "throttled"
	classUnauthorized faultClass = "unauthorized"
	// classNone: nothing is wrong that a user must hear of (reads that lag
	// behind writes; writes committed although their answer was lost, which
	// the next read shows); the operator must converge with the fault in
	// place.
	classNone faultClass = "none"
)

// externalFault is one kind of misbehaviour of an external service.
type externalFault struct {
	name  string
	class faultClass
	// inject puts the fault in place on one service; ClearFaults ends every
	// kind.
	inject func(sim *simulator.Server, svc simulator.Service)
	// lagging: the service lists a new object late, so the scenario's
	// BackupConfig cleanup grace must cover the lag.
	lagging bool
}

func withFault(f simulator.Fault) func(*simulator.Server, simulator.Service) {
	return func(sim *simulator.Server, svc simulator.Service) { sim.SetFault(svc, simulator.AllOperations, f) }
}

// writeOps and readOps are each service's operations that change something
// and those that only read.
var (
	writeOps = map[simulator.Service][]simulator.Operation{
		simulator.ServiceDNS:    {simulator.OpUpsert, simulator.OpDelete, simulator.OpTransfer},
		simulator.ServiceBackup: {simulator.OpStart, simulator.OpDelete},
	}
	readOps = []simulator.Operation{simulator.OpGet, simulator.OpList}
)

// onOps sets f on some operations of a service only, so the calls around
// them succeed: a write committed without an answer is then followed by
// reads that show it.
func onOps(ops func(simulator.Service) []simulator.Operation, f simulator.Fault) func(*simulator.Server, simulator.Service) {
	return func(sim *simulator.Server, svc simulator.Service) {
		for _, op := range ops(svc) {
			sim.SetFault(svc, op, f)
		}
	}
}

func writes(svc simulator.Service) []simulator.Operation { return writeOps[svc] }
func reads(simulator.Service) []simulator.Operation      { return readOps }

// externalFaults is the matrix's fault axis (issue 11, family 3).
var externalFaults = []externalFault{
	{name: "5xx-burst", class: classUnavailable, inject: withFault(simulator.Fault{Status: 503})},
	{name: "429-short", class: classThrottled, inject: withFault(simulator.Fault{Status: 429, RetryAfter: time.Second})},
	// Over the campaign's cap of 5 seconds: honoured for 5 seconds only.
	{name: "429-long", class: classThrottled, inject: withFault(simulator.Fault{Status: 429, RetryAfter: 10 * time.Minute})},
	// A date 50 years ahead, as a broken proxy might send.
	{name: "429-absurd", class: classThrottled, inject: withFault(simulator.Fault{
		Status: 429, RetryAfter: 50 * 365 * 24 * time.Hour, RetryAfterDate: true})},
	{name: "hang", class: classUnavailable, inject: withFault(simulator.Fault{Hang: true})},
	{name: "reset-after-commit", class: classUnavailable, inject: withFault(simulator.Fault{ResetAfterCommit: true})},
	{name: "outage", class: classUnavailable, inject: func(sim *simulator.Server, svc simulator.Service) { sim.SetOutage(svc, true) }},
	{name: "read-after-create-404", class: classNone, lagging: true, inject: func(sim *simulator.Server, svc simulator.Service) {
		sim.SetConsistencyDelay(svc, consistencyDelay)
	}},
	{name: "401", class: classUnauthorized, inject: withFault(simulator.Fault{Status: 401})},
	{name: "403", class: classUnauthorized, inject: withFault(simulator.Fault{Status: 403})},
	{name: "malformed-body", class: classUnavailable, inject: withFault(simulator.Fault{Body: simulator.BodyMalformed})},
	{name: "truncated-body", class: classUnavailable, inject: withFault(simulator.Fault{Body: simulator.BodyTruncated})},
	{name: "oversized-body", class: classUnavailable, inject: withFault(simulator.Fault{Body: simulator.BodyOversized})},
	// The same on some operations only.
	{name: "hang-writes", class: classUnavailable, inject: onOps(writes, simulator.Fault{Hang: true})},
	// Half the writes lose their answer: with every answer lost, not even
	// the 404 to a repeated delete would say the first one went through.
	{name: "reset-after-commit-writes", class: classNone, inject: onOps(writes, simulator.Fault{ResetAfterCommit: true, Rate: 0.5})},
	{name: "malformed-body-writes", class: classNone, inject: onOps(writes, simulator.Fault{Body: simulator.BodyMalformed})},
	{name: "5xx-reads", class: classUnavailable, inject: onOps(reads, simulator.Fault{Status: 500})},
}

var faultPhases = []string{"create", "update", "delete"}

// faultSample is what make test runs: one fault of each class, spread over
// both services and all phases.
var faultSample = map[string]bool{
	"hang/dns/update":              true,
	"429-absurd/backup/delete":     true,
	"401/dns/delete":               true,
	"truncated-body/backup/create": true,
}

// TestExternalFaultMatrix is family 3. For each fault, service and phase of
// a MyApp's and its BackupConfig's life (create; a spec change that moves
// the host and takes an on-change backup; deletion with a final backup,
// then the BackupConfig's deletion with its backups), the fault is put in
// place on one service, the phase's change made, and the condition of the
// object that calls the service must say what is wrong. Then the fault
// clears, the phase must complete and the oracle must find nothing: no
// leak, no duplicate, nothing stuck. While every call hangs, a second MyApp
// (or BackupConfig) changed meanwhile must still report, so no worker is
// held past the per-call timeout.
func TestExternalFaultMatrix(t *testing.T) {
	var mu sync.Mutex
	tallies := map[string]*faultTally{}
	var total faultTally
	t.Run("matrix", func(t *testing.T) {
		for _, f := range externalFaults {
			for _, svc := range []simulator.Service{simulator.ServiceDNS, simulator.ServiceBackup} {
				for _, phase := range faultPhases {
					name := fmt.Sprintf("%s/%s/%s", f.name, svc, phase)
					if !full() && !faultSample[name] {
						continue
					}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						res := runFaultPoint(t, f, svc, phase)
						mu.Lock()
						defer mu.Unlock()
						key := f.name + " " + string(svc)
						if tallies[key] == nil {
							tallies[key] = &faultTally{}
						}
						tallies[key].add(res)
						total.add(res)
					})
				}
			}
		}
	})
	for _, f := range externalFaults {
		for _, svc := range []simulator.Service{simulator.ServiceDNS, simulator.ServiceBackup} {
			if ft := tallies[f.name+" "+string(svc)]; ft != nil {
				t.Logf("RESULT family=3 fault=%s service=%s %s", f.name, svc, ft)
			}
		}
	}
	t.Logf("RESULT family=3 fault=all service=all %s", &total)
}

// faultResult is what one point of the matrix found.
type faultResult struct {
	report Report
	// reported: the condition said what was wrong while the fault was in
	// place; reportedAfter is how long that took from the change.
	reported      bool
	reportedAfter time.Duration
	// held: with every call hanging, another object's change went
	// unreported for longer than heldLimit.
	held bool
	// recoveredAfter is the longest a step took to complete once its fault
	// cleared: a Retry-After honoured beyond the cap would show here.
	recoveredAfter time.Duration
	// failed: one of the point's own assertions failed (a step not done in
	// time, the fault unreported, another object held).
	failed bool
}

// faultTally sums faultResults, on top of the oracle's tally.
type faultTally struct {
	tally
	unreported, held int
	slowestReport    time.Duration
	slowestRecovery  time.Duration
}

func (ft *faultTally) add(res faultResult) {
	// The oracle may find nothing while the point failed all the same.
	ft.count(res.report, true, res.failed || !res.reported || res.held)
	if !res.reported {
		ft.unreported++
	}
	if res.held {
		ft.held++
	}
	ft.slowestReport = max(ft.slowestReport, res.reportedAfter)
	ft.slowestRecovery = max(ft.slowestRecovery, res.recoveredAfter)
}

func (ft *faultTally) String() string {
	return fmt.Sprintf("tried=%d survived=%d failed=%d leaks=%d duplicates=%d stuck=%d wrong=%d unreported=%d held=%d "+
		"slowest-report=%s slowest-recovery=%s", ft.tried, ft.survived, ft.failed, ft.leaks, ft.duplicates, ft.stuck, ft.wrong, ft.unreported, ft.held,
		ft.slowestReport.Round(100*time.Millisecond), ft.slowestRecovery.Round(100*time.Millisecond))
}

// faultPoint is one scenario of the matrix: a MyApp "web" and a
// BackupConfig "web-backup" taking its final backup.
type faultPoint struct {
	*scenario
	fault externalFault
	svc   simulator.Service
	app   *appsv1alpha1.MyApp
	bc    *backupv1alpha1.BackupConfig
	res   faultResult
	// bystander is set once a second MyApp has been created.
	bystander bool
	// cleared is when the fault last cleared.
	cleared time.Time
}

func runFaultPoint(t *testing.T, f externalFault, svc simulator.Service, phase string) faultResult {
	s := newScenario(t)
	if f.lagging {
		s.cleanupGrace = lagGrace
	}
	s.startManager(newCrashGate(0))
	p := &faultPoint{
		scenario: s, fault: f, svc: svc,
		app: s.newMyApp("web"),
		bc:  s.newBackupConfig("web-backup", "web", backupv1alpha1.DeletionPolicyDelete),
	}
	// A point with no condition to wait for has nothing to miss.
	p.res.reported = f.class == classNone
	switch phase {
	case "create":
		p.inject()
		s.create(p.app)
		s.create(p.bc)
		p.expectReported(p.app, p.bc)
		p.clear()
		p.waitSteady()
	case "update":
		p.setUp()
		p.inject()
		update(s, p.app, func(a *appsv1alpha1.MyApp) {
			a.Spec.Image = "nginx:1.28"
			a.Spec.Host = "moved." + s.ns + ".example.com"
		})
		p.expectReported(p.app, p.bc)
		p.clear()
		p.waitSteady()
	case "delete":
		p.setUp()
		p.inject()
		s.remove(p.app)
		p.expectReported(p.app, p.bc)
		p.clear()
		p.waitGone("the MyApp is gone", p.app)
		if svc == simulator.ServiceBackup {
			// Deleting the BackupConfig deletes its backups: only the
			// backup service is involved.
			p.inject()
			s.remove(p.bc)
			p.expectReported(nil, p.bc)
			p.clear()
		} else {
			s.remove(p.bc)
		}
		p.waitGone("the BackupConfig is gone", p.bc)
	}
	s.sim.ClearFaults()
	p.res.report = s.oracle.settle(t)
	// The point's own assertions, before judge adds the oracle's verdict.
	p.res.failed = t.Failed()
	judge(t, p.res.report, fmt.Sprintf("%s on the %s service during %s", f.name, svc, phase))
	return p.res
}

// setUp creates the MyApp and its BackupConfig with no fault in place and
// waits until the MyApp is Ready and backed up.
func (p *faultPoint) setUp() {
	p.create(p.app)
	p.create(p.bc)
	p.waitSteady()
}

func (p *faultPoint) waitSteady() {
	p.waitFor("the MyApp is Ready", p.readyAt(p.app))
	p.waitFor("the MyApp is backed up", backedUp(p.bc, p.app))
	p.recovered()
}

// waitGone waits until obj is gone.
func (p *faultPoint) waitGone(what string, obj client.Object) {
	p.waitFor(what, gone(obj))
	p.recovered()
}

// recovered records how long the step took since the fault cleared.
func (p *faultPoint) recovered() {
	if !p.cleared.IsZero() {
		p.res.recoveredAfter = max(p.res.recoveredAfter, time.Since(p.cleared))
		p.cleared = time.Time{}
	}
}

func (p *faultPoint) inject() { p.fault.inject(p.sim, p.svc) }

// clear ends the fault, except reads that lag behind writes: the phase must
// complete through those.
func (p *faultPoint) clear() {
	if p.fault.class != classNone {
		p.sim.ClearFaults()
		p.cleared = time.Now()
	}
}

// expectReported waits until the object that calls the faulty service says
// what is wrong: app's DNSReady condition for the DNS service, bc's Ready
// condition for the backup service. With every call hanging it also changes
// a second object of the same kind and requires it to report as well.
func (p *faultPoint) expectReported(app *appsv1alpha1.MyApp, bc *backupv1alpha1.BackupConfig) {
	p.t.Helper()
	if p.fault.class == classNone {
		return
	}
	started := time.Now()
	after, ok := p.reports(p.svc, app, bc, reportLimit)
	if !ok {
		p.res.reported = false
		return
	}
	p.res.reported = true
	p.res.reportedAfter = max(p.res.reportedAfter, after)
	p.t.Logf("the %s fault was reported after %s", p.fault.name, time.Since(started).Round(100*time.Millisecond))
	if p.fault.name == "hang" && !p.bystander {
		p.bystander = true
		p.bystanderReports()
	}
}

// bystanderReports changes a second MyApp and its BackupConfig while every
// call to the service hangs: it must report within heldLimit.
func (p *faultPoint) bystanderReports() {
	// Created with the fault in place: its first pass already calls the
	// service, which is all the check needs.
	other := p.newMyApp("other")
	otherBC := p.newBackupConfig("other-backup", "other", backupv1alpha1.DeletionPolicyDelete)
	p.create(other)
	p.create(otherBC)
	after, ok := p.reports(p.svc, other, otherBC, heldLimit)
	if !ok {
		p.res.held = true
		p.t.Errorf("with every %s call hanging, another object did not report within %s", p.svc, heldLimit)
		return
	}
	p.t.Logf("with every %s call hanging, another object reported after %s", p.svc, after.Round(100*time.Millisecond))
}

// reports waits up to limit for the condition to say what is wrong and
// returns how long that took.
func (p *faultPoint) reports(svc simulator.Service, app *appsv1alpha1.MyApp, bc *backupv1alpha1.BackupConfig,
	limit time.Duration) (time.Duration, bool) {
	p.t.Helper()
	started := time.Now()
	var last error
	for time.Since(started) < limit {
		var err error
		if svc == simulator.ServiceDNS {
			err = dnsConditionSays(p.t.Context(), app, p.fault.class)
		} else {
			err = backupConditionSays(p.t.Context(), bc, p.fault.class)
		}
		if err == nil {
			return time.Since(started), true
		}
		last = err
		time.Sleep(tick)
	}
	p.t.Errorf("%s on the %s service: the condition did not say %s within %s: %v", p.fault.name, svc, p.fault.class, limit, last)
	return 0, false
}

// dnsReasons and backupReasons are the condition reasons each class of
// fault must be reported with.
var dnsReasons = map[faultClass]string{
	classUnavailable:  "DNSServiceUnavailable",
	classThrottled:    "DNSThrottled",
	classUnauthorized: "DNSUnauthorized",
}

// dnsConditionSays holds once app's DNSReady condition is False with the
// reason of class.
func dnsConditionSays(ctx context.Context, app *appsv1alpha1.MyApp, class faultClass) error {
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
		return err
	}
	c := meta.FindStatusCondition(app.Status.Conditions, appsv1alpha1.DNSReadyCondition)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != dnsReasons[class] {
		return fmt.Errorf("DNSReady is %v", c)
	}
	return nil
}

// backupConditionSays holds once bc's Ready condition is False with a reason
// and message that name class: BackupServiceUnavailable (throttling said so
// in the message) or BackupServiceUnauthorized, or CleanupBlocked with the
// same words while bc is being deleted.
func backupConditionSays(ctx context.Context, bc *backupv1alpha1.BackupConfig, class faultClass) error {
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(bc), bc); err != nil {
		return err
	}
	c := meta.FindStatusCondition(bc.Status.Conditions, backupv1alpha1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionFalse {
		return fmt.Errorf("ready is %v", c)
	}
	// The message names the cause and the service's URL
	// (docs/spec/backupconfig.md#failures).
	reason, words := "BackupServiceUnavailable", "backup service at "
	switch class {
	case classThrottled:
		words = "asked the operator to wait"
	case classUnauthorized:
		reason, words = "BackupServiceUnauthorized", "credentials"
	}
	if !bc.DeletionTimestamp.IsZero() {
		reason = "CleanupBlocked"
	}
	if c.Reason != reason || !strings.Contains(c.Message, words) {
		return fmt.Errorf("ready is %s %q, not %s saying %q", c.Reason, c.Message, reason, words)
	}
	return nil
}
