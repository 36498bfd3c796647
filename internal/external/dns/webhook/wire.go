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

package webhook

import (
	"regexp"
	"strings"
)

// The wire types below are the JSON forms of external-dns's endpoint.Endpoint,
// plan.Changes and endpoint.DomainFilter, written from its OpenAPI file
// (api/webhook.yaml) and checked against v0.23.0's Go types. They are
// written here rather than imported because sigs.k8s.io/external-dns needs
// a newer Go than this module builds with, and because the protocol is the
// JSON, not the Go types: fields this client does not know are ignored on
// reading and kept when an endpoint read from the server is sent back.

// MediaType is the protocol's media type and version. Every request says it
// accepts it, every body sent has it, and the negotiation's answer must have
// it, as external-dns's own client requires.
const MediaType = "application/external.dns.webhook+json;version=1"

// Endpoint is one record set as the protocol carries it: a name, a type and
// its values (targets).
type Endpoint struct {
	DNSName          string             `json:"dnsName,omitempty"`
	Targets          []string           `json:"targets,omitempty"`
	RecordType       string             `json:"recordType,omitempty"`
	SetIdentifier    string             `json:"setIdentifier,omitempty"`
	RecordTTL        int64              `json:"recordTTL,omitempty"`
	Labels           map[string]string  `json:"labels,omitempty"`
	ProviderSpecific []ProviderProperty `json:"providerSpecific,omitempty"`
}

// ProviderProperty is one provider-specific setting of an endpoint, such as
// Cloudflare's proxied flag.
type ProviderProperty struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}

// Changes is one POST /records batch. This client fills Create and Delete,
// and UpdateOld/UpdateNew only for a change of value on a provider that
// cannot replace a record set in one batch: UpdateNew is unconditional on
// some providers (external-dns's aws provider sends it as a Route 53
// UPSERT), so it is never the compare-and-swap where one exists.
type Changes struct {
	Create    []Endpoint `json:"create,omitempty"`
	UpdateOld []Endpoint `json:"updateOld,omitempty"`
	UpdateNew []Endpoint `json:"updateNew,omitempty"`
	Delete    []Endpoint `json:"delete,omitempty"`
}

// ownedRecordLabel is the label external-dns's TXT registry puts on an
// ownership TXT to name the record it belongs to. External-dns's aws
// provider keeps changes with the same owned record in one Route 53 batch,
// also when it splits a failed batch to retry it piece by piece, so the
// owner TXT carries it too: a record and its owner TXT are never sent to
// Route 53 apart.
const ownedRecordLabel = "ownedRecord"

// DomainFilter is the negotiation's answer: the names the provider serves.
// external-dns v0.14 and later send include/exclude (or the regex pair);
// the OpenAPI file's example and older servers send filters.
type DomainFilter struct {
	Include      []string `json:"include,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	RegexInclude string   `json:"regexInclude,omitempty"`
	RegexExclude string   `json:"regexExclude,omitempty"`
	Filters      []string `json:"filters,omitempty"`
}

// matcher is a DomainFilter ready to match names, with external-dns's rules
// (endpoint/domain_filter.go): the regular expressions win over the lists;
// an empty include list matches every name; an exclude list removes names.
type matcher struct {
	include, exclude               []string
	regexInclude, regexExclude     *regexp.Regexp
	regexConfigured, anyConfigured bool
}

func (f DomainFilter) matcher() (*matcher, error) {
	m := &matcher{include: normalizeFilters(append(append([]string(nil), f.Include...), f.Filters...)), exclude: normalizeFilters(f.Exclude)}
	var err error
	if f.RegexInclude != "" {
		if m.regexInclude, err = regexp.Compile(f.RegexInclude); err != nil {
			return nil, err
		}
	}
	if f.RegexExclude != "" {
		if m.regexExclude, err = regexp.Compile(f.RegexExclude); err != nil {
			return nil, err
		}
	}
	m.regexConfigured = m.regexInclude != nil || m.regexExclude != nil
	m.anyConfigured = m.regexConfigured || len(m.include) > 0 || len(m.exclude) > 0
	return m, nil
}

func normalizeFilters(in []string) []string {
	var out []string
	for _, f := range in {
		if f = normalizeName(strings.TrimSpace(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// match reports whether the provider serves name.
func (m *matcher) match(name string) bool {
	name = normalizeName(name)
	if m.regexConfigured {
		if m.regexExclude != nil && m.regexExclude.MatchString(name) {
			return false
		}
		return m.regexInclude == nil || m.regexInclude.MatchString(name)
	}
	return matchList(m.include, name, true) && !matchList(m.exclude, name, false)
}

func matchList(filters []string, name string, empty bool) bool {
	if len(filters) == 0 {
		return empty
	}
	for _, f := range filters {
		switch {
		case strings.HasPrefix(f, ".") && strings.HasSuffix(name, f):
			return true
		case name == f:
			return true
		case strings.HasSuffix(name, "."+f):
			return true
		}
	}
	return false
}

// String describes the filter for an error message.
func (f DomainFilter) String() string {
	var parts []string
	if inc := append(append([]string(nil), f.Include...), f.Filters...); len(inc) > 0 {
		parts = append(parts, "include "+strings.Join(inc, ","))
	}
	if len(f.Exclude) > 0 {
		parts = append(parts, "exclude "+strings.Join(f.Exclude, ","))
	}
	if f.RegexInclude != "" {
		parts = append(parts, "regexInclude "+f.RegexInclude)
	}
	if f.RegexExclude != "" {
		parts = append(parts, "regexExclude "+f.RegexExclude)
	}
	if len(parts) == 0 {
		return "every name"
	}
	return strings.Join(parts, "; ")
}

// normalizeName is a name as this client compares it: lower case, without
// a trailing dot.
func normalizeName(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, "."))
}
