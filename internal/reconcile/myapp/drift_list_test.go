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
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	miekgdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// driftPageSize is the page size the drift tests' simulator answers with,
// so 200 records take four pages.
const driftPageSize = 50

// driftRigInterval is the drift interval of the pass the rig runs.
const driftRigInterval = time.Second

// driftRig is a drift pass in list mode over MyApps in a fake API (its
// cache), against a DNS backend: the phase tier, with the pass's events
// taken by the test instead of a controller.
type driftRig struct {
	t      *testing.T
	api    client.Client
	r      *Reconciler
	lister *driftLister
	events chan event.GenericEvent
	apps   []types.NamespacedName
}

func newDriftRig(t *testing.T, d dns.Client) *driftRig {
	t.Helper()
	api := fake.NewClientBuilder().WithScheme(fixtures.Scheme()).WithStatusSubresource(&appsv1alpha1.MyApp{}).Build()
	r, _ := newPhaseReconciler(api, d, defaultTarget)
	r.Recorder = &events.FakeRecorder{} // events are dropped: 200 creations would fill a buffer
	r.DriftCheck = DriftCheckList
	r.DriftCheckInterval = driftRigInterval
	r.PendingPollInterval = time.Millisecond // a written record is read again at once until ACTIVE
	sent := make(chan event.GenericEvent, 10000)
	return &driftRig{t: t, api: api, r: r, events: sent,
		lister: &driftLister{r: r, reader: api, events: sent, log: logr.Discard()}}
}

// add creates n MyApps in namespace and settles each: its DNS phase
// writes the record and the status shows it ACTIVE.
func (d *driftRig) add(g Gomega, namespace string, n int) {
	d.t.Helper()
	for i := range n {
		app := newMyApp(namespace, fmt.Sprintf("app-%03d", i))
		app.UID = uuid.NewUUID()
		g.Expect(d.api.Create(d.t.Context(), app)).To(Succeed())
		key := client.ObjectKeyFromObject(app)
		d.apps = append(d.apps, key)
		g.Eventually(func() appsv1alpha1.DNSRecordState { return d.pass(g, key).State }, timeout, interval).
			Should(Equal(appsv1alpha1.DNSRecordActive))
	}
}

// pass runs the DNS phase of the MyApp at key as a reconcile would, writes
// its status and returns the record the status shows.
func (d *driftRig) pass(g Gomega, key types.NamespacedName) appsv1alpha1.DNSRecordStatus {
	d.t.Helper()
	rec, _ := d.passFor(g, key)
	return rec
}

// passFor is pass, which also returns when the pass asked to come back
// (zero for never).
func (d *driftRig) passFor(g Gomega, key types.NamespacedName) (appsv1alpha1.DNSRecordStatus, time.Duration) {
	d.t.Helper()
	app := &appsv1alpha1.MyApp{}
	g.Expect(d.api.Get(d.t.Context(), key, app)).To(Succeed())
	s := &scope{app: app}
	// Whether the drift pass lists, before the pass and after it: the
	// lister may end or begin a fallback while the pass runs, and the
	// pass decided with what it saw.
	listed := d.r.listsDrift(app)
	result, err := d.r.reconcileDNSRecord(d.t.Context(), s)
	g.Expect(err).NotTo(HaveOccurred())
	setConditions(s, time.Now())
	g.Expect(d.api.Status().Update(d.t.Context(), app)).To(Succeed())
	if c := conditionOf(app, appsv1alpha1.DNSReadyCondition); c != nil && c.Reason == appsv1alpha1.RecordActiveReason &&
		listed && d.r.listsDrift(app) {
		g.Expect(result.RequeueAfter).To(BeZero(), "an ACTIVE record has no timed drift check while the pass lists")
	}
	if app.Status.DNS == nil {
		return appsv1alpha1.DNSRecordStatus{}, result.RequeueAfter // a conflict: nothing held
	}
	return *app.Status.DNS, result.RequeueAfter
}

