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

// Package alerts tests config/prometheus's alert rules against the series a
// running manager really exports: every metric a rule reads must exist, and
// every alert must fire, naming its object, on a timeline built from the
// real series.
package alerts

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/util/teststorage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// TestAlertsFireOnTheOperatorsSeries drives a real manager into every
// situation an alert is about (a MyApp whose DNS cleanup waits, a scheduled
// BackupConfig, a DNS service that throttles and then fails), scrapes its
// /metrics and a standby replica's, and evaluates the rules with
// Prometheus's rule engine over timelines made of exactly the series
// scraped: both replicas running while the world fails, the manager gone,
// the manager crashing, and the leader gone with the standby left.
func TestAlertsFireOnTheOperatorsSeries(t *testing.T) {
	g := NewWithT(t)
	ns := fixtures.CreateNamespace(t, k8sClient, "alerts")

	app := &appsv1alpha1.MyApp{}
	app.Namespace, app.Name = ns, "web"
	app.Spec.Image, app.Spec.Host = "nginx:1.27", "web."+ns+".example.com"
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	bc := &backupv1alpha1.BackupConfig{}
	bc.Namespace, bc.Name = ns, "web-nightly"
	bc.Spec.AppRef.Name, bc.Spec.Schedule = "web", "0 3 * * *"
	g.Expect(k8sClient.Create(t.Context(), bc)).To(Succeed())

	// A second MyApp, backed up on change only, is deleted once backed up:
	// it is restored below while the DNS service is down, so its
	// BackupConfig waits for the Restore.
	api := &appsv1alpha1.MyApp{}
	api.Namespace, api.Name = ns, "api"
	api.Spec.Image, api.Spec.Host = "nginx:1.27", "api."+ns+".example.com"
	g.Expect(k8sClient.Create(t.Context(), api)).To(Succeed())
	apiBC := &backupv1alpha1.BackupConfig{}
	apiBC.Namespace, apiBC.Name = ns, "api-changes"
	apiBC.Spec.AppRef.Name = "api"
	g.Expect(k8sClient.Create(t.Context(), apiBC)).To(Succeed())

	// A third MyApp, backed up on change only, stays as backed up: it
	// owes no backup, however old its last one grows.
	docs := &appsv1alpha1.MyApp{}
	docs.Namespace, docs.Name = ns, "docs"
	docs.Spec.Image, docs.Spec.Host = "nginx:1.27", "docs."+ns+".example.com"
	g.Expect(k8sClient.Create(t.Context(), docs)).To(Succeed())
	docsBC := &backupv1alpha1.BackupConfig{}
	docsBC.Namespace, docsBC.Name = ns, "docs-changes"
	docsBC.Spec.AppRef.Name = "docs"
	g.Expect(k8sClient.Create(t.Context(), docsBC)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(docsBC), docsBC)).To(Succeed())
		g.Expect(docsBC.Status.LastSuccessfulBackupTime).NotTo(BeNil(), "the MyApp docs is backed up")
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		g.Expect(app.Status.DNS).NotTo(BeNil(), "the record is written")
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(bc), bc)).To(Succeed())
		g.Expect(bc.Status.LastSuccessfulBackupTime).NotTo(BeNil(), "the first backup succeeded")
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(apiBC), apiBC)).To(Succeed())
		g.Expect(apiBC.Status.LastSuccessfulBackupTime).NotTo(BeNil(), "the MyApp api is backed up")
	}, timeout, interval).Should(Succeed())
	g.Expect(k8sClient.Delete(t.Context(), api)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(api), api))
	}, timeout, interval).Should(BeTrue())

	// Another installation with this one's owner ID (the kube-system UID,
	// by default) keeps claiming it, as a cluster restored from this one's
	// etcd snapshot would.
	ownerID := claimTheOwnerIDElsewhere(t, g)
	g.Eventually(func() []float64 { return values(scrapeSamples(g, metricsURL), "myapp_dns_owner_id_shared") }, timeout, interval).
		Should(Equal([]float64{1}), "the leader finds the other installation's claim")

	// A backup of an image change fails, so failures are counted too.
	sim.FailBackups("disk full", 1)
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		app.Spec.Image = "nginx:1.28"
		g.Expect(k8sClient.Update(t.Context(), app)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(scrape, timeout, interval).Should(HaveKey("myapp_backupconfig_backups_failed_total"))

	// The DNS service throttles the deletion, then goes down: the cleanup
	// waits, and both outcomes are counted.
	sim.SetFault(simulator.ServiceDNS, simulator.AllOperations, simulator.Fault{Status: http.StatusTooManyRequests, RetryAfter: time.Second})
	t.Cleanup(func() { sim.ClearFaults(); sim.SetOutage(simulator.ServiceDNS, false) })
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(scrape, timeout, interval).Should(HaveKeyWithValue("myapp_external_requests_total",
		ContainElement(HaveKeyWithValue("outcome", "throttled"))))
	sim.ClearFaults()
	sim.SetOutage(simulator.ServiceDNS, true)

	// The MyApp api is restored while the DNS service is down, by a
	// Restore given three hours: it cannot become Ready, and its
	// BackupConfig takes no backup meanwhile.
	restore := &backupv1alpha1.Restore{}
	restore.Namespace, restore.Name = ns, "api-back"
	restore.Spec.Source.BackupConfigRef = &backupv1alpha1.BackupConfigReference{Name: apiBC.Name}
	restore.Spec.Timeout = &metav1.Duration{Duration: 3 * time.Hour}
	g.Expect(k8sClient.Create(t.Context(), restore)).To(Succeed())

	var families map[string][]map[string]string
	g.Eventually(func(g Gomega) {
		families = scrape(g)
		g.Expect(families).To(HaveKeyWithValue("myapp_external_requests_total", ContainElement(HaveKeyWithValue("outcome", "transient"))))
		g.Expect(families).To(HaveKeyWithValue("myapp_dns_cleanup_started_timestamp_seconds",
			ContainElement(SatisfyAll(HaveKeyWithValue("namespace", ns), HaveKeyWithValue("name", "web")))))
		g.Expect(families).To(HaveKeyWithValue("myapp_backupconfig_backup_due_timestamp_seconds",
			ContainElement(SatisfyAll(HaveKeyWithValue("namespace", ns), HaveKeyWithValue("name", "web-nightly")))))
		g.Expect(samplesOf(scrapeSamples(g, metricsURL), "myapp_backupconfig_waiting_for_restore_since_timestamp_seconds",
			"api-changes")).To(ConsistOf(BeNumerically(">", 0)), "the BackupConfig of api waits for the Restore")
		g.Expect(samplesOf(scrapeSamples(g, metricsURL), "myapp_backupconfig_max_backup_age_seconds", "api-changes")).
			To(Equal([]float64{(24 * time.Hour).Seconds()}), "the restored MyApp api waits for its backup")
		g.Expect(samplesOf(scrapeSamples(g, metricsURL), "myapp_backupconfig_max_backup_age_seconds", "web-nightly")).
			To(Equal([]float64{(48 * time.Hour).Seconds()}), "twice the daily schedule's interval")
		g.Expect(samplesOf(scrapeSamples(g, metricsURL), "myapp_backupconfig_max_backup_age_seconds", "docs-changes")).
			To(BeEmpty(), "the MyApp docs is as last backed up")
		g.Expect(families).To(HaveKeyWithValue("controller_runtime_reconcile_errors_total",
			ContainElement(HaveKeyWithValue("controller", "myapp"))))
	}, timeout, interval).Should(Succeed(), "the manager exports every series the alerts read")
	g.Expect(families).To(HaveKeyWithValue("myapp_operator_build_info",
		ContainElement(SatisfyAll(HaveKey("version"), HaveKey("commit"), HaveKey("goversion")))), "the manager says which build runs")
	leader := scrapeSamples(g, metricsURL)
	g.Expect(values(leader, "leader_election_master_status")).To(Equal([]float64{1}), "the manager leads")

	// A second manager on the same lease is a standby: it exports
	// leader_election_master_status 0 and reconciles nothing.
	standbyAddr, err := controlplane.FreeAddress()
	g.Expect(err).NotTo(HaveOccurred())
	standbyProcess := fixtures.StartManagerProcess(t, "standby", managerBin,
		slices.Concat(managerArgs, []string{"--metrics-bind-address=" + standbyAddr})...)
	var standby []sample
	g.Eventually(func(g Gomega) {
		standby = scrapeSamples(g, "http://"+standbyAddr+"/metrics")
		g.Expect(values(standby, "leader_election_master_status")).To(Equal([]float64{0}))
	}, timeout, interval).Should(Succeed(), "the standby exports that it does not lead")
	standbyProcess.Stop()

	alerting := loadAlertingRules(t)
	g.Expect(alerting).To(HaveLen(12))

	// Every metric a rule reads is one the manager exports, or up, which
	// Prometheus writes for each scrape; and every selector names the job
	// config/prometheus/monitor.yaml scrapes the manager as, so that another
	// program's controller-runtime series cannot trip a rule.
	for _, rule := range alerting {
		parser.Inspect(rule.Query(), func(node parser.Node, _ []parser.Node) error {
			if vs, ok := node.(*parser.VectorSelector); ok {
				_, exported := families[vs.Name]
				g.Expect(exported || vs.Name == "up").To(BeTrue(), "alert %s reads %s, which the manager does not export", rule.Name(), vs.Name)
				g.Expect(vs.LabelMatchers).To(ContainElement(SatisfyAll(HaveField("Name", "job"), HaveField("Value", job),
					HaveField("Type", labels.MatchEqual))), "alert %s selects %s by job=%q", rule.Name(), vs.Name, job)
			}
			return nil
		})
	}

	// So is every metric a panel of the Grafana dashboard reads.
	for _, expr := range dashboardQueries(t) {
		parsed, err := parser.NewParser(parser.Options{}).ParseExpr(strings.ReplaceAll(expr, "$__rate_interval", "5m"))
		g.Expect(err).NotTo(HaveOccurred(), "dashboard query %s", expr)
		parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
			if vs, ok := node.(*parser.VectorSelector); ok {
				_, exported := families[vs.Name]
				g.Expect(exported).To(BeTrue(), "the dashboard reads %s, which the manager does not export", vs.Name)
			}
			return nil
		})
	}

	// The timelines are made of the scraped series, labelled with the job
	// and instance as Prometheus labels them, plus each target's up.
	// Timestamp gauges keep their value; the counters the rules rate grow
	// as in a lasting outage (the failing and throttled outcomes and
	// reconcile errors by one a second, the rest not at all).
	now := time.Now().Truncate(time.Minute)
	end := now.Add(2 * time.Hour)
	for _, s := range leader {
		if strings.HasSuffix(s.name, "_timestamp_seconds") {
			end = maxTime(end, time.Unix(int64(s.value), 0).Add(2*time.Hour))
		}
	}
	always := func(time.Time) bool { return true }
	until := func(last time.Time) func(time.Time) bool { return func(ts time.Time) bool { return !ts.After(last) } }
	leaderUntil := func(present func(time.Time) bool) []series {
		return target("leader", leader, now, present)
	}

	// The operator runs with a leader and a standby while the world
	// fails: each alert about the world fires, naming its object, and the
	// two about the operator do not.
	fired := evaluate(t, slices.Concat(leaderUntil(always), target("standby", standby, now, always)), now, end)
	named := func(name string) labels.Labels { return labels.FromStrings("namespace", ns, "name", name) }
	g.Expect(fired).To(HaveKeyWithValue("MyAppDNSCleanupStuck", ContainElement(includes(named("web")))))
	g.Expect(fired).To(HaveKeyWithValue("BackupConfigBackupOverdue", ContainElement(includes(named("web-nightly")))))
	g.Expect(fired).To(HaveKeyWithValue("BackupConfigWaitingForRestore", ConsistOf(includes(named("api-changes")))),
		"only the BackupConfig quiet for a Restore, not web-nightly, whose gauge is 0")
	g.Expect(fired).To(HaveKeyWithValue("MyAppExternalServiceFailing", ContainElement(includes(labels.FromStrings("service", "dns")))))
	g.Expect(fired).To(HaveKeyWithValue("MyAppExternalServiceThrottling", ContainElement(includes(labels.FromStrings("service", "dns")))))
	g.Expect(fired).To(HaveKeyWithValue("MyAppReconcileErrors", ContainElement(includes(labels.FromStrings("controller", "myapp")))))
	g.Expect(fired).To(HaveKey("MyAppDNSDriftPassFailing"), "the DNS outage keeps the drift pass from listing")
	g.Expect(fired).To(HaveKeyWithValue("MyAppOwnerIDShared", ContainElement(includes(labels.FromStrings("owner_id", ownerID)))))
	g.Expect(fired).NotTo(HaveKey("MyAppOperatorDown"))
	g.Expect(fired).NotTo(HaveKey("MyAppOperatorNoLeader"))
	g.Expect(fired).NotTo(HaveKey("MyAppDNSZoneTooLarge"), "no call was refused as too large")

	// The simulator's DNS service answers in pages, so no call of this
	// world is too large; the webhook client's too-large outcome
	// (external.KindTooLarge, a zone over --dns-webhook-max-body-size)
	// is added to the leader's series as every call would count it, with
	// the labels of the scraped DNS calls: it fires with the service's
	// name, and not once the zone fits again.
	var dnsCall labels.Labels
	for _, s := range leader {
		if s.name == "myapp_external_requests_total" && s.labels.Get("service") == "dns" {
			dnsCall = s.labels
			break
		}
	}
	g.Expect(dnsCall.IsEmpty()).To(BeFalse(), "the leader counted DNS calls")
	tooLarge := labels.NewBuilder(dnsCall).Set("outcome", "too_large").Labels()
	overCap := target("leader", []sample{{name: "myapp_external_requests_total", labels: tooLarge}}, now, always)
	fired = evaluate(t, overCap, now, now.Add(30*time.Minute))
	g.Expect(fired).To(HaveKeyWithValue("MyAppDNSZoneTooLarge", ConsistOf(includes(labels.FromStrings("service", "dns")))))
	fits := []series{{labels: labels.NewBuilder(tooLarge).Set("job", job).Set("instance", "leader").Labels(), start: now,
		value: func(time.Time) (float64, bool) { return 40, true }}}
	g.Expect(evaluate(t, fits, now, now.Add(30*time.Minute))).NotTo(HaveKey("MyAppDNSZoneTooLarge"),
		"a count that no longer grows")

	// The manager's Deployment goes after 15 minutes: its target and all
	// its series go with it.
	gone := now.Add(15 * time.Minute)
	fired = evaluate(t, leaderUntil(until(gone)), now, now.Add(time.Hour))
	g.Expect(fired).To(HaveKey("MyAppOperatorDown"))
	g.Expect(fired).NotTo(HaveKey("MyAppOperatorNoLeader"))

	// The manager crashes after 15 minutes and stays down: the target
	// stays, its scrapes fail (up is 0) and its other series end.
	crashed := leaderUntil(until(gone))
	crashed = append(crashed, series{labels: targetLabels("up", "leader"), value: func(time.Time) (float64, bool) { return 0, true }, start: gone.Add(time.Minute)})
	fired = evaluate(t, crashed, now, now.Add(time.Hour))
	g.Expect(fired).To(HaveKey("MyAppOperatorDown"))

	// The leader goes after 15 minutes and the standby, still running,
	// does not take over.
	fired = evaluate(t, slices.Concat(leaderUntil(until(gone)), target("standby", standby, now, always)), now, now.Add(time.Hour))
	g.Expect(fired).To(HaveKey("MyAppOperatorNoLeader"))
	g.Expect(fired).NotTo(HaveKey("MyAppOperatorDown"))

	// BackupConfigNoRecentBackup, on the backups' series alone over two
	// days: nothing fires within the first day; then the BackupConfig of
	// the restored MyApp api (a change waits for its backup: a day) and,
	// after two daily slots missed, web-nightly fire, and docs-changes,
	// whose MyApp is as backed up, never does.
	var backups []sample
	for _, s := range leader {
		if strings.HasPrefix(s.name, "myapp_backupconfig_") && strings.HasSuffix(s.name, "_seconds") &&
			!strings.Contains(s.name, "duration") {
			backups = append(backups, s)
		}
	}
	fired = evaluate(t, target("leader", backups, now, always), now, now.Add(23*time.Hour))
	g.Expect(fired).NotTo(HaveKey("BackupConfigNoRecentBackup"), "no BackupConfig's backup is too old within a day")
	fired = evaluate(t, target("leader", backups, now, always), now, now.Add(52*time.Hour))
	g.Expect(fired).To(HaveKeyWithValue("BackupConfigNoRecentBackup",
		ConsistOf(includes(named("api-changes")), includes(named("web-nightly")))),
		"not docs-changes, whose MyApp owes no backup")

	for _, rule := range alerting {
		g.Expect(rule.Annotations().Get("runbook_url")).To(ContainSubstring("docs/runbook.md#"+strings.ToLower(rule.Name())), rule.Name())
	}

	// Let the MyApp go, so the namespace can.
	sim.SetOutage(simulator.ServiceDNS, false)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app))
	}, timeout, interval).Should(BeTrue())
}

