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
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/external"
	extdns "github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// ProbeResult is what the start-up probe measured.
type ProbeResult struct {
	// Class is extdns.ClassAtomic when both conditions held.
	Class extdns.Class
	// CreateRefused: a second create of the probe name failed and left the
	// first in place.
	CreateRefused bool
	// WrongDeleteRefused: a delete of a value the probe name did not hold
	// failed and left the name as it was.
	WrongDeleteRefused bool
	// ReplaceInOneBatch: one batch that deletes the probe record and its
	// owner TXT and creates them again (another TTL) left exactly the new
	// ones. Where it did not, a change is sent as two batches.
	ReplaceInOneBatch bool
	// Name is the probe name used.
	Name string
}

// Message says what the class means for a MyApp's record, for the DNS
// condition when it matters and for the log.
func (r ProbeResult) Message() string {
	switch r.Class {
	case extdns.ClassAtomic:
		if !r.ReplaceInOneBatch {
			return "the webhook DNS provider is atomic: a race for a name has one winner; it changes a record in two " +
				"batches, so a concurrent creator can take a name while it changes, which shows as a conflict"
		}
		return "the webhook DNS provider is atomic: a race for a name has one winner"
	case extdns.ClassLastWriterWins:
		return "the webhook DNS provider is last-writer-wins: a race for a name with another writer is detected by the next " +
			"read of the zone, not prevented; run one installation per zone"
	}
	return "the webhook DNS provider's class is not measured yet"
}

// probeLabel starts every probe name: a host-name label no MyApp is likely
// to want, with a random part and the time, so probes of several managers
// never meet and a probe left behind by a crash is recognised and removed.
const probeLabel = "myapp-probe-"

// probeOwnerPrefix starts the probe's owner identities.
const probeOwnerPrefix = "myapp-operator-probe/"

// probeLeftoverAge is how old a probe's records must be before another
// start removes them: far longer than a probe takes.
const probeLeftoverAge = 10 * time.Minute

// Values the probe writes: TEST-NET-1 addresses (RFC 5737), which route
// nowhere.
const (
	probeFirstValue  = "192.0.2.1"
	probeSecondValue = "192.0.2.2"
	probeWrongValue  = "192.0.2.3"
	probeTTL         = 60
	probeChangedTTL  = 120
)

// runProbe measures the provider's class on a probe name under the zone:
// a second create of the name, a delete with a wrong value and a replace in
// one batch; it removes the probe's records before it returns. Each step is
// judged by a fresh read of the zone, not by the server's answer alone: a
// refusal counts only if the zone is unchanged.
func (c *Client) runProbe(ctx context.Context) (ProbeResult, error) {
	c.removeProbeLeftovers(ctx)
	stamp := strconv.FormatInt(c.now().Unix(), 10)
	name := probeLabel + randomLabel() + "." + c.zone
	res := ProbeResult{Name: name}
	owner := func(role string) string { return probeOwnerPrefix + stamp + "/" + role }
	record := func(value, role string, ttl int64) []Endpoint {
		return []Endpoint{
			{DNSName: name, RecordType: typeA, Targets: []string{value}, RecordTTL: ttl},
			ownerEndpoint(name, owner(role), ttl),
		}
	}
	first := record(probeFirstValue, "first", probeTTL)
	defer c.removeProbe(context.WithoutCancel(ctx), name)

	// The first create must go through: without it there is nothing to
	// measure, and the provider cannot hold this operator's records.
	firstState, err := c.probeReset(ctx, name, first)
	if err != nil {
		return res, err
	}

	// A refusal counts only if the zone is unchanged after it, if the
	// server accepts a write again right after it (the reset that follows
	// each check), and if it happens in both of two rounds: a server that
	// failed once because of an outage is not mistaken for one that
	// refuses.
	res.CreateRefused, res.WrongDeleteRefused = true, true
	for range 2 {
		c.probeSend(ctx, Changes{Create: record(probeSecondValue, "second", probeTTL)})
		st, err := c.probeRead(ctx, name)
		if err != nil {
			return res, err
		}
		res.CreateRefused = res.CreateRefused && st.fingerprint() == firstState.fingerprint()
		if firstState, err = c.probeReset(ctx, name, first); err != nil {
			return res, err
		}

		accepted := c.probeSend(ctx, Changes{Delete: record(probeWrongValue, "wrong", probeTTL)})
		if st, err = c.probeRead(ctx, name); err != nil {
			return res, err
		}
		// A delete of what is not there that the server answers 2xx
		// changed nothing, but it does not make a batch fail either: a
		// compare-and-swap built on it would go ahead whatever the name
		// holds.
		res.WrongDeleteRefused = res.WrongDeleteRefused && !accepted && st.fingerprint() == firstState.fingerprint()
		if firstState, err = c.probeReset(ctx, name, first); err != nil {
			return res, err
		}
		if !res.CreateRefused && !res.WrongDeleteRefused {
			break
		}
	}

	changed := record(probeFirstValue, "first", probeChangedTTL)
	replaced := c.probeSend(ctx, Changes{Delete: firstState.written(), Create: changed})
	st, err := c.probeRead(ctx, name)
	if err != nil {
		return res, err
	}
	res.ReplaceInOneBatch = replaced && st.holder() == owner("first") && len(st.ownerTXTs) == 1 &&
		st.matches(changed[0]) && (st.records[0].RecordTTL == probeChangedTTL || st.records[0].RecordTTL == 0)

	res.Class = extdns.ClassLastWriterWins
	if res.CreateRefused && res.WrongDeleteRefused {
		res.Class = extdns.ClassAtomic
	}
	return res, nil
}

