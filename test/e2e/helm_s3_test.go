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
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// s3Values set up backupProvider: s3 in full.
var s3Values = []string{
	"backupProvider=s3", "s3.endpoint=https://s3.example.com", "s3.bucket=backups", "s3.region=eu-west-1",
	"s3.pathStyle=true", "s3.prefix=team-a/prod", "s3.credentialsSecret.name=s3-keys",
	"s3.credentialsSecret.accessKeyIDKey=id", "s3.credentialsSecret.secretAccessKeyKey=secret",
	"s3.credentialsSecret.sessionTokenKey=session", "s3.caBundle=pem",
}

// TestHelmChartRendersEachBackupProvider renders the chart with each backup
// provider. With s3 the manager gets the --s3-* flags and the keys mounted
// from their Secret as files (no API access to it: the Secret Role does not
// name it), never --backup-url or the backup token; with s3 and rfc2136
// together nothing uses the token, and it is not mounted. A provider the
// chart does not know, or an s3 setup missing a required value, is refused
// by name.
func TestHelmChartRendersEachBackupProvider(t *testing.T) {
	type rendering struct {
		args      []string
		env       []string
		mounts    map[string]string
		volumes   map[string]corev1.VolumeSource
		secrets   []string
		configMap map[string]any
		objects   map[string]bool
	}
	render := func(g *WithT, sets ...string) rendering {
		out, err := renderChart(t, sets...)
		g.Expect(err).NotTo(HaveOccurred(), "helm template: %s", out)
		objs := indexObjects(t, out, releaseName+"-")
		var dep appsv1.Deployment
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(objs["Deployment/controller-manager"].Object, &dep)).To(Succeed())
		c := dep.Spec.Template.Spec.Containers[0]
		r := rendering{args: c.Args, mounts: map[string]string{}, volumes: map[string]corev1.VolumeSource{}, objects: map[string]bool{}}
		if data, ok := objs["ConfigMap/external-services"].Object["data"].(map[string]any); ok {
			r.configMap = data
		}
		rules, _ := objs["Role/token-secret-reader"].Object["rules"].([]any)
		for _, rule := range rules {
			names, _ := rule.(map[string]any)["resourceNames"].([]any)
			for _, n := range names {
				r.secrets = append(r.secrets, n.(string))
			}
		}
		for name := range objs {
			r.objects[name] = true
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
		help, _ := exec.Command(managerBin, "--help").CombinedOutput()
		for _, arg := range r.args {
			name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			g.Expect(string(help)).To(MatchRegexp(`(?m)^\s+-%s(\s|$)`, regexp.QuoteMeta(name)), "the chart passes --%s, which the manager does not have", name)
		}
		return r
	}

	t.Run("s3", func(t *testing.T) {
		g := NewWithT(t)
		r := render(g, s3Values...)
		g.Expect(r.args).To(ContainElements("--backup-provider=s3", "--s3-endpoint=https://s3.example.com",
			"--s3-bucket=backups", "--s3-region=eu-west-1", "--s3-path-style", "--s3-prefix=team-a/prod",
			"--s3-access-key-id-file=/etc/myapp.dev/s3/access-key-id",
			"--s3-secret-access-key-file=/etc/myapp.dev/s3/secret-access-key",
			"--s3-session-token-file=/etc/myapp.dev/s3/session-token",
			"--s3-ca-file=/etc/myapp.dev/s3-ca/ca.crt",
			"--dns-url=$(DNS_URL)"))
		g.Expect(r.args).NotTo(ContainElement(HavePrefix("--backup-url")))
		g.Expect(r.args).NotTo(ContainElement(HavePrefix("--backup-token")))
		g.Expect(r.env).To(ConsistOf("DNS_URL"))
		g.Expect(r.configMap).NotTo(HaveKey("backupURL"))
		g.Expect(r.mounts).To(Equal(map[string]string{
			"token": "/var/run/secrets/myapp.dev", "s3-credentials": "/etc/myapp.dev/s3", "s3-ca": "/etc/myapp.dev/s3-ca",
		}))
		g.Expect(r.volumes["s3-credentials"].Secret).NotTo(BeNil())
		g.Expect(r.volumes["s3-credentials"].Secret.SecretName).To(Equal("s3-keys"))
		g.Expect(r.volumes["s3-credentials"].Secret.Items).To(Equal([]corev1.KeyToPath{
			{Key: "id", Path: "access-key-id"}, {Key: "secret", Path: "secret-access-key"}, {Key: "session", Path: "session-token"},
		}))
		g.Expect(r.objects).To(HaveKey("ConfigMap/s3-ca"))
		g.Expect(r.secrets).NotTo(ContainElement("s3-keys"), "the keys are mounted; the manager never reads the Secret")

		// The defaults: AWS's endpoint, virtual-hosted addressing, the
		// Secret's default keys, no session token.
		r = render(g, "backupProvider=s3", "s3.bucket=backups", "s3.credentialsSecret.name=s3-keys")
		g.Expect(r.args).To(ContainElements("--s3-region=us-east-1"))
		for _, absent := range []string{"--s3-endpoint", "--s3-path-style", "--s3-prefix", "--s3-session-token-file", "--s3-ca-file"} {
			g.Expect(r.args).NotTo(ContainElement(HavePrefix(absent)))
		}
		g.Expect(r.volumes["s3-credentials"].Secret.Items).To(Equal([]corev1.KeyToPath{
			{Key: "access-key-id", Path: "access-key-id"}, {Key: "secret-access-key", Path: "secret-access-key"},
		}))
	})

	t.Run("s3 with rfc2136 uses no token", func(t *testing.T) {
		g := NewWithT(t)
		r := render(g, append(append([]string{}, rfc2136Values...), "backupProvider=s3", "s3.bucket=backups",
			"s3.credentialsSecret.name=s3-keys")...)
		g.Expect(r.args).NotTo(ContainElement(ContainSubstring("token-file=/var/run/secrets/myapp.dev/token")))
		g.Expect(r.mounts).NotTo(HaveKey("token"))
		g.Expect(r.volumes).NotTo(HaveKey("token"))
		g.Expect(r.env).To(BeEmpty())
	})

	t.Run("refused", func(t *testing.T) {
		for _, tt := range []struct {
			sets []string
			want string
		}{
			{sets: []string{"backupProvider=glacier"}, want: `at '/backupProvider': value must be one of 'http', 's3'`},
			{sets: []string{"backupProvider=s3", "s3.credentialsSecret.name=s3-keys"}, want: "s3.bucket is required with backupProvider: s3"},
			{sets: []string{"backupProvider=s3", "s3.bucket=backups"}, want: "s3.credentialsSecret.name is required with backupProvider: s3"},
			{sets: []string{"externalServices.backupURL="}, want: "externalServices.backupURL is required with backupProvider: http"},
		} {
			g := NewWithT(t)
			out, err := renderChart(t, tt.sets...)
			g.Expect(err).To(HaveOccurred(), "%v renders", tt.sets)
			g.Expect(string(out)).To(ContainSubstring(tt.want))
		}
	})
}

