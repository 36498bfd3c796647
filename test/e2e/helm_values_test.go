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

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
)

// allOptionsValues is the values file with every option of the chart on,
// which `make helm-lint` lints too.
const allOptionsValues = chartDir + "/ci/all-options-values.yaml"

// haValues is the chart's recommended setting for high availability.
const haValues = chartDir + "/values-ha.yaml"

// runHelm runs helm in the repository root and returns its stdout, or its
// combined output when it fails.
func runHelm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(tool(t, "helm"), args...)
	cmd.Dir = controlplane.RepoRoot()
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return append(stdout.Bytes(), stderr.Bytes()...), err
	}
	return stdout.Bytes(), nil
}

// setArgs turns values into helm's --set flags.
func setArgs(sets ...string) []string {
	args := make([]string, 0, 2*len(sets))
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

// badValues are values of the wrong form, each with the path of the value
// helm must name when it refuses it. Every value of values.yaml has at
// least one (TestHelmChartSchemaRefusesBadValues checks that too).
var badValues = []struct {
	sets []string
	path string
}{
	{[]string{"dnsProvider=route53"}, "/dnsProvider"},
	{[]string{"dnsprovider=http"}, "'dnsprovider'"},
	{[]string{"global=1"}, "/global"},
	{[]string{"image.repository="}, "/image/repository"},
	{[]string{"image.tag=v1:latest"}, "/image/tag"},
	{[]string{"image.digest=latest"}, "/image/digest"},
	{[]string{"image.pullPolicy=Sometimes"}, "/image/pullPolicy"},
	{[]string{"imagePullSecrets[0].nam=registry"}, "/imagePullSecrets/0"},
	{[]string{"replicaCount=two"}, "/replicaCount"},
	{[]string{"replicaCount=-1"}, "/replicaCount"},
	{[]string{"crd.enable=yes"}, "/crd/enable"},
	{[]string{"crd.keep=1"}, "/crd/keep"},
	{[]string{"rfc2136.server=ns1 example.com"}, "/rfc2136/server"},
	{[]string{"rfc2136.zone=example..com"}, "/rfc2136/zone"},
	{[]string{"rfc2136.nameservers={ns1.example.com:53,ns2 example.com}"}, "/rfc2136/nameservers/1"},
	{[]string{"rfc2136.timeout=5 seconds"}, "/rfc2136/timeout"},
	{[]string{"rfc2136.tsigKey.secretName=DNS_TSIG"}, "/rfc2136/tsigKey/secretName"},
	{[]string{"rfc2136.tsigKey.secretKey="}, "/rfc2136/tsigKey/secretKey"},
	{[]string{"rfc2136.ownerID=cluster-a"}, "'ownerID'"},
	{[]string{"backupProvider=glacier"}, "/backupProvider"},
	{[]string{"s3.endpoint=s3.example.com"}, "/s3/endpoint"},
	{[]string{"s3.bucket=Backups_1"}, "/s3/bucket"},
	{[]string{"s3.region="}, "/s3/region"},
	{[]string{"s3.pathStyle=yes"}, "/s3/pathStyle"},
	{[]string{"s3.prefix=team-a/../team-b"}, "/s3/prefix"},
	{[]string{"s3.credentialsSecret.name=S3_KEYS"}, "/s3/credentialsSecret/name"},
	{[]string{"s3.credentialsSecret.accessKeyIDKey="}, "/s3/credentialsSecret/accessKeyIDKey"},
	{[]string{"s3.credentialsSecret.secretAccessKeyKey=secret key"}, "/s3/credentialsSecret/secretAccessKeyKey"},
	{[]string{"s3.credentialsSecret.sessionTokenKey=session token"}, "/s3/credentialsSecret/sessionTokenKey"},
	{[]string{"s3.caBundle=1"}, "/s3/caBundle"},
	{[]string{"s3.accessKey=AKIA"}, "'accessKey'"},
	{[]string{"webhook.zone=example..com"}, "/webhook/zone"},
	{[]string{"webhook.singleWriter=yes"}, "/webhook/singleWriter"},
	{[]string{"webhook.timeout=15 seconds"}, "/webhook/timeout"},
	{[]string{"webhook.readInterval=soon"}, "/webhook/readInterval"},
	{[]string{"webhook.maxBodySize=-1"}, "/webhook/maxBodySize"},
	{[]string{"webhook.image.repository=registry example.com/external-dns"}, "/webhook/image/repository"},
	{[]string{"webhook.image.tag=v1:latest"}, "/webhook/image/tag"},
	{[]string{"webhook.image.pullPolicy=Sometimes"}, "/webhook/image/pullPolicy"},
	{[]string{"webhook.env[0].value=x"}, "/webhook/env/0"},
	{[]string{"webhook.args[0]=1"}, "/webhook/args/0"},
	{[]string{"webhook.healthPort=0"}, "/webhook/healthPort"},
	{[]string{"webhook.livenessProbe=1"}, "/webhook/livenessProbe"},
	{[]string{"webhook.readinessProbe=1"}, "/webhook/readinessProbe"},
	{[]string{"webhook.extraVolumeMounts[0].name=x", "webhook.extraVolumeMounts[0].mountPath=etc/x"}, "/webhook/extraVolumeMounts/0/mountPath"},
	{[]string{"webhook.resources.request.cpu=1"}, "/webhook/resources"},
	{[]string{"webhook.securityContext=1"}, "/webhook/securityContext"},
	{[]string{"dnsProvider=webhook", "webhook.image.repository=r", "webhook.image.tag=t"}, "/webhook/zone"},
	{[]string{"externalServices.dnsURL=dns.internal"}, "/externalServices/dnsURL"},
	{[]string{"externalServices.backupURL=ftp://backup.internal"}, "/externalServices/backupURL"},
	{[]string{"externalServices.tokenSecret.name="}, "/externalServices/tokenSecret/name"},
	{[]string{"externalServices.tokenSecret.create=sure"}, "/externalServices/tokenSecret/create"},
	{[]string{"externalServices.tokenSecret.token=1"}, "/externalServices/tokenSecret/token"},
	{[]string{"externalServices.caBundle=1"}, "/externalServices/caBundle"},
	{[]string{"manager.logLevel=verbose"}, "/manager/logLevel"},
	{[]string{"manager.leaderElection.enabled=on"}, "/manager/leaderElection/enabled"},
	{[]string{"manager.leaderElection.leaseDuration=15"}, "/manager/leaderElection/leaseDuration"},
	{[]string{"manager.leaderElection.renewDeadline=10 s"}, "/manager/leaderElection/renewDeadline"},
	{[]string{"manager.leaderElection.retryPeriod=2x"}, "/manager/leaderElection/retryPeriod"},
	{[]string{"manager.leaderElection.warmStandby=yes"}, "/manager/leaderElection/warmStandby"},
	{[]string{"manager.priorityQueue=1"}, "/manager/priorityQueue"},
	{[]string{"manager.maxConcurrentReconciles=0"}, "/manager/maxConcurrentReconciles"},
	{[]string{"manager.maxConcurentReconciles=4"}, "'maxConcurentReconciles'"},
	{[]string{"manager.dnsPendingPollInterval=5"}, "/manager/dnsPendingPollInterval"},
	{[]string{"manager.dnsDriftCheck=watch"}, "/manager/dnsDriftCheck"},
	{[]string{"manager.dnsDriftCheckInterval=1d"}, "/manager/dnsDriftCheckInterval"},
	{[]string{"manager.dnsOrphanSweepInterval=-1h"}, "/manager/dnsOrphanSweepInterval"},
	{[]string{"manager.dnsRecordTTL=10"}, "/manager/dnsRecordTTL"},
	{[]string{"manager.dnsDefaultTarget=192.0.2.1 192.0.2.2"}, "/manager/dnsDefaultTarget"},
	{[]string{"manager.ingressClassName=Nginx"}, "/manager/ingressClassName"},
	{[]string{"manager.backupPollInterval=10"}, "/manager/backupPollInterval"},
	{[]string{"manager.backupTimeout=6 hours"}, "/manager/backupTimeout"},
	{[]string{"manager.finalBackupAttempts=0"}, "/manager/finalBackupAttempts"},
	{[]string{"manager.finalBackupTeardownLimit=10 minutes"}, "/manager/finalBackupTeardownLimit"},
	{[]string{"manager.gracefulShutdownTimeout=30"}, "/manager/gracefulShutdownTimeout"},
	{[]string{"manager.maxRetryAfter=5min"}, "/manager/maxRetryAfter"},
	{[]string{"manager.extraArgs={-v}"}, "/manager/extraArgs/0"},
	{[]string{"manager.resources.request.cpu=1"}, "/manager/resources"},
	{[]string{"manager.nodeSelector.zone=1"}, "/manager/nodeSelector/zone"},
	{[]string{"manager.tolerations[0].operator=Maybe"}, "/manager/tolerations/0/operator"},
	{[]string{"manager.affinity.nodeAfinity.x=1"}, "/manager/affinity"},
	{[]string{"manager.topologySpreadConstraints[0].maxSkew=1"}, "/manager/topologySpreadConstraints/0"},
	{[]string{"manager.priorityClassName=High"}, "/manager/priorityClassName"},
	{[]string{"manager.podAnnotations.team=1"}, "/manager/podAnnotations/team"},
	{[]string{"manager.env[0].value=x"}, "/manager/env/0"},
	{[]string{"manager.extraVolumes[0].secret.secretName=x"}, "/manager/extraVolumes/0"},
	{[]string{"manager.extraVolumeMounts[0].name=x", "manager.extraVolumeMounts[0].mountPath=etc/x"}, "/manager/extraVolumeMounts/0/mountPath"},
	{[]string{"ownerID=Prod/EU"}, "/ownerID"},
	{[]string{"podDisruptionBudget.enable=maybe"}, "/podDisruptionBudget/enable"},
	{[]string{"podDisruptionBudget.minAvailable=half"}, "/podDisruptionBudget/minAvailable"},
	{[]string{"podDisruptionBudget.maxUnavailable=-1"}, "/podDisruptionBudget/maxUnavailable"},
	{[]string{"rbac.aggregateToDefaultRoles=yes"}, "/rbac/aggregateToDefaultRoles"},
	{[]string{"rbac.namespaced=yes"}, "/rbac/namespaced"},
	{[]string{"manager.watchNamespaces[0]=Team_A"}, "/manager/watchNamespaces/0"},
	{[]string{"metrics.enable=no"}, "/metrics/enable"},
	{[]string{"prometheus.rules.enable=1"}, "/prometheus/rules/enable"},
	{[]string{"prometheus.rules.labels.release=1"}, "/prometheus/rules/labels/release"},
	{[]string{"prometheus.serviceMonitor.enable=on"}, "/prometheus/serviceMonitor/enable"},
	{[]string{"prometheus.serviceMonitor.labels.release=1"}, "/prometheus/serviceMonitor/labels/release"},
	{[]string{"prometheus.serviceMonitor.interval=30 seconds"}, "/prometheus/serviceMonitor/interval"},
	{[]string{"prometheus.serviceMonitor.scrapeTimeout=10"}, "/prometheus/serviceMonitor/scrapeTimeout"},
	{[]string{"prometheus.serviceMonitor.honorLabels=false"}, "'honorLabels'"},
}

// TestHelmChartSchemaRefusesBadValues shows values.schema.json at work:
// helm template and helm lint --strict refuse each value of the wrong form
// (a misspelt key, a duration that is not one, a provider the manager does
// not have...) with an error naming it, and accept the default values and
// the values with every option on. Every value of values.yaml has a bad
// value here. helm install and upgrade validate the same way; one install
// shows it.
func TestHelmChartSchemaRefusesBadValues(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	out, err := runHelm(t, "install", "schema", chartDir, "--dry-run=client", "--kubeconfig", kubeconfig,
		"--namespace", "myapp-system", "--set", "crd.enable=false", "--set", "manager.maxConcurentReconciles=4")
	if err == nil || !strings.Contains(string(out), "'maxConcurentReconciles'") {
		t.Errorf("helm install does not refuse a misspelt value by name: %v\n%s", err, out)
	}

	for _, good := range [][]string{nil, {"-f", allOptionsValues}, {"-f", haValues}, setArgs(rfc2136Values...)} {
		out, err := runHelm(t, append([]string{"lint", "--strict", chartDir}, good...)...)
		if err != nil {
			t.Errorf("helm lint --strict %v: %v\n%s", good, err, out)
		}
		if out, err := runHelm(t, append([]string{"template", releaseName, chartDir}, good...)...); err != nil {
			t.Errorf("helm template %v: %v\n%s", good, err, out)
		}
	}

	covered := map[string]bool{}
	for _, tt := range badValues {
		for _, cmd := range [][]string{{"template", releaseName, chartDir}, {"lint", "--strict", chartDir}} {
			out, err := runHelm(t, append(cmd, setArgs(tt.sets...)...)...)
			if err == nil {
				t.Errorf("helm %s accepts %v", cmd[0], tt.sets)
				continue
			}
			if !strings.Contains(string(out), "values don't meet the specifications of the schema") || !strings.Contains(string(out), tt.path) {
				t.Errorf("helm %s refuses %v without naming %s:\n%s", cmd[0], tt.sets, tt.path, out)
			}
		}
		covered[strings.Trim(tt.path, "'")] = true
	}

	// Every value of values.yaml, down to the values that are Kubernetes
	// objects of their own (resources, affinity...), has a bad value above.
	for _, path := range valuePaths(t) {
		ok := false
		for c := range covered {
			if c == path || strings.HasPrefix(path, c+"/") || strings.HasPrefix(c, path+"/") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no bad value for %s", path)
		}
	}
}

// valuePaths lists the paths of values.yaml's values, as /a/b, descending
// into maps with values.
func valuePaths(t *testing.T) []string {
	t.Helper()
	var values map[string]any
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := k8syaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	var paths []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			paths = append(paths, prefix)
			return
		}
		for k, sub := range m {
			walk(prefix+"/"+k, sub)
		}
	}
	walk("", values)
	sort.Strings(paths)
	return paths
}