// runController passes each MyApp the drift pass sends, and each one again
// when its pass asked to come back (a timed read), as the controller's
// queue would, until ctx ends. A failure is reported, not fatal, off the
// test's goroutine.
func (d *driftRig) runController(ctx context.Context, wg *sync.WaitGroup) {
	controller := NewGomega(func(message string, _ ...int) { d.t.Error(message) })
	requeued := make(chan types.NamespacedName, 10000)
	wg.Go(func() {
		for {
			var key types.NamespacedName
			select {
			case <-ctx.Done():
				return
			case e := <-d.events:
				key = client.ObjectKeyFromObject(e.Object)
			case key = <-requeued:
			}
			if _, after := d.passFor(controller, key); after > 0 {
				time.AfterFunc(after, func() { requeued <- key })
			}
		}
	})
}

// drained is the MyApps the pass sent since the last call.
func (d *driftRig) drained() []string {
	var out []string
	for {
		select {
		case e := <-d.events:
			out = append(out, client.ObjectKeyFromObject(e.Object).String())
		default:
			slices.Sort(out)
			return out
		}
	}
}

// repair runs the pass of every MyApp the drift pass sent.
func (d *driftRig) repair(g Gomega, keys []string) {
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		d.pass(g, types.NamespacedName{Namespace: ns, Name: name})
	}
}

func (d *driftRig) host(i int) string {
	app := &appsv1alpha1.MyApp{}
	NewWithT(d.t).Expect(d.api.Get(d.t.Context(), d.apps[i], app)).To(Succeed())
	return app.Spec.Host
}

// pagedDNS is a simulator that answers lists driftPageSize records a page,
// and fails every page after the first while failPages is set.
func pagedDNS(t *testing.T, failPages *atomic.Bool) (*simulator.Server, dns.Client) {
	t.Helper()
	sim, url := simtest.StartBehind(t, simulator.Options{Token: simToken}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && r.URL.Path == "/dns/v1/records" {
				if failPages != nil && failPages.Load() && r.URL.Query().Get("pageToken") != "" {
					http.Error(w, `{"error":"unavailable","message":"injected"}`, http.StatusServiceUnavailable)
					return
				}
				q := r.URL.Query()
				q.Set("limit", fmt.Sprint(driftPageSize))
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	})
	c, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken),
		MaxRetries: 1, MaxRetryWait: 10 * time.Millisecond})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return sim, c
}

func dnsRequests(sim *simulator.Server, op simulator.Operation) int {
	return sim.RequestCount(simulator.ServiceDNS, op)
}

