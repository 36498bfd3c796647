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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/pass"
)

// claimNotWritten is why the sweep and the takeovers wait before the first
// claim is written.
const claimNotWritten = "this installation's claim of its owner ID is not written yet"

// DefaultOwnerIDClaimInterval is how often the leader reads its
// installation's claim of the owner ID back.
const DefaultOwnerIDClaimInterval = time.Minute

// The events the claim sends, on its EventObject.
const (
	eventOwnerIDShared  pass.EventReason = "OwnerIDShared"
	eventOwnerIDClaimed pass.EventReason = "OwnerIDClaimed"
)

// ownerIDShared is 1 while another installation's claim of this owner ID is
// seen. It is exported only by the leader, which keeps the claim.
var ownerIDShared = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "myapp_dns_owner_id_shared",
	Help: "1 while another installation's claim of this owner ID was seen in the DNS service and the orphan sweep is " +
		"refused, 0 otherwise. Exported only by the leader.",
}, []string{"owner_id"})

func init() {
	metrics.Registry.MustRegister(ownerIDShared)
}

// OwnerIDClaim keeps this installation's claim of its owner ID in the DNS
// service, and finds out when another installation uses the same ID. Two
// clusters writing records under one owner ID (one restored from the
// other's etcd snapshot keeps the kube-system UID, the default ID; one
// values file shared by two clusters) each take the other's records for
// their own: each one's orphan sweep deletes the records of the MyApps
// only the other has.
//
// The leader draws a random nonce when it starts and writes a claim
// holding it, with its cluster's identity, under the owner ID; then it
// reads the claim back every Interval, and before every sweep. Another
// nonce there means another installation wrote since: the ID is shared. It
// says so (a log line, a Warning event, myapp_dns_owner_id_shared, the
// MyAppOwnerIDShared alert), refuses to sweep, and writes its claim again,
// so that the other installation, reading its own back, finds this one's
// and refuses too. While both run, each keeps finding the other's claim.
// Once a claim of its own has stood for two check intervals (the longer of
// both installations'), no other installation can be reading it: the ID is
// its own again, as it is once an operator gave the clusters distinct IDs.
// A leader of the same installation that takes over writes a claim of its
// own at start, and the one it replaced reads no more.
type OwnerIDClaim struct {
	// DNS is the external DNS service. A client that keeps no claims (not
	// a dns.InstallationClaims) leaves a shared owner ID undetected, and
	// says so when it starts. A client that does keeps the detection on
	// whatever it answers: a claim check that fails, with any error,
	// refuses the sweep until a check succeeds.
	DNS dns.Client
	// OwnerID is this installation's owner ID. Required.
	OwnerID string
	// Cluster is this cluster's identity, its kube-system namespace's UID,
	// and Instance the manager's (its pod's) name: the claim holds them for
	// the people told the ID is shared. Either may be empty.
	Cluster  string
	Instance string
	// Interval is how often the claim is read back. Defaults to
	// DefaultOwnerIDClaimInterval.
	Interval time.Duration
	// Recorder sends the events; Log gets the log lines. Both default to
	// the manager's.
	Recorder recorder.EventRecorder
	Log      logr.Logger
	// EventObject is what the events are about: the manager's
	// leader-election Lease, in its namespace beside the leader-election
	// events, where the manager may write events even when its role is
	// limited to its namespaces. Nil means the kube-system Namespace, the
	// cluster's identity (its events go to the default namespace).
	EventObject runtime.Object

	// mu makes checks, from the claim's own loop and from the sweep, one at
	// a time.
	mu     sync.Mutex
	claims dns.InstallationClaims
	// unsupported is set at start when the client keeps no claims at all,
	// and by nothing else: no answer of the service turns the detection
	// off.
	unsupported bool
	nonce       string
	// wroteAt is when this leader last wrote its claim; zero before.
	wroteAt time.Time
	// other is the other installation's claim last seen, while the ID is
	// shared; nil otherwise.
	other *dns.InstallationClaim
	// longest is the longest check interval of any claim seen.
	longest time.Duration
	// seen is what the checks found, for TakeoversAllowed, which must not
	// wait for a check in progress: published after each (publishLocked).
	seen atomic.Pointer[claimSeen]
}

