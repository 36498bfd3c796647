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

package backuptest

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// Harness is what the conformance suite needs of a provider.
type Harness struct {
	// OwnerID is the installation's owner ID the clients are built with.
	OwnerID string
	// New returns a client of empty storage of its own, whose requests go
	// through transport (a fault layer of the suite's).
	New func(t *testing.T, transport http.RoundTripper) backup.Client
	// Listed is how many backups the paged listing seeds: 20,000 unless
	// set.
	Listed int
	// Skewed returns two clients of one empty storage: plain, whose clock
	// is right, and skewed, whose clock is off by client; the provider's
	// server clock is off by server. A provider whose server keeps the
	// host's clock skips a server skew, saying so.
	Skewed func(t *testing.T, server, client time.Duration) (plain, skewed backup.Client)
	// Resolution is the smallest interval between two starts that the
	// provider's clock tells apart (S3: a second, as Last-Modified is
	// written); the skewed-clock cases start their backups this far apart.
	Resolution time.Duration
}

// labelMyApp is the label the BackupConfig controller stores a MyApp's name
// under, beside backup.LabelNamespace.
const labelMyApp = "backup.myapp.dev/myapp"

// RunConformance runs the promises of the backup.Client contract against a
// provider: listings paged to the end, a listing by namespace and MyApp
// that answers only those backups, IDs of every wrong form answered as not
// found, each call whose answer is lost repeated to the same outcome, and,
// with a clock an hour off on either side, start tokens answered as the
// first start sent them and listings in the order the provider stored the
// backups.
func RunConformance(t *testing.T, h Harness) {
	if h.Listed == 0 {
		h.Listed = 20000
	}
	t.Run("WrongIDsAreNotFound", func(t *testing.T) { wrongIDsAreNotFound(t, h) })
	t.Run("ListingsArePagedToTheEnd", func(t *testing.T) { listingsArePagedToTheEnd(t, h) })
	t.Run("AnUnknownOutcomeAtEveryCall", func(t *testing.T) { anUnknownOutcomeAtEveryCall(t, h) })
	t.Run("ASkewedClock", func(t *testing.T) { aSkewedClock(t, h) })
}

// skewedStarts is how many backups each skewed-clock case starts.
const skewedStarts = 4

// aSkewedClock: with the server's clock, or one client's, an hour behind or
// ahead, every start is kept once, a start repeated by either client finds
// the backup, and a listing answers each backup once, each readable. Two
// promises hold whatever the clocks, so that no caller compares them:
//   - the start that stored a backup gets its own token back, and a repeat
//     of its key with another token gets the first one's (a pass knows the
//     backups it started, and counts each once);
//   - the listing is in the order the provider stored the backups, what
//     "newest" means to retention and to a Restore, even when the clients
//     that wrote them disagree by an hour.
func aSkewedClock(t *testing.T, h Harness) {
	for _, side := range []string{"server", "client"} {
		for _, skew := range []time.Duration{-time.Hour, time.Hour} {
			t.Run(fmt.Sprintf("%s %v", side, skew), func(t *testing.T) {
				server, client := skew, time.Duration(0)
				if side == "client" {
					server, client = 0, skew
				}
				plain, skewed := h.Skewed(t, server, client)
				stored, tokens := startUnderSkew(t, h, plain, skewed)
				for _, c := range []backup.Client{plain, skewed} {
					listInStoredOrder(t, c, stored, tokens)
				}
			})
		}
	}
}

