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

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// webhookMediaType is the webhook protocol's media type, which the server
// requires in Accept.
const webhookMediaType = "application/external.dns.webhook+json;version=1"

// TestManagerWithTheWebhookProvider runs the manager binary with
// --dns-provider=webhook against external-dns's own webhook server
// (hack/external-dns-webhook) with its inmemory provider, as the sidecar of
// a deployment, and follows one MyApp's record in the server's zone, read
// with the protocol's GET /records: created with this project's owner TXT,
// moved when the host changes, gone when the MyApp is deleted.
func TestManagerWithTheWebhookProvider(t *testing.T) {
	g := NewWithT(t)
	start := time.Now()
	if _, err := controlplane.WebhookServerPath(); err != nil {
		controlplane.RequireWebhookServer(t, err)
	}
	srv, err := controlplane.StartWebhookServer(t.Context(), controlplane.WebhookOptions{Provider: controlplane.WebhookInMemory})
	controlplane.RequireWebhookServer(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the webhook server's log:\n%s", srv.Log())
		}
		_ = srv.Close()
	})

	const ownerID = "e2e-webhook"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, cp.Kubeconfig(), 0o600)).To(Succeed())
	fixtures.StartManagerProcess(t, "operator-webhook", managerBin, managerArgsWithoutDNS(kubeconfig,
		"--dns-provider=webhook", "--dns-webhook-url="+srv.URL, "--dns-webhook-zone="+srv.Zone,
		// The zone is read again at most this often: short, so that each
		// step's read-back comes within the test's patience.
		"--dns-webhook-read-interval=200ms",
		"--owner-id="+ownerID)...)

	ns := newNamespace(t)
	app := newMyApp(ns, "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	eventuallyReady(t.Context(), g, app)
	owner := fmt.Sprintf("myapp-operator/%s/%s/%s/%s", ownerID, app.Namespace, app.Name, app.UID)
	g.Eventually(func(g Gomega) {
		zone := webhookZone(g, srv.URL)
		g.Expect(zone.targets(app.Spec.Host, "A")).To(Equal([]string{"192.0.2.10"}), "the MyApp's A record")
		g.Expect(zone.targets(extdns.OwnerLabel+"."+app.Spec.Host, "TXT")).To(Equal([]string{owner}), "its owner TXT")
		// The leader's claim of its owner ID, which the orphan sweep asks.
		g.Expect(zone.targets(extdns.InstallationLabel+"."+ownerID+"."+srv.Zone, "TXT")).To(ConsistOf(HavePrefix("nonce=")),
			"the leader's claim of its owner ID")
	}, timeout, interval).Should(Succeed(), "the webhook server holds the MyApp's record and its owner, and the owner ID's claim")

	oldHost := app.Spec.Host
	g.Eventually(func() error {
		if err := k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app); err != nil {
			return err
		}
		app.Spec.Host = "moved." + ns + "." + srv.Zone
		return k8sClient.Update(t.Context(), app)
	}, timeout, interval).Should(Succeed())
	eventuallyReady(t.Context(), g, app)
	g.Eventually(func(g Gomega) {
		zone := webhookZone(g, srv.URL)
		g.Expect(zone.targets(app.Spec.Host, "A")).To(Equal([]string{"192.0.2.10"}), "the new host's A record")
		g.Expect(zone.targets(extdns.OwnerLabel+"."+app.Spec.Host, "TXT")).To(Equal([]string{owner}), "the new host's owner TXT")
		g.Expect(zone.names()).NotTo(ContainElements(oldHost, extdns.OwnerLabel+"."+oldHost), "the old host's record and owner TXT are gone")
	}, timeout, interval).Should(Succeed(), "the record moves with the host")

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app))
	}, timeout, interval).Should(BeTrue(), "the MyApp's cleanup completes")
	zone := webhookZone(g, srv.URL)
	g.Expect(zone.names()).NotTo(ContainElements(app.Spec.Host, extdns.OwnerLabel+"."+app.Spec.Host),
		"the record and its owner TXT are deleted before the finalizer goes")
	g.Expect(zone.names()).NotTo(ContainElement(HaveSuffix("."+ns+"."+srv.Zone)), "nothing of the namespace's MyApp remains")
	t.Logf("the manager served a MyApp through the webhook provider (create, move, delete) in %s; the zone ends with %d endpoints",
		time.Since(start).Round(time.Millisecond), len(zone))
}

// webhookEndpoints is a zone as GET /records returns it.
type webhookEndpoints []struct {
	DNSName    string   `json:"dnsName"`
	Targets    []string `json:"targets"`
	RecordType string   `json:"recordType"`
}

// webhookZone reads the whole zone from the webhook server at url, as any
// webhook client does.
func webhookZone(g Gomega, url string) webhookEndpoints {
	req, err := http.NewRequest(http.MethodGet, url+"/records", nil)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", webhookMediaType)
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "GET /records")
	var zone webhookEndpoints
	g.Expect(json.NewDecoder(resp.Body).Decode(&zone)).To(Succeed())
	return zone
}

// targets are the values of name's records of type rrtype, a TXT's without
// the quotes a provider may keep.
func (z webhookEndpoints) targets(name, rrtype string) []string {
	var out []string
	for _, e := range z {
		if strings.TrimSuffix(e.DNSName, ".") != name || e.RecordType != rrtype {
			continue
		}
		for _, v := range e.Targets {
			out = append(out, strings.Trim(v, `"`))
		}
	}
	slices.Sort(out)
	return out
}

// names are the zone's names, without the trailing dot.
func (z webhookEndpoints) names() []string {
	out := make([]string, 0, len(z))
	for _, e := range z {
		out = append(out, strings.TrimSuffix(e.DNSName, "."))
	}
	return out
}
