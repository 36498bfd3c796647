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
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// checkName normalises name and refuses one this client cannot manage, as
// the RFC 2136 client does.
func (c *Client) checkName(op, name string) (string, error) {
	name = normalizeName(name)
	if name == "" {
		return "", c.fail(op, external.KindInvalid, "record name is required", nil)
	}
	if err := contract.ValidateName(name); err != nil {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q: %v", name, err), nil)
	}
	if len(name) > MaxNameLength {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q: must be at most %d characters, so that its owner "+
			"record %s.<name> fits in a domain name", name, MaxNameLength, extdns.OwnerLabel), nil)
	}
	if name != c.zone && !strings.HasSuffix(name, "."+c.zone) {
		return "", c.fail(op, external.KindInvalid, fmt.Sprintf("record name %q is not in zone %s (--dns-webhook-zone); "+
			"choose a host under it", name, c.zone), extdns.ErrNotServed)
	}
	switch first, _, _ := strings.Cut(name, "."); first {
	case extdns.OwnerLabel:
		return "", c.fail(op, external.KindInvalid,
			fmt.Sprintf("record name %q: the label %s is reserved for owner records", name, extdns.OwnerLabel), nil)
	case claimLabel:
		return "", c.fail(op, external.KindInvalid,
			fmt.Sprintf("record name %q: the label %s is reserved for installation claims", name, claimLabel), nil)
	}
	return name, nil
}

// checkServed refuses a name the provider's domain filter, as negotiated,
// leaves out, or whose owner name it leaves out: a provider drops a change
// to such a name and answers 2xx, and hides it from its reads, so a write
// there would never show and a delete would read it free and leak it.
// Start has run.
func (c *Client) checkServed(op, name string) error {
	c.startMu.Lock()
	m, f := c.matcher, c.filter
	c.startMu.Unlock()
	for _, n := range []string{name, ownerName(name)} {
		if m != nil && !m.match(n) {
			return c.fail(op, external.KindInvalid, fmt.Sprintf("%s is outside the webhook server's domain filter (%s): "+
				"the provider neither writes nor shows it; choose a host the filter covers, or widen the provider's "+
				"--domain-filter, --exclude-domains or --regex-domain-filter", n, f), extdns.ErrNotServed)
		}
	}
	return nil
}

func (c *Client) checkOwner(op, owner string) error {
	if p := extdns.OwnerProblem(owner); p != "" {
		return c.fail(op, external.KindInvalid, p, nil)
	}
	return nil
}

func (c *Client) checkRecord(op string, rec extdns.Record) error {
	if p := extdns.RecordProblem(rec); p != "" {
		return c.fail(op, external.KindInvalid, p, nil)
	}
	return nil
}

// conflict is the error for a name someone else holds.
func (c *Client) conflict(op string, st nameState) error {
	holder := st.holder()
	if holder == "" && st.otherTypes {
		// The RFC 2136 client's answer for the same name.
		holder = extdns.UnmanagedOwner
		e := c.fail(op, external.KindConflict, fmt.Sprintf("%s has records of other types, written outside this operator", st.name), nil)
		e.Owner = holder
		return e
	}
	msg := fmt.Sprintf("%s is held by %q", st.name, holder)
	switch {
	case len(st.externalDNS) > 0:
		msg = fmt.Sprintf("%s is managed by external-dns (a heritage=external-dns TXT registry record claims it, %s); "+
			"this operator never writes a name external-dns owns", st.name, holder)
	case len(st.owners) > 1:
		msg = fmt.Sprintf("%s has %d owner records at %s (%s), so no one provably holds it; remove all but one by hand",
			st.name, len(st.owners), ownerName(st.name), strings.Join(st.owners, ", "))
	case holder == extdns.UnmanagedOwner:
		msg = fmt.Sprintf("%s has records without an owner record at %s, written outside this operator", st.name, ownerName(st.name))
	}
	e := c.fail(op, external.KindConflict, msg, nil)
	e.Owner = holder
	return e
}

func (c *Client) fail(op string, kind external.Kind, msg string, err error) *external.Error {
	return c.t.fail(op, kind, 0, msg, err)
}

func (c *Client) observe(op string, start time.Time, err *error) {
	observe(op, time.Since(start), *err)
}

// String names the server and zone, for logs.
func (c *Client) String() string {
	return "webhook " + c.t.base.Redacted() + " zone " + c.zone
}

// nameLocks serialises writes to one name within the process, so that the
// installation's own writers never race each other, whatever the provider.
type nameLocks struct {
	mu sync.Mutex
	m  map[string]*nameLock
}

type nameLock struct {
	sync.Mutex
	refs int
}

// lock locks name and returns its unlock.
func (l *nameLocks) lock(name string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*nameLock{}
	}
	nl := l.m[name]
	if nl == nil {
		nl = &nameLock{}
		l.m[name] = nl
	}
	nl.refs++
	l.mu.Unlock()
	nl.Lock()
	return func() {
		nl.Unlock()
		l.mu.Lock()
		if nl.refs--; nl.refs == 0 {
			delete(l.m, name)
		}
		l.mu.Unlock()
	}
}

// randomLabel is a short random hex label.
func randomLabel() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