// TakeoverGuard says whether a MyApp may take an earlier MyApp's record
// over now. OwnerIDClaim is one.
type TakeoverGuard interface {
	// TakeoversAllowed reports whether a takeover may be made now, and
	// why not. It must not wait on the DNS service.
	TakeoversAllowed() (allowed bool, why string)
}

// claimSeen is what the claim's checks found, as the last one left it.
type claimSeen struct {
	unsupported bool
	// why is why takeovers wait whatever the time: no claim written yet,
	// a check that failed, another installation's claim; "" when none.
	why string
	// wroteAt and quiet say from when the claim has stood long enough.
	wroteAt time.Time
	quiet   time.Duration
}

var _ manager.LeaderElectionRunnable = &OwnerIDClaim{}

// SetupWithManager adds the claim to the manager, which runs it on the
// leader only.
func (c *OwnerIDClaim) SetupWithManager(mgr manager.Manager) error {
	if c.DNS == nil {
		return errors.New("the owner ID claim needs a DNS client")
	}
	if err := ValidateOwnerID(c.OwnerID); err != nil {
		return fmt.Errorf("the owner ID claim needs this installation's owner ID: %w", err)
	}
	if c.Recorder == nil {
		c.Recorder = mgr.GetEventRecorder("myapp-owner-id-claim")
	}
	if c.Log.GetSink() == nil {
		c.Log = mgr.GetLogger().WithName("dns-owner-id-claim")
	}
	return mgr.Add(c)
}

// NeedLeaderElection makes only the leader claim: it is the one that
// sweeps.
func (*OwnerIDClaim) NeedLeaderElection() bool { return true }

func (c *OwnerIDClaim) interval() time.Duration {
	if c.Interval > 0 {
		return c.Interval
	}
	return DefaultOwnerIDClaimInterval
}

// Start writes the claim, then reads it back every interval until ctx ends.
func (c *OwnerIDClaim) Start(ctx context.Context) error {
	if err := c.start(ctx); err != nil {
		return err
	}
	defer ownerIDShared.DeleteLabelValues(c.OwnerID)
	for {
		if err := sleep(ctx, wait.Jitter(c.interval(), 0.1)); err != nil {
			return nil
		}
		c.mu.Lock()
		err := c.checkLocked(ctx)
		c.publishLocked(err)
		c.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			c.Log.Error(err, "Reading this installation's claim of its owner ID failed; trying again at the next check",
				"ownerID", c.OwnerID, "interval", c.interval())
		}
	}
}

// start draws the nonce and writes the first claim, trying again every
// interval until it is written or ctx ends.
func (c *OwnerIDClaim) start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() { c.publishLocked(nil) }()
	claims, ok := c.DNS.(dns.InstallationClaims)
	if !ok {
		c.unsupported = true
		c.Log.Info("The DNS provider keeps no installation claims: another installation using this owner ID would not be detected",
			"ownerID", c.OwnerID)
		return nil
	}
	c.claims = claims
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("drawing the owner ID claim's nonce: %w", err)
	}
	c.nonce = hex.EncodeToString(nonce)
	ownerIDShared.WithLabelValues(c.OwnerID).Set(0)
	// A claim already there is this installation's last leader's, or
	// another installation's: which, only the next checks tell. Its check
	// interval counts toward how long this leader's claim must stand, in
	// case another installation that checks less often wrote it.
	if claim, err := c.claims.GetInstallationClaim(ctx, c.OwnerID); err == nil {
		c.longest = max(c.longest, claim.CheckInterval)
	}
	for {
		err := c.writeLocked(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		c.Log.Error(err, "Writing this installation's claim of its owner ID failed; the orphan sweep waits for it",
			"ownerID", c.OwnerID, "retryAfter", c.interval())
		c.mu.Unlock()
		err = sleep(ctx, c.interval())
		c.mu.Lock()
		if err != nil {
			return nil
		}
	}
}

