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
	"errors"
	"fmt"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// The words of the DNS path: what its events and its DNSReady messages
// say. dnsplan decides what happened; this file only says it, in words
// that do not change from one pass to the next (so the status does not
// churn) and that tell a person what to do.

// Reasons of the events about handing records over and adopting them.
const (
	// eventDNSRecordAdopted: the MyApp took over the record of an earlier
	// MyApp of its namespace and name, as its annotation asked.
	eventDNSRecordAdopted eventReason = "DNSRecordAdopted"
	// eventDNSRecordHandedOver: the MyApp gave a host it held to the MyApp
	// that wants it (a swap or a rotation of hosts).
	eventDNSRecordHandedOver eventReason = "DNSRecordHandedOver"
)

// callNote is the event of a call that succeeded: its reason, action and
// note.
func callNote(c dnsplan.Call) (reason eventReason, action, note string) {
	switch c.Why {
	case dnsplan.WhyCreate:
		return eventDNSRecordCreated, "CreateDNSRecord",
			fmt.Sprintf("Registered %s %s -> %s in the DNS service", c.Record.Type, c.Name, c.Record.Value)
	case dnsplan.WhyUpdate:
		return eventDNSRecordUpdated, "UpdateDNSRecord",
			fmt.Sprintf("Set %s %s -> %s in the DNS service, replacing a record that differed", c.Record.Type, c.Name, c.Record.Value)
	case dnsplan.WhyAdopt:
		ref, _ := dnsplan.ParseOwner(c.From)
		what := "an earlier MyApp"
		if ref.Orphaned {
			what = "an earlier MyApp deleted with deletionPolicy Orphan"
		}
		return eventDNSRecordAdopted, "AdoptDNSRecord", fmt.Sprintf(
			"Adopted DNS record %s from %s of this name (uid %s), as the annotation %s asks",
			c.Name, what, ref.UID, appsv1alpha1.AdoptDNSRecordAnnotation)
	case dnsplan.WhyRestore:
		ref, _ := dnsplan.ParseOwner(c.From)
		return eventDNSRecordAdopted, "TakeOverRestoredDNSRecord", fmt.Sprintf(
			"Took over DNS record %s from the MyApp this one was restored from (uid %s, as the annotation %s names it), "+
				"without deleting it", c.Name, ref.UID, backupv1alpha1.RestoredFromUIDAnnotation)
	case dnsplan.WhyReplaceLeak:
		ref, _ := dnsplan.ParseOwner(c.Owner)
		return eventDNSRecordDeleted, "DeleteDNSRecord",
			fmt.Sprintf("Deleted DNS record %s, left behind by an earlier MyApp of this name (uid %s) that no longer exists", c.Name, ref.UID)
	case dnsplan.WhyMark:
		return eventDNSRecordOrphaned, "MarkDNSRecord", fmt.Sprintf("Marked DNS record %s as orphaned (deletionPolicy is Orphan): "+
			"it is now owned by %q, which the orphan-record sweep never deletes; a MyApp of this name annotated %s=true can adopt it",
			c.Name, c.To, appsv1alpha1.AdoptDNSRecordAnnotation)
	case dnsplan.WhyMigrate:
		return eventDNSRecordUpdated, "MigrateDNSRecord", fmt.Sprintf("Took over DNS record %s, written before owner IDs (owner %q): "+
			"it is now owned by %q, with this installation's owner ID", c.Name, c.From, c.To)
	case dnsplan.WhyUnmark:
		return eventDNSRecordUpdated, "MarkDNSRecord",
			fmt.Sprintf("DNS record %s is owned by %q again (deletionPolicy is Delete): it is deleted with the MyApp", c.Name, c.To)
	case dnsplan.WhyFinish:
		return eventDNSRecordHandedOver, "TransferDNSRecord", fmt.Sprintf("Finished the transfer of DNS record %s "+
			"from %q to %q, which was cut between its two batches: the name kept its address throughout", c.Name, c.From, c.To)
	case dnsplan.WhyHandOver:
		return eventDNSRecordHandedOver, "TransferDNSRecord",
			fmt.Sprintf("Handed DNS record %s over to MyApp %s, which wants that host", c.Name, c.Peer.Key)
	}
	return eventDNSRecordDeleted, "DeleteDNSRecord", fmt.Sprintf("Deleted DNS record %s", c.Name)
}

