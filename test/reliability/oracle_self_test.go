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

package reliability

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
)

// TestOracleCountsEachKindOfProblem plants one problem of each kind, with no
// manager running, and expects the oracle to count each exactly: an oracle
// that cannot fail would make every family pass.
func TestOracleCountsEachKindOfProblem(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	s := newScenario(t)
	cfg := external.Config{BaseURL: s.url, Token: external.StaticTokenSource(simToken)}
	dnsClient, err := dns.New(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	backups, err := backup.New(cfg)
	g.Expect(err).NotTo(HaveOccurred())

	// A live MyApp nobody reconciles (not Ready) that owns two records: its
	// host's and a second one (a duplicate).
	live := s.newMyApp("live")
	s.create(live)
	for _, name := range []string{live.Spec.Host, "other." + s.ns + ".example.com"} {
		_, err := dnsClient.Upsert(ctx, dns.Record{Name: name, Type: dns.TypeA, Value: defaultTarget, TTL: 60, Owner: recordOwner(live)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	// A record of a MyApp that is gone (a leak).
	_, err = dnsClient.Upsert(ctx, dns.Record{Name: "ghost." + s.ns + ".example.com", Type: dns.TypeA, Value: defaultTarget,
		TTL: 60, Owner: "myapp-operator/" + ownerID + "/" + s.ns + "/ghost/0000"})
	g.Expect(err).NotTo(HaveOccurred())

	// A MyApp stuck deleting on a final-backup hold that no BackupConfig
	// accounts for: stuck, and an orphaned hold.
	stuck := s.newMyApp("stuck")
	stuck.Finalizers = []string{backupv1alpha1.FinalBackupFinalizer}
	s.create(stuck)
	s.remove(stuck)

	// A BackupConfig of the live MyApp that nobody reconciles: its status
	// has not observed its generation, it is not Ready, and the MyApp's
	// generation has no backup.
	s.create(s.newBackupConfig("bc", "live", backupv1alpha1.DeletionPolicyDelete))

	// A backup of a BackupConfig that is gone (a leak), and two live final
	// backups of one MyApp under a retained owner (a duplicate, no leak).
	start := func(owner, key string) {
		_, err := backups.Start(ctx, backup.StartRequest{App: "app", Owner: owner, IdempotencyKey: key})
		g.Expect(err).NotTo(HaveOccurred())
	}
	start("backupconfig/gone", "backupconfig/gone/change/0000/1")
	s.oracle.retain("kept")
	start("backupconfig/kept", "backupconfig/kept/final/0000/1")
	start("backupconfig/kept", "backupconfig/kept/final/0000/2")

	// Records become ACTIVE after the propagation delay.
	time.Sleep(time.Second)
	r, err := s.oracle.check(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Problems).To(HaveLen(10), "%v", r.Problems)
	g.Expect(r).To(And(
		HaveField("LeakedRecords", 1), HaveField("LeakedBackups", 1), HaveField("OrphanedHolds", 1),
		HaveField("DuplicateRecords", 1), HaveField("DuplicateBackups", 1), HaveField("Stuck", 1),
		HaveField("NotReady", 1), HaveField("MissingRecords", 0), HaveField("StatusMismatches", 2),
		HaveField("MissedBackups", 1),
	), "%v", r.Problems)
	g.Expect(r.Leaks()).To(Equal(3))
	g.Expect(r.Duplicates()).To(Equal(2))

	// A MyApp whose records are all for other hosts misses one and has two
	// too many.
	update(s, live, func(a *appsv1alpha1.MyApp) { a.Spec.Host = "elsewhere." + s.ns + ".example.com" })
	r, err = s.oracle.check(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.MissingRecords).To(Equal(1), "two records, neither for the host: %v", r.Problems)
	g.Expect(r.DuplicateRecords).To(Equal(2), "%v", r.Problems)
}