// startUnderSkew starts skewedStarts backups, each through one client and
// repeated through the other with another token, and returns their IDs in
// the order they were stored and each one's first token.
func startUnderSkew(t *testing.T, h Harness, plain, skewed backup.Client) ([]string, map[string]string) {
	t.Helper()
	stored := make([]string, 0, skewedStarts)
	tokens := map[string]string{}
	for i := range skewedStarts {
		c, other := plain, skewed
		if i%2 == 1 {
			c, other = skewed, plain
		}
		if i > 0 {
			// Starts further apart than the provider's clock can tell
			// apart, so the order it stored them in is one its clock shows.
			time.Sleep(h.Resolution)
		}
		req := h.Start(t, "shop", "bc-1", "web", fmt.Sprintf("manual/%d", i))
		req.StartToken = fmt.Sprintf("first-%d", i)
		b, err := c.Start(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if b.StartToken != req.StartToken {
			t.Fatalf("the start that stored backup %s answered token %q, want its own %q", b.ID, b.StartToken,
				req.StartToken)
		}
		repeat := req
		repeat.StartToken = fmt.Sprintf("repeat-%d", i)
		again, err := other.Start(t.Context(), repeat)
		if err != nil {
			t.Fatal(err)
		}
		if again.ID != b.ID {
			t.Fatalf("a start repeated by the other client made backup %s beside %s", again.ID, b.ID)
		}
		if again.StartToken != req.StartToken {
			t.Fatalf("a repeated start of backup %s answered token %q, want the first start's %q: "+
				"the repeat would take the backup for one it started", b.ID, again.StartToken, req.StartToken)
		}
		stored = append(stored, b.ID)
		tokens[b.ID] = req.StartToken
	}
	return stored, tokens
}

// listInStoredOrder checks that c lists exactly the backups started, each
// with its first token and as a Get reads it, oldest first in the order
// they were stored.
func listInStoredOrder(t *testing.T, c backup.Client, stored []string, tokens map[string]string) {
	t.Helper()
	listed, err := c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	order := make([]string, 0, len(listed))
	for _, b := range listed {
		if tokens[b.ID] == "" || seen[b.ID] {
			t.Fatalf("listed %s, which is not one of the %d started once each", b.ID, len(tokens))
		}
		seen[b.ID] = true
		order = append(order, b.ID)
		if b.StartToken != tokens[b.ID] {
			t.Fatalf("backup %s is listed with token %q, want its first start's %q", b.ID, b.StartToken,
				tokens[b.ID])
		}
		got, err := c.Get(t.Context(), b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.StartedAt.Equal(b.StartedAt) || got.StartToken != b.StartToken {
			t.Fatalf("backup %s is listed started at %v with token %q, read started at %v with %q",
				b.ID, b.StartedAt, b.StartToken, got.StartedAt, got.StartToken)
		}
		if _, err := c.Content(t.Context(), b.ID); err != nil {
			t.Fatalf("content of %s: %v", b.ID, err)
		}
	}
	if len(seen) != len(tokens) {
		t.Fatalf("listed %d backups, started %d", len(seen), len(tokens))
	}
	if !slices.Equal(order, stored) {
		t.Fatalf("listed %v, want oldest first in the order they were stored, %v: the newest "+
			"would be pruned first and a Restore would pick an older one", order, stored)
	}
}

// Start returns a start as the BackupConfig controller makes it: the
// owner backupconfig/<uid>, a key under it, the labels of namespace ns and
// MyApp app, and content that says the same.
func (h Harness) Start(t testing.TB, ns, uid, app, name string) backup.StartRequest {
	t.Helper()
	owner := "backupconfig/" + uid
	key := owner + "/" + name
	p := &backupcontent.Payload{
		Metadata: backupcontent.PayloadMetadata{
			Trigger: "Manual", MyAppUID: "uid-of-" + app, MyAppGeneration: 1,
			TakenAt:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			BackupConfig: backupcontent.ObjectIdentity{Namespace: ns, Name: "bc-" + uid, UID: uid},
			OwnerID:      h.OwnerID, Owner: owner, IdempotencyKey: key,
		},
		MyApp: backupcontent.SnapshotApp(&appsv1alpha1.MyApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
			Spec:       appsv1alpha1.MyAppSpec{Image: "nginx:1.27", Host: app + "." + ns + ".example.com"},
		}),
	}
	content, err := backupcontent.EncodePayload(p)
	if err != nil {
		t.Fatal(err)
	}
	return backup.StartRequest{
		App: ns + "-" + app, Owner: owner, IdempotencyKey: key, Namespace: ns,
		Labels: map[string]string{backup.LabelNamespace: ns, labelMyApp: app}, Payload: content,
	}
}

func wrongIDsAreNotFound(t *testing.T, h Harness) {
	c := h.New(t, nil)
	if _, err := c.Start(t.Context(), h.Start(t, "shop", "bc-1", "web", "manual/1")); err != nil {
		t.Fatal(err)
	}
	for _, id := range WrongIDs() {
		if _, err := c.Get(t.Context(), id); !errors.Is(err, external.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want not found", id, err)
		}
		if _, err := c.Content(t.Context(), id); !errors.Is(err, external.ErrNotFound) {
			t.Errorf("Content(%q) = %v, want not found", id, err)
		}
	}
}

// countingTransport counts the requests that pass, and loses the answer of
// the request numbered lose (from 1; 0 loses none): the request reaches
// the provider, its answer never reaches the client.
type countingTransport struct {
	next http.RoundTripper
	sent atomic.Int64
	lose atomic.Int64
	mu   sync.Mutex
	lost []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	n := c.sent.Add(1)
	resp, err := c.next.RoundTrip(r)
	if err == nil && n == c.lose.Load() {
		_ = resp.Body.Close()
		c.mu.Lock()
		c.lost = append(c.lost, r.Method+" "+r.URL.Path)
		c.mu.Unlock()
		return nil, fmt.Errorf("the answer to %s %s was lost", r.Method, r.URL.Path)
	}
	return resp, err
}

func newCountingTransport() *countingTransport {
	return &countingTransport{next: http.DefaultTransport}
}

func listingsArePagedToTheEnd(t *testing.T, h Harness) {
	tr := newCountingTransport()
	c := h.New(t, tr)
	counts := map[[2]string]int{}
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < h.Listed; i += workers {
				ns, app := fmt.Sprintf("ns%d", i%4), fmt.Sprintf("app%d", i%7)
				if _, err := c.Start(t.Context(), h.Start(t, ns, fmt.Sprintf("bc-%d", i%4), app, fmt.Sprintf("manual/%06d", i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range h.Listed {
		counts[[2]string{fmt.Sprintf("ns%d", i%4), fmt.Sprintf("app%d", i%7)}]++
	}

	before := tr.sent.Load()
	begin := time.Now()
	all, err := c.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != h.Listed {
		t.Fatalf("listed %d backups, want %d", len(all), h.Listed)
	}
	seen := make(map[string]bool, len(all))
	for _, b := range all {
		if seen[b.ID] {
			t.Fatalf("backup %s listed twice", b.ID)
		}
		seen[b.ID] = true
	}
	whole := tr.sent.Load() - before
	t.Logf("listed %d backups in %d requests, %v", len(all), whole, time.Since(begin).Round(time.Millisecond))

	// The MyApp whose backups alone are listed next.
	const myNamespace, myApp = "ns1", "app3"
	before = tr.sent.Load()
	begin = time.Now()
	mine, err := c.List(t.Context(), "", backup.InNamespace(myNamespace),
		backup.WithLabels(map[string]string{backup.LabelNamespace: myNamespace, labelMyApp: myApp}))
	if err != nil {
		t.Fatal(err)
	}
	if want := counts[[2]string{myNamespace, myApp}]; len(mine) != want {
		t.Fatalf("listed %d backups of %s/%s, want %d", len(mine), myNamespace, myApp, want)
	}
	for _, b := range mine {
		if b.Labels[backup.LabelNamespace] != myNamespace || b.Labels[labelMyApp] != myApp {
			t.Fatalf("backup %s of %v listed for %s/%s", b.ID, b.Labels, myNamespace, myApp)
		}
	}
	narrow := tr.sent.Load() - before
	t.Logf("listed the %d backups of %s/%s in %d requests, %v", len(mine), myNamespace, myApp, narrow,
		time.Since(begin).Round(time.Millisecond))
	if narrow >= whole {
		t.Fatalf("listing one MyApp's backups took %d requests, the whole service %d: it read more than its namespace", narrow, whole)
	}
}

// againToken is the token of the start anUnknownOutcomeAtEveryCall repeats.
const againToken = "pass-again"

// anUnknownOutcomeAtEveryCall loses the answer of each request of each call
// in turn: the call fails or succeeds, and repeating it ends as it would
// have without the loss (one backup for a start, gone for a delete).
func anUnknownOutcomeAtEveryCall(t *testing.T, h Harness) {
	calls := []struct {
		name string
		run  func(t *testing.T, c backup.Client, id string) error
		then func(t *testing.T, c backup.Client, id string)
	}{{
		name: "start",
		run: func(t *testing.T, c backup.Client, _ string) error {
			req := h.Start(t, "shop", "bc-1", "web", "manual/again")
			req.StartToken = againToken
			_, err := c.Start(t.Context(), req)
			return err
		},
		then: func(t *testing.T, c backup.Client, _ string) {
			got, err := c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("%d backups after a start repeated past a lost answer, want 2 (one of each key)", len(got))
			}
			// The repeat is the same start: it sent the same token, and
			// the backup it stored answers with it.
			for _, b := range got {
				if b.IdempotencyKey == "backupconfig/bc-1/manual/again" && b.StartToken != againToken {
					t.Fatalf("backup %s, stored by a start repeated past a lost answer, has token %q, want %q",
						b.ID, b.StartToken, againToken)
				}
			}
		},
	}, {
		name: "get",
		run: func(t *testing.T, c backup.Client, id string) error {
			_, err := c.Get(t.Context(), id)
			return err
		},
	}, {
		name: "content",
		run: func(t *testing.T, c backup.Client, id string) error {
			_, err := c.Content(t.Context(), id)
			return err
		},
	}, {
		name: "list",
		run: func(t *testing.T, c backup.Client, _ string) error {
			_, err := c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
			return err
		},
	}, {
		name: "delete",
		run: func(t *testing.T, c backup.Client, id string) error {
			return c.Delete(t.Context(), id, "backupconfig/bc-1")
		},
		then: func(t *testing.T, c backup.Client, id string) {
			if _, err := c.Get(t.Context(), id); !errors.Is(err, external.ErrNotFound) {
				t.Fatalf("Get after a delete repeated past a lost answer: %v, want not found", err)
			}
		},
	}}
	for _, call := range calls {
		t.Run(call.name, func(t *testing.T) {
			// Lose the first answer, then the second, and so on, until a
			// call of the same kind needs no more requests than were lost.
			for lose := int64(1); ; lose++ {
				tr := newCountingTransport()
				c := h.New(t, tr)
				first, err := c.Start(t.Context(), h.Start(t, "shop", "bc-1", "web", "manual/first"))
				if err != nil {
					t.Fatal(err)
				}
				base := tr.sent.Load()
				tr.lose.Store(base + lose)
				err = call.run(t, c, first.ID)
				used := tr.sent.Load() - base
				if err != nil && !external.IsRetryable(err) {
					t.Fatalf("with answer %d lost: %v, a failure a retry cannot mend", lose, err)
				}
				tr.lose.Store(0)
				if err := call.run(t, c, first.ID); err != nil {
					t.Fatalf("repeated after answer %d was lost: %v", lose, err)
				}
				if call.then != nil {
					call.then(t, c, first.ID)
				}
				if used < lose {
					return
				}
			}
		})
	}
}
