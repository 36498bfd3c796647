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

package s3_test

import (
	"fmt"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// The benchmarks measure what a backup costs in requests and bytes on the
// wire (both ways, headers included) against versitygw on loopback: a
// start, a start repeated, a list of an owner's backups, and a delete
// against the number of objects under the prefix. ns/op is loopback with a
// file-system backend, so take it as an order of magnitude; the requests
// and bytes are what a real S3 bill counts.

func reportCost(b *testing.B, count *counter) {
	b.ReportMetric(float64(count.requests.Load())/float64(b.N), "requests/op")
	b.ReportMetric(float64(count.sent.Load())/float64(b.N), "sent-B/op")
	b.ReportMetric(float64(count.received.Load())/float64(b.N), "received-B/op")
}

// BenchmarkStart starts a new backup each time: the PUT of the object.
func BenchmarkStart(b *testing.B) {
	srv := s3Server(b)
	bucket := newBucket(b, srv)
	var count counter
	c := newClient(b, srv, clientOptions{bucket: bucket, transport: count.transport()})
	reqs := make([]backup.StartRequest, b.N)
	for i := range reqs {
		reqs[i] = startRequest(b, "cluster-a", "bc-1", fmt.Sprintf("schedule/app-1/%d", i))
	}
	count.reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := c.Start(b.Context(), reqs[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCost(b, &count)
	b.ReportMetric(float64(len(reqs[0].Payload)), "content-B")
}

// BenchmarkStartRepeated repeats the start of one backup, as a pass after
// a crash does: the refused PUT and the read of the object's metadata.
func BenchmarkStartRepeated(b *testing.B) {
	srv := s3Server(b)
	bucket := newBucket(b, srv)
	var count counter
	c := newClient(b, srv, clientOptions{bucket: bucket, transport: count.transport()})
	req := startRequest(b, "cluster-a", "bc-1", "schedule/app-1/0")
	if _, err := c.Start(b.Context(), req); err != nil {
		b.Fatal(err)
	}
	count.reset()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Start(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCost(b, &count)
}

// BenchmarkList lists an owner with n backups: warm, by a client that has
// read the objects before (a retention pass of a running manager), and
// cold, by a new client each time (the first pass after a restart).
func BenchmarkList(b *testing.B) {
	for _, n := range []int{10, 100} {
		for _, warm := range []bool{true, false} {
			b.Run(fmt.Sprintf("backups=%d/warm=%v", n, warm), func(b *testing.B) {
				srv := s3Server(b)
				bucket := newBucket(b, srv)
				seed := newClient(b, srv, clientOptions{bucket: bucket})
				for i := range n {
					if _, err := seed.Start(b.Context(), startRequest(b, "cluster-a", "bc-1", fmt.Sprintf("schedule/app-1/%d", i))); err != nil {
						b.Fatal(err)
					}
				}
				var count counter
				transport := count.transport()
				c := newClient(b, srv, clientOptions{bucket: bucket, transport: transport})
				if _, err := c.List(b.Context(), "backupconfig/bc-1", backup.InNamespace("shop")); err != nil {
					b.Fatal(err)
				}
				count.reset()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if !warm {
						b.StopTimer()
						c = newClient(b, srv, clientOptions{bucket: bucket, transport: transport})
						b.StartTimer()
					}
					listed, err := c.List(b.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
					if err != nil || len(listed) != n {
						b.Fatalf("listed %d backups (%v), want %d", len(listed), err, n)
					}
				}
				b.StopTimer()
				reportCost(b, &count)
			})
		}
	}
}

// BenchmarkDelete deletes one backup of an owner with n backups, among
// those of 9 other owners with as many each: the delete of one exact key,
// whose cost does not depend on what else is under the prefix.
func BenchmarkDelete(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("objects=%d", n*10), func(b *testing.B) {
			srv := s3Server(b)
			bucket := newBucket(b, srv)
			seed := newClient(b, srv, clientOptions{bucket: bucket})
			put := func(uid string, i int) backup.Backup {
				got, err := seed.Start(b.Context(), startRequest(b, "cluster-a", uid, fmt.Sprintf("schedule/app-1/%d", i)))
				if err != nil {
					b.Fatal(err)
				}
				return got
			}
			for owner := range 10 {
				for i := range n {
					put(fmt.Sprintf("bc-%d", owner), i)
				}
			}
			var count counter
			c := newClient(b, srv, clientOptions{bucket: bucket, transport: count.transport()})
			count.reset()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				// Each delete removes an object that exists; the put that
				// makes it is not timed or counted.
				b.StopTimer()
				victim := put("bc-0", n+i)
				b.StartTimer()
				if err := c.Delete(b.Context(), victim.ID, "backupconfig/bc-0"); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportCost(b, &count)
		})
	}
}