// TestDriftPassListsAndReadsOnlyWhatDiffers (issue 25 item 4): 200 MyApps
// at rest over two passes cost the DNS service four list pages a pass and
// no read; a record changed outside the operator (value, TTL, owner) or
// deleted is found by the next pass, and only those MyApps are read and
// repaired.
func TestDriftPassListsAndReadsOnlyWhatDiffers(t *testing.T) {
	g := NewWithT(t)
	const n = 200
	sim, c := pagedDNS(t, nil)
	rig := newDriftRig(t, c)
	rig.add(g, "drift", n)
	rig.lister.pages = 100 // no pause between pages: this test is about what is asked, not when

	sim.ResetRequestCounts()
	for range 2 {
		g.Expect(rig.lister.passOnce(t.Context())).To(Succeed())
		g.Expect(rig.drained()).To(BeEmpty(), "nothing drifted at rest")
	}
	g.Expect(dnsRequests(sim, simulator.OpList)).To(Equal(2*n/driftPageSize), "each pass lists %d pages", n/driftPageSize)
	g.Expect(dnsRequests(sim, simulator.OpGet)).To(BeZero(), "no record is read at rest")
	for _, key := range rig.apps {
		app := &appsv1alpha1.MyApp{}
		g.Expect(rig.api.Get(t.Context(), key, app)).To(Succeed())
		due, until := rig.r.dnsReadDue(t.Context(), app, dns.TypeA, defaultTarget)
		g.Expect(due).To(BeFalse(), "%s is not read at rest", key)
		g.Expect(until).To(BeZero(), "no timed drift check is scheduled for %s", key)
	}

	// Outside the operator: a new value, a new TTL, another owner, and a
	// record deleted.
	ctx := t.Context()
	owner := func(i int) string {
		rec, err := c.Get(ctx, rig.host(i))
		g.Expect(err).NotTo(HaveOccurred())
		return rec.Owner
	}
	_, err := c.Upsert(ctx, dns.Record{Name: rig.host(10), Type: dns.TypeA, Value: "198.51.100.7", TTL: DefaultRecordTTL, Owner: owner(10)})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Upsert(ctx, dns.Record{Name: rig.host(60), Type: dns.TypeA, Value: defaultTarget, TTL: 60, Owner: owner(60)})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Transfer(ctx, rig.host(110), owner(110), "external-dns/someone-else")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Delete(ctx, rig.host(160), owner(160))).To(Succeed())
	g.Eventually(func() bool { // the simulator's changes become ACTIVE
		rec, err := c.Get(ctx, rig.host(10))
		return err == nil && rec.State == dns.StateActive
	}, timeout, interval).Should(BeTrue())

	sim.ResetRequestCounts()
	g.Expect(rig.lister.passOnce(ctx)).To(Succeed())
	found := rig.drained()
	want := []string{rig.apps[10].String(), rig.apps[60].String(), rig.apps[110].String(), rig.apps[160].String()}
	slices.Sort(want)
	g.Expect(found).To(Equal(want), "exactly the changed and the deleted records")
	g.Expect(dnsRequests(sim, simulator.OpGet)).To(BeZero(), "the pass itself reads nothing")

	rig.repair(g, found)
	g.Expect(dnsRequests(sim, simulator.OpGet)).To(Equal(len(want)), "only the drifted MyApps read their record")
	for _, i := range []int{10, 60, 160} {
		rec, err := c.Get(ctx, rig.host(i))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rec.Value).To(Equal(defaultTarget), "%s repaired", rec.Name)
		g.Expect(rec.TTL).To(Equal(DefaultRecordTTL), "%s repaired", rec.Name)
	}
	// The record another owner took is a host conflict now, not repaired
	// behind its owner's back; its MyApp no longer rests in the pass's care.
	app := &appsv1alpha1.MyApp{}
	g.Expect(rig.api.Get(ctx, rig.apps[110], app)).To(Succeed())
	g.Expect(conditionOf(app, appsv1alpha1.DNSReadyCondition).Reason).To(Equal(appsv1alpha1.HostConflictReason))

	// Wait for the repairs to be ACTIVE (the simulator propagates them),
	// then a pass finds nothing again.
	for _, i := range []int{10, 60, 160} {
		g.Eventually(func() appsv1alpha1.DNSRecordState { return rig.pass(g, rig.apps[i]).State }, timeout, interval).
			Should(Equal(appsv1alpha1.DNSRecordActive))
	}
	g.Expect(rig.lister.passOnce(ctx)).To(Succeed())
	g.Expect(rig.drained()).To(BeEmpty())
}

