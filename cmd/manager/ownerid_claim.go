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

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
)

// setupOwnerIDClaim adds the leader's claim of the owner ID in the DNS
// service (myapp.OwnerIDClaim), which the orphan sweep asks before each
// sweep and the MyApp controller before each takeover of an earlier
// MyApp's record; nil when --owner-id-claim-interval is 0. The claim names this
// cluster by its kube-system namespace's UID and this manager by its host
// name (its pod's name), for the people told that two clusters share the
// ID.
func setupOwnerIDClaim(ctx context.Context, mgr ctrl.Manager, opts *options, dnsClient dns.Client) (*myapp.OwnerIDClaim, error) {
	if opts.myApp.ownerIDClaimInterval == 0 {
		return nil, nil
	}
	claim := &myapp.OwnerIDClaim{
		DNS:      dnsClient,
		OwnerID:  opts.myApp.ownerID,
		Cluster:  clusterIdentity(ctx, mgr.GetAPIReader()),
		Instance: claimText(hostname()),
		Interval: ownerIDClaimInterval(opts),
	}
	if lease := leaderElectionLease(opts); lease != nil {
		claim.EventObject = lease
	}
	if err := claim.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("setting up the owner ID claim: %w", err)
	}
	return claim, nil
}

// ownerIDClaimInterval is --owner-id-claim-interval, or a quarter of
// --dns-orphan-sweep-interval when that is shorter: a new leader sweeps
// only once its claim has stood two check intervals, which then delays no
// sweep (the first comes half an interval after a start at the soonest).
func ownerIDClaimInterval(opts *options) time.Duration {
	interval := opts.myApp.ownerIDClaimInterval
	if sweep := opts.myApp.orphanSweepInterval; sweep > 0 {
		interval = min(interval, sweep/4)
	}
	return interval
}

// inClusterNamespaceFile holds the manager's namespace in a pod.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaderElectionLease is the leader-election Lease, for the claim's events
// to be about: in the manager's namespace, beside the leader-election
// events, and where the manager may write events whatever its role. Nil
// without leader election, or when its namespace is not known (the manager
// runs outside a cluster without --leader-election-namespace).
func leaderElectionLease(opts *options) *coordinationv1.Lease {
	if !opts.leaderElect {
		return nil
	}
	namespace := opts.leaderElectionNamespace
	if namespace == "" {
		data, err := os.ReadFile(inClusterNamespaceFile)
		if err != nil {
			return nil
		}
		namespace = strings.TrimSpace(string(data))
	}
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: opts.leaderElectionID},
	}
}

// clusterIdentity is the kube-system namespace's UID, or "" when it cannot
// be read: the claim still tells writers apart by their nonces.
func clusterIdentity(ctx context.Context, reader client.Reader) string {
	ns := &corev1.Namespace{}
	if err := reader.Get(ctx, client.ObjectKey{Name: ownerIDNamespace}, ns); err != nil {
		ctrl.Log.WithName("setup").Error(err, "Reading the kube-system namespace's UID for the owner ID claim failed; "+
			"the claim names no cluster")
		return ""
	}
	return claimText(string(ns.UID))
}

func hostname() string {
	name, err := os.Hostname()
	if err != nil {
		return ""
	}
	return name
}

// claimText is s with every character a claim does not hold dropped and
// cut to the length it does, since it is only there to be read by people.
func claimText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 128 && contract.ValidateClaimText(string(r)) == nil {
			return r
		}
		return -1
	}, s)
	return s[:min(len(s), contract.MaxClaimTextLength)]
}
