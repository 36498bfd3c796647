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

package s3

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The layout's promises, checked over generated inputs: owners as UIDs,
// namespaces, and idempotency keys as raw printable strings. No property
// uses the layout's own functions to say what the answer should be: each
// compares with the input it was given, or with a plain fact about strings.

const propertyCases = 5000

// printable is every character the backup service allows in a key.
const printable = "!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

// randomString is 1 to maxLen characters of alphabet.
func randomString(r *rand.Rand, alphabet string, maxLen int) string {
	n := 1 + r.IntN(maxLen)
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// randomLabel is a DNS label: a namespace or a UID. Short ones, from a
// small alphabet, so that one is often a prefix of another ("a" and "ab").
func randomLabel(r *rand.Rand) string {
	s := randomString(r, "ab1", 4)
	return s
}

// randomRest is an idempotency key's part after the owner: segments of
// printable characters without '/', joined by '/', never empty.
func randomRest(r *rand.Rand) string {
	segs := make([]string, 1+r.IntN(4))
	for i := range segs {
		segs[i] = randomString(r, strings.ReplaceAll(printable, "/", ""), 8)
		if r.IntN(8) == 0 {
			segs[i] = []string{".", "..", ".json.gz", "%2F", "%"}[r.IntN(5)]
		}
	}
	return strings.Join(segs, "/")
}

func mustLayout(t *testing.T, prefix, ownerID string) layout {
	t.Helper()
	l, err := newLayout(prefix, ownerID)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLayoutGivesBackTheKeyItWasGiven: a backup's ID and its object key
// give back exactly the owner and idempotency key it was started with, so
// a list (which sees only keys) reports every backup under the key that
// started it.
func TestLayoutGivesBackTheKeyItWasGiven(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 33))
	l := mustLayout(t, "backups/prod", "cluster-a")
	for range propertyCases {
		ns, uid, rest := randomLabel(r), randomLabel(r), randomRest(r)
		owner := "backupconfig/" + uid
		key := owner + "/" + rest
		ref, err := refFor(ns, owner, key)
		if err != nil {
			t.Fatalf("refFor(%q, %q, %q): %v", ns, owner, key, err)
		}
		fromKey, ok := l.parseKey(l.key(ref))
		if !ok {
			t.Fatalf("the object key %q of idempotency key %q does not read back", l.key(ref), key)
		}
		fromID, err := parseID(ref.id())
		if err != nil {
			t.Fatalf("the ID %q of idempotency key %q does not read back: %v", ref.id(), key, err)
		}
		for _, got := range []objectRef{fromKey, fromID} {
			if got.idempotencyKey() != key || got.owner() != owner || got.namespace != ns {
				t.Fatalf("idempotency key %q in %s came back as %q of %q in %s", key, ns, got.idempotencyKey(), got.owner(), got.namespace)
			}
		}
	}
}

// TestLayoutKeepsEveryObjectInItsOwnersFolder: the object of a backup lies
// under its owner's prefix in its namespace, and under no other owner's or
// namespace's prefix, and every segment of its key is a plain name (not
// empty, not "." or ".."), so neither S3 nor a file system behind it can
// place it anywhere else. That is what lets List and Delete work by prefix
// and exact key without ever touching another owner's objects.
func TestLayoutKeepsEveryObjectInItsOwnersFolder(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 33))
	l := mustLayout(t, "", "cluster-a")
	other := mustLayout(t, "", "cluster-ab")
	for range propertyCases {
		ns, uid, rest := randomLabel(r), randomLabel(r), randomRest(r)
		owner := "backupconfig/" + uid
		ref, err := refFor(ns, owner, owner+"/"+rest)
		if err != nil {
			t.Fatal(err)
		}
		key := l.key(ref)
		if !strings.HasPrefix(key, "cluster-a/"+ns+"/"+uid+"/") {
			t.Fatalf("object %q of owner %s in %s is not under cluster-a/%s/%s/", key, uid, ns, ns, uid)
		}
		otherNS, otherUID := randomLabel(r), randomLabel(r)
		if (otherNS != ns || otherUID != uid) && strings.HasPrefix(key, l.ownerPrefix(otherNS, otherUID)) {
			t.Fatalf("object %q of owner %s in %s lies under the prefix of owner %s in %s", key, uid, ns, otherUID, otherNS)
		}
		if strings.HasPrefix(key, other.installationPrefix()) {
			t.Fatalf("object %q of installation cluster-a lies under installation cluster-ab's prefix", key)
		}
		segs := strings.Split(key, "/")
		for _, seg := range segs {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("object %q (idempotency key rest %q) has a segment %q", key, rest, seg)
			}
		}
		if strings.Count(key, ".") != strings.Count(".json.gz", ".") {
			t.Fatalf("object %q (rest %q) has a '.' besides its suffix, so a folder could end in .json.gz", key, rest)
		}
	}
}