// TestDriftPassRepairsWithinTheInterval runs the pass's own loop with a
// one-second interval and a controller that passes what it is sent: a
// record changed outside the operator is back within one interval (its
// page's next listing comes at most one interval after the change; the
// second of slack is the repair's own pass on a loaded machine), and the
// DNS service sees lists, a read only of that record.
func TestDriftPassRepairsWithinTheInterval(t *testing.T) {
	g := NewWithT(t)
	sim, c := pagedDNS(t, nil)
	const every = driftRigInterval
	rig := newDriftRig(t, c)
	rig.add(g, "drift-loop", 20)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = rig.lister.Start(ctx) })
	// The controller: a failure is reported, not fatal, off the test's
	// goroutine.
	controller := NewGomega(func(message string, _ ...int) { t.Error(message) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-rig.events:
				rig.pass(controller, client.ObjectKeyFromObject(e.Object))
			}
		}
	})
	host := rig.host(3)
	valueOf := func() string {
		for _, r := range sim.Records() {
			if r.Name == host {
				return r.Value
			}
		}
		return ""
	}
	sim.ResetRequestCounts()
	time.Sleep(2 * every) // a pass or two at rest
	g.Expect(dnsRequests(sim, simulator.OpList)).To(BeNumerically(">=", 1))
	g.Expect(dnsRequests(sim, simulator.OpGet)).To(BeZero(), "no read at rest")

	rec, err := c.Get(ctx, host)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Upsert(ctx, dns.Record{Name: rec.Name, Type: dns.TypeA, Value: "198.51.100.9", TTL: rec.TTL, Owner: rec.Owner})
	g.Expect(err).NotTo(HaveOccurred())
	changed := time.Now()
	sim.ResetRequestCounts()
	g.Eventually(valueOf, every+time.Second, 10*time.Millisecond).Should(Equal(defaultTarget), "repaired within the interval")
	t.Logf("repaired %v after the change", time.Since(changed).Round(10*time.Millisecond))
	time.Sleep(every)
	// The changed record is read once, twice if a pass listed it again
	// before its repair was done; the 19 that matched are never read.
	g.Expect(dnsRequests(sim, simulator.OpGet)).To(BeNumerically("<=", 2), "only the changed record is read")
}

// TestDriftPassWithAFailedPageJudgesNothingMissing: while every page but
// the first fails, the pass does not end and sends nothing, though 150 of
// the 200 records were never listed; once the pages come back it ends,
// and finds nothing. The pages fail for less than the interval, after
// which the pass would fall back to timed reads
// (TestDriftPassFallsBackToTimedReadsWhileItsListFails).
func TestDriftPassWithAFailedPageJudgesNothingMissing(t *testing.T) {
	g := NewWithT(t)
	var failPages atomic.Bool
	_, c := pagedDNS(t, &failPages)
	rig := newDriftRig(t, c)
	rig.r.DriftCheckInterval = 5 * time.Second
	rig.add(g, "drift-fail", 200)
	rig.lister.pages = 100

	failPages.Store(true)
	done := make(chan error, 1)
	go func() { done <- rig.lister.passOnce(t.Context()) }()
	g.Consistently(func() []string { return rig.drained() }, 1500*time.Millisecond, 50*time.Millisecond).
		Should(BeEmpty(), "an incomplete pass judges nothing missing")
	g.Expect(done).NotTo(Receive(), "the pass retries the failed page")

	failPages.Store(false)
	g.Eventually(done, timeout).Should(Receive(Not(HaveOccurred())), "the pass ends once the page comes back")
	g.Expect(rig.drained()).To(BeEmpty())
}

