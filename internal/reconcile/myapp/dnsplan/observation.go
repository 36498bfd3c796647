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

package dnsplan

import (
	"slices"
	"strings"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
)

// Record is a record as the DNS service answered a read of its name; the
// zero Record means the name holds none.
type Record struct {
	Name, Type, Value string
	TTL               int32
	Owner             string
	Active            bool
	// Unowned is set for a name that holds an address and no owner at all
	// (dns.UnmanagedOwner): written by hand, or left by a transfer made in
	// two batches whose second did not go through (finish.go).
	Unowned bool
}

// Target is what a record points at: a type and a value; zero for nothing.
type Target struct{ Type, Value string }

// App is a MyApp other than this one, as the cache or the API server shows
// it: a holder in a chain of moves, or a MyApp that wants a host.
type App struct {
	// Key is "<namespace>/<name>".
	Key  string
	UID  string
	Host string
	// Orphan is whether its deletionPolicy is Orphan: records handed to it
	// carry its orphaned identity.
	Orphan    bool
	Suspended bool
	Deleting  bool
	// Holds are the hosts its status shows it holding.
	Holds []string
}

// owner is the identity a record handed to app carries, in installation id.
func (a *App) owner(id string) string {
	ref := a.ref()
	return OwnerOf(id, ref.Namespace, ref.Name, a.UID, a.Orphan)
}

func (a *App) ref() OwnerRef {
	ns, name := cut(a.Key)
	return OwnerRef{Namespace: ns, Name: name, UID: a.UID}
}

// cut splits a "<namespace>/<name>" key.
func cut(key string) (ns, name string) {
	ns, name, _ = strings.Cut(key, "/")
	return ns, name
}

// Link is one step of the chain of holders that starts at spec.host: the
// record at Host, held by Owner, and the MyApp the cache shows under the
// name Owner names (nil when none, or another UID).
type Link struct {
	Host  string
	Owner string
	App   *App
}

// Gift is a note of a hand-over, kept in the receiver's memory: Host is a
// host another MyApp handed this one, which it may not have read as its
// own yet; For is a host this MyApp holds that Giver gave its own host
// for, first in a cycle, so this MyApp owes it that host. A note may carry
// either or both.
type Gift struct {
	Host string
	// Giver is the key of the MyApp that handed a host over.
	Giver, For string
}

// Seen is the DNS part of a status: status.dns and DNSReady's reason.
type Seen struct {
	Record *appsv1alpha1.DNSRecordStatus
	Reason string
}

// Equal reports whether two statuses say the same of the record.
func (s Seen) Equal(other Seen) bool {
	if s.Reason != other.Reason || (s.Record == nil) != (other.Record == nil) {
		return false
	}
	if s.Record == nil {
		return true
	}
	a, b := *s.Record, *other.Record
	return a.Name == b.Name && a.Type == b.Type && a.Value == b.Value && a.Owner == b.Owner && a.State == b.State &&
		a.LastObservedState == b.LastObservedState && slices.Equal(a.Previous, b.Previous) &&
		a.TakeoverDoneFor == b.TakeoverDoneFor
}

// HolderSnapshot is what about the MyApp holding a contested host decides
// whether it may have released it: any change of it brings a read.
type HolderSnapshot struct {
	Key, UID, Host string
	// Holds is the hosts its status shows held, joined.
	Holds    string
	Deleting bool
}

// Memory is what this manager remembers of the MyApp's last read; none
// after a restart, or after a pass whose call or status write failed.
type Memory struct {
	// Host is the spec.host the read was for.
	Host string
	// ReadFrom is the resourceVersion of the MyApp the reading pass started
	// from: a pass that starts from it again runs on a cache that has not
	// caught up with that pass's status write yet. Empty for a status
	// trusted after a restart, which no read of this manager left.
	ReadFrom string
	// Seen is the status the read left.
	Seen Seen
	// Next is when the record is next read; zero when no timed read is due.
	Next time.Time
	// Holder is spec.host's holder in a conflict, as the cache showed it.
	Holder *HolderSnapshot
	// Adopt is whether the MyApp asked to adopt its record at the read.
	Adopt bool
	// Polls counts the re-checks in a row of a conflict that found nothing
	// new: each waits longer (NextBackoff).
	Polls int
	// LostOwed is set while the list of this MyApp's records that a lost
	// status write calls for has not succeeded.
	LostOwed bool
}

// Ask is why a read is asked for whatever the schedule says.
type Ask uint8

// What asks for a read.
const (
	// AskResumed: the first pass after a resume.
	AskResumed Ask = 1 << iota
	// AskRequested: reconcile.myapp.dev/requested-at has a value not
	// taken yet.
	AskRequested
	// AskDrifted: the drift pass found the record changed or missing.
	AskDrifted
	// AskWoken: a MyApp holding or wanting a host this one cares about
	// changed (the event that wakes waiters).
	AskWoken
)

