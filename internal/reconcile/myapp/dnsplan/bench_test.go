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

import "testing"

// BenchmarkMake measures Make as the myapp package's loop calls it: for a
// sixty-fourth of the records space, every observation of the loop of
// needs, from nothing answered to the plan. ns/plan is the mean cost of
// one call of Make, plans/op how many calls one op makes.
func BenchmarkMake(b *testing.B) {
	var obs []Observation
	recordsWorldShard(0, 64, func(w *tworld, o Observation) {
		for range 4 + MaxChain {
			obs = append(obs, o)
			p := Make(o)
			if p.Need == NeedNothing || !w.answer(&o, p.Need) {
				return
			}
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, o := range obs {
			Make(o)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(obs)), "ns/plan")
	b.ReportMetric(float64(len(obs)), "plans/op")
}