// writeLocked writes this leader's claim. Any error is a check that could
// not tell, and the sweep waits for the next one: an answer that looks
// like "no claims here" (a 400, 404 or 422) may be one stray answer of a
// proxy or a sidecar, and taking it for good would remove the only guard
// against a shared owner ID. A service that really keeps none keeps the
// sweep refused, and says so; --owner-id-claim-interval=0 turns the claim
// off. c.mu is held.
func (c *OwnerIDClaim) writeLocked(ctx context.Context) error {
	_, err := c.claims.PutInstallationClaim(ctx, dns.InstallationClaim{
		OwnerID: c.OwnerID, Nonce: c.nonce, Cluster: c.Cluster, Instance: c.Instance, CheckInterval: c.interval(),
	})
	if errors.Is(err, external.ErrNotFound) || errors.Is(err, external.ErrInvalid) {
		return fmt.Errorf("%w (if the DNS service keeps no installation claims, the orphan sweep stays refused; "+
			"--owner-id-claim-interval=0 turns the claim off, and with it the detection of a shared owner ID)", err)
	}
	if err != nil {
		return err
	}
	c.wroteAt = time.Now()
	return nil
}

// checkLocked reads the claim back and judges what it finds: this
// leader's own, nothing (written again), or another installation's (the ID
// is shared; written again, so that the other finds this one's). c.mu is
// held.
func (c *OwnerIDClaim) checkLocked(ctx context.Context) error {
	if c.unsupported || c.claims == nil {
		return nil
	}
	if c.wroteAt.IsZero() {
		return c.writeLocked(ctx)
	}
	claim, err := c.claims.GetInstallationClaim(ctx, c.OwnerID)
	switch {
	case errors.Is(err, external.ErrNotFound):
		// Removed by hand, or never written by a service that lost it:
		// nothing says anyone else is there.
		return c.writeLocked(ctx)
	case err != nil:
		return err
	case claim.Nonce == c.nonce:
		c.ownStandsLocked()
		return nil
	}
	c.longest = max(c.longest, claim.CheckInterval)
	if c.other == nil {
		c.Log.Error(nil, "Another installation uses this owner ID; the orphan sweep is refused until the installations have distinct owner IDs",
			"ownerID", c.OwnerID, "otherCluster", claim.Cluster, "otherInstance", claim.Instance, "otherClaimWrittenAt", claim.WrittenAt,
			"cluster", c.Cluster, "instance", c.Instance)
		pass.Eventf(c.Recorder, c.clusterObject(), nil, corev1.EventTypeWarning, eventOwnerIDShared, "Sweep",
			"Another installation (cluster %s, manager %s) writes DNS records under this installation's owner ID %s: "+
				"each would sweep the other's records, so the orphan sweep is refused until they have distinct owner IDs "+
				"(--owner-id, the chart's ownerID)", orUnknown(claim.Cluster), orUnknown(claim.Instance), c.OwnerID)
	}
	c.other = &claim
	ownerIDShared.WithLabelValues(c.OwnerID).Set(1)
	return c.writeLocked(ctx)
}

// ownStandsLocked notes that the claim read back is this leader's own. The
// ID is shared no longer once it has stood for two check intervals: any
// other installation still writing would have written over it. c.mu is
// held.
func (c *OwnerIDClaim) ownStandsLocked() {
	if c.other == nil || time.Since(c.wroteAt) < c.quiet() {
		return
	}
	c.Log.Info("No other installation has claimed this owner ID for two check intervals; the orphan sweep runs again",
		"ownerID", c.OwnerID, "otherCluster", c.other.Cluster, "otherInstance", c.other.Instance)
	pass.Eventf(c.Recorder, c.clusterObject(), nil, corev1.EventTypeNormal, eventOwnerIDClaimed, "Sweep",
		"No other installation has claimed owner ID %s for two check intervals; the orphan sweep runs again", c.OwnerID)
	c.other = nil
	ownerIDShared.WithLabelValues(c.OwnerID).Set(0)
}

