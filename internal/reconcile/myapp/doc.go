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

// Package myapp reconciles MyApps: it owns each MyApp's Deployment, Service
// and Ingress, and registers a DNS record for spec.host in the external DNS
// service, which a finalizer removes before the MyApp is gone.
//
// What it does is told once, in docs/spec/myapp.md.
//
// The files are cut by job, and calls go down this list, never up; the one
// name every file reaches up for is the Reconciler of myapp_controller.go,
// which its methods hang on. myapp_controller.go (setup, Reconcile, the
// phase list); sweep.go, the orphaned-record sweep, and owner_id_claim.go,
// the claim on the owner ID that lets it run (two clusters with one owner
// ID must not sweep each other's records), runnables of their own;
// render.go, which renders a MyApp's children from it alone, for the
// BackupConfig controller's backups; the phases, children.go, and the
// deletion, delete.go, which runs the loop of the DNS phase, dns.go
// (runDNS); dns_apply.go, which makes a DNS plan's calls and shows what a
// run came to; dns_observe.go, which observes and answers what a plan
// needs; drift_list.go, the drift pass, a runnable of its own; routing.go,
// which hosts the Ingress routes; dns_text.go, the words of the DNS path;
// dns_schedule.go, the DNS phase's memory; status.go, the conditions
// derived from the scope; scope.go, what one pass knows (the scope, the
// DNS observation, the readiness the conditions follow); owner.go (the
// owner identities, built by dnsplan); defaults.go; metrics.go, the
// controller's own metrics, and cache_memory.go, the cache's transform.
// Everything the DNS phase and the deletion decide is in the dnsplan
// package, pure: it reads nothing and calls nothing, so its tests check
// every observation of a bounded space (docs/development.md, "One loop per
// phase"). How a pass begins, runs its phases, reads what they return and
// writes the status is shared with the other controllers, in
// internal/reconcile/pass.
package myapp