// TestHelmChartSchemaDescribesEveryValue walks values.yaml and
// values.schema.json side by side: every value has a schema of its own
// (so it is checked, and a misspelt key is refused), and every property
// the schema closes with additionalProperties: false is a value of
// values.yaml (so the schema does not describe values the chart has not),
// but in the values that are Kubernetes types, whose other fields are
// optional.
func TestHelmChartSchemaDescribesEveryValue(t *testing.T) {
	g := NewWithT(t)
	kubernetesTypes := map[string]bool{"/manager/resources": true, "/manager/affinity": true, "/webhook/resources": true}
	var values, schema map[string]any
	data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), chartDir, "values.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8syaml.Unmarshal(data, &values)).To(Succeed())
	data, err = os.ReadFile(filepath.Join(controlplane.RepoRoot(), chartDir, "values.schema.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(data, &schema)).To(Succeed())
	definitions, _ := schema["definitions"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			def, ok := definitions[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
			g.Expect(ok).To(BeTrue(), "%s resolves", ref)
			return def
		}
		return s
	}
	var walk func(path string, v any, s map[string]any)
	walk = func(path string, v any, s map[string]any) {
		s = resolve(s)
		g.Expect(s).NotTo(BeEmpty(), "%s has a schema", path)
		m, isMap := v.(map[string]any)
		props, hasProps := s["properties"].(map[string]any)
		if !isMap || !hasProps {
			return
		}
		g.Expect(s["additionalProperties"]).To(BeFalse(), "%s refuses keys it does not know", path)
		for k, sub := range m {
			ps, ok := props[k].(map[string]any)
			if !ok {
				t.Errorf("%s/%s is in values.yaml but not in values.schema.json", path, k)
				continue
			}
			walk(path+"/"+k, sub, ps)
		}
		for k := range props {
			helmsOwn := path == "" && k == "global"
			if _, ok := m[k]; !ok && !helmsOwn && !kubernetesTypes[path] {
				t.Errorf("values.schema.json describes %s/%s, which values.yaml does not have", path, k)
			}
		}
	}
	walk("", values, schema)
}

// renderObjects renders the chart with args and indexes its objects.
func renderObjects(t *testing.T, g *WithT, args ...string) map[string]map[string]any {
	t.Helper()
	out, err := runHelm(t, append([]string{"template", releaseName, chartDir, "--namespace", "myapp-system"}, args...)...)
	g.Expect(err).NotTo(HaveOccurred(), "helm template: %s", out)
	objs := map[string]map[string]any{}
	for id, o := range indexObjects(t, out, releaseName+"-") {
		objs[id] = o.Object
	}
	return objs
}

func convert[T any](g *WithT, obj map[string]any) *T {
	var out T
	g.Expect(obj).NotTo(BeNil())
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &out)).To(Succeed())
	return &out
}

