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
	"context"
	"net"
	"syscall"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// TestAWriteWithoutAnAnswerMayHaveApplied shows a pass whose create of
// spec.host failed: when no answer came, the write may have applied, so
// status.dns names the host (its state unknown) and the next pass reads
// it, even if spec.host changed meanwhile; when the service answered with
// an error, nothing was written and nothing is shown.
func TestAWriteWithoutAnAnswerMayHaveApplied(t *testing.T) {
	answered := func(kind external.Kind, status int) error {
		return &external.Error{Kind: kind, Service: dns.ServiceName, Operation: "upsert", StatusCode: status, Attempts: 1}
	}
	noAnswer := func(cause error) error {
		return &external.Error{Kind: external.KindTransient, Service: dns.ServiceName, Operation: "upsert", Err: cause, Attempts: 2}
	}
	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"a reset connection", noAnswer(syscall.ECONNRESET), true},
		{"a timeout", noAnswer(context.DeadlineExceeded), true},
		{"a success whose body could not be read", answered(external.KindTransient, 200), true},
		{"the pass's context ending", context.Canceled, true},
		{"a refused connection", noAnswer(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), false},
		{"a 500", answered(external.KindTransient, 500), false},
		{"a 503", answered(external.KindTransient, 503), false},
		{"a conflict", answered(external.KindConflict, 409), false},
		{"a rejected request", answered(external.KindInvalid, 422), false},
		{"throttling", answered(external.KindThrottled, 429), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(outcomeUnknown(tc.err)).To(Equal(tc.unknown))

			app := newMyApp("unknown", "web")
			app.UID, app.Generation = uuid.NewUUID(), 3
			r, _ := newPhaseReconciler(nil, nil, defaultTarget)
			s := &scope{app: app}
			o := r.observeDNS(t.Context(), s)
			create := dnsplan.Call{Op: dnsplan.OpUpsert, Name: app.Spec.Host, Why: dnsplan.WhyCreate,
				Record: dnsplan.Record{Name: app.Spec.Host, Type: dns.TypeA, Value: defaultTarget, Owner: recordOwner(app)}}
			_, err := r.showDNSFailure(t.Context(), s, dnsRun{o: o, p: dnsplan.Plan{Calls: []dnsplan.Call{create}}, err: tc.err})
			g.Expect(err).To(HaveOccurred())
			if tc.unknown {
				g.Expect(app.Status.DNS).To(HaveValue(And(
					HaveField("Name", app.Spec.Host), HaveField("Owner", recordOwner(app)),
					HaveField("State", appsv1alpha1.DNSRecordUnknown))), "a write that may have applied is shown, to be read next")
			} else {
				g.Expect(app.Status.DNS).To(BeNil(), "a write the service refused stored nothing")
			}
		})
	}
}

// transferFailing is a DNS service whose every Transfer fails with err,
// applied or not: the caller cannot tell.
type transferFailing struct {
	dns.Client
	err error
}

func (f transferFailing) Transfer(context.Context, string, string, string) (dns.Record, error) {
	return dns.Record{}, f.err
}

// TestAHandOverWithoutAnAnswerLeavesItsNotes makes the first hand-over of
// a swap fail: when no answer came, the transfer may have applied, so the
// receiver's note (the host it was handed and the host it owes for it) is
// kept, or a receiver holding both hosts would not know it owes one; when
// the service refused it, nothing moved and no note is kept.
func TestAHandOverWithoutAnAnswerLeavesItsNotes(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		note bool
	}{
		{"no answer", &external.Error{Kind: external.KindTransient, Service: dns.ServiceName, Operation: "transfer", Err: syscall.ECONNRESET}, true},
		{"refused", &external.Error{Kind: external.KindConflict, Service: dns.ServiceName, Operation: "transfer", StatusCode: 409}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			giver, peer := newMyApp("unknown", "a"), newMyApp("unknown", "b")
			giver.UID, peer.UID = uuid.NewUUID(), uuid.NewUUID()
			r, _ := newPhaseReconciler(nil, transferFailing{err: tc.err}, defaultTarget)
			s := &scope{app: giver, base: giver.DeepCopy()}
			o := r.observeDNS(t.Context(), s)
			peerApp := &dnsplan.App{Key: peer.Namespace + "/" + peer.Name, UID: string(peer.UID)}
			handOver := dnsplan.Call{Op: dnsplan.OpTransfer, Name: giver.Spec.Host, From: recordOwner(giver),
				To: recordOwner(peer), Why: dnsplan.WhyHandOver, Peer: peerApp, For: peer.Spec.Host, Debtor: peerApp}
			done, err := r.callDNS(t.Context(), &o, dnsplan.Plan{Calls: []dnsplan.Call{handOver}})
			g.Expect(done).To(BeZero())
			g.Expect(err).To(MatchError(tc.err))

			_, _, notes := r.dnsChecks.recall(types.NamespacedName{Namespace: peer.Namespace, Name: peer.Name}, peer.UID)
			if tc.note {
				g.Expect(notes).To(ConsistOf(dnsplan.Gift{Host: giver.Spec.Host, Giver: "unknown/a", For: peer.Spec.Host}))
			} else {
				g.Expect(notes).To(BeEmpty())
			}
		})
	}
}