// probeSend posts one batch of the probe and reports whether the server
// accepted it. Its error says nothing the following read does not.
func (c *Client) probeSend(ctx context.Context, ch Changes) bool {
	err := c.t.send(ctx, request{op: "probe", method: http.MethodPost, route: routeRecords, body: ch}, nil)
	if err != nil {
		c.log.V(1).Info("Probe batch not accepted", "error", err.Error())
	}
	return err == nil
}

func (c *Client) probeRead(ctx context.Context, name string) (nameState, error) {
	st, _, err := c.cache.lookup(ctx, name, true)
	return st, err
}

// probeReset empties the probe name and creates want there, and returns
// what the zone then holds.
func (c *Client) probeReset(ctx context.Context, name string, want []Endpoint) (nameState, error) {
	st, err := c.probeRead(ctx, name)
	if err != nil {
		return st, err
	}
	if len(st.written()) > 0 {
		c.probeSend(ctx, Changes{Delete: st.written()})
	}
	var sendErr error
	if err := c.t.send(ctx, request{op: "probe", method: http.MethodPost, route: routeRecords, body: Changes{Create: want}}, nil); err != nil {
		sendErr = err
	}
	if st, err = c.probeRead(ctx, name); err != nil {
		return st, err
	}
	if !st.matches(want[0]) || len(st.owners) != 1 || st.owners[0] != unquote(want[1].Targets[0]) {
		if sendErr != nil {
			// The server failed the write: an outage, or a provider that
			// cannot hold these records. Which one, only a later try tells,
			// so the probe is tried again.
			return st, c.fail("probe", external.KindTransient, fmt.Sprintf("the webhook DNS provider did not create the "+
				"probe's A record and owner TXT at %s", name), sendErr)
		}
		return st, c.fail("probe", external.KindInvalid, fmt.Sprintf("the webhook DNS provider accepted the probe's A record "+
			"and owner TXT at %s but does not hold them (it holds %q): it cannot keep this operator's records", name, st.fingerprint()), nil)
	}
	return st, nil
}

// removeProbe deletes whatever is at the probe name.
func (c *Client) removeProbe(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for range 3 {
		st, err := c.probeRead(ctx, name)
		if err != nil || len(st.written()) == 0 {
			return
		}
		c.probeSend(ctx, Changes{Delete: st.written()})
	}
	c.log.Info("Could not remove the probe's records; a later start removes them", "name", name)
}

// removeProbeLeftovers deletes the records of probes that started more than
// probeLeftoverAge ago and never finished (a crash in the middle).
func (c *Client) removeProbeLeftovers(ctx context.Context) {
	var stale []string
	cutoff := c.now().Add(-probeLeftoverAge)
	err := c.cache.each(ctx, func(st *nameState, _ bool) {
		if !strings.HasPrefix(st.name, probeLabel) {
			return
		}
		for _, o := range st.owners {
			rest, ok := strings.CutPrefix(o, probeOwnerPrefix)
			stamp, _, _ := strings.Cut(rest, "/")
			if sec, err := strconv.ParseInt(stamp, 10, 64); ok && err == nil && time.Unix(sec, 0).Before(cutoff) {
				stale = append(stale, st.name)
				return
			}
		}
	})
	if err != nil {
		return
	}
	for _, name := range stale {
		c.log.Info("Removing the records of an unfinished probe", "name", name)
		c.removeProbe(ctx, name)
	}
}
