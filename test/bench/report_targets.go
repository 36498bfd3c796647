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
	"math"
	"slices"
)

// The targets of issue 25 item 5, per MyApp.
const (
	minWritesPerMyApp    = 5   // finalizer, 3 creates, status
	maxWritesFactor      = 1.4 // API writes, events included, against the minimum
	maxStatusPerMyApp    = 2
	maxLiveHeapPerMyApp  = 16 << 10
	maxFirstReconcileLag = 0.5 // s after the lease
	maxGracefulHandover  = 2.0 // s from SIGTERM to the new leader's first write
	failoverSlack        = 1.0 // s on top of the lease (and the normal creation time)
)

// printPerMyApp prints the figures of issue 25 item 5 per MyApp, and the
// operator's against its targets.
func printPerMyApp(w io.Writer, res Result) {
	pf := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	pln := func(line string) { _, _ = fmt.Fprintln(w, line) }
	n := float64(res.N)
	zero, atN := "0 MyApps", fmt.Sprintf("%d MyApps", res.N)

	pln("\nPer MyApp (converge, memory from 0 to N MyApps, restart):")
	pln("\n| operator | converge / floor | API writes | API writes, events aside | status patches | DNS requests | " +
		"live heap growth (KiB) | RSS growth (KiB) | restart drain (s) |")
	pln("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, op := range res.Operators {
		c := op.Phases["converge"]
		_, writes := apiTotals(c)
		ratio := "n/a"
		if f := res.Floor["converge"].Seconds; f > 0 {
			ratio = fmt.Sprintf("%.2fx", c.Seconds/f)
		}
		m0, mN := op.Memory[zero], op.Memory[atN]
		pf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f |\n", op.Name, ratio, float64(writes)/n,
			float64(writes-c.API["create events"])/n, float64(statusWrites(c))/n, float64(sum(c.DNS))/n,
			(mN.LiveHeapBytes-m0.LiveHeapBytes)/n/1024, (mN.RSSBytes-m0.RSSBytes)/n/1024,
			op.Phases[phaseRestart].Extra["drainSeconds"])
	}

	for _, op := range res.Operators {
		if op.Name != operatorName {
			continue
		}
		pf("\nAgainst the targets of issue 25 item 5 (%s, N = %d):\n\n", op.Name, res.N)
		pln("| target | figure | met |")
		pln("| --- | --- | --- |")
		for _, phase := range []string{phaseSteady, phaseRestart} {
			p, ok := op.Phases[phase]
			if !ok {
				pf("| 0 writes (%s) | not measured | n/a |\n", phase)
				continue
			}
			_, writes := apiTotals(p)
			dnsWrites := p.DNS["upsert"] + p.DNS["delete"]
			pf("| 0 writes (%s) | %d API writes, %d DNS writes in %.0f s | %s |\n", phase, writes, dnsWrites, p.Seconds,
				met(writes == 0 && dnsWrites == 0))
		}
		c := op.Phases["converge"]
		_, writes := apiTotals(c)
		perApp := float64(writes) / n
		pf("| API writes, events included, at most %.1fx the minimum of %d per MyApp | %.2f (%.2fx) | %s |\n",
			maxWritesFactor, minWritesPerMyApp, perApp, perApp/minWritesPerMyApp,
			met(perApp <= maxWritesFactor*minWritesPerMyApp))
		status := float64(statusWrites(c)) / n
		pf("| status patches at most %d per MyApp | %.2f | %s |\n", maxStatusPerMyApp, status, met(status <= maxStatusPerMyApp))
		m0, mN := op.Memory[zero], op.Memory[atN]
		heap := (mN.LiveHeapBytes - m0.LiveHeapBytes) / n
		pf("| live heap at most %d KiB per MyApp | %.1f KiB (%.1f -> %.1f MiB) | %s |\n", maxLiveHeapPerMyApp>>10,
			heap/1024, m0.LiveHeapBytes/(1<<20), mN.LiveHeapBytes/(1<<20), met(heap <= maxLiveHeapPerMyApp))
	}
}

// statusWrites counts the writes to MyApps' status.
func statusWrites(p Phase) int {
	return p.API["patch myapps/status"] + p.API["update myapps/status"]
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// raw turns measured times into figures for spread and within: a time of
// notReached becomes NaN.
func raw(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = f
		if f == notReached {
			out[i] = math.NaN()
		}
	}
	return out
}

// spread formats the median and range of figures; NaN was not reached.
func spread(v []float64) string {
	var got []float64
	for _, f := range v {
		if !math.IsNaN(f) {
			got = append(got, f)
		}
	}
	if len(got) == 0 {
		return "not reached"
	}
	slices.Sort(got)
	out := fmt.Sprintf("%.2f (%.2f to %.2f)", median(got), got[0], got[len(got)-1])
	if missing := len(v) - len(got); missing > 0 {
		out += fmt.Sprintf(", %d not reached", missing)
	}
	return out
}

