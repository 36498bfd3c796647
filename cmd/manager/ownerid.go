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

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
)

// Reading the kube-system namespace needs get on namespaces (which the
// BackupConfig controller has too).
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// ownerIDNamespace is the namespace whose UID is the default owner ID: every
// cluster has it, it is never deleted, and its UID differs between clusters.
const ownerIDNamespace = "kube-system"

// Where the owner ID came from, for the start-up log line.
const (
	ownerIDFromFlag      = "--owner-id"
	ownerIDFromNamespace = "the kube-system namespace's UID"
)

// ownerInfo exports the installation's owner ID, so a dashboard or an alert
// can tell two clusters sharing one DNS service apart, or find two with the
// same ID.
var ownerInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "myapp_operator_info",
	Help: "Always 1: owner_id is this installation's owner ID, part of the owner of every DNS record it writes.",
}, []string{"owner_id"})

func init() {
	metrics.Registry.MustRegister(ownerInfo)
}

// exportOwnerID sets myapp_operator_info to show id, and only id.
func exportOwnerID(id string) {
	ownerInfo.Reset()
	ownerInfo.WithLabelValues(id).Set(1)
}

// resolveOwnerID is the installation's owner ID: the flag's value when set
// (validated with the other flags), else the kube-system namespace's UID,
// read once at start through reader (the API server, not a cache). It says
// where the ID came from. A namespace it cannot read is an error naming the
// flag: a constant fallback would be the same in every cluster, which is
// the hazard the ID exists to prevent.
func resolveOwnerID(ctx context.Context, reader client.Reader, flagValue string) (id, from string, err error) {
	if flagValue != "" {
		return flagValue, ownerIDFromFlag, nil
	}
	ns := &corev1.Namespace{}
	if err := reader.Get(ctx, client.ObjectKey{Name: ownerIDNamespace}, ns); err != nil {
		return "", "", fmt.Errorf("reading the %s namespace, whose UID is the default owner ID: %w; "+
			"set --owner-id (the chart's ownerID) to choose one", ownerIDNamespace, err)
	}
	id = string(ns.UID)
	if err := myapp.ValidateOwnerID(id); err != nil {
		return "", "", fmt.Errorf("the %s namespace's UID cannot be the owner ID: %w; set --owner-id to choose one",
			ownerIDNamespace, err)
	}
	return id, ownerIDFromNamespace, nil
}
