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

import "maps"

// Transfer is a transfer made in two batches that this MyApp started
// (status.dnsTransfer): the record at Name, from owner From to owner To.
// The myapp package records it before the first batch, so a transfer cut
// between its batches, by a failure or a restart, is still known.
type Transfer struct {
	Name, From, To string
}

// finishing is the call that finishes a transfer this MyApp started in two
// batches and that was cut between them: the status names it, and the name
// reads with its address and no owner, the state the first batch leaves.
// Only that transfer takes such a name (every other writer reads a
// conflict), so no third writer can have had it meanwhile, and it is
// finished toward its receiver whatever the plan would decide now: the
// giver may since have gone, changed its policy or its host. The plan then
// decides from the name as the receiver's (see). nil when there is nothing
// to finish: no transfer recorded, its name not read yet, or read
// otherwise (never begun, done, or taken since), and the status then lets
// it go (TransferSettled).
func (o Observation) finishing() *Call {
	t, read, cut := o.recordedTransfer()
	if !read || !cut {
		return nil
	}
	return &Call{Op: OpTransfer, Name: t.Name, From: t.From, To: t.To, Why: WhyFinish}
}

// recordedTransfer is the transfer the status records (nil for none),
// whether its name was read, and whether it reads as the transfer's first
// batch leaves it: an address and no owner.
func (o Observation) recordedTransfer() (t *Transfer, read, cut bool) {
	if t = o.Transfer; t == nil {
		return nil, false, false
	}
	r, read := o.Records[t.Name]
	return t, read, read && r.Unowned
}

// givingCut reports whether h is the name of a transfer from this MyApp
// that was cut between its batches: it holds h until the finishing call
// succeeds (the view reads h as the receiver's already), so a pass whose
// finishing call fails keeps h in its status, and the status change the
// finished transfer makes wakes the receiver.
func (v *view) givingCut(h string) bool {
	return v.finishing != nil && v.finishing.Name == h && v.Self.Owns(v.finishing.From)
}

// afterFinishing is records with the finished transfer's name read as its
// receiver's.
func afterFinishing(records map[string]Record, c *Call) map[string]Record {
	out := maps.Clone(records)
	r := out[c.Name]
	r.Owner, r.Unowned = c.To, false
	out[c.Name] = r
	return out
}

// TransferSettled reports whether the recorded transfer (status.dnsTransfer)
// needs no finishing any more: its name was read, and not in the state its
// first batch leaves. A transfer made in this pass is settled by its own
// answer instead (the myapp package clears it when the call succeeds).
func (o Observation) TransferSettled() bool {
	_, read, cut := o.recordedTransfer()
	return read && !cut
}
