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

package restoreplan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
)

// The storage source's choice, checked over every list of up to three
// candidates built from raw states: what the backup service shows of a
// backup without its content (an owner ID label, or none; a namespace
// label, or none), and what its content holds when read. The promises are
// docs/spec/restore.md's words ("Choosing the backup", storage), not the
// planner's code.

const sourceApp = "web"

// rawCandidate is a backup as the world holds it: what the service shows
// of it without its content, and what reading its content gives.
type rawCandidate struct {
	id string
	// labelOwner and labelNamespace are its backup.myapp.dev/owner-id and
	// backup.myapp.dev/namespace labels, "" for none.
	labelOwner, labelNamespace string
	content                    ContentRead
}

// contentStates are what a candidate's content may hold: a backup of the
// MyApp by this installation or another, a backup of another MyApp, and
// content that cannot be read.
func contentStates() []ContentRead {
	return []ContentRead{
		{OwnerID: ownOwnerID, Namespace: ownNamespace, Name: sourceApp},
		{OwnerID: otherOwnerID, Namespace: ownNamespace, Name: sourceApp},
		{OwnerID: ownOwnerID, Namespace: ownNamespace, Name: "api"},
		{Problem: backupv1alpha1.BackupHasNoContentReason},
		{Problem: backupv1alpha1.UnsupportedBackupFormatReason},
	}
}

// rawCandidateStates are every raw state of one candidate.
func rawCandidateStates() []rawCandidate {
	owners, namespaces, contents := []string{"", ownOwnerID, otherOwnerID}, []string{"", ownNamespace}, contentStates()
	out := make([]rawCandidate, 0, len(owners)*len(namespaces)*len(contents))
	for _, owner := range owners {
		for _, ns := range namespaces {
			for _, c := range contents {
				out = append(out, rawCandidate{labelOwner: owner, labelNamespace: ns, content: c})
			}
		}
	}
	return out
}

// eachCandidateList calls f with every list of up to maxLen candidates,
// newest first, each with an ID of its place.
func eachCandidateList(maxLen int, f func([]rawCandidate)) {
	states := rawCandidateStates()
	var grow func(list []rawCandidate)
	grow = func(list []rawCandidate) {
		f(list)
		if len(list) == maxLen {
			return
		}
		for _, st := range states {
			st.id = fmt.Sprintf("c%d", len(list))
			grow(append(slices.Clip(list), st))
		}
	}
	grow(nil)
}

// readable says the content can be restored.
func (c rawCandidate) readable() bool { return c.content.Problem == "" }

// shownOwn says the spec's words show the candidate to be a backup of the
// MyApp this installation took: its content says so, or, its content
// unreadable, what the service shows without the content (the owner ID and
// the namespace) says so. An owner ID label of another installation is
// believed without a read.
func (c rawCandidate) shownOwn() bool {
	if c.labelOwner == otherOwnerID {
		return false
	}
	if c.readable() {
		return c.content.OwnerID == ownOwnerID && c.content.Namespace == ownNamespace && c.content.Name == sourceApp
	}
	return c.labelOwner == ownOwnerID && c.labelNamespace == ownNamespace
}

// shownForeign says the candidate is a backup of the MyApp another
// installation took, by its owner ID label or its content.
func (c rawCandidate) shownForeign() bool {
	return c.labelOwner == otherOwnerID ||
		c.readable() && c.content.OwnerID != ownOwnerID && c.content.Namespace == ownNamespace && c.content.Name == sourceApp
}

// unchecked says whose backup the candidate is cannot be told: its content
// cannot be read, and the service does not show it is this installation's
// of this namespace, nor another's.
func (c rawCandidate) unchecked() bool {
	return !c.readable() && c.labelOwner != otherOwnerID && !c.shownOwn()
}

// storageRun is what the passes of a storage Restore did over a list: the
// plan that decided, and the candidates whose content they read.
type storageRun struct {
	plan  Plan
	reads []string
}

// runStorage plans over the list as the restore package does: each
// candidate's content is read when the plan asks for it, and nothing else.
func runStorage(list []rawCandidate) storageRun {
	src := &SourceRead{Storage: true, Namespace: ownNamespace}
	for _, c := range list {
		src.Candidates = append(src.Candidates, Candidate{ID: c.id, OwnerID: c.labelOwner, Namespace: c.labelNamespace})
	}
	o := Observation{RestoreUID: thisRestore, OwnerID: ownOwnerID, Namespace: ownNamespace, SourceApp: sourceApp,
		Policy: backupv1alpha1.ExistingAppFail, Source: src}
	var run storageRun
	for range len(list) + 2 {
		run.plan = Make(o)
		if run.plan.Need != NeedCandidate {
			return run
		}
		i := slices.IndexFunc(list, func(c rawCandidate) bool { return c.id == run.plan.Candidate })
		if i < 0 || src.Candidates[i].Content != nil {
			panic(fmt.Sprintf("the plan asked to read %q, not an unread candidate", run.plan.Candidate))
		}
		content := list[i].content
		src.Candidates[i].Content = &content
		run.reads = append(run.reads, run.plan.Candidate)
	}
	panic("the plan did not end")
}

