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

package restore

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/uuid"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
)

// The service at scale (issue 40, B1): 20,000 backups of many namespaces
// and MyApps, a few of them the Restore's own.
const (
	scaleBackups    = 20000
	scaleNamespaces = 50
	scaleApps       = 20
	// scaleNeighbours are backups of other MyApps in the Restore's own
	// namespace: on S3 the namespace's folder is what a storage listing
	// reads, so they count against its bound; on the HTTP service the
	// labels leave them out.
	scaleNeighbours = 30
	// scaleOwn are the backups of the Restore's own MyApp, each newer than
	// the one before; the last is the one to restore.
	scaleOwn = 3
)

// requestCounter counts the requests a client sends, by method.
type requestCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	sent map[string]int
}

func newRequestCounter() *requestCounter {
	return &requestCounter{next: http.DefaultTransport, sent: map[string]int{}}
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.sent[r.Method]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// total is how many requests were sent, and their split by method.
func (c *requestCounter) total() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	parts := make([]string, 0, len(c.sent))
	for m, k := range c.sent {
		n += k
		parts = append(parts, fmt.Sprintf("%s %d", m, k))
	}
	sort.Strings(parts)
	return n, strings.Join(parts, ", ")
}

// TestAStorageRestoreAmongTwentyThousandBackups: a storage-source Restore
// of a service holding 20,000 backups succeeds and restores the newest
// backup of its own namespace and name, reading only that namespace's
// candidates: on the HTTP service one page of a listing filtered by
// namespace and MyApp (the whole service is 20 pages of 1,000), on S3 the
// namespace's folder (the installation holds 20,000 objects, each read with
// a HEAD). A listing that did not narrow would make 20 pages on the HTTP
// service and 20,000 HEADs on S3, far past the bounds below.
func TestAStorageRestoreAmongTwentyThousandBackups(t *testing.T) {
	for _, p := range backuptest.Providers() {
		t.Run(string(p), func(t *testing.T) {
			g := NewWithT(t)
			e := newTestEnv(t, p)
			begin := time.Now()
			e.seedStrangers(scaleBackups - scaleNeighbours - scaleOwn)
			for i := range scaleNeighbours {
				e.seedQuick(backedUpApp(e.ns, fmt.Sprintf("api-%d", i%5), "nginx:1.25"), fmt.Sprintf("n%d", i))
			}
			// The Restore's own backups, one after the other so "newest"
			// is plain on both providers (each waited for, through seed).
			from := backedUpApp(e.ns, "web", "nginx:1.26")
			var want backup.Backup
			for i := range scaleOwn {
				from = from.DeepCopy()
				from.Generation = int64(i + 1)
				from.Spec.Image = fmt.Sprintf("nginx:1.%d", 26+i)
				want = e.seed(seedOptions{app: from, bcName: "web-backups"})
				time.Sleep(5 * time.Millisecond)
			}
			t.Logf("seeded %d backups in %v", scaleBackups, time.Since(begin).Round(time.Millisecond))
			if p == backuptest.HTTP {
				g.Expect(e.sim.Backups()).To(HaveLen(scaleBackups))
			}

			counter := newRequestCounter()
			e.startMyApps()
			e.startRestoresWith(e.cp.Config, e.newBackupClient(e.ownerID, counter))
			r := e.newRestore("web-restore", backupv1alpha1.RestoreSource{
				Storage: &backupv1alpha1.StorageSource{AppName: "web"}})
			created := time.Now()
			e.create(r)
			app := expectRestored(e, r, want, from, "web")
			took := time.Since(created)
			g.Expect(app.Spec.Image).To(Equal(fmt.Sprintf("nginx:1.%d", 26+scaleOwn-1)), "the newest of its own")

			n, split := counter.total()
			t.Logf("%s: a storage Restore among %d backups made %d requests (%s) and took %v from create to Succeeded",
				p, scaleBackups, n, split, took.Round(time.Millisecond))
			// The bound: the listing of its own candidates (one page),
			// their content, and the reads while the MyApp becomes Ready;
			// on S3 also a HEAD of each object of its namespace's folder.
			bound := 12
			if p == backuptest.S3 {
				bound += scaleNeighbours + scaleOwn
			}
			g.Expect(n).To(BeNumerically("<=", bound),
				"requests of a storage Restore among %d backups (%s): it read more than its namespace and name", scaleBackups, split)
		})
	}
}

// seedStrangers starts n backups of MyApps of other namespaces, eight at
// a time, through the env's client; nothing waits for them to succeed.
func (e *testEnv) seedStrangers(n int) {
	e.t.Helper()
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				app := backedUpApp(fmt.Sprintf("team-%02d", i%scaleNamespaces), fmt.Sprintf("app-%02d", i%scaleApps), "nginx:1.25")
				if err := e.startQuick(app, fmt.Sprintf("s%06d", i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatal(err)
	}
}

// seedQuick starts one backup of app without waiting for it.
func (e *testEnv) seedQuick(app *appsv1alpha1.MyApp, name string) {
	e.t.Helper()
	if err := e.startQuick(app, name); err != nil {
		e.t.Fatal(err)
	}
}

// startQuick starts a backup of app as a BackupConfig named after it
// would, its content encoded as that BackupConfig writes it.
func (e *testEnv) startQuick(app *appsv1alpha1.MyApp, name string) error {
	bcName, bcUID := app.Name+"-backups", uuid.NewUUID()
	owner := backupConfigOwner(bcUID)
	key := owner + "/manual/" + name
	payload, err := backupcontent.EncodePayload(&backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger: "Manual", MyAppUID: string(app.UID), MyAppGeneration: 1, TakenAt: time.Now(),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: app.Namespace, Name: bcName, UID: string(bcUID)},
			OwnerID:      e.ownerID, Owner: owner, IdempotencyKey: key,
		},
		MyApp: backupcontent.SnapshotApp(app),
	})
	if err != nil {
		return err
	}
	_, err = e.backups.Start(e.t.Context(), backup.StartRequest{App: app.Namespace + "-" + app.Name, Owner: owner,
		IdempotencyKey: key, Namespace: app.Namespace, Payload: payload,
		Labels: map[string]string{backup.LabelNamespace: app.Namespace, labelMyApp: app.Name,
			labelMyAppUID: string(app.UID), labelBackupConfig: bcName, labelTrigger: "Manual"}})
	return err
}
