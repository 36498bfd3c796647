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

package contract_test

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// TestValidationRules checks the rules the operator uses to catch, before any
// call, values the service would refuse. The simulator enforces the same
// functions, so its tests cover the messages a client sees in a 400.
func TestValidationRules(t *testing.T) {
	longName := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
	tests := []struct {
		name    string
		err     error
		wantErr string // empty when the value is valid
	}{
		{name: "name", err: contract.ValidateName("www.example.com")},
		{name: "name with an underscore label", err: contract.ValidateName("_acme-challenge.example.com")},
		{name: "name of the longest length", err: contract.ValidateName(longName)},
		{name: "name too long", err: contract.ValidateName(longName + "d"), wantErr: "at most 253 characters"},
		{name: "empty name", err: contract.ValidateName(""), wantErr: "must not be empty"},
		{name: "single-label name", err: contract.ValidateName("localhost"), wantErr: "not fully qualified"},
		{name: "name with a trailing dot", err: contract.ValidateName("www.example.com."), wantErr: "empty label"},
		{name: "upper-case name", err: contract.ValidateName("WWW.example.com"), wantErr: "lower-case"},
		{name: "label", err: contract.ValidateLabel("shop-1")},
		{name: "label with an underscore", err: contract.ValidateLabel("shop_1"), wantErr: `has character '_'`},
		{name: "label ending in a hyphen", err: contract.ValidateLabel("shop-"), wantErr: "hyphen"},
		{name: "label too long", err: contract.ValidateLabel(strings.Repeat("a", 64)), wantErr: "longer than 63"},
		{name: "A target", err: contract.ValidateTarget(contract.TypeA, "192.0.2.10")},
		{name: "A target with an IPv6 address", err: contract.ValidateTarget(contract.TypeA, "2001:db8::1"), wantErr: "not an IPv4 address"},
		{name: "A target with a name", err: contract.ValidateTarget(contract.TypeA, "lb.example.com"), wantErr: "not an IPv4 address"},
		{name: "CNAME target", err: contract.ValidateTarget(contract.TypeCNAME, "lb.example.com")},
		{name: "CNAME target with a bad name", err: contract.ValidateTarget(contract.TypeCNAME, "lb"), wantErr: "value of a CNAME record"},
		{name: "no type", err: contract.ValidateTarget("", "192.0.2.10"), wantErr: "type is required"},
		{name: "unsupported type", err: contract.ValidateTarget("AAAA", "2001:db8::1"), wantErr: `type "AAAA" is not supported`},
		{name: "shortest TTL", err: contract.ValidateTTL(contract.MinTTL)},
		{name: "longest TTL", err: contract.ValidateTTL(contract.MaxTTL)},
		{name: "TTL too short", err: contract.ValidateTTL(contract.MinTTL - 1), wantErr: "29 is outside 30-86400"},
		{name: "TTL too long", err: contract.ValidateTTL(contract.MaxTTL + 1), wantErr: "outside 30-86400"},
		{name: "owner", err: contract.ValidateOwner("myapp-operator/default/web/40afdd9a-45a0-4995-9b14-3acae0fb21eb")},
		{name: "owner of the longest length", err: contract.ValidateOwner(strings.Repeat("o", contract.MaxOwnerLength))},
		{name: "owner too long", err: contract.ValidateOwner(strings.Repeat("o", contract.MaxOwnerLength+1)), wantErr: "at most 253 characters"},
		{name: "empty owner", err: contract.ValidateOwner(""), wantErr: "is required"},
		{name: "no start token", err: contract.ValidateStartToken("")},
		{name: "start token", err: contract.ValidateStartToken("3f1c9a0e7b2d4c6a8e0f1a2b3c4d5e6f")},
		{name: "start token too long", err: contract.ValidateStartToken(strings.Repeat("t", contract.MaxStartTokenLength+1)),
			wantErr: "at most 64 characters"},
		{name: "start token with a slash", err: contract.ValidateStartToken("pass/1"), wantErr: "has character '/'"},
		{name: "owner with a space", err: contract.ValidateOwner("team a"), wantErr: "has character ' '"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			if tt.wantErr == "" {
				g.Expect(tt.err).NotTo(HaveOccurred())
				return
			}
			g.Expect(tt.err).To(MatchError(ContainSubstring(tt.wantErr)))
		})
	}
}
