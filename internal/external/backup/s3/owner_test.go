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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// TestEveryBackupAnswersTheOwnerIDItsKeyIsFiledUnder: whose backup an
// object is can be read without its content, from the key: a backup
// written before starts labelled the owner ID (no such label in its
// metadata) answers it, and a label in the metadata that names another
// owner ID gives way to the key's.
func TestEveryBackupAnswersTheOwnerIDItsKeyIsFiledUnder(t *testing.T) {
	g := NewWithT(t)
	l, err := newLayout("backups", "cluster-a")
	g.Expect(err).NotTo(HaveOccurred())
	c := &Client{bucket: "b", ownerID: "cluster-a", layout: l}
	ref, err := refFor("shop", "backupconfig/bc-1", "backupconfig/bc-1/manual/k")
	g.Expect(err).NotTo(HaveOccurred())
	for _, labels := range []map[string]string{
		nil,
		{backup.LabelNamespace: "shop"},
		{backup.LabelNamespace: "shop", backup.LabelOwnerID: "cluster-b"},
	} {
		b := c.backupOf(ref, l.key(ref), objectFacts{size: 10, app: "shop-web", storedAt: time.Unix(0, 0), labels: labels})
		g.Expect(b.Labels).To(HaveKeyWithValue(backup.LabelOwnerID, "cluster-a"), "metadata labels %v", labels)
		if labels != nil {
			g.Expect(labels).NotTo(HaveKeyWithValue(backup.LabelOwnerID, "cluster-a"), "the caller's map is not written")
		}
	}
}

// TestABackupIDNamesItsNamespace: the namespace of a backup is its ID's
// first segment, read without a call; an ID not of the layout's form names
// none.
func TestABackupIDNamesItsNamespace(t *testing.T) {
	g := NewWithT(t)
	var c backup.IDNamespacer = &Client{}
	ns, ok := c.NamespaceOfID("bank/0c9d8e7f-1a2b-4c3d-8e9f-a0b1c2d3e4f5/manual/web/1")
	g.Expect(ok).To(BeTrue())
	g.Expect(ns).To(Equal("bank"))
	for _, id := range []string{"bk-000042", "", "shop/uid", "../../etc/passwd", "Shop/uid/name"} {
		_, ok := c.NamespaceOfID(id)
		g.Expect(ok).To(BeFalse(), "ID %q", id)
	}
}