// TestDriftPassFallsBackToTimedReadsWhileItsListFails (issue 32 item 2,
// G3): the drift pass's list fails every time, as from a server that
// refuses zone transfers, and a record is deleted by hand. Once the list
// has failed for an interval, each record is read at its own point of the
// interval, as in read mode, so the deleted record is written again within
// the documented bound: the list's first try comes within half an interval
// of the start, the fallback one interval after it, and the record's read
// within the interval after that (two and a half intervals, plus a second
// of slack for the pass on a loaded machine); deleted again, it is written
// again within an interval by the timed read that repair scheduled. Each
// failed list is counted, the fallback is exported, and once the list
// comes back the records are judged by list again: no timed read is left
// scheduled.
func TestDriftPassFallsBackToTimedReadsWhileItsListFails(t *testing.T) {
	g := NewWithT(t)
	var failLists atomic.Bool
	sim, c := failingListDNS(t, &failLists)
	rig := newDriftRig(t, c)
	every := rig.r.DriftCheckInterval
	rig.add(g, "drift-fallback", 5)
	victim := rig.host(2)

	failLists.Store(true)
	failuresBefore := testutil.ToFloat64(driftPassFailures)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	started := time.Now()
	wg.Go(func() { _ = rig.lister.Start(ctx) })
	rig.runController(ctx, &wg)

	rec, err := c.Get(ctx, victim)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Delete(ctx, victim, rec.Owner)).To(Succeed(), "deleted by hand")
	present := func() bool {
		for _, r := range sim.Records() {
			if r.Name == victim {
				return true
			}
		}
		return false
	}
	bound := every/2 + 2*every + time.Second
	g.Eventually(present, bound+5*time.Second, 20*time.Millisecond).Should(BeTrue(), "written again while the list fails")
	t.Logf("written again %v after the lists began failing (bound %v)", time.Since(started).Round(10*time.Millisecond), bound)
	g.Expect(time.Since(started)).To(BeNumerically("<=", bound), "within the documented bound")
	// Deleted again, once the reads of the records at rest are over: the
	// read that repaired it scheduled the next one, an interval later, as
	// in read mode.
	time.Sleep(every)
	rec, err = c.Get(ctx, victim)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Delete(ctx, victim, rec.Owner)).To(Succeed(), "deleted by hand again")
	again := time.Now()
	g.Eventually(present, every+5*time.Second, 20*time.Millisecond).Should(BeTrue(), "written again by its timed read")
	t.Logf("written again %v after the second deletion", time.Since(again).Round(10*time.Millisecond))
	g.Expect(time.Since(again)).To(BeNumerically("<=", every+time.Second), "within an interval of the second deletion")
	g.Expect(testutil.ToFloat64(driftPassFailures)-failuresBefore).To(BeNumerically(">=", 2), "each failed list is counted")
	g.Expect(testutil.ToFloat64(driftPassFallback.WithLabelValues())).To(Equal(1.0), "the fallback is exported")

	// The list comes back: the next complete pass ends the fallback, and
	// the reads it scheduled run out after one more each.
	failLists.Store(false)
	g.Eventually(func() float64 { return testutil.ToFloat64(driftPassFallback.WithLabelValues()) }, 3*every, 20*time.Millisecond).
		Should(BeZero(), "the lists work again")
	g.Expect(testutil.ToFloat64(driftPassLastSuccess.WithLabelValues())).To(BeNumerically(">=", float64(started.Unix())))
	g.Eventually(func(g Gomega) {
		for _, key := range rig.apps {
			app := &appsv1alpha1.MyApp{}
			g.Expect(rig.api.Get(ctx, key, app)).To(Succeed())
			last, ok := rig.r.dnsChecks.get(key, app.UID)
			g.Expect(ok).To(BeTrue())
			g.Expect(last.next.IsZero()).To(BeTrue(), "%s has no timed read left", key)
		}
	}, 3*every, 50*time.Millisecond).Should(Succeed())
}

