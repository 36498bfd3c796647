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

package api_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/discovery"
)

// wellKnownShortNames are short names that resources of widely installed
// platforms and add-ons own, which the test control plane does not serve.
// kubectl resolves a short name served by two resources to one of them, so
// a user typing `kubectl get bc` on OpenShift would get BuildConfigs.
var wellKnownShortNames = map[string]string{
	// OpenShift (build.openshift.io, apps.openshift.io, image.openshift.io,
	// route.openshift.io, project.openshift.io).
	"bc": "OpenShift BuildConfig", "dc": "OpenShift DeploymentConfig", "is": "OpenShift ImageStream",
	"istag": "OpenShift ImageStreamTag", "isimage": "OpenShift ImageStreamImage",
	// cert-manager.
	"cert": "cert-manager Certificate", "certs": "cert-manager Certificate", "cr": "cert-manager CertificateRequest",
	"crs": "cert-manager CertificateRequest",
	// Prometheus Operator.
	"smon": "Prometheus Operator ServiceMonitor", "pmon": "Prometheus Operator PodMonitor",
	"promrule": "Prometheus Operator PrometheusRule", "prom": "Prometheus Operator Prometheus",
	// Velero, Argo CD, Flux.
	"bsl": "Velero BackupStorageLocation", "vsl": "Velero VolumeSnapshotLocation",
	"app": "Argo CD Application", "apps": "Argo CD Application", "appproj": "Argo CD AppProject",
	"ks": "Flux Kustomization", "hr": "Flux HelmRelease", "gitrepo": "Flux GitRepository",
}

// TestShortNamesDoNotCollide checks that the short names of MyApp and
// BackupConfig are served as documented (ma for MyApp), and that none of
// them is also the short name of a built-in resource the API server serves
// or of a widely installed platform's resource.
func TestShortNamesDoNotCollide(t *testing.T) {
	g := NewWithT(t)
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	g.Expect(err).NotTo(HaveOccurred())
	_, lists, err := dc.ServerGroupsAndResources()
	g.Expect(err).NotTo(HaveOccurred())

	ours := map[string][]string{} // kind -> short names
	others := map[string]string{} // short name -> group/kind that owns it
	for _, list := range lists {
		for _, r := range list.APIResources {
			switch list.GroupVersion {
			case "apps.myapp.dev/v1alpha1", "backup.myapp.dev/v1alpha1":
				ours[r.Kind] = append(ours[r.Kind], r.ShortNames...)
			default:
				for _, s := range r.ShortNames {
					others[s] = list.GroupVersion + " " + r.Kind
				}
			}
		}
	}
	g.Expect(ours).To(HaveKeyWithValue("MyApp", []string{"ma"}), "MyApp keeps its short name ma")
	g.Expect(ours).To(HaveKeyWithValue("BackupConfig", HaveLen(1)), "BackupConfig has one short name")
	for kind, names := range ours {
		for _, s := range names {
			g.Expect(others).NotTo(HaveKey(s), "%s's short name %s is served by another resource", kind, s)
			g.Expect(wellKnownShortNames).NotTo(HaveKey(s), "%s's short name %s is taken by %s", kind, s, wellKnownShortNames[s])
		}
	}
}