// TestHelmChartRendersEveryOption renders the chart with each option the
// platform charts carry (image by digest, scheduling, priority, extra env,
// volumes and mounts, the PodDisruptionBudget, the ServiceMonitor, the
// aggregated roles) and checks each lands where Kubernetes reads it, and
// that the defaults stay as they were: no ServiceMonitor, a PDB only with
// more than one replica, the image tagged with the chart's appVersion.
func TestHelmChartRendersEveryOption(t *testing.T) {
	chartYAML, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	appVersion := regexp.MustCompile(`(?m)^appVersion: "?([^"\n]+)"?$`).FindSubmatch(chartYAML)
	if appVersion == nil {
		t.Fatal("Chart.yaml has no appVersion")
	}

	t.Run("defaults", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(string(appVersion[1])).To(MatchRegexp(`^v?\d+\.\d+\.\d+$`), "appVersion is a release's version")
		objs := renderObjects(t, g)
		dep := convert[appsv1.Deployment](g, objs["Deployment/controller-manager"])
		pod := dep.Spec.Template.Spec
		g.Expect(pod.Containers[0].Image).To(Equal("myapp-operator:" + string(appVersion[1])))
		g.Expect(pod.PriorityClassName).To(BeEmpty())
		g.Expect(pod.TopologySpreadConstraints).To(BeEmpty())
		g.Expect(objs).NotTo(HaveKey("ServiceMonitor/controller-manager"), "the ServiceMonitor is off by default")
		pdb := convert[policyv1.PodDisruptionBudget](g, objs["PodDisruptionBudget/controller-manager"])
		g.Expect(pdb.Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(1))))
		g.Expect(pdb.Spec.MaxUnavailable).To(BeNil())
		g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(dep.Spec.Selector.MatchLabels), "the PDB selects the manager's pods")

		g.Expect(renderObjects(t, g, "--set", "replicaCount=1")).NotTo(HaveKey("PodDisruptionBudget/controller-manager"),
			"one replica gets no PDB, which would block every drain")
		g.Expect(renderObjects(t, g, "--set", "replicaCount=1", "--set", "podDisruptionBudget.enable=true")).
			To(HaveKey("PodDisruptionBudget/controller-manager"))
		g.Expect(renderObjects(t, g, "--set", "podDisruptionBudget.enable=false")).NotTo(HaveKey("PodDisruptionBudget/controller-manager"))
		g.Expect(convert[appsv1.Deployment](g, renderObjects(t, g, "--set", "image.tag=v9.9.9")["Deployment/controller-manager"]).
			Spec.Template.Spec.Containers[0].Image).To(Equal("myapp-operator:v9.9.9"))
	})

	t.Run("high availability", func(t *testing.T) {
		g := NewWithT(t)
		args := func(objs map[string]map[string]any) []string {
			return convert[appsv1.Deployment](g, objs["Deployment/controller-manager"]).Spec.Template.Spec.Containers[0].Args
		}
		// The defaults: leader election, warm standby and the priority
		// queue, the last two by the manager's own defaults.
		defaults := args(renderObjects(t, g))
		g.Expect(defaults).To(ContainElement("--leader-elect"))
		g.Expect(defaults).NotTo(ContainElement(HavePrefix("--warm-standby")))
		g.Expect(defaults).NotTo(ContainElement(HavePrefix("--priority-queue")))
		g.Expect(args(renderObjects(t, g, "--set", "manager.leaderElection.warmStandby=false", "--set", "manager.priorityQueue=false"))).
			To(ContainElements("--warm-standby=false", "--priority-queue=false"))

		// Several replicas without leader election would each reconcile
		// every object: the chart refuses them, and renders one.
		out, err := renderChart(t, "replicaCount=2", "manager.leaderElection.enabled=false")
		g.Expect(err).To(HaveOccurred(), "two replicas without leader election render")
		g.Expect(string(out)).To(ContainSubstring("replicaCount 2 needs manager.leaderElection.enabled"))
		g.Expect(args(renderObjects(t, g, "--set", "replicaCount=1", "--set", "manager.leaderElection.enabled=false"))).
			NotTo(ContainElement("--leader-elect"))

		// The recommended setting: two replicas spread over nodes and
		// zones, a PDB, the lease timings written out.
		objs := renderObjects(t, g, "-f", haValues)
		dep := convert[appsv1.Deployment](g, objs["Deployment/controller-manager"])
		g.Expect(dep.Spec.Replicas).To(HaveValue(BeNumerically(">", 1)))
		g.Expect(dep.Spec.Template.Spec.Containers[0].Args).To(ContainElements("--leader-elect",
			"--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=800ms"))
		g.Expect(dep.Spec.Template.Spec.Containers[0].Args).NotTo(ContainElement("--warm-standby=false"))
		keys := make([]string, 0, len(dep.Spec.Template.Spec.TopologySpreadConstraints))
		for _, tsc := range dep.Spec.Template.Spec.TopologySpreadConstraints {
			keys = append(keys, tsc.TopologyKey)
			g.Expect(tsc.LabelSelector.MatchLabels).To(Equal(dep.Spec.Selector.MatchLabels))
		}
		g.Expect(keys).To(ConsistOf("kubernetes.io/hostname", "topology.kubernetes.io/zone"))
		pdb := convert[policyv1.PodDisruptionBudget](g, objs["PodDisruptionBudget/controller-manager"])
		g.Expect(pdb.Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(1))))

		// docs/deploy.md shows the same values.
		var file, shown map[string]any
		data, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), haValues))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(k8syaml.Unmarshal(data, &file)).To(Succeed())
		deploy, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "docs", "deploy.md"))
		g.Expect(err).NotTo(HaveOccurred())
		_, section, ok := strings.Cut(string(deploy), "### The chart's HA setting")
		g.Expect(ok).To(BeTrue(), "docs/deploy.md has the HA setting")
		_, snippet, ok := strings.Cut(section, "```yaml\n")
		g.Expect(ok).To(BeTrue(), "the HA setting shows its values")
		snippet, _, _ = strings.Cut(snippet, "```")
		g.Expect(k8syaml.Unmarshal([]byte(snippet), &shown)).To(Succeed())
		g.Expect(shown).To(Equal(file), "docs/deploy.md shows %s", haValues)
	})

	t.Run("aggregated roles", func(t *testing.T) {
		g := NewWithT(t)
		objs := renderObjects(t, g)
		view := convert[rbacv1.ClusterRole](g, objs["ClusterRole/view"])
		edit := convert[rbacv1.ClusterRole](g, objs["ClusterRole/edit"])
		g.Expect(view.Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-view", "true"))
		g.Expect(edit.Labels).To(HaveKeyWithValue("rbac.authorization.k8s.io/aggregate-to-edit", "true"))
		g.Expect(edit.Labels).NotTo(HaveKey("rbac.authorization.k8s.io/aggregate-to-view"), "viewers may not write")
		verbs := func(r *rbacv1.ClusterRole, group, resource string) []string {
			var out []string
			for _, rule := range r.Rules {
				if len(rule.APIGroups) == 1 && rule.APIGroups[0] == group {
					for _, res := range rule.Resources {
						if res == resource {
							out = append(out, rule.Verbs...)
						}
					}
				}
			}
			return out
		}
		for _, kind := range [][2]string{{"apps.myapp.dev", "myapps"}, {"backup.myapp.dev", "backupconfigs"}} {
			g.Expect(verbs(view, kind[0], kind[1])).To(ConsistOf("get", "list", "watch"), "view on %s", kind[1])
			g.Expect(verbs(edit, kind[0], kind[1])).To(ContainElements("create", "update", "patch", "delete"), "edit on %s", kind[1])
			g.Expect(verbs(edit, kind[0], kind[1]+"/status")).To(BeEmpty(), "status is the operator's to write")
		}
		off := renderObjects(t, g, "--set", "rbac.aggregateToDefaultRoles=false")
		g.Expect(off).NotTo(HaveKey("ClusterRole/view"))
		g.Expect(off).NotTo(HaveKey("ClusterRole/edit"))
	})

	t.Run("every option on", func(t *testing.T) {
		g := NewWithT(t)
		objs := renderObjects(t, g, "-f", allOptionsValues)
		dep := convert[appsv1.Deployment](g, objs["Deployment/controller-manager"])
		pod := dep.Spec.Template.Spec
		c := pod.Containers[0]
		g.Expect(c.Image).To(Equal("registry.example.com/myapp-operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
			"the digest wins over the tag")
		g.Expect(pod.PriorityClassName).To(Equal("platform-critical"))
		g.Expect(pod.NodeSelector).To(Equal(map[string]string{"kubernetes.io/os": "linux"}))
		g.Expect(pod.Tolerations).To(Equal([]corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "operators", Effect: corev1.TaintEffectNoSchedule}}))
		g.Expect(pod.Affinity).NotTo(BeNil())
		g.Expect(pod.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution).To(HaveLen(1))
		g.Expect(pod.TopologySpreadConstraints).To(HaveLen(1))
		tsc := pod.TopologySpreadConstraints[0]
		g.Expect(tsc.TopologyKey).To(Equal("topology.kubernetes.io/zone"))
		g.Expect(tsc.LabelSelector).NotTo(BeNil(), "the chart selects the manager's pods when the constraint does not say")
		g.Expect(tsc.LabelSelector.MatchLabels).To(Equal(dep.Spec.Selector.MatchLabels))
		g.Expect(c.Env).To(ContainElements(
			corev1.EnvVar{Name: "HTTPS_PROXY", Value: "http://proxy.internal:3128"},
			corev1.EnvVar{Name: "NO_PROXY", Value: ".cluster.local,10.0.0.0/8"}))
		g.Expect(c.Env).To(ContainElement(HaveField("Name", "DNS_URL")), "the chart's own variables stay")
		g.Expect(c.VolumeMounts).To(ContainElements(
			corev1.VolumeMount{Name: "token", MountPath: "/var/run/secrets/myapp.dev", ReadOnly: true},
			corev1.VolumeMount{Name: "extra-ca", MountPath: "/etc/ssl/extra", ReadOnly: true}))
		g.Expect(pod.Volumes).To(ContainElement(corev1.Volume{Name: "extra-ca",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "extra-ca"}}}))
		g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
		g.Expect(c.Args).To(ContainElement("--owner-id=prod-eu-west-1"))
		g.Expect(c.Args).To(ContainElements("--warm-standby=false", "--priority-queue=false"))

		pdb := convert[policyv1.PodDisruptionBudget](g, objs["PodDisruptionBudget/controller-manager"])
		g.Expect(pdb.Spec.MaxUnavailable).To(HaveValue(Equal(intstr.FromInt32(1))))
		g.Expect(pdb.Spec.MinAvailable).To(BeNil(), "maxUnavailable replaces minAvailable")

		// The ServiceMonitor scrapes the metrics Service's https port with
		// honorLabels, which the per-object metrics need.
		svc := convert[corev1.Service](g, objs["Service/controller-manager-metrics-service"])
		sm := objs["ServiceMonitor/controller-manager"]
		g.Expect(sm).NotTo(BeNil())
		spec := sm["spec"].(map[string]any)
		g.Expect(spec["namespaceSelector"]).To(Equal(map[string]any{"matchNames": []any{"myapp-system"}}))
		selector := spec["selector"].(map[string]any)["matchLabels"].(map[string]any)
		for k, v := range selector {
			g.Expect(svc.Labels).To(HaveKeyWithValue(k, v), "the ServiceMonitor selects the metrics Service")
		}
		endpoints := spec["endpoints"].([]any)
		g.Expect(endpoints).To(HaveLen(1))
		ep := endpoints[0].(map[string]any)
		g.Expect(ep).To(HaveKeyWithValue("honorLabels", true))
		g.Expect(ep).To(HaveKeyWithValue("port", svc.Spec.Ports[0].Name))
		g.Expect(ep).To(HaveKeyWithValue("scheme", "https"))
		g.Expect(ep).To(HaveKeyWithValue("interval", "30s"))
		g.Expect(ep).To(HaveKeyWithValue("scrapeTimeout", "10s"))
		g.Expect(sm["metadata"].(map[string]any)["labels"]).To(HaveKeyWithValue("release", "prometheus"))

		out, err := renderChart(t, "prometheus.serviceMonitor.enable=true", "metrics.enable=false")
		g.Expect(err).To(HaveOccurred(), "a ServiceMonitor with no metrics Service renders")
		g.Expect(string(out)).To(ContainSubstring("prometheus.serviceMonitor.enable needs metrics.enable"))
	})
}