// failingListDNS is a simulator whose lists fail with 503 while fail is
// set; its reads and writes work.
func failingListDNS(t *testing.T, fail *atomic.Bool) (*simulator.Server, dns.Client) {
	t.Helper()
	sim, url := simtest.StartBehind(t, simulator.Options{Token: simToken}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if fail.Load() && r.Method == http.MethodGet && r.URL.Path == "/dns/v1/records" {
				http.Error(w, `{"error":"unavailable","message":"injected"}`, http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	c, err := httpdns.New(external.Config{BaseURL: url, Token: external.StaticTokenSource(simToken),
		MaxRetries: 1, MaxRetryWait: 10 * time.Millisecond})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return sim, c
}

// TestDriftPassDoesNotJudgeARecordWrittenDuringIt: a MyApp whose record was
// first written after the pass started is not missing from that pass,
// though the pages listed before it do not hold it; one read before is.
func TestDriftPassDoesNotJudgeARecordWrittenDuringIt(t *testing.T) {
	g := NewWithT(t)
	_, c := pagedDNS(t, nil)
	rig := newDriftRig(t, c)
	rig.add(g, "drift-during", 2)

	start := rig.r.Clock.Now()
	time.Sleep(10 * time.Millisecond)
	rig.add(g, "drift-during-late", 1) // written after the pass started

	missing, err := rig.lister.findMissing(t.Context(), start, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(missing).To(Equal(2), "the two read before the pass, which no page held")
	g.Expect(rig.drained()).To(Equal([]string{rig.apps[0].String(), rig.apps[1].String()}))
}

// TestDriftPassOnBIND: against BIND the pass is one zone transfer; a record
// changed there with nsupdate is found and repaired, and the MyApp whose
// record matched is not read.
func TestDriftPassOnBIND(t *testing.T) {
	controlplane.RequireBIND(t, rfc2136Err)
	g := NewWithT(t)
	counted := newCountingDNS(rfc2136Client)
	rig := newDriftRig(t, counted)
	ns := fmt.Sprintf("drift-bind-%d", time.Now().UnixNano()%100000)
	rig.add(g, ns, 2)
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		for i := range rig.apps {
			if rec, err := rfc2136Client.Get(ctx, rig.host(i)); err == nil {
				_ = rfc2136Client.Delete(ctx, rec.Name, rec.Owner)
			}
		}
	})

	g.Expect(rig.lister.passOnce(t.Context())).To(Succeed())
	g.Expect(rig.drained()).To(BeEmpty(), "nothing drifted at rest")

	host := rig.host(0)
	update := fmt.Sprintf("server %s\nzone %s\nupdate delete %s. A\nupdate add %s. 300 A 198.51.100.11\nsend\n",
		strings.Replace(bind.Addr, ":", " ", 1), bind.Zone, host, host)
	cmd := exec.CommandContext(t.Context(), "nsupdate", "-y", bind.Key())
	cmd.Stdin = strings.NewReader(update)
	cmd.Stderr = os.Stderr
	g.Expect(cmd.Run()).To(Succeed(), "nsupdate")

	readsBefore := counted.getsOf(rig.host(1))
	g.Expect(rig.lister.passOnce(t.Context())).To(Succeed())
	found := rig.drained()
	g.Expect(found).To(Equal([]string{rig.apps[0].String()}), "the record changed with nsupdate")
	rig.repair(g, found)
	rec, err := rfc2136Client.Get(t.Context(), host)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rec.Value).To(Equal(defaultTarget), "repaired")
	g.Expect(counted.getsOf(rig.host(1))).To(Equal(readsBefore), "the record that matched is not read")
}

// TestDriftPassOnBINDWithALaggingSecondary (issue 32 item 4, G5): with a
// secondary nameserver one serial behind the primary (an unrelated update
// it has not transferred yet, as NOTIFY lags) and more records than the
// client asks a lagging nameserver about one by one, the listing reports
// every record PENDING. A record whose type, value, owner and TTL are what
// its MyApp last read is not drift for that: the pass sends nothing and
// counts nothing, where it used to read and reconcile every MyApp.
func TestDriftPassOnBINDWithALaggingSecondary(t *testing.T) {
	controlplane.RequireBIND(t, rfc2136Err)
	g := NewWithT(t)
	const n = 70
	rig := newDriftRig(t, rfc2136Client)
	ns := fmt.Sprintf("drift-lag-%d", time.Now().UnixNano()%100000)
	rig.add(g, ns, n)
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		for i := range rig.apps {
			if rec, err := rfc2136Client.Get(ctx, rig.host(i)); err == nil {
				_ = rfc2136Client.Delete(ctx, rec.Name, rec.Owner)
			}
		}
	})

	// The secondary transfers the zone once, at its start, and is never
	// notified after: the primary's next update leaves it behind.
	secondary, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{Primary: bind, Zone: bind.Zone})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = secondary.Close() })
	g.Eventually(func() []string { return servedBy(t, secondary.Addr, rig.host(n-1)) }, timeout, interval).
		Should(Equal([]string{defaultTarget}), "the secondary serves the records")
	unrelated := "unrelated." + ns + "." + bind.Zone
	_, err = rfc2136Client.Upsert(t.Context(), dns.Record{Name: unrelated, Type: dns.TypeA, Value: "192.0.2.99", TTL: 300,
		Owner: "external-dns/" + ns})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = rfc2136Client.Delete(context.WithoutCancel(t.Context()), unrelated, "external-dns/"+ns) })
	lagging := func() bool { return zoneSerial(t, secondary.Addr) != zoneSerial(t, bind.Addr) }
	g.Expect(lagging()).To(BeTrue(), "the secondary is a serial behind")

	withSecondary, err := rfc2136.New(rfc2136.Config{Server: bind.Addr, Zone: bind.Zone, Key: rfc2136.StaticKey(rfc2136Key(g)),
		Nameservers: []string{bind.Addr, secondary.Addr}, Timeout: time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	list, err := withSecondary.ListByOwnerPrefix(t.Context(), installationPrefix(testOwnerID)+ns+"/")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(list).To(HaveLen(n))
	g.Expect(list).To(HaveEach(HaveField("State", dns.StatePending)), "the listing cannot tell which records the secondary serves")

	rig.r.DNS = withSecondary
	changed, missing := testutil.ToFloat64(driftRecordsFound.WithLabelValues("changed")), testutil.ToFloat64(driftRecordsFound.WithLabelValues("missing"))
	g.Expect(rig.lister.passOnce(t.Context())).To(Succeed())
	g.Expect(lagging()).To(BeTrue(), "the secondary still lagged after the pass: the test proves something")
	g.Expect(rig.drained()).To(BeEmpty(), "no drift: every record is as its MyApp last read it")
	g.Expect(testutil.ToFloat64(driftRecordsFound.WithLabelValues("changed"))).To(Equal(changed))
	g.Expect(testutil.ToFloat64(driftRecordsFound.WithLabelValues("missing"))).To(Equal(missing))
}

// servedBy is what the nameserver at addr answers for name's A record.
func servedBy(t *testing.T, addr, name string) []string {
	t.Helper()
	m := new(miekgdns.Msg)
	m.SetQuestion(miekgdns.Fqdn(name), miekgdns.TypeA)
	r, _, err := (&miekgdns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, addr)
	if err != nil {
		return nil
	}
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*miekgdns.A); ok {
			out = append(out, a.A.String())
		}
	}
	return out
}

