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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

const (
	// The failover family's lease: short, so a takeover fits a scenario,
	// with the proportions of the defaults (15s, 10s, 2s).
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
	// takeoverLimit bounds the standby's takeover. It can acquire the lease
	// only once the dead leader's last renewal (at most a retry period
	// before the kill) is a lease duration old, and tries every retry
	// period; the rest is slack for a busy 2-core machine.
	takeoverLimit = leaseDuration + 2*retryPeriod + 3*time.Second
)

var (
	managerBinOnce sync.Once
	managerBinDir  string
	managerBin     string
	managerBinErr  error
)

// buildManager builds cmd/manager once per test binary, on first use: only
// the failover family runs the manager as a process.
func buildManager(t *testing.T) string {
	t.Helper()
	managerBinOnce.Do(func() {
		if managerBinDir, managerBinErr = os.MkdirTemp("", "myapp-reliability-"); managerBinErr != nil {
			return
		}
		managerBin, managerBinErr = fixtures.BuildManager(managerBinDir)
	})
	if managerBinErr != nil {
		t.Fatal(managerBinErr)
	}
	return managerBin
}

// removeManagerBin removes what buildManager built; TestMain calls it.
func removeManagerBin() {
	if managerBinDir != "" {
		_ = os.RemoveAll(managerBinDir)
	}
}

// killMoment is when, in the burst, the leader is killed.
type killMoment struct {
	name string
	// afterCreations kills the leader once that many MyApps are created;
	// afterDeletions (when afterCreations is 0) once that many are deleted.
	afterCreations, afterDeletions int
}

// TestFailoverUnderLoad is family 6. Two manager processes (cmd/manager,
// built from this tree) run with leader election against the scenario's
// simulator. During a burst of N MyApp creations and N/4 deletions the
// leader is killed with SIGKILL: no lease release, no graceful shutdown,
// whatever it had in flight lost. The standby must take over within the
// lease and finish the work: every MyApp left Ready with its one record,
// every deleted one gone with its record, as the oracle counts.
func TestFailoverUnderLoad(t *testing.T) {
	creations := scale(20, 200)
	deletions := creations / 4
	moments := []killMoment{{name: "mid-creations", afterCreations: creations / 2}}
	if full() {
		moments = []killMoment{
			{name: "early-creations", afterCreations: max(1, creations/10)},
			{name: "mid-creations", afterCreations: creations / 2},
			{name: "mid-deletions", afterDeletions: max(1, deletions/2)},
		}
	}
	bin := buildManager(t)
	for _, moment := range moments {
		t.Run(moment.name, func(t *testing.T) {
			s := newScenario(t)
			// The managers watch every namespace, as cmd/manager does; what
			// earlier scenarios left is waited out so they act on this one
			// alone (their DNS service is this scenario's simulator).
			s.waitFor("no MyApp or BackupConfig of an earlier scenario is left", onlyIn(s.ns))
			managers := startFailoverPair(t, s, bin)
			leader, standby := waitForLeader(t, s, managers)
			if t.Failed() {
				return
			}

			// From the kill on, the standby's log is watched closely, so the
			// takeover is timed while the burst goes on.
			tookOver := make(chan time.Duration, 1)
			killed := false
			kill := func() {
				killed = true
				leader.Kill()
				at := time.Now()
				go func() {
					for deadline := at.Add(stepTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
						if standby.Leads() {
							tookOver <- time.Since(at)
							return
						}
					}
					close(tookOver)
				}()
			}
			apps := make([]*appsv1alpha1.MyApp, 0, creations)
			for i := range creations {
				app := s.newMyApp(fmt.Sprintf("app-%03d", i))
				s.create(app)
				apps = append(apps, app)
				if i+1 == moment.afterCreations {
					kill()
				}
			}
			// The earliest MyApps go: most of them have their record by now,
			// some are still being created.
			for i := range deletions {
				s.remove(apps[i])
				if i+1 == moment.afterDeletions {
					kill()
				}
			}
			if !killed {
				// A scale too small for the moment: the leader dies at the
				// end of the burst.
				kill()
			}

			takeover, ok := <-tookOver
			switch {
			case !ok:
				t.Fatalf("%s did not take over within %s of the kill", standby.Name(), stepTimeout)
			case takeover > takeoverLimit:
				t.Errorf("the standby took over %s after the leader was killed, over %s", takeover.Round(100*time.Millisecond), takeoverLimit)
			}
			for _, app := range apps[:deletions] {
				s.waitFor("MyApp "+app.Name+" is gone", gone(app))
			}
			for _, app := range apps[deletions:] {
				s.waitFor("MyApp "+app.Name+" becomes Ready", s.readyAt(app))
			}
			r := s.oracle.settle(t)
			var tally tally
			tally.add(t, r, true)
			t.Logf("RESULT family=6 kill=%s creations=%d deletions=%d takeover=%s %s",
				moment.name, creations, deletions, takeover.Round(100*time.Millisecond), tally)
			judge(t, r, "failover ("+moment.name+")")
		})
	}
}