// Need is what a plan must have read before it can decide.
type Need uint8

// What a plan may need.
const (
	NeedNothing Need = 0
	// NeedLost: the records of this MyApp under names it does not know,
	// which only a list of its owners finds (a lost status write).
	NeedLost Need = 1 << iota
	// NeedRecords: the record at each name this MyApp knows.
	NeedRecords
	// NeedLiveSelf: whether the API server shows this MyApp as the live
	// one of its name, before adopting or replacing an earlier one's record.
	NeedLiveSelf
	// NeedWanters: the MyApps that want each host this MyApp holds besides
	// spec.host, and those that handed it a host, as the API server shows
	// them.
	NeedWanters
	// NeedChain: the next link of the chain of holders from spec.host.
	NeedChain
)

// MaxChain bounds the chain of holders a plan follows.
const MaxChain = 8

// Observation is everything a plan depends on: what the pass knows before
// it reads (the spec, the status, the Ingress, the memory) and the answers
// to what a plan needed. The myapp package fills it without deciding
// anything; every rule is in this package.
type Observation struct {
	Now  time.Time
	Self Self
	// Host is spec.host; Generation and ResourceVersion are the MyApp's.
	Host            string
	Generation      int64
	ResourceVersion string
	// Transfer is status.dnsTransfer: a transfer made in two batches that
	// this MyApp started, nil for none (finish.go).
	Transfer *Transfer
	// Orphan is whether deletionPolicy is Orphan.
	Orphan bool
	// Deleting is whether the MyApp is being deleted, since DeletingSince.
	Deleting      bool
	DeletingSince time.Time
	// Address is what the Ingress's load balancer reports (zero for none),
	// Default the configured --dns-default-target (zero for none).
	Address, Default Target
	TTL              int32
	// Status is the DNS part of the status the pass started from, and
	// ReasonGeneration the generation DNSReady was set at.
	Status           Seen
	ReasonGeneration int64
	// Routed are the hosts the Ingress routes now.
	Routed []string
	// Memory is what this manager remembers of the last read; nil for none.
	Memory *Memory
	// Asked says what asks for a read now.
	Asked Ask
	// HolderNow is the remembered holder of a contested spec.host as the
	// cache shows it now; nil when it is gone.
	HolderNow *HolderSnapshot
	// Adopt is the adoption annotation; ReplaceLeaks is set where the orphan
	// sweep runs, so a leaked record of an earlier self may be replaced.
	Adopt, ReplaceLeaks bool
	// RestoredFrom is the UID the restored-from-uid mark of a Restore names:
	// the backed-up MyApp this one was restored from ("" when none). Its
	// records of this installation, namespace and name are this MyApp's to
	// take over.
	RestoredFrom string
	// ListsDrift is set when the drift pass lists this MyApp's records
	// (an ACTIVE record then has no timed read).
	ListsDrift bool
	// Gifts are the hand-overs to this MyApp it has not settled.
	Gifts []Gift
	// Class is the DNS provider's class as measured when the operator
	// started: ClassAtomic (also the zero value: the HTTP service and RFC
	// 2136 are atomic) or ClassLastWriterWins.
	Class Class

	// Answered is the needs answered so far.
	Answered Need
	// Records are the records read, by name; a name missing was not read.
	Records map[string]Record
	// Refused are names the service refused to read as invalid (a name it
	// can hold no record at).
	Refused map[string]bool
	// Unread are names whose read failed otherwise (only a deletion reads
	// on after a failed read).
	Unread map[string]bool
	// Lost are this MyApp's records under names it did not know; LostFailed
	// is set when the list failed.
	Lost       []Record
	LostFailed bool
	// TakeoverWaits is why no earlier MyApp's record may be taken over now
	// (adopted, replaced as a leak, taken over as restored): this
	// installation is not known yet to be its owner ID's only user. ""
	// when one may.
	TakeoverWaits string
	// SelfLive is whether the API server shows this MyApp as the live one.
	SelfLive bool
	// Wanters are, for each host this MyApp holds besides spec.host, the
	// MyApps that want it as the API server shows them; Givers are the
	// MyApps that handed it a host, by key, as the API server shows them.
	Wanters map[string][]App
	Givers  map[string]App
	// Chain is the chain of holders read so far.
	Chain []Link
}

// Target is what spec.host's record must point at: the Ingress's
// load-balancer address when it has one; while it has none, what the
// record points at already, unless that is the default (an ingress
// controller clears the address when it stops, and the record must not
// flap to the default and back); the default only before any address.
func (o Observation) Target() Target {
	if o.Address != (Target{}) {
		return o.Address
	}
	if st := o.Status.Record; st != nil && o.Self.Names(st.Owner) && st.Value != "" &&
		(Target{Type: st.Type, Value: st.Value}) != o.Default {
		return Target{Type: st.Type, Value: st.Value}
	}
	return o.Default
}