// TestHelmChartNotes renders the notes `helm install` prints, for each DNS
// provider: what was installed, the token Secret to create when the chart
// does not, how to check the manager, and where the docs are. A dry run
// checks what the cluster has, so it leaves the CRDs the harness installed
// alone and takes a release name of its own.
func TestHelmChartNotes(t *testing.T) {
	const release = "notes"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	notes := func(g *WithT, sets ...string) string {
		out, err := runHelm(t, append([]string{"install", release, chartDir, "--dry-run=client",
			"--kubeconfig", kubeconfig, "--namespace", "myapp-system", "--set", "crd.enable=false"}, setArgs(sets...)...)...)
		g.Expect(err).NotTo(HaveOccurred(), "helm install --dry-run: %s", out)
		_, n, ok := strings.Cut(string(out), "\nNOTES:\n")
		g.Expect(ok).To(BeTrue(), "helm install prints notes:\n%s", out)
		return n
	}
	t.Run("http", func(t *testing.T) {
		g := NewWithT(t)
		n := notes(g)
		g.Expect(n).To(ContainSubstring("Deployment notes-myapp-operator-controller-manager (2 replicas, leader election)"))
		g.Expect(n).To(ContainSubstring("DNS records in the DNS service at https://dns.example.com"))
		g.Expect(n).To(ContainSubstring("kubectl -n myapp-system create secret generic external-services-token --from-literal=token="))
		g.Expect(n).To(ContainSubstring("kubectl -n myapp-system rollout status deployment/notes-myapp-operator-controller-manager"))
		g.Expect(n).To(ContainSubstring("a PodDisruptionBudget"))
		g.Expect(n).To(ContainSubstring("no CRDs (crd.enable=false)"))
		g.Expect(n).To(ContainSubstring("built-in view, edit and admin roles"))
		g.Expect(n).To(ContainSubstring("--reset-then-reuse-values"))
		g.Expect(n).NotTo(ContainSubstring("--reuse-values"))
		g.Expect(n).To(MatchRegexp(`Docs: https://\S+`))
		g.Expect(n).NotTo(ContainSubstring("ServiceMonitor"))
	})
	t.Run("rfc2136", func(t *testing.T) {
		g := NewWithT(t)
		n := notes(g, append(rfc2136Values, "externalServices.tokenSecret.create=true", "externalServices.tokenSecret.token=t",
			"replicaCount=1")...)
		g.Expect(n).To(ContainSubstring("DNS records in zone example.com on ns1.example.com:53 (RFC 2136), with the TSIG key from Secret dns-tsig"))
		g.Expect(n).NotTo(ContainSubstring("dns.example.com"))
		g.Expect(n).NotTo(ContainSubstring("create secret generic"), "the chart created the token Secret")
		g.Expect(n).NotTo(ContainSubstring("PodDisruptionBudget"))
	})
}