// claimTheOwnerIDElsewhere writes, until the test ends, another
// installation's claim of the manager's owner ID (the kube-system
// namespace's UID) every 100ms, and returns the ID.
func claimTheOwnerIDElsewhere(t *testing.T, g *WithT) string {
	t.Helper()
	kubeSystem := &corev1.Namespace{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: "kube-system"}, kubeSystem)).To(Succeed())
	ownerID := string(kubeSystem.UID)
	d, err := httpdns.New(external.Config{BaseURL: simURL, Token: external.StaticTokenSource(simToken), MaxRetries: 1})
	g.Expect(err).NotTo(HaveOccurred())
	claims := d.(dns.InstallationClaims)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_, _ = claims.PutInstallationClaim(ctx, dns.InstallationClaim{OwnerID: ownerID, Nonce: "elsewhere",
				Cluster: "restored-cluster", Instance: "manager-elsewhere", CheckInterval: 100 * time.Millisecond})
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ownerID
}

// TestRunbookHasASectionPerAlert checks each runbook_url's anchor exists.
func TestRunbookHasASectionPerAlert(t *testing.T) {
	g := NewWithT(t)
	runbook, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "docs", "runbook.md"))
	g.Expect(err).NotTo(HaveOccurred())
	for _, rule := range loadAlertingRules(t) {
		g.Expect(string(runbook)).To(ContainSubstring("\n## "+rule.Name()+"\n"), "docs/runbook.md has a section for %s", rule.Name())
	}
}