// TestHelmChartNotesOfTheS3Provider: the notes name the bucket, where in it
// the backups go and the Secret of the keys, with the command that creates
// it; with rfc2136 as well, they ask for no token Secret, which nothing
// uses then.
func TestHelmChartNotesOfTheS3Provider(t *testing.T) {
	g := NewWithT(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())
	out, err := runHelm(t, append([]string{"install", "notes", chartDir, "--dry-run=client",
		"--kubeconfig", kubeconfig, "--namespace", "myapp-system", "--set", "crd.enable=false"},
		setArgs(append(append([]string{}, rfc2136Values...), s3Values...)...)...)...)
	g.Expect(err).NotTo(HaveOccurred(), "helm install --dry-run: %s", out)
	_, n, ok := strings.Cut(string(out), "\nNOTES:\n")
	g.Expect(ok).To(BeTrue(), "helm install prints notes:\n%s", out)
	g.Expect(n).To(ContainSubstring("backups in bucket backups at https://s3.example.com under team-a/prod/<owner ID>/, with the keys from Secret s3-keys"))
	g.Expect(n).To(ContainSubstring("kubectl -n myapp-system create secret generic s3-keys --from-literal=id=... --from-literal=secret=..."))
	g.Expect(n).NotTo(ContainSubstring("backup service"))
	g.Expect(n).NotTo(ContainSubstring("--from-literal=token="), "nothing uses the token with rfc2136 and s3")
}