// dnsMessage is DNSReady's message for a pass whose calls succeeded, by
// what it came to.
func dnsMessage(o observation, p dnsplan.Plan) string {
	st := o.app.Status.DNS
	switch {
	case p.Outcome.Kind == dnsplan.KindWaitingForAddress:
		return fmt.Sprintf("Ingress %s has no load-balancer address yet and the operator has no --dns-default-target; "+
			"the record for %s is written once either exists", o.app.Name, o.Host)
	case p.Outcome.Kind == dnsplan.KindReleased:
		return fmt.Sprintf("Deleting the DNS record for %s before the MyApp goes", o.Host)
	case p.Outcome.Kind == dnsplan.KindConflict:
		return conflictMessage(o, p)
	case st == nil:
		return "" // the status stands
	case st.State != appsv1alpha1.DNSRecordActive:
		return fmt.Sprintf("The DNS service accepted %s %s -> %s and is propagating it", st.Type, st.Name, st.Value)
	}
	return fmt.Sprintf("%s %s -> %s is active in the DNS service", st.Type, st.Name, st.Value)
}

// conflictMessage says who holds spec.host, what to do about it, what this
// MyApp keeps meanwhile and what it handed over.
func conflictMessage(o observation, p dnsplan.Plan) string {
	h := p.Outcome.Holder
	if p.Outcome.TakeoverWaits {
		return fmt.Sprintf("Host %s is registered in the DNS service by an earlier MyApp of this name (uid %s), whose "+
			"record this MyApp takes over, but not yet: %s. A takeover judges that MyApp gone in this cluster only, so "+
			"it waits until no other installation is seen using owner ID %s (docs/deploy.md: rehearsing a disaster "+
			"recovery)", o.Host, h.Ref.UID, o.TakeoverWaits, o.Self.Installation)
	}
	msg := fmt.Sprintf("Host %s is already registered in the DNS service by %s; %s", o.Host, describeHolder(h), holderAdvice(o, h))
	if p.Outcome.Holds != "" {
		msg += fmt.Sprintf("; %s stays registered and routed meanwhile", p.Outcome.Holds)
	}
	for _, c := range p.Calls {
		if c.Why == dnsplan.WhyHandOver {
			msg += fmt.Sprintf("; %s was handed over to MyApp %s, which wants it", c.Name, c.Peer.Key)
		}
	}
	return msg + classNote(p.Outcome)
}

// classNote is what a conflict's message says of a last-writer-wins DNS
// provider, where the conflict was found by reading the zone rather than
// refused by the provider: whether this MyApp's own record was overwritten,
// and what the provider cannot promise. On an atomic provider it is empty.
func classNote(out dnsplan.Outcome) string {
	if out.Class != dnsplan.ClassLastWriterWins {
		return ""
	}
	const lww = "the DNS provider is last-writer-wins, so a race between writers of one name is detected by a read " +
		"after the write, not prevented (docs/webhook.md)"
	if out.LostRace {
		return "; this MyApp's record was overwritten by that writer: " + lww
	}
	return "; " + lww
}

// describeHolder names the holder of a record. A record of a MyApp with
// deletionPolicy Orphan is written marked from the start, so a marked owner
// says the MyApp was deleted only when no MyApp of that UID is live.
func describeHolder(h dnsplan.Holder) string {
	switch h.Kind {
	case dnsplan.HolderForeign:
		return fmt.Sprintf("owner %q", h.Owner)
	case dnsplan.HolderMyApp:
		what := fmt.Sprintf("MyApp %s (uid %s), which exists", h.Ref.Key(), h.Ref.UID)
		if h.App.Orphan {
			what += " with deletionPolicy Orphan"
		}
		return what
	}
	return describeRef(h.Ref, h.Kind == dnsplan.HolderOtherInstallation)
}

// describeOwner turns an owner identity into words for a message, without
// knowing whether its MyApp lives; a record of another installation (id is
// this one's) names it.
func describeOwner(id, owner string) string {
	ref, ok := dnsplan.ParseOwner(owner)
	if !ok {
		return fmt.Sprintf("owner %q", owner)
	}
	return describeRef(ref, !ref.Legacy() && ref.Installation != id)
}

func describeRef(ref dnsplan.OwnerRef, otherInstallation bool) string {
	what := fmt.Sprintf("MyApp %s (uid %s)", ref.Key(), ref.UID)
	if otherInstallation {
		what += fmt.Sprintf(" of another installation (owner ID %s)", ref.Installation)
	}
	if ref.Orphaned {
		what += ", deleted with deletionPolicy Orphan"
	}
	if ref.Legacy() {
		what += ", written before owner IDs (installation unknown)"
	}
	return what
}

// holderAdvice is what a conflict's message tells the user to do, by who
// holds the host.
func holderAdvice(o observation, h dnsplan.Holder) string {
	switch h.Kind {
	case dnsplan.HolderFormer:
		if o.Adopt {
			return "that MyApp still exists, so the record is not adopted; delete it or choose another host"
		}
		return fmt.Sprintf("if that MyApp no longer exists (deleted with deletionPolicy Orphan, or this MyApp was "+
			"restored), annotate this MyApp with %s=true to adopt the record", appsv1alpha1.AdoptDNSRecordAnnotation)
	case dnsplan.HolderOtherInstallation:
		return "another installation sharing this DNS service holds it: choose another host, or free it in that cluster first"
	case dnsplan.HolderMyApp:
		return "choose another host, or change that MyApp's spec.host or delete that MyApp first; if it moves to a host this " +
			"MyApp holds, the two swap"
	}
	return "choose another host, or delete that MyApp or record first"
}