// TestMonitorScrapesTheRulesJob checks that config/prometheus/monitor.yaml
// scrapes the metrics Service under the job every rule selects: its
// jobLabel names a label of the Service whose value is that job.
func TestMonitorScrapesTheRulesJob(t *testing.T) {
	g := NewWithT(t)
	var monitor struct {
		Spec struct {
			JobLabel string `json:"jobLabel"`
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port        string `json:"port"`
				HonorLabels bool   `json:"honorLabels"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	var service struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Ports []struct {
				Name string `json:"name"`
			} `json:"ports"`
		} `json:"spec"`
	}
	for file, into := range map[string]any{"config/prometheus/monitor.yaml": &monitor, "config/manager/metrics_service.yaml": &service} {
		data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), file))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(yaml.Unmarshal(data, into)).To(Succeed(), file)
	}
	g.Expect(service.Metadata.Labels).To(HaveKeyWithValue(monitor.Spec.JobLabel, job), "the job label is the rules' job")
	for k, v := range monitor.Spec.Selector.MatchLabels {
		g.Expect(service.Metadata.Labels).To(HaveKeyWithValue(k, v), "the monitor selects the metrics Service")
	}
	g.Expect(monitor.Spec.Endpoints).To(HaveLen(1))
	g.Expect(service.Spec.Ports).To(ContainElement(HaveField("Name", monitor.Spec.Endpoints[0].Port)))
	g.Expect(monitor.Spec.Endpoints[0].HonorLabels).To(BeTrue(), "the per-object series keep their namespace label")
}

// dashboardQueries are the PromQL queries of the Grafana dashboard's panels.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "grafana", "myapp-operator.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range dashboard.Panels {
		for _, target := range p.Targets {
			out = append(out, target.Expr)
		}
	}
	if len(out) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	return out
}

// includes matches alert labels holding every one of want's.
func includes(want labels.Labels) OmegaMatcher {
	return WithTransform(func(l labels.Labels) bool {
		ok := true
		want.Range(func(w labels.Label) { ok = ok && l.Get(w.Name) == w.Value })
		return ok
	}, BeTrue())
}

// loadAlertingRules parses the PrometheusRule's groups as Prometheus does
// (rulefmt validates them) and builds the alerting rules.
func loadAlertingRules(t *testing.T) []*rules.AlertingRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "config", "prometheus", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var prometheusRule struct {
		Spec any `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &prometheusRule); err != nil {
		t.Fatal(err)
	}
	groups, err := yaml.Marshal(prometheusRule.Spec)
	if err != nil {
		t.Fatal(err)
	}
	p := parser.NewParser(parser.Options{})
	parsed, errs := rulefmt.Parse(groups, false, model.UTF8Validation, p, promslog.NewNopLogger())
	if len(errs) > 0 {
		t.Fatalf("config/prometheus/prometheusrule.yaml: %v", errs)
	}
	var out []*rules.AlertingRule
	for _, group := range parsed.Groups {
		for _, r := range group.Rules {
			if r.Alert == "" {
				continue
			}
			expr, err := p.ParseExpr(r.Expr)
			if err != nil {
				t.Fatalf("%s: %v", r.Alert, err)
			}
			out = append(out, rules.NewAlertingRule(r.Alert, expr, time.Duration(r.For), time.Duration(r.KeepFiringFor),
				labels.FromMap(r.Labels), labels.FromMap(r.Annotations), labels.EmptyLabels(), "", false, promslog.NewNopLogger()))
		}
	}
	return out
}

// sample is one scraped series and its value.
type sample struct {
	name   string
	labels labels.Labels
	value  float64
}

// scrape reads the manager's /metrics into the label sets of each family.
func scrape(g Gomega) map[string][]map[string]string {
	families := map[string][]map[string]string{}
	for _, s := range scrapeSamples(g, metricsURL) {
		families[s.name] = append(families[s.name], s.labels.Map())
	}
	return families
}

// scrapeSamples reads a manager's /metrics at url as Prometheus stores it: one
// series per sample, histograms as their _bucket, _sum and _count series.
func scrapeSamples(g Gomega, url string) []sample {
	resp, err := http.Get(url)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	decoder := expfmt.SampleDecoder{
		Dec:  expfmt.NewDecoder(resp.Body, expfmt.NewFormat(expfmt.TypeTextPlain)),
		Opts: &expfmt.DecodeOptions{Timestamp: model.Now()},
	}
	var out []sample
	for {
		var vector model.Vector
		if err := decoder.Decode(&vector); err != nil {
			g.Expect(err.Error()).To(Equal("EOF"))
			return out
		}
		for _, s := range vector {
			b := labels.NewScratchBuilder(len(s.Metric))
			for k, v := range s.Metric {
				b.Add(string(k), string(v))
			}
			b.Sort()
			out = append(out, sample{name: string(s.Metric[model.MetricNameLabel]), labels: b.Labels(), value: float64(s.Value)})
		}
	}
}

// values are the values of the samples named name.
func values(samples []sample, name string) []float64 {
	var out []float64
	for _, s := range samples {
		if s.name == name {
			out = append(out, s.value)
		}
	}
	return out
}

// samplesOf returns the values of the samples named name of the object
// named object.
func samplesOf(samples []sample, name, object string) []float64 {
	var out []float64
	for _, s := range samples {
		if s.name == name && s.labels.Get("name") == object {
			out = append(out, s.value)
		}
	}
	return out
}

// job is the job the rules select: config/prometheus/monitor.yaml scrapes
// the manager under it.
const job = "myapp-operator"

// series is one series of a timeline: its labels, and its value at each
// minute from start on, where present.
type series struct {
	labels labels.Labels
	start  time.Time
	value  func(ts time.Time) (float64, bool)
}

// targetLabels are the labels of a series named name scraped from the
// manager instance, as Prometheus labels it.
func targetLabels(name, instance string) labels.Labels {
	return labels.FromStrings(model.MetricNameLabel, name, "job", job, "instance", instance)
}

// target is the timeline of one scraped manager instance from start, while
// present holds: its samples with the job and instance labels, and up at 1.
// The counters the rules rate grow as in a lasting outage (the failing,
// throttled and too-large outcomes and reconcile errors by one a second); every other
// series keeps its value.
func target(instance string, samples []sample, start time.Time, present func(time.Time) bool) []series {
	out := make([]series, 0, 1+len(samples))
	out = append(out, series{labels: targetLabels("up", instance), start: start,
		value: func(ts time.Time) (float64, bool) { return 1, present(ts) }})
	for _, s := range samples {
		b := labels.NewBuilder(s.labels)
		b.Set("job", job)
		b.Set("instance", instance)
		growing := s.name == "controller_runtime_reconcile_errors_total" ||
			(s.name == "myapp_external_requests_total" && slices.Contains([]string{"transient", "throttled", "too_large"}, s.labels.Get("outcome")))
		value := s.value
		out = append(out, series{labels: b.Labels(), start: start, value: func(ts time.Time) (float64, bool) {
			if growing {
				return value + ts.Sub(start).Seconds(), present(ts)
			}
			return value, present(ts)
		}})
	}
	return out
}

// evaluate stores timeline from start to end at one sample a minute and
// evaluates freshly loaded rules over it every minute, as Prometheus would.
// No alert may fire at the first evaluation. It returns the label sets of
// every alert that fired, by rule.
func evaluate(t *testing.T, timeline []series, start, end time.Time) map[string][]labels.Labels {
	t.Helper()
	g := NewWithT(t)
	storage := teststorage.New(t)
	appender := storage.Appender(t.Context())
	for _, s := range timeline {
		for ts := maxTime(start, s.start); !ts.After(end); ts = ts.Add(time.Minute) {
			if v, ok := s.value(ts); ok {
				_, err := appender.Append(0, s.labels, ts.UnixMilli(), v)
				g.Expect(err).NotTo(HaveOccurred())
			}
		}
	}
	g.Expect(appender.Commit()).To(Succeed())

	alerting := loadAlertingRules(t)
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	query := rules.EngineQueryFunc(engine, storage)
	fired := map[string][]labels.Labels{}
	for ts := start.Add(time.Minute); !ts.After(end); ts = ts.Add(time.Minute) {
		for _, rule := range alerting {
			_, err := rule.Eval(t.Context(), 0, ts, query, nil, 0)
			g.Expect(err).NotTo(HaveOccurred(), "evaluating %s", rule.Name())
			for _, a := range rule.ActiveAlerts() {
				if ts.Equal(start.Add(time.Minute)) {
					g.Expect(a.State).NotTo(Equal(rules.StateFiring), "%s fires at once", rule.Name())
				}
				if a.State == rules.StateFiring && !slices.ContainsFunc(fired[rule.Name()], func(l labels.Labels) bool { return labels.Equal(l, a.Labels) }) {
					fired[rule.Name()] = append(fired[rule.Name()], a.Labels)
				}
			}
		}
	}
	return fired
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
