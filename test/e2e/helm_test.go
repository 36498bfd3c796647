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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	miekgdns "github.com/miekg/dns"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

const (
	chartDir    = "charts/myapp-operator"
	releaseName = "myapp-operator"
)

// operatorCRDs names every CRD the project ships, read from config/crd/bases
// (the files controller-gen writes and the chart copies), so a kind added
// later is marked, kept and checked by these tests without touching them.
var operatorCRDs = crdNamesIn(filepath.Join(controlplane.RepoRoot(), "config", "crd", "bases"))

func crdNamesIn(dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		panic(fmt.Sprintf("no CRDs in %s: %v", dir, err))
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil || crd.Name == "" {
			panic(fmt.Sprintf("%s: not a CRD (%v)", f, err))
		}
		names = append(names, crd.Name)
	}
	return names
}

// TestHelmChartInstallsAndUninstalls installs the chart with helm into a
// namespace enforcing the restricted Pod Security Standard and waits for the
// manager Deployment to become available under kwok. It then uninstalls it
// while a MyApp with its finalizer exists, and shows the uninstall strands
// nothing: the CRDs are kept, so the MyApp is not deleted behind the
// operator's back, and once the operator runs again the documented order
// (delete the custom resources, then uninstall) removes it cleanly.
func TestHelmChartInstallsAndUninstalls(t *testing.T) {
	g := NewWithT(t)
	helmBin := tool(t, "helm")
	ns := newNamespace(t)
	nsObj := &corev1.Namespace{}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: ns}, nsObj)).To(Succeed())
	nsObj.Labels = merge(nsObj.Labels, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	g.Expect(k8sClient.Update(t.Context(), nsObj)).To(Succeed())

	// The harness installed the CRDs without helm: mark them as the
	// release's, as a user moving from `make install` would (README).
	for _, name := range operatorCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: name}, crd)).To(Succeed())
		crd.Labels = merge(crd.Labels, map[string]string{"app.kubernetes.io/managed-by": "Helm"})
		crd.Annotations = merge(crd.Annotations, map[string]string{
			"meta.helm.sh/release-name": releaseName, "meta.helm.sh/release-namespace": ns,
		})
		g.Expect(k8sClient.Update(t.Context(), crd)).To(Succeed())
	}

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())
	helm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(helmBin, append([]string{"--kubeconfig", kubeconfig, "--namespace", ns}, args...)...)
		cmd.Dir = controlplane.RepoRoot()
		// Keep helm's cache and config out of the user's home.
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// The platform options, which admission and the scheduler must accept
	// under the restricted standard: a priority class, a toleration, a
	// topology spread, an extra variable and an extra volume and mount.
	priority := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-operators"}, Value: 1000}
	g.Expect(k8sClient.Create(t.Context(), priority)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), priority) })
	notes := helm("install", releaseName, chartDir,
		"--set", "externalServices.dnsURL="+simURL, "--set", "externalServices.backupURL="+simURL,
		"--set", "externalServices.tokenSecret.create=true", "--set", "externalServices.tokenSecret.token="+simToken,
		"--set", "manager.logLevel=debug",
		"--set", "image.digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"--set", "manager.priorityClassName="+priority.Name,
		"--set", "manager.tolerations[0].key=dedicated,manager.tolerations[0].operator=Exists,manager.tolerations[0].effect=NoSchedule",
		"--set", "manager.topologySpreadConstraints[0].maxSkew=1,manager.topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname",
		"--set", "manager.topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
		"--set", "manager.env[0].name=HTTPS_PROXY,manager.env[0].value=http://proxy.internal:3128",
		"--set", "manager.extraVolumes[0].name=scratch,manager.extraVolumeMounts[0].name=scratch,manager.extraVolumeMounts[0].mountPath=/scratch",
		"--set-json", `manager.extraVolumes[0].emptyDir={}`)
	g.Expect(notes).To(ContainSubstring("NOTES:"))
	g.Expect(notes).To(ContainSubstring("rollout status deployment/" + releaseName + "-controller-manager"))

	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ns, Name: releaseName + "-controller-manager"}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, dep)).To(Succeed())
		g.Expect(dep.Status.AvailableReplicas).To(Equal(int32(2)))
	}, timeout, interval).Should(Succeed(), "the manager Deployment becomes available")
	c := dep.Spec.Template.Spec.Containers[0]
	g.Expect(c.Args).To(ContainElements("--leader-elect", "--zap-log-level=debug"))
	g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
	g.Expect(c.Image).To(HaveSuffix("@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "HTTPS_PROXY", Value: "http://proxy.internal:3128"}))
	g.Expect(c.VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"}))
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels(dep.Spec.Selector.MatchLabels))).To(Succeed())
	g.Expect(pods.Items).NotTo(BeEmpty())
	for _, p := range pods.Items {
		g.Expect(p.Spec.PriorityClassName).To(Equal(priority.Name))
		g.Expect(p.Spec.Priority).To(HaveValue(Equal(int32(1000))), "admission resolved the priority class")
		g.Expect(p.Spec.TopologySpreadConstraints).To(HaveLen(1))
	}
	// Two replicas get a PodDisruptionBudget keeping one of them.
	pdb := &policyv1.PodDisruptionBudget{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), key, pdb)).To(Succeed())
		g.Expect(pdb.Status.ExpectedPods).To(Equal(int32(2)), "the PDB selects both replicas")
	}, timeout, interval).Should(Succeed())

	// The aggregated roles: the cluster's own view and edit roles now grant
	// the two kinds, so a namespace's viewers read them and its editors
	// write them, with no role of their own.
	ruleFor := func(role, group, resource string) func(g Gomega) []string {
		return func(g Gomega) []string {
			cr := &rbacv1.ClusterRole{}
			g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: role}, cr)).To(Succeed())
			var verbs []string
			for _, r := range cr.Rules {
				if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
					verbs = append(verbs, r.Verbs...)
				}
			}
			return verbs
		}
	}
	for _, kind := range [][2]string{{"apps.myapp.dev", "myapps"}, {"backup.myapp.dev", "backupconfigs"}} {
		g.Eventually(ruleFor("view", kind[0], kind[1]), timeout, interval).Should(ContainElements("get", "list", "watch"))
		g.Expect(ruleFor("view", kind[0], kind[1])(g)).NotTo(ContainElement("create"), "view stays read-only")
		g.Eventually(ruleFor("edit", kind[0], kind[1]), timeout, interval).Should(ContainElements("get", "create", "update", "patch", "delete"))
		g.Eventually(ruleFor("admin", kind[0], kind[1]), timeout, interval).Should(ContainElements("create", "delete"))
	}

	// Pods under kwok run no container, so the operator runs as a process,
	// with the permissions the chart's ClusterRole grants.
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: releaseName + "-manager-role"}, &rbacv1.ClusterRole{})).To(Succeed())
	startManager(t, "operator", cp.Kubeconfig(), "--leader-elect", "--leader-election-namespace="+ns)
	// The MyApp lives elsewhere: its nginx pods are not made for the
	// restricted standard the operator's namespace enforces.
	app := newMyApp(newNamespace(t), "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	eventuallyReady(t.Context(), g, app)

	helm("uninstall", releaseName, "--wait")
	g.Expect(apierrors.IsNotFound(k8sClient.Get(t.Context(), key, &appsv1.Deployment{}))).To(BeTrue(), "the manager is uninstalled")
	g.Expect(apierrors.IsNotFound(k8sClient.Get(t.Context(),
		client.ObjectKey{Name: releaseName + "-manager-role"}, &rbacv1.ClusterRole{}))).To(BeTrue(), "the ClusterRole is uninstalled")
	for _, name := range operatorCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Name: name}, crd)).To(Succeed(), "crd.keep keeps %s", name)
		g.Expect(crd.DeletionTimestamp).To(BeNil())
	}
	g.Expect(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app)).To(Succeed())
	g.Expect(app.DeletionTimestamp).To(BeNil(), "the uninstall does not delete the MyApp behind the operator's back")
	g.Expect(app.Finalizers).To(ContainElement(appsv1alpha1.DNSCleanupFinalizer))

	// The documented order for removing everything: the custom resources
	// first, while the operator runs, so their finalizers complete.
	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app))
	}, timeout, interval).Should(BeTrue(), "the MyApp's cleanup completes")
}