// quiet is how long a claim of this leader's must stand before no other
// installation can be reading it: two of the longest check interval seen.
func (c *OwnerIDClaim) quiet() time.Duration {
	return 2 * max(c.interval(), c.longest)
}

// SweepAllowed reads the claim back, as every check does, and reports
// whether this installation may sweep: its claim has stood long enough
// that any other installation with this ID would have written over it,
// and no other claim was seen since. why says why not.
func (c *OwnerIDClaim) SweepAllowed(ctx context.Context) (allowed bool, why string) {
	c.mu.Lock()
	if !c.unsupported && c.claims != nil {
		c.publishLocked(c.checkLocked(ctx))
	}
	c.mu.Unlock()
	return c.verdict()
}

// publishLocked publishes what the checks found for TakeoversAllowed;
// checkErr is the last check's error. c.mu is held.
func (c *OwnerIDClaim) publishLocked(checkErr error) {
	seen := &claimSeen{unsupported: c.unsupported, wroteAt: c.wroteAt, quiet: c.quiet()}
	switch {
	case c.unsupported:
	case c.claims == nil || c.wroteAt.IsZero():
		seen.why = claimNotWritten
	case checkErr != nil:
		seen.why = "this installation's claim of its owner ID could not be checked (the sweep and the takeovers wait " +
			"for a check that succeeds): " + checkErr.Error()
	case c.other != nil:
		seen.why = fmt.Sprintf("another installation (cluster %s, manager %s) uses owner ID %s",
			orUnknown(c.other.Cluster), orUnknown(c.other.Instance), c.OwnerID)
	}
	c.seen.Store(seen)
}

// TakeoversAllowed reports whether a MyApp may take an earlier MyApp's
// record over now (adopt it, replace its leak, take it over as restored),
// and why not: on the same proof the orphan sweep waits for, this
// installation's claim standing for two check intervals with no other
// claim seen since. A takeover judges "the earlier MyApp is gone" in this
// cluster only: a second cluster started with this one's owner ID (a
// disaster-recovery rehearsal, a values file shared by two clusters) would
// take the first's live records over, and before the claims have met
// neither cluster knows of the other. It reads what the last check found
// and never waits for one, so a reconcile is not held up by the DNS
// service.
func (c *OwnerIDClaim) TakeoversAllowed() (allowed bool, why string) { return c.verdict() }

// verdict is what the last check found, judged for the sweep and the
// takeovers alike: allowed once the claim has stood for two check
// intervals with no other claim seen, or when the service keeps no claims.
func (c *OwnerIDClaim) verdict() (allowed bool, why string) {
	seen := c.seen.Load()
	switch {
	case seen == nil:
		return false, claimNotWritten
	case seen.unsupported:
		return true, ""
	case seen.why != "":
		return false, seen.why
	}
	if stood := time.Since(seen.wroteAt); stood < seen.quiet {
		return false, fmt.Sprintf("this installation's claim of its owner ID has stood for %s of the %s that show no "+
			"other installation uses it", stood.Round(time.Second), seen.quiet)
	}
	return true, ""
}

// Shared reports whether another installation's claim was seen and has not
// been outlived yet.
func (c *OwnerIDClaim) Shared() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.other != nil
}

// clusterObject is what the claim's events are about: EventObject, or the
// kube-system Namespace, the cluster's identity.
func (c *OwnerIDClaim) clusterObject() runtime.Object {
	if c.EventObject != nil {
		return c.EventObject
	}
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: types.UID(c.Cluster)},
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