// chosenIndex is the place of the candidate the plan chose, -1 for none.
func chosenIndex(list []rawCandidate, p Plan) int {
	if !p.Pin {
		return -1
	}
	return slices.IndexFunc(list, func(c rawCandidate) bool { return c.id == p.Candidate })
}

// newerThanChoice are the candidates newer than the chosen one: all of them
// when none was chosen.
func newerThanChoice(list []rawCandidate, p Plan) []rawCandidate {
	if i := chosenIndex(list, p); i >= 0 {
		return list[:i]
	}
	return list
}

type storagePromise struct {
	rule   string
	broken func(list []rawCandidate, run storageRun) bool
}

var storagePromises = []storagePromise{
	{"the storage source chooses only a backup shown to be this installation's, of the MyApp", func(list []rawCandidate, run storageRun) bool {
		i := chosenIndex(list, run.plan)
		return i >= 0 && !list[i].shownOwn()
	}},
	{"a candidate whose owner cannot be checked is passed over, never chosen", func(list []rawCandidate, run storageRun) bool {
		i := chosenIndex(list, run.plan)
		return i >= 0 && list[i].unchecked()
	}},
	{"the newest backup shown to be this installation's is chosen", func(list []rawCandidate, run storageRun) bool {
		want := slices.IndexFunc(list, rawCandidate.shownOwn)
		return chosenIndex(list, run.plan) != want
	}},
	{"with none shown to be this installation's, the Restore fails with NoBackupFound, pinning nothing", func(list []rawCandidate, run storageRun) bool {
		if slices.ContainsFunc(list, rawCandidate.shownOwn) {
			return false
		}
		return run.plan.Pin || run.plan.Action != ActFail || run.plan.Show.Reason != backupv1alpha1.NoBackupFoundReason
	}},
	{"the candidates passed over because their owner cannot be checked are named, newest first", func(list []rawCandidate, run storageRun) bool {
		var want []string
		for _, c := range newerThanChoice(list, run.plan) {
			if c.unchecked() {
				want = append(want, c.id)
			}
		}
		return !slices.Equal(run.plan.Unchecked, want)
	}},
	{"the candidates passed over as other installations' are counted", func(list []rawCandidate, run storageRun) bool {
		want := 0
		for _, c := range newerThanChoice(list, run.plan) {
			if c.shownForeign() {
				want++
			}
		}
		return run.plan.Foreign != want
	}},
	{"a candidate the service shows as another installation's is never read", func(list []rawCandidate, run storageRun) bool {
		return slices.ContainsFunc(list, func(c rawCandidate) bool {
			return c.labelOwner == otherOwnerID && slices.Contains(run.reads, c.id)
		})
	}},
	{"nothing older than the chosen candidate is read", func(list []rawCandidate, run storageRun) bool {
		i := chosenIndex(list, run.plan)
		return i >= 0 && slices.ContainsFunc(list[i+1:], func(c rawCandidate) bool { return slices.Contains(run.reads, c.id) })
	}},
	{"a choice is pinned, and a chosen candidate's unreadable content fails the Restore naming it", func(list []rawCandidate, run storageRun) bool {
		i := chosenIndex(list, run.plan)
		if i < 0 {
			return false
		}
		if list[i].readable() {
			return run.plan.Action != ActPin
		}
		return run.plan.Action != ActFail || run.plan.Show.Reason != list[i].content.Problem
	}},
}

// TestTheStorageSourceChoosesOnlyWhatItCanCheck: over every list of up to
// three candidates, the storage source chooses the newest backup it can
// show this installation took, passes over and names those whose owner it
// cannot check, and reads no more than it must.
func TestTheStorageSourceChoosesOnlyWhatItCanCheck(t *testing.T) {
	checked := 0
	failures := map[string]int{}
	eachCandidateList(3, func(list []rawCandidate) {
		checked++
		run := runStorage(list)
		for _, p := range storagePromises {
			if !p.broken(list, run) {
				continue
			}
			if failures[p.rule] < 3 {
				t.Errorf("%s\ncandidates, newest first: %s\nreads: %v\nplan: %+v", p.rule, describeCandidates(list), run.reads, run.plan)
			}
			failures[p.rule]++
		}
	})
	t.Logf("%d lists of candidates checked against %d promises", checked, len(storagePromises))
	for rule, n := range failures {
		t.Logf("%d lists break %q", n, rule)
	}
}

func describeCandidates(list []rawCandidate) string {
	parts := make([]string, 0, len(list))
	for _, c := range list {
		parts = append(parts, fmt.Sprintf("%s{owner label %q, namespace label %q, content %+v}", c.id, c.labelOwner,
			c.labelNamespace, c.content))
	}
	return strings.Join(parts, ", ")
}