// TestHelmChartMirrorsConfig renders the chart and config/default and
// compares what the chart's hand-written templates mirror: every role's
// rules, the manager's pod (security contexts, probes, ports, resources,
// arguments, mounts) and the metrics Service. The generated parts (CRDs,
// manager ClusterRole, alerts) are kept in sync by `make chart`, which
// `make verify` checks, and are compared here too.
func TestHelmChartMirrorsConfig(t *testing.T) {
	g := NewWithT(t)
	render := exec.Command(tool(t, "helm"), "template", releaseName, chartDir, "--namespace", "myapp-system",
		"--set", "prometheus.rules.enable=true")
	render.Dir = controlplane.RepoRoot()
	chartOut, err := render.Output()
	g.Expect(err).NotTo(HaveOccurred(), "helm template")
	build := exec.Command(tool(t, "kustomize"), "build", "config/default")
	build.Dir = controlplane.RepoRoot()
	configOut, err := build.Output()
	g.Expect(err).NotTo(HaveOccurred(), "kustomize build config/default")

	chart := indexObjects(t, chartOut, releaseName+"-")
	config := indexObjects(t, configOut, "myapp-")

	// The alerts are the same rules, whatever the PrometheusRule is named.
	rules, err := controlplane.LoadFile(filepath.Join(controlplane.RepoRoot(), "config", "prometheus", "prometheusrule.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(chart).To(HaveKey("PrometheusRule/alerts"))
	g.Expect(chart["PrometheusRule/alerts"].Object["spec"]).To(Equal(rules[0].Object["spec"]), "the chart's alerts")
	g.Expect(chart).To(HaveKey("Deployment/controller-manager"))
	for id, want := range config {
		if id == "Namespace/system" {
			// Helm installs into a namespace the user creates.
			continue
		}
		if strings.HasPrefix(id, "ConfigMap/external-services-") {
			// kustomize's generator suffixes the name with a hash.
			id = "ConfigMap/external-services"
		}
		got, ok := chart[id]
		if !ok {
			t.Errorf("config/default has %s, the chart does not", id)
			continue
		}
		switch want.GetKind() {
		case "ClusterRole", "Role":
			g.Expect(got.Object["rules"]).To(Equal(want.Object["rules"]), "%s's rules", id)
		case "CustomResourceDefinition":
			g.Expect(got.Object["spec"]).To(Equal(want.Object["spec"]), "%s's spec", id)
		case "Service":
			g.Expect(got.Object["spec"].(map[string]any)["ports"]).To(Equal(want.Object["spec"].(map[string]any)["ports"]), "%s's ports", id)
		case "Deployment":
			var wantDep, gotDep appsv1.Deployment
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(want.Object, &wantDep)).To(Succeed())
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &gotDep)).To(Succeed())
			g.Expect(gotDep.Spec.Replicas).To(Equal(wantDep.Spec.Replicas))
			wantPod, gotPod := wantDep.Spec.Template.Spec, gotDep.Spec.Template.Spec
			g.Expect(gotPod.SecurityContext).To(Equal(wantPod.SecurityContext))
			g.Expect(gotPod.TerminationGracePeriodSeconds).To(Equal(wantPod.TerminationGracePeriodSeconds))
			wc, gc := wantPod.Containers[0], gotPod.Containers[0]
			g.Expect(gc.Command).To(Equal(wc.Command))
			g.Expect(gc.Args).To(Equal(wc.Args), "the chart's defaults pass the flags config/ passes")
			g.Expect(gc.Ports).To(Equal(wc.Ports))
			g.Expect(gc.LivenessProbe).To(Equal(wc.LivenessProbe))
			g.Expect(gc.ReadinessProbe).To(Equal(wc.ReadinessProbe))
			g.Expect(gc.Resources).To(Equal(wc.Resources))
			g.Expect(gc.SecurityContext).To(Equal(wc.SecurityContext))
			g.Expect(gc.VolumeMounts).To(Equal(wc.VolumeMounts))
			g.Expect(gotPod.Volumes).To(Equal(wantPod.Volumes))
		}
	}
}