// deleteRejectedAdvice is the advice when a deletion's request is refused
// as invalid. The request cannot be wrong unless something between the
// operator and the service refuses it, and a deletion must not stall
// silently: it is retried with backoff, and the way out is documented.
const deleteRejectedAdvice = "the DNS service, or a proxy in front of it, rejected the request as invalid " +
	"(see the operator's log for the answer); the operator retries with backoff. To let the MyApp go and leave " +
	"the record in place, set deletionPolicy: Orphan"

// failureMessage is DNSReady's message for a failed read or call, err: what
// could not be done, why, and what happens next. A deletion under Orphan
// says it is letting go, and when it gives up marking the record, so
// nobody removes the finalizer by hand.
func failureMessage(o observation, f dnsplan.Failure, err error) string {
	advice := failureAdvice(o, f)
	if why, ok := notServed(err); ok {
		advice = "the DNS provider does not serve this host (spec.host): " + why
		if o.Deleting {
			advice += "; the record stays and the deletion waits: widen the filter again to delete it, or set " +
				"deletionPolicy: Orphan to let the MyApp go and leave the record in place"
		}
	}
	msg := fmt.Sprintf("Could not %s the DNS record for %s: %s", failureAction(o, f), o.Host, advice)
	if o.Deleting && o.Orphan {
		msg += fmt.Sprintf("; deletionPolicy is Orphan: the MyApp is let go once the record is marked orphaned, or at %s "+
			"at the latest, leaving the record unmarked", o.GiveUpAt().UTC().Format(time.RFC3339))
	}
	return msg
}

// notServed is the DNS client's own words for a name its provider does not
// serve (dns.ErrNotServed): what leaves it out, the zone or the domain
// filter, which the configuration fixes, so the words do not churn.
func notServed(err error) (string, bool) {
	var e *external.Error
	if !errors.Is(err, dns.ErrNotServed) || !errors.As(err, &e) || e.Message == "" {
		return "", false
	}
	return e.Message, true
}

// failureAction names what failed: "Could not <action> the DNS record".
func failureAction(o observation, f dnsplan.Failure) string {
	if f.Call == nil {
		switch {
		case o.Deleting && o.Orphan:
			return "mark"
		case o.Deleting:
			return "delete"
		}
		return "read"
	}
	switch f.Call.Why {
	case dnsplan.WhyCreate, dnsplan.WhyUpdate:
		return "write"
	case dnsplan.WhyAdopt:
		return "adopt"
	case dnsplan.WhyRestore:
		return "take over the restored"
	case dnsplan.WhyReplaceLeak:
		return "delete the leaked"
	case dnsplan.WhyMark, dnsplan.WhyUnmark:
		return "mark"
	case dnsplan.WhyHandOver:
		return "hand over the previous"
	case dnsplan.WhyRelease:
		return "delete the previous"
	}
	return "delete"
}

// failureAdvice says why a call failed and what happens next, in words that
// do not change from one failure to the next, so the status does not churn.
func failureAdvice(o observation, f dnsplan.Failure) string {
	switch f.Reason {
	case appsv1alpha1.DNSThrottledReason:
		return "the DNS service is rate-limiting the operator; it retries no sooner than the service asks"
	case appsv1alpha1.DNSUnauthorizedReason:
		return "the DNS service refused the operator's token; check the token configured with " +
			"--dns-token-file or --dns-token-secret"
	case appsv1alpha1.DNSZoneTooLargeReason:
		advice := "the DNS zone, which the webhook protocol reads whole, is larger than --dns-webhook-max-body-size; " +
			"raise it (and external-dns's --webhook-provider-max-body-size) or narrow the webhook server's domain " +
			"filter; the operator reads the zone again after six --dns-webhook-read-interval (a minute by default)"
		if o.Deleting && !o.Orphan {
			advice += "; to let the MyApp go without deleting the record, set spec.deletionPolicy: Orphan"
		}
		return advice
	case appsv1alpha1.DNSRequestRejectedReason:
		switch {
		case o.Deleting && o.Orphan:
			return "the DNS service, or a proxy in front of it, rejected the request as invalid (see the operator's " +
				"log for the answer); the operator retries with backoff"
		case o.Deleting:
			return deleteRejectedAdvice
		}
		return "the DNS service rejected the request as invalid; check spec.host, the operator's --dns-default-target " +
			"and the Ingress's load-balancer address (see the operator's log for the service's answer)"
	}
	return "the DNS service is unreachable or failing; the operator retries with backoff"
}