// zoneSerial is the serial of the suite's zone as the nameserver at addr
// serves it.
func zoneSerial(t *testing.T, addr string) uint32 {
	t.Helper()
	m := new(miekgdns.Msg)
	m.SetQuestion(miekgdns.Fqdn(bind.Zone), miekgdns.TypeSOA)
	r, _, err := (&miekgdns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, addr)
	if err != nil || len(r.Answer) == 0 {
		t.Fatalf("the SOA of %s at %s: %v %v", bind.Zone, addr, r, err)
	}
	return r.Answer[0].(*miekgdns.SOA).Serial
}

// rfc2136Key is the suite's BIND key.
func rfc2136Key(g Gomega) rfc2136.Key {
	key, err := rfc2136.ParseKey(bind.Key())
	g.Expect(err).NotTo(HaveOccurred())
	return key
}

// listDriftBackend labels the MyApps of the manager that
// TestDriftListThroughTheManager starts, which the suite's manager does
// not see (httpBackendCache).
const listDriftBackend = "list-drift"

// pagingCountingDNS counts reads by name like countingDNS and keeps the
// HTTP client's pages, so the drift pass walks them as in the manager.
type pagingCountingDNS struct {
	*countingDNS
	dns.OwnerPrefixPager
}

// TestDriftListThroughTheManager wires the pass as cmd/manager does
// (Reconciler.DriftCheck = DriftCheckList, a two-second interval): MyApps
// at rest have their records read by nobody over two intervals, and a
// record changed outside the operator, then one deleted, is repaired
// through the controller within two intervals, without reading the record
// that matched.
func TestDriftListThroughTheManager(t *testing.T) {
	g := NewWithT(t)
	const every = 2 * time.Second
	counted := &pagingCountingDNS{countingDNS: newCountingDNS(dnsClient), OwnerPrefixPager: dnsClient.(dns.OwnerPrefixPager)}
	_, stop, err := startManager(cp, listDriftBackend, cache.Options{ByObject: map[client.Object]cache.ByObject{
		&appsv1alpha1.MyApp{}: {Label: labels.SelectorFromSet(labels.Set{dnsBackendLabel: listDriftBackend})},
	}}, func(ctrl.Manager) *Reconciler {
		return &Reconciler{
			OwnerID:             testOwnerID,
			DNS:                 counted,
			DefaultTarget:       defaultTarget,
			PendingPollInterval: 200 * time.Millisecond,
			DriftCheckInterval:  every,
			DriftCheck:          DriftCheckList,
		}
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(stop)

	ns := newNamespace(t)
	hosts := make([]string, 0, 3)
	for i := range 3 {
		app := newMyApp(ns, fmt.Sprintf("web-%d", i))
		app.Labels = map[string]string{dnsBackendLabel: listDriftBackend}
		createReadyMyApp(t, g, app)
		hosts = append(hosts, app.Spec.Host)
		// Deleted while this manager still runs, so it removes the record.
		t.Cleanup(func() {
			ctx := context.WithoutCancel(t.Context())
			g.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, app))).To(Succeed())
			g.Eventually(func() []simulator.Record { return recordsNamed(app.Spec.Host) }, timeout, interval).Should(BeEmpty())
		})
	}
	g.Eventually(func() bool {
		for _, h := range hosts {
			if recs := recordsNamed(h); len(recs) != 1 || string(recs[0].State) != string(dns.StateActive) {
				return false
			}
		}
		return true
	}, timeout, interval).Should(BeTrue(), "every record ACTIVE")
	time.Sleep(every) // the last passes of the creations are over
	before := make([]int, len(hosts))
	for i, h := range hosts {
		before[i] = counted.getsOf(h)
	}
	time.Sleep(2 * every)
	for i, h := range hosts {
		g.Expect(counted.getsOf(h)).To(Equal(before[i]), "%s is not read at rest", h)
	}

	rec, err := dnsClient.Get(t.Context(), hosts[0])
	g.Expect(err).NotTo(HaveOccurred())
	_, err = dnsClient.Upsert(t.Context(), dns.Record{Name: rec.Name, Type: dns.TypeA, Value: "198.51.100.21", TTL: rec.TTL, Owner: rec.Owner})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() string {
		if recs := recordsNamed(hosts[0]); len(recs) == 1 {
			return recs[0].Value
		}
		return ""
	}, 2*every+every/2, 50*time.Millisecond).Should(Equal(defaultTarget), "repaired within two intervals")
	g.Expect(counted.getsOf(hosts[0])).To(BeNumerically(">", before[0]), "the changed record was read")

	// Deleted outside the operator: the complete pass that misses it has
	// it written again.
	rec, err = dnsClient.Get(t.Context(), hosts[1])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dnsClient.Delete(t.Context(), rec.Name, rec.Owner)).To(Succeed())
	g.Eventually(func() []simulator.Record { return recordsNamed(hosts[1]) }, 2*every+every/2, 50*time.Millisecond).
		Should(HaveLen(1), "written again within two intervals")
	g.Expect(counted.getsOf(hosts[1])).To(BeNumerically(">", before[1]), "the deleted record was read")
	g.Expect(counted.getsOf(hosts[2])).To(Equal(before[2]), "%s, which matched, is not read", hosts[2])
}

// dnsReadDue tells, without running a pass, whether app's pass would read
// its record, given the type and value the record should have; if not,
// untilDue is how long until a timed read makes it. It is what dnsplan
// decides for the observation a pass would make; the drift pass's tests
// read it for MyApps at rest.
func (r *Reconciler) dnsReadDue(ctx context.Context, app *appsv1alpha1.MyApp, recordType, value string) (due bool, untilDue time.Duration) {
	o := r.observeDNS(ctx, &scope{app: app})
	o.Address = dnsplan.Target{Type: recordType, Value: value}
	if dnsplan.Make(o.Observation).Outcome.Kind != dnsplan.KindStands {
		return true, 0
	}
	if o.Memory == nil {
		return false, 0
	}
	return false, untilNext(o.Memory.Next, o.Now)
}