// TestHelmChartPassesOnlyFlagsTheManagerHas renders the chart with every
// manager value set and checks each flag it passes is one the manager
// binary knows, so a renamed flag cannot leave the chart behind.
func TestHelmChartPassesOnlyFlagsTheManagerHas(t *testing.T) {
	g := NewWithT(t)
	values := []string{
		"manager.logLevel=debug", "manager.leaderElection.leaseDuration=20s",
		"manager.leaderElection.renewDeadline=15s", "manager.leaderElection.retryPeriod=3s",
		"manager.maxConcurrentReconciles=8", "manager.dnsPendingPollInterval=10s",
		"manager.dnsDriftCheck=read", "manager.dnsDriftCheckInterval=10m", "manager.dnsOrphanSweepInterval=30m", "manager.dnsRecordTTL=600", "manager.dnsDefaultTarget=192.0.2.1",
		"manager.ingressClassName=nginx", "manager.backupPollInterval=20s",
		"manager.gracefulShutdownTimeout=20s", "manager.maxRetryAfter=2m", "manager.backupTimeout=12h",
		"manager.finalBackupAttempts=5", "manager.finalBackupTeardownLimit=20m",
		"ownerID=prod-eu", "manager.leaderElection.warmStandby=false", "manager.priorityQueue=false",
	}
	args := make([]string, 0, 5+2*len(values))
	args = append(args, "template", releaseName, chartDir, "--set", "externalServices.caBundle=pem")
	for _, v := range values {
		args = append(args, "--set", v)
	}
	render := exec.Command(tool(t, "helm"), args...)
	render.Dir = controlplane.RepoRoot()
	out, err := render.Output()
	g.Expect(err).NotTo(HaveOccurred(), "helm template")
	objs := indexObjects(t, out, releaseName+"-")
	var dep appsv1.Deployment
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment/controller-manager"].Object, &dep)).To(Succeed())
	passed := dep.Spec.Template.Spec.Containers[0].Args
	g.Expect(passed).To(HaveLen(29), "every value became a flag")

	// The manager's usage lists every flag it has.
	help, _ := exec.Command(managerBin, "--help").CombinedOutput()
	for _, arg := range passed {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		g.Expect(string(help)).To(MatchRegexp(`(?m)^\s+-%s(\s|$)`, regexp.QuoteMeta(name)), "the chart passes --%s, which the manager does not have", name)
	}
}