// median of sorted values.
func median(sorted []float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	if len(sorted)%2 == 1 {
		return sorted[len(sorted)/2]
	}
	return (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
}

func sortedCopy(v []float64) []float64 {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

func printPriority(w io.Writer, op OperatorResult) {
	if len(op.Priority) == 0 {
		return
	}
	pf := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	pln := func(line string) { _, _ = fmt.Fprintln(w, line) }
	pln("\nEdits right after a restart (s after the restart; edit to Deployment, median and range), beside the restart's drain:")
	pln("\n| priority queue | edits | first MyApp queued | edits made | edit at its Deployment | drain |")
	pln("| --- | ---: | ---: | --- | --- | ---: |")
	for _, r := range op.Priority {
		pf("| %s | %d | %.1f | %s | %s | %.1f |\n", onOff(r.PriorityQueue), len(r.EditSeconds), r.QueueStartSeconds,
			floats(r.EditAfterSeconds), spread(raw(r.EditSeconds)), r.DrainSeconds)
	}
}

// secs formats one measured time.
func secs(f float64) string {
	if f == notReached {
		return "not reached"
	}
	return fmt.Sprintf("%.2f", f)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func printFailover(w io.Writer, op OperatorResult) {
	if len(op.Failover) == 0 {
		return
	}
	pf := func(format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }
	pln := func(line string) { _, _ = fmt.Fprintln(w, line) }
	pln("\nFailover: the leader SIGKILLed, times from the kill (s; median and range):")
	pln("\n| warm standby | kills | lease | first reconcile | first reconcile after the lease | first write | " +
		"created MyApp served | edit at its Deployment | normal creation |")
	pln("| --- | ---: | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range op.Failover {
		var lease, rec, recLag, write, served, edit []float64
		for _, k := range r.Kills {
			lease = append(lease, k.LeaseSeconds)
			rec = append(rec, k.FirstReconcileSeconds)
			recLag = append(recLag, lag(k.FirstReconcileSeconds, k.LeaseSeconds))
			write = append(write, k.FirstWriteSeconds)
			served = append(served, k.CreatedReadySeconds)
			edit = append(edit, k.EditSeconds)
		}
		pf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", onOff(r.WarmStandby), len(r.Kills), spread(raw(lease)),
			spread(raw(rec)), spread(recLag), spread(raw(write)), spread(raw(served)), spread(raw(edit)),
			spread(raw(r.CreateSeconds)))
	}
	pln("\nGraceful handover: the leader SIGTERMed (it releases the lease), times from SIGTERM (s):")
	pln("\n| warm standby | lease | first reconcile | first write | edit at its Deployment |")
	pln("| --- | ---: | ---: | ---: | ---: |")
	for _, r := range op.Failover {
		g := r.Graceful
		pf("| %s | %s | %s | %s | %s |\n", onOff(r.WarmStandby), secs(g.LeaseSeconds), secs(g.FirstReconcileSeconds),
			secs(g.FirstWriteSeconds), secs(g.EditSeconds))
	}

	pln("\nFailover against the targets of issue 25 (each kill's margin, median and range; met when every kill is within):")
	pln("\n| warm standby | target | figure | met |")
	pln("| --- | --- | --- | --- |")
	for _, r := range op.Failover {
		normal := median(sortedCopy(nonNegative(r.CreateSeconds)))
		var served, edit, rec []float64
		for _, k := range r.Kills {
			served = append(served, lag(k.CreatedReadySeconds, k.LeaseSeconds+normal))
			edit = append(edit, lag(k.EditSeconds, k.LeaseSeconds))
			rec = append(rec, lag(k.FirstReconcileSeconds, k.LeaseSeconds))
		}
		ws := onOff(r.WarmStandby)
		pf("| %s | created MyApp served within lease + normal creation (%.1f s) + %.0f s | %s after lease + normal | %s |\n",
			ws, normal, failoverSlack, spread(served), within(served, failoverSlack))
		pf("| %s | edit within lease + %.0f s | %s after the lease | %s |\n", ws, failoverSlack, spread(edit),
			within(edit, failoverSlack))
		pf("| %s | first reconcile within %.1f s of the lease (the target is at 10,000) | %s | %s |\n", ws,
			maxFirstReconcileLag, spread(rec), within(rec, maxFirstReconcileLag))
		g := raw([]float64{r.Graceful.FirstWriteSeconds})
		pf("| %s | graceful handover (SIGTERM to the new leader's first write) within %.0f s | %s | %s |\n", ws,
			maxGracefulHandover, spread(g), within(g, maxGracefulHandover))
	}

	pln("\nRequests of each failover manager (the new leader's, as standby before the signal and as leader after it):")
	for _, r := range op.Failover {
		for i, k := range r.Kills {
			pf("\n- warm standby %s, kill %d: as standby %s; as leader %s\n", onOff(r.WarmStandby), i+1,
				mapString(k.StandbyAPI), mapString(k.LeaderAPI))
		}
		pf("\n- warm standby %s, SIGTERM: as standby %s; as leader %s\n", onOff(r.WarmStandby),
			mapString(r.Graceful.StandbyAPI), mapString(r.Graceful.LeaderAPI))
	}
}

// lag is the margin t - ref, which may be negative, or NaN when either
// time was not reached.
func lag(t, ref float64) float64 {
	if t < 0 || ref < 0 {
		return math.NaN()
	}
	return t - ref
}

func nonNegative(v []float64) []float64 {
	var out []float64
	for _, f := range v {
		if f >= 0 {
			out = append(out, f)
		}
	}
	return out
}

// within says whether every figure is reached (not NaN) and at most limit.
func within(v []float64, limit float64) string {
	ok := 0
	for _, f := range v {
		if !math.IsNaN(f) && f <= limit {
			ok++
		}
	}
	if ok == len(v) && ok > 0 {
		return "yes"
	}
	return fmt.Sprintf("no (%d of %d)", ok, len(v))
}
