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

package pass

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestOwnWritesKnowsACacheBehindItsOwnWrite: after a pass that started
// from a version wrote the object, a pass starting from that version again
// is behind the write; one from any other version is not, and the entry
// goes, so an object at rest holds none.
func TestOwnWritesKnowsACacheBehindItsOwnWrite(t *testing.T) {
	g := NewWithT(t)
	var w OwnWrites
	at := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: rv}}
	}
	g.Expect(w.Behind(at("10"))).To(BeFalse(), "nothing written yet")
	w.Wrote(at("10"), at("11"))
	g.Expect(w.Behind(at("10"))).To(BeTrue(), "the cache still shows the version the write started from")
	g.Expect(w.Behind(at("10"))).To(BeTrue(), "and again, until it catches up")
	other := at("10")
	other.Name = "api"
	g.Expect(w.Behind(other)).To(BeFalse(), "another object")
	g.Expect(w.Behind(at("11"))).To(BeFalse(), "the cache shows the write")
	g.Expect(w.from).To(BeEmpty(), "nothing is remembered once the cache caught up")
	g.Expect(w.Behind(at("10"))).To(BeFalse())

	w.Wrote(at("12"), at("13"))
	w.Forget(types.NamespacedName{Namespace: "shop", Name: "web"})
	g.Expect(w.Behind(at("12"))).To(BeFalse(), "an object that is gone is forgotten")
}

// TestOwnWritesKnowsACacheThatShowsAnotherWriteButNotItsOwn: someone else
// (a person's annotation, a GitOps tool's label) wrote the object between
// the writing pass's read (10) and its status write, a merge patch without
// a lock that the API server applied on top (12). The cache shows the other
// write (11) before the pass's own, and that write's event brings the
// object back at once: a pass from 11 is behind the write as much as one
// from 10, though it started from neither. It was not (issue 40's B11: a
// BackupConfig's pass that did not see the backup it had just started
// started another).
func TestOwnWritesKnowsACacheThatShowsAnotherWriteButNotItsOwn(t *testing.T) {
	g := NewWithT(t)
	var w OwnWrites
	at := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: rv}}
	}
	w.Wrote(at("10"), at("12"))
	g.Expect(w.Behind(at("11"))).To(BeTrue(), "another writer's version, older than the write")
	g.Expect(w.Behind(at("9"))).To(BeTrue(), "a version older than the one the write started from")
	g.Expect(w.Behind(at("10"))).To(BeTrue(), "the version the write started from")
	g.Expect(w.Behind(at("12"))).To(BeFalse(), "the write")
	g.Expect(w.from).To(BeEmpty())

	w.Wrote(at("98"), at("100"))
	g.Expect(w.Behind(at("99"))).To(BeTrue(), "versions compare as numbers, not as text")
	g.Expect(w.Behind(at("101"))).To(BeFalse(), "a later version, by anyone, holds the write")

	w.Wrote(at("a7"), at("b9"))
	g.Expect(w.Behind(at("a8"))).To(BeFalse(), "versions that do not compare: only the one the write started from")
	w.Wrote(at("a7"), at("b9"))
	g.Expect(w.Behind(at("a7"))).To(BeTrue())
}

// TestOwnWritesWithMaxLagGivesUpOnACacheThatNeverCatchesUp: with MaxLag,
// a write holds passes back only so long; without it, for as long as the
// cache shows the old version.
func TestOwnWritesWithMaxLagGivesUpOnACacheThatNeverCatchesUp(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)
	at := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: rv}}
	}
	bounded := OwnWrites{MaxLag: 5 * time.Second, now: func() time.Time { return now }}
	unbounded := OwnWrites{now: func() time.Time { return now }}
	bounded.Wrote(at("10"), at("11"))
	unbounded.Wrote(at("10"), at("11"))
	now = now.Add(5 * time.Second)
	g.Expect(bounded.Behind(at("10"))).To(BeTrue(), "a cache MaxLag behind the write")
	now = now.Add(time.Millisecond)
	g.Expect(bounded.Behind(at("10"))).To(BeFalse(), "a cache more than MaxLag behind is given up on")
	g.Expect(bounded.from).To(BeEmpty())
	g.Expect(unbounded.Behind(at("10"))).To(BeTrue(), "without MaxLag the write holds until the cache shows it")
}

// TestOwnWritesWriteRemembersTheVersionBeforeASucceededWrite: Write keeps
// the version obj had before the write, though the write moves obj on, and
// nothing when the write failed.
func TestOwnWritesWriteRemembersTheVersionBeforeASucceededWrite(t *testing.T) {
	g := NewWithT(t)
	var w OwnWrites
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "10"}}
	refused := errors.New("conflict")
	g.Expect(w.Write(obj, func() error { return refused })).To(MatchError(refused))
	g.Expect(w.from).To(BeEmpty(), "a failed write is not remembered")

	g.Expect(w.Write(obj, func() error { obj.ResourceVersion = "11"; return nil })).To(Succeed())
	g.Expect(w.Behind(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
		ResourceVersion: "10"}})).To(BeTrue(), "a cache still at the version the write started from")
	g.Expect(w.Behind(obj)).To(BeFalse(), "the version the write made")
}