// tool is a binary the Makefile installs into bin/.
func tool(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(controlplane.RepoRoot(), "bin", name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing: run `make %s` (make test does)", path, name)
	}
	return path
}

// indexObjects decodes rendered manifests by "Kind/name", the name without
// its prefix, so that a chart's and a kustomization's objects line up.
func indexObjects(t *testing.T, manifests []byte, prefix string) map[string]*unstructured.Unstructured {
	t.Helper()
	path := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(path, manifests, 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := controlplane.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		index[o.GetKind()+"/"+strings.TrimPrefix(o.GetName(), prefix)] = o
	}
	return index
}

func merge(into, from map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	for k, v := range from {
		into[k] = v
	}
	return into
}

// renderChart runs helm template on the chart with the given --set values
// and returns its output, stderr included when it fails.
func renderChart(t *testing.T, sets ...string) ([]byte, error) {
	t.Helper()
	args := make([]string, 0, 5+2*len(sets))
	args = append(args, "template", releaseName, chartDir, "--namespace", "myapp-system")
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	render := exec.Command(tool(t, "helm"), args...)
	render.Dir = controlplane.RepoRoot()
	var stderr bytes.Buffer
	render.Stderr = &stderr
	out, err := render.Output()
	if err != nil {
		return stderr.Bytes(), err
	}
	return out, nil
}

// rfc2136Values set up dnsProvider: rfc2136 in full.
var rfc2136Values = []string{
	"dnsProvider=rfc2136", "rfc2136.server=ns1.example.com:53", "rfc2136.zone=example.com",
	"rfc2136.nameservers={ns1.example.com:53,ns2.example.com:53}", "rfc2136.timeout=5s",
	"rfc2136.tsigKey.secretName=dns-tsig", "rfc2136.tsigKey.secretKey=key",
}

