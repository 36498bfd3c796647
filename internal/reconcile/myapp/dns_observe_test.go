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
	"testing"

	. "github.com/onsi/gomega"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// TestTheTargetIsTheLoadBalancerAddressOrTheDefault: a record points at
// the Ingress's load-balancer address when it has one the DNS service can
// hold, in the spelling the service takes, and at --dns-default-target
// while it has none and the record points at nothing else yet.
func TestTheTargetIsTheLoadBalancerAddressOrTheDefault(t *testing.T) {
	withLB := func(lbs ...networkingv1.IngressLoadBalancerIngress) *networkingv1.Ingress {
		ing := &networkingv1.Ingress{}
		ing.Status.LoadBalancer.Ingress = lbs
		return ing
	}
	cases := []struct {
		name          string
		defaultTarget string
		ing           *networkingv1.Ingress
		wantType      string
		wantValue     string
		wantOK        bool
	}{
		{"no address and no default waits", "", withLB(), "", "", false},
		{"default IPv4 target", "192.0.2.10", withLB(), "A", "192.0.2.10", true},
		{"default host name target", "ingress.example.com", nil, "CNAME", "ingress.example.com", true},
		{"load-balancer IP wins over the default", "192.0.2.10",
			withLB(networkingv1.IngressLoadBalancerIngress{IP: "203.0.113.5"}), "A", "203.0.113.5", true},
		{"load-balancer host name", "",
			withLB(networkingv1.IngressLoadBalancerIngress{Hostname: "lb.example.net"}), "CNAME", "lb.example.net", true},
		{"load-balancer host name in another spelling is written as the service takes it", "",
			withLB(networkingv1.IngressLoadBalancerIngress{Hostname: "LB-1.Example.NET."}), "CNAME", "lb-1.example.net", true},
		{"IPv6 load-balancer address is skipped for the next one", "",
			withLB(networkingv1.IngressLoadBalancerIngress{IP: "2001:db8::1"},
				networkingv1.IngressLoadBalancerIngress{IP: "203.0.113.9"}), "A", "203.0.113.9", true},
		{"IPv4-mapped IPv6 load-balancer address is written as IPv4", "",
			withLB(networkingv1.IngressLoadBalancerIngress{IP: "::ffff:192.0.2.1"}), "A", "192.0.2.1", true},
		{"IPv4-mapped IPv6 default target is written as IPv4", "::ffff:192.0.2.10", nil, "A", "192.0.2.10", true},
		{"only IPv6 falls back to the default", "192.0.2.10",
			withLB(networkingv1.IngressLoadBalancerIngress{IP: "2001:db8::1"}), "A", "192.0.2.10", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			o := dnsplan.Observation{Address: addressOf(tc.ing), Default: targetOf(tc.defaultTarget)}
			got := o.Target()
			if tc.wantOK {
				g.Expect(got).NotTo(BeZero())
			} else {
				g.Expect(got).To(BeZero())
			}
			g.Expect(got.Type).To(Equal(tc.wantType))
			g.Expect(got.Value).To(Equal(tc.wantValue))
		})
	}
}