// startFailoverPair starts two manager processes with leader election,
// both pointed at the scenario's simulator.
func startFailoverPair(t *testing.T, s *scenario, bin string) []*fixtures.ManagerProcess {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte(simToken), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--dns-url=" + s.url, "--dns-token-file=" + token,
		"--backup-url=" + s.url, "--backup-token-file=" + token,
		"--dns-default-target=" + defaultTarget,
		// The oracle knows this installation's records by its owner ID.
		"--owner-id=" + ownerID,
		"--dns-pending-poll-interval=200ms",
		"--dns-orphan-sweep-interval=" + orphanSweepInterval.String(),
		"--backup-poll-interval=200ms",
		"--health-probe-bind-address=0",
		"--metrics-bind-address=0",
		"--leader-elect",
		"--leader-election-namespace=" + s.ns,
		"--leader-election-id=reliability-failover",
		"--leader-election-lease-duration=" + leaseDuration.String(),
		"--leader-election-renew-deadline=" + renewDeadline.String(),
		"--leader-election-retry-period=" + retryPeriod.String(),
	}
	return []*fixtures.ManagerProcess{
		fixtures.StartManagerProcess(t, "manager-a", bin, args...),
		fixtures.StartManagerProcess(t, "manager-b", bin, args...),
	}
}

// waitForLeader waits until one of the two managers leads, and returns it
// and the other.
func waitForLeader(t *testing.T, s *scenario, managers []*fixtures.ManagerProcess) (leader, standby *fixtures.ManagerProcess) {
	t.Helper()
	s.waitFor("one manager leads", func(context.Context) error {
		for i, m := range managers {
			if m.Leads() {
				leader, standby = m, managers[1-i]
				return nil
			}
		}
		return fmt.Errorf("neither manager has acquired the lease")
	})
	if standby != nil && standby.Leads() {
		t.Errorf("both managers lead")
	}
	return leader, standby
}

// onlyIn holds once no MyApp or BackupConfig exists outside ns.
func onlyIn(ns string) func(context.Context) error {
	return func(ctx context.Context) error {
		var apps appsv1alpha1.MyAppList
		if err := k8sClient.List(ctx, &apps); err != nil {
			return err
		}
		var bcs backupv1alpha1.BackupConfigList
		if err := k8sClient.List(ctx, &bcs); err != nil {
			return err
		}
		var others []string
		for _, o := range apps.Items {
			if o.Namespace != ns {
				others = append(others, "MyApp "+o.Namespace+"/"+o.Name)
			}
		}
		for _, o := range bcs.Items {
			if o.Namespace != ns {
				others = append(others, "BackupConfig "+o.Namespace+"/"+o.Name)
			}
		}
		if len(others) > 0 {
			return fmt.Errorf("%d left, such as %s", len(others), others[0])
		}
		return nil
	}
}