// webhookValues set up dnsProvider: webhook in full, with external-dns's
// aws provider as the sidecar.
var webhookValues = []string{
	"dnsProvider=webhook", "webhook.zone=example.com", "webhook.singleWriter=true", "webhook.timeout=20s",
	"webhook.readInterval=30s", "webhook.maxBodySize=67108864",
	"webhook.image.repository=registry.k8s.io/external-dns/external-dns", "webhook.image.tag=v0.23.0",
	"webhook.args={--webhook-server,--provider=aws,--source=service,--metrics-address=:8080}",
	"webhook.env[0].name=AWS_REGION", "webhook.env[0].value=eu-west-1",
}

// TestHelmChartRendersEachDNSProvider renders the chart with each DNS
// provider. With http the manager gets the DNS service's URL and token; with
// rfc2136 it gets the --rfc2136-* flags and the TSIG key mounted from its
// Secret, never --dns-url, and the Secret Role names the TSIG key's Secret
// besides the token's, and nothing else; with webhook it gets the
// --dns-webhook-* flags and the provider runs as a sidecar. A provider the
// chart does not know, or an rfc2136 or webhook setup missing a required
// value, is refused by name.
func TestHelmChartRendersEachDNSProvider(t *testing.T) {
	type rendering struct {
		args      []string
		env       []string
		mounts    map[string]string
		volumes   map[string]corev1.VolumeSource
		secrets   []string
		configMap map[string]any
	}
	render := func(g *WithT, sets ...string) rendering {
		out, err := renderChart(t, sets...)
		g.Expect(err).NotTo(HaveOccurred(), "helm template: %s", out)
		objs := indexObjects(t, out, releaseName+"-")
		var dep appsv1.Deployment
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment/controller-manager"].Object, &dep)).To(Succeed())
		var role rbacv1.Role
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Role/token-secret-reader"].Object, &role)).To(Succeed())
		g.Expect(role.Rules).To(HaveLen(1))
		g.Expect(role.Rules[0].Resources).To(Equal([]string{"secrets"}))
		g.Expect(role.Rules[0].Verbs).To(Equal([]string{"get"}))
		c := dep.Spec.Template.Spec.Containers[0]
		r := rendering{
			args: c.Args, mounts: map[string]string{}, volumes: map[string]corev1.VolumeSource{},
			secrets: role.Rules[0].ResourceNames, configMap: objs["ConfigMap/external-services"].Object["data"].(map[string]any),
		}
		for _, e := range c.Env {
			r.env = append(r.env, e.Name)
		}
		for _, m := range c.VolumeMounts {
			g.Expect(m.ReadOnly).To(BeTrue(), "mount %s", m.Name)
			r.mounts[m.Name] = m.MountPath
		}
		for _, v := range dep.Spec.Template.Spec.Volumes {
			r.volumes[v.Name] = v.VolumeSource
		}
		// The manager's usage lists every flag it has.
		help, _ := exec.Command(managerBin, "--help").CombinedOutput()
		for _, arg := range r.args {
			name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			g.Expect(string(help)).To(MatchRegexp(`(?m)^\s+-%s(\s|$)`, regexp.QuoteMeta(name)), "the chart passes --%s, which the manager does not have", name)
		}
		return r
	}
	withPrefix := func(prefix string) types.GomegaMatcher {
		return ContainElement(HavePrefix(prefix))
	}

	t.Run("http", func(t *testing.T) {
		g := NewWithT(t)
		r := render(g)
		g.Expect(r.args).To(ContainElements("--dns-url=$(DNS_URL)", "--dns-token-file=/var/run/secrets/myapp.dev/token",
			"--backup-url=$(BACKUP_URL)", "--backup-token-file=/var/run/secrets/myapp.dev/token"))
		g.Expect(r.args).NotTo(withPrefix("--rfc2136-"))
		g.Expect(r.args).NotTo(withPrefix("--dns-provider"), "http is the manager's default")
		g.Expect(r.env).To(ConsistOf("DNS_URL", "BACKUP_URL"))
		g.Expect(r.configMap).To(HaveKeyWithValue("dnsURL", "https://dns.example.com"))
		g.Expect(r.mounts).To(Equal(map[string]string{"token": "/var/run/secrets/myapp.dev"}))
		g.Expect(r.secrets).To(Equal([]string{"external-services-token"}))
	})

	t.Run("rfc2136", func(t *testing.T) {
		g := NewWithT(t)
		r := render(g, rfc2136Values...)
		g.Expect(r.args).To(ContainElements("--dns-provider=rfc2136",
			"--rfc2136-server=ns1.example.com:53", "--rfc2136-zone=example.com",
			"--rfc2136-nameservers=ns1.example.com:53,ns2.example.com:53", "--rfc2136-timeout=5s",
			"--rfc2136-tsig-key-file=/etc/myapp.dev/tsig/tsig-key",
			"--backup-url=$(BACKUP_URL)", "--backup-token-file=/var/run/secrets/myapp.dev/token"))
		g.Expect(r.args).NotTo(withPrefix("--dns-url"), "the chart never passes --dns-url under rfc2136")
		g.Expect(r.args).NotTo(withPrefix("--dns-token"))
		g.Expect(r.env).To(ConsistOf("BACKUP_URL"))
		g.Expect(r.configMap).NotTo(HaveKey("dnsURL"))
		g.Expect(r.mounts).To(Equal(map[string]string{"token": "/var/run/secrets/myapp.dev", "tsig-key": "/etc/myapp.dev/tsig"}))
		g.Expect(r.volumes).To(HaveKey("tsig-key"))
		g.Expect(r.volumes["tsig-key"].Secret).NotTo(BeNil())
		g.Expect(r.volumes["tsig-key"].Secret.SecretName).To(Equal("dns-tsig"))
		g.Expect(r.volumes["tsig-key"].Secret.Items).To(Equal([]corev1.KeyToPath{{Key: "key", Path: "tsig-key"}}))
		g.Expect(r.secrets).To(Equal([]string{"external-services-token", "dns-tsig"}), "the TSIG key's Secret and no other")

		// Only the primary, no timeout: the manager's defaults.
		r = render(g, "dnsProvider=rfc2136", "rfc2136.server=ns1.example.com", "rfc2136.zone=example.com", "rfc2136.tsigKey.secretName=dns-tsig")
		g.Expect(r.args).NotTo(withPrefix("--rfc2136-nameservers"))
		g.Expect(r.args).NotTo(withPrefix("--rfc2136-timeout"))
		g.Expect(r.volumes["tsig-key"].Secret.Items).To(Equal([]corev1.KeyToPath{{Key: "tsig-key", Path: "tsig-key"}}))
	})

	t.Run("webhook", func(t *testing.T) {
		g := NewWithT(t)
		r := render(g, webhookValues...)
		g.Expect(r.args).To(ContainElements("--dns-provider=webhook", "--dns-webhook-url=http://127.0.0.1:8888",
			"--dns-webhook-zone=example.com", "--dns-webhook-single-writer", "--dns-webhook-timeout=20s",
			"--dns-webhook-read-interval=30s", "--dns-webhook-max-body-size=67108864",
			"--backup-url=$(BACKUP_URL)", "--backup-token-file=/var/run/secrets/myapp.dev/token"))
		g.Expect(r.args).NotTo(withPrefix("--dns-url"), "the chart never passes --dns-url under webhook")
		g.Expect(r.args).NotTo(withPrefix("--rfc2136-"))
		g.Expect(r.env).To(ConsistOf("BACKUP_URL"))
		g.Expect(r.configMap).NotTo(HaveKey("dnsURL"))
		g.Expect(r.secrets).To(Equal([]string{"external-services-token"}))

		// The provider runs beside the manager, as external-dns's chart's
		// provider.webhook runs it.
		out, err := renderChart(t, webhookValues...)
		g.Expect(err).NotTo(HaveOccurred())
		var dep appsv1.Deployment
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(
			indexObjects(t, out, releaseName+"-")["Deployment/controller-manager"].Object, &dep)).To(Succeed())
		g.Expect(dep.Spec.Template.Spec.Containers).To(HaveLen(2))
		side := dep.Spec.Template.Spec.Containers[1]
		g.Expect(side.Name).To(Equal("webhook"))
		g.Expect(side.Image).To(Equal("registry.k8s.io/external-dns/external-dns:v0.23.0"))
		g.Expect(side.Args).To(Equal([]string{"--webhook-server", "--provider=aws", "--source=service", "--metrics-address=:8080"}))
		g.Expect(side.Env).To(Equal([]corev1.EnvVar{{Name: "AWS_REGION", Value: "eu-west-1"}}))
		g.Expect(side.Ports).To(Equal([]corev1.ContainerPort{{Name: "http-webhook", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}))
		g.Expect(side.ReadinessProbe.HTTPGet.Path).To(Equal("/healthz"))
		g.Expect(*side.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue())

		// Without the optional values: the manager's defaults, no single
		// writer.
		r = render(g, "dnsProvider=webhook", "webhook.zone=example.com", "webhook.image.repository=r", "webhook.image.tag=t")
		g.Expect(r.args).NotTo(withPrefix("--dns-webhook-single-writer"))
		g.Expect(r.args).NotTo(withPrefix("--dns-webhook-timeout"))
	})

	t.Run("refused", func(t *testing.T) {
		without := func(prefix string) []string {
			var out []string
			for _, v := range rfc2136Values {
				if !strings.HasPrefix(v, prefix) {
					out = append(out, v)
				}
			}
			return out
		}
		for _, tt := range []struct {
			sets []string
			want string
		}{
			// values.schema.json refuses it before the template does.
			{sets: []string{"dnsProvider=route53"}, want: `at '/dnsProvider': value must be one of 'http', 'rfc2136'`},
			{sets: without("rfc2136.server="), want: "rfc2136.server is required with dnsProvider: rfc2136"},
			{sets: without("rfc2136.zone="), want: "rfc2136.zone is required with dnsProvider: rfc2136"},
			{sets: without("rfc2136.tsigKey.secretName="), want: "rfc2136.tsigKey.secretName is required with dnsProvider: rfc2136"},
			{sets: []string{"externalServices.dnsURL="}, want: "externalServices.dnsURL is required with dnsProvider: http"},
			{sets: []string{"dnsProvider=webhook", "webhook.image.repository=r", "webhook.image.tag=t"}, want: "at '/webhook/zone': minLength"},
			{sets: []string{"dnsProvider=webhook", "webhook.zone=example.com", "webhook.image.tag=t"}, want: "at '/webhook/image/repository': minLength"},
			{sets: []string{"dnsProvider=webhook", "webhook.zone=example.com", "webhook.image.repository=r"}, want: "at '/webhook/image/tag': minLength"},
		} {
			g := NewWithT(t)
			out, err := renderChart(t, tt.sets...)
			g.Expect(err).To(HaveOccurred(), "%v renders", tt.sets)
			g.Expect(string(out)).To(ContainSubstring(tt.want))
		}
	})
}