// TestLayoutMapsDistinctKeysToDistinctObjects: two different idempotency
// keys never share an object, or a start would answer with another
// backup.
func TestLayoutMapsDistinctKeysToDistinctObjects(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 33))
	l := mustLayout(t, "p", "c")
	seen := map[string]string{}
	for range propertyCases {
		uid := randomLabel(r)
		owner := "backupconfig/" + uid
		key := owner + "/" + randomString(r, printable, 3)
		if strings.Contains(key[len(owner)+1:], "//") || strings.HasSuffix(key, "/") || key[len(owner)+1] == '/' {
			continue
		}
		ref, err := refFor("ns", owner, key)
		if err != nil {
			t.Fatalf("refFor(%q): %v", key, err)
		}
		obj := l.key(ref)
		if prev, ok := seen[obj]; ok && prev != key {
			t.Fatalf("idempotency keys %q and %q share object %q", prev, key, obj)
		}
		seen[obj] = key
	}
}

// TestParseIDStaysInsideTheInstallation: whatever ID a caller hands Get,
// Content or Delete, the object it names is under the installation's
// prefix, in a folder of the ID's own owner, with no path steps: an ID
// cannot be made to reach another installation's objects.
func TestParseIDStaysInsideTheInstallation(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 33))
	l := mustLayout(t, "p", "c")
	accepted := 0
	for range propertyCases * 4 {
		id := randomString(r, "ab1/.%2F-_", 14)
		ref, err := parseID(id)
		if err != nil {
			continue
		}
		accepted++
		key := l.key(ref)
		if !strings.HasPrefix(key, "p/c/") {
			t.Fatalf("ID %q names object %q outside the installation", id, key)
		}
		for seg := range strings.SplitSeq(strings.TrimSuffix(key, objectSuffix), "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("ID %q names object %q with a segment %q", id, key, seg)
			}
		}
		if ref.id() != id {
			t.Fatalf("ID %q reads back as %q: an object has one ID", id, ref.id())
		}
	}
	if accepted == 0 {
		t.Fatal("the generator never made an ID parseID accepts; the property checked nothing")
	}
}

func TestLayoutRefusesWhatItCannotFile(t *testing.T) {
	for _, tc := range []struct{ ns, owner, key, want string }{
		{"shop", "backupconfig/u1", "other/u1/x", "must begin with its owner"},
		{"shop", "backupconfig/u1", "backupconfig/u1/", "nothing follows the owner"},
		{"shop", "backupconfig/u1", "backupconfig/u1/a//b", "empty segment"},
		{"shop", "team/prod", "team/prod/x", "not of a BackupConfig"},
		{"Shop", "backupconfig/u1", "backupconfig/u1/x", `namespace "Shop"`},
		{"shop", "backupconfig/U_1", "backupconfig/U_1/x", `owner UID "U_1"`},
	} {
		if _, err := refFor(tc.ns, tc.owner, tc.key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("refFor(%q, %q, %q) = %v, want an error containing %q", tc.ns, tc.owner, tc.key, err, tc.want)
		}
	}
	for _, tc := range []struct{ prefix, ownerID, want string }{
		{"a/../b", "c", "path step"},
		{"a b", "c", "character ' '"},
		{"", "Cluster", "owner ID"},
		{"", "a/b", "owner ID"},
	} {
		if _, err := newLayout(tc.prefix, tc.ownerID); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("newLayout(%q, %q) = %v, want an error containing %q", tc.prefix, tc.ownerID, err, tc.want)
		}
	}
}

func TestLayoutExample(t *testing.T) {
	l := mustLayout(t, "/backups/", "cluster-a")
	ref, err := refFor("shop", "backupconfig/0c9d", "backupconfig/0c9d/schedule/6f1c/20260101T0000Z")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.key(ref), "backups/cluster-a/shop/0c9d/schedule/6f1c/20260101T0000Z.json.gz"; got != want {
		t.Errorf("key = %q, want %q", got, want)
	}
	if got, want := ref.id(), "shop/0c9d/schedule/6f1c/20260101T0000Z"; got != want {
		t.Errorf("id = %q, want %q", got, want)
	}
	ref, err = refFor("shop", "backupconfig/0c9d", "backupconfig/0c9d/manual key.v2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ref.id(), "shop/0c9d/manual%20key%2Ev2"; got != want {
		t.Errorf("id = %q, want %q", got, want)
	}
}
