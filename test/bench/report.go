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

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/myapp-operator/myapp-operator/test/apiproxy"
)

// printReport writes the run's figures as Markdown, the form
// docs/benchmarks.md quotes.
func printReport(w io.Writer, res Result) {
	pf := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	pln := func(line string) { _, _ = fmt.Fprintln(w, line) }
	n := float64(res.N)
	pf("\n## N = %d\n\nMachine: %s. Started %s.\n\n", res.N, res.Machine, res.Started.Format("2006-01-02 15:04 MST"))
	if _, ok := res.Floor["converge"]; ok {
		pf("Cluster floor (%d bare Deployments with a Service each, no operator): converge %.1fs, delete %.1fs.\n\n",
			res.N, res.Floor["converge"].Seconds, res.Floor["cleanup"].Seconds)
	} else {
		pln("Cluster floor: not measured (--phases without floor).\n")
	}

	pln("| phase | operator | seconds | API requests | API writes | API failures | DNS requests | DNS writes | DNS failures |")
	pln("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, phase := range []string{"converge", phaseSteady, phaseRestart, "cleanup"} {
		for _, op := range res.Operators {
			p, ok := op.Phases[phase]
			if !ok {
				continue // not in --phases
			}
			total, writes := apiTotals(p)
			dnsTotal, dnsWrites := 0, p.DNS["upsert"]+p.DNS["delete"]
			for _, v := range p.DNS {
				dnsTotal += v
			}
			pf("| %s | %s | %.1f | %d | %d | %d | %d (%s) | %d | %d |\n", phase, op.Name, p.Seconds,
				total, writes, sum(p.APIFailures), dnsTotal, mapString(p.DNS), dnsWrites, p.DNSFailures)
		}
	}

	pln("\nPer MyApp while converging and cleaning up:")
	pln("\n| operator | converge API | converge API writes | DNS upserts | DNS gets | cleanup API | cleanup DNS |")
	pln("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, op := range res.Operators {
		c, d := op.Phases["converge"], op.Phases["cleanup"]
		ct, cw := apiTotals(c)
		dt, _ := apiTotals(d)
		pf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", op.Name, float64(ct)/n, float64(cw)/n,
			float64(c.DNS["upsert"])/n, float64(c.DNS["get"])/n, float64(dt)/n, float64(sum(d.DNS))/n)
	}
	pln("| minimum | | 5 (finalizer, 3 creates, status) | 1 | polls propagation needs | 1 finalizer removal | 2 (delete, confirming list) |")

	pln("\nSteady state and restart:")
	pln("\n| operator | steady DNS reads per MyApp per hour | restart drain (s) | restart DNS peak/s | restart DNS mean/s |")
	pln("| --- | ---: | ---: | ---: | ---: |")
	for _, op := range res.Operators {
		s, r := op.Phases[phaseSteady], op.Phases[phaseRestart]
		perHour := "n/a"
		if s.Seconds > 0 {
			perHour = fmt.Sprintf("%.1f", float64(s.DNS["get"])/n*3600/s.Seconds)
		}
		pf("| %s | %s | %.1f | %.0f | %.1f |\n", op.Name, perHour, r.Extra["drainSeconds"],
			r.Extra["dnsPeakPerSecond"], r.Extra["dnsMeanPerSecond"])
	}

	pln("\nMemory of the manager (MiB):")
	pln("\n| operator | point | Go heap | live heap after GC | RSS |")
	pln("| --- | --- | ---: | ---: | ---: |")
	for _, op := range res.Operators {
		for _, point := range sortedNames(op.Memory) {
			m := op.Memory[point]
			pf("| %s | %s | %.1f | %.1f | %.1f |\n", op.Name, point, m.HeapBytes/(1<<20),
				m.LiveHeapBytes/(1<<20), m.RSSBytes/(1<<20))
		}
	}

	printPerMyApp(w, res)
	for _, op := range res.Operators {
		printPriority(w, op)
		printFailover(w, op)
	}

	pln("\nAPI requests while converging, by verb and resource:")
	for _, op := range res.Operators {
		pf("\n- %s: %s\n", op.Name, mapString(op.Phases["converge"].API))
		if f := op.Phases["converge"].APIFailures; len(f) > 0 {
			pf("  - failed: %s\n", mapString(f))
		}
		pf("  - cleanup: %s\n", mapString(op.Phases["cleanup"].API))
		if f := op.Phases["cleanup"].APIFailures; len(f) > 0 {
			pf("  - cleanup failed: %s\n", mapString(f))
		}
	}
}

// apiTotals returns all requests and writes, watches aside (a watch is one
// long request whatever it carries).
func apiTotals(p Phase) (total, writes int) {
	for k, v := range p.API {
		verb, _, _ := strings.Cut(k, " ")
		if verb == "watch" {
			continue
		}
		total += v
		if apiproxy.IsWrite(verb) {
			writes += v
		}
	}
	return total, writes
}

func sum(m map[string]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}

func mapString(m map[string]int) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedNames(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