// TestHelmChartInstallsTheRFC2136Provider installs the chart with
// dnsProvider: rfc2136 against a real BIND, the TSIG key in a Secret. Pods
// under kwok run no container, so the manager runs as a process with the
// arguments the installed Deployment gives its container, the mounted
// Secrets written where the Deployment mounts them (the kubelet's part), and
// the MyApp's record is then read from BIND.
func TestHelmChartInstallsTheRFC2136Provider(t *testing.T) {
	g := NewWithT(t)
	start := time.Now()
	bind, err := controlplane.StartBIND(t.Context(), controlplane.BINDOptions{Zone: "example.com"})
	controlplane.RequireBIND(t, err)
	t.Cleanup(func() { _ = bind.Close() })

	const release = releaseName + "-rfc2136"
	ns := newNamespace(t)
	g.Expect(k8sClient.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dns-tsig"},
		StringData: map[string]string{"tsig-key": bind.Key()},
	})).To(Succeed())

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())
	helm := func(args ...string) {
		t.Helper()
		cmd := exec.Command(tool(t, "helm"), append([]string{"--kubeconfig", kubeconfig, "--namespace", ns}, args...)...)
		cmd.Dir = controlplane.RepoRoot()
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The harness installed the CRDs; this release leaves them alone.
	helm("install", release, chartDir, "--set", "crd.enable=false",
		"--set", "dnsProvider=rfc2136", "--set", "rfc2136.server="+bind.Addr, "--set", "rfc2136.zone="+bind.Zone,
		"--set", "rfc2136.tsigKey.secretName=dns-tsig",
		"--set", "externalServices.backupURL="+simURL,
		"--set", "externalServices.tokenSecret.create=true", "--set", "externalServices.tokenSecret.token="+simToken)
	t.Cleanup(func() { helm("uninstall", release, "--wait") })

	dep := &appsv1.Deployment{}
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: release + "-controller-manager"}, dep)).To(Succeed())
		g.Expect(dep.Status.AvailableReplicas).To(Equal(int32(2)))
	}, timeout, interval).Should(Succeed(), "the manager Deployment becomes available")
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	g.Expect(c.Args).To(ContainElement("--dns-provider=rfc2136"))
	g.Expect(c.Args).NotTo(ContainElement(HavePrefix("--dns-url")))

	// The kubelet's part: each mounted Secret's items as files, and the
	// environment from the ConfigMap.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		dir := t.TempDir()
		mounts[m.MountPath+"/"] = dir + "/"
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			secret := &corev1.Secret{}
			g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: v.Secret.SecretName}, secret)).To(Succeed())
			for _, item := range v.Secret.Items {
				g.Expect(secret.Data).To(HaveKey(item.Key), "Secret %s", secret.Name)
				g.Expect(os.WriteFile(filepath.Join(dir, item.Path), secret.Data[item.Key], 0o600)).To(Succeed())
			}
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		ref := e.ValueFrom.ConfigMapKeyRef
		cm := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: ref.Name}, cm)).To(Succeed())
		env[e.Name] = cm.Data[ref.Key]
	}
	args := make([]string, 0, len(c.Args)+8)
	for _, arg := range c.Args {
		for from, to := range mounts {
			arg = strings.ReplaceAll(arg, from, to)
		}
		for name, value := range env {
			arg = strings.ReplaceAll(arg, "$("+name+")", value)
		}
		args = append(args, arg)
	}
	managerKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(managerKubeconfig, cp.Kubeconfig(), 0o600)).To(Succeed())
	// A process outside the cluster names its kubeconfig and its lease's
	// namespace, and needs no ports; the MyApp's Ingress gets no address
	// under kwok, so the record points at a default target.
	args = append(args, "--kubeconfig="+managerKubeconfig, "--leader-election-namespace="+ns,
		"--health-probe-bind-address=0", "--metrics-bind-address=0",
		"--dns-default-target=192.0.2.10", "--dns-pending-poll-interval=200ms")
	fixtures.StartManagerProcess(t, "operator-rfc2136", managerBin, args...)

	app := newMyApp(newNamespace(t), "web")
	g.Expect(k8sClient.Create(t.Context(), app)).To(Succeed())
	eventuallyReady(t.Context(), g, app)
	g.Expect(lookupA(t, bind.Addr, app.Spec.Host)).To(Equal([]string{"192.0.2.10"}), "BIND serves the MyApp's record")

	g.Expect(k8sClient.Delete(t.Context(), app)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(t.Context(), client.ObjectKeyFromObject(app), app))
	}, timeout, interval).Should(BeTrue(), "the MyApp's cleanup completes")
	g.Expect(lookupA(t, bind.Addr, app.Spec.Host)).To(BeEmpty(), "its record is gone from BIND")
	t.Logf("installed the chart with rfc2136 and served a MyApp from BIND in %s", time.Since(start).Round(time.Millisecond))
}

// lookupA asks the DNS server at addr for host's A records, as a resolver
// would, and returns their addresses.
func lookupA(t *testing.T, addr, host string) []string {
	t.Helper()
	q := new(miekgdns.Msg)
	q.SetQuestion(miekgdns.Fqdn(host), miekgdns.TypeA)
	answer, err := miekgdns.Exchange(q, addr)
	if err != nil {
		t.Fatalf("query %s at %s: %v", host, addr, err)
	}
	var out []string
	for _, rr := range answer.Answer {
		if a, ok := rr.(*miekgdns.A); ok {
			out = append(out, a.A.String())
		}
	}
	return out
}
