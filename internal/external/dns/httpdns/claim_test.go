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

package httpdns_test

import (
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
)

// TestInstallationClaims (issue 32 item 5, T2): a claim is not there until
// written, is the last one written whoever wrote it, and a bad one is
// refused before it is sent. A service without the endpoint answers 404 to
// the write, which the claim's keeper takes as a check that failed.
func TestInstallationClaims(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	sim, url := simtest.Start(t, simulator.Options{Token: testToken})
	c := newClient(t, url).(dns.InstallationClaims)

	_, err := c.GetInstallationClaim(ctx, "prod-eu")
	g.Expect(err).To(MatchError(external.ErrNotFound))

	mine := dns.InstallationClaim{OwnerID: "prod-eu", Nonce: "aaaa1111", Cluster: "0d9c6f52-uid", Instance: "manager-0",
		CheckInterval: time.Minute}
	stored, err := c.PutInstallationClaim(ctx, mine)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stored.Nonce).To(Equal("aaaa1111"))
	g.Expect(stored.WrittenAt).NotTo(BeZero(), "the service dates it")
	got, err := c.GetInstallationClaim(ctx, "prod-eu")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(SatisfyAll(HaveField("Nonce", "aaaa1111"), HaveField("Cluster", "0d9c6f52-uid"),
		HaveField("Instance", "manager-0"), HaveField("CheckInterval", time.Minute)))

	theirs := mine
	theirs.Nonce, theirs.Cluster = "bbbb2222", "other-uid"
	_, err = c.PutInstallationClaim(ctx, theirs)
	g.Expect(err).NotTo(HaveOccurred())
	got, err = c.GetInstallationClaim(ctx, "prod-eu")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Nonce).To(Equal("bbbb2222"), "the last claim written")
	g.Expect(sim.Claims()).To(HaveLen(1))

	for _, bad := range []dns.InstallationClaim{
		{OwnerID: "Prod_EU", Nonce: "aaaa"},
		{OwnerID: "prod-eu", Nonce: ""},
		{OwnerID: "prod-eu", Nonce: "has space"},
		{OwnerID: "prod-eu", Nonce: "aaaa", Cluster: "a b"},
	} {
		_, err := c.PutInstallationClaim(ctx, bad)
		g.Expect(err).To(MatchError(external.ErrInvalid), "%+v", bad)
	}
	g.Expect(sim.RequestCount(simulator.ServiceDNS, simulator.OpPutClaim)).To(Equal(2), "bad claims are not sent")

	// A service that does not keep claims.
	_, bare := simtest.StartBehind(t, simulator.Options{Token: testToken}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if len(r.URL.Path) > len("/dns/v1/installations") && r.URL.Path[:len("/dns/v1/installations")] == "/dns/v1/installations" {
				http.Error(w, `{"error":{"code":"not_found","message":"no endpoint"}}`, http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	_, err = newClient(t, bare).(dns.InstallationClaims).PutInstallationClaim(ctx, mine)
	g.Expect(err).To(MatchError(external.ErrNotFound))
}
