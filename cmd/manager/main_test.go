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
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
	"github.com/myapp-operator/myapp-operator/internal/simulator/simtest"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	os.Exit(fixtures.RunMain(m, controlplane.Options{Tier: controlplane.TierEnvtest}, &cp))
}

// buildManager builds this command into a temporary directory.
func buildManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := controlplane.FreeAddress()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestManagerServesProbesAndStopsOnSIGTERM(t *testing.T) {
	g := NewWithT(t)
	bin := buildManager(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())

	_, simURL := simtest.Start(t, simulator.Options{Token: "manager-test-token"})
	tokenFile := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(tokenFile, []byte("manager-test-token\n"), 0o600)).To(Succeed())

	probeAddr, metricsAddr, pprofAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	var logs bytes.Buffer
	cmd := exec.Command(bin,
		"--kubeconfig="+kubeconfig,
		"--health-probe-bind-address="+probeAddr,
		"--pprof-bind-address="+pprofAddr,
		"--metrics-bind-address="+metricsAddr,
		"--dns-url="+simURL,
		"--dns-token-file="+tokenFile,
		"--backup-url="+simURL,
		"--backup-token-file="+tokenFile,
	)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	g.Expect(cmd.Start()).To(Succeed())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("manager output:\n%s", logs.String())
		}
	})

	for _, path := range []string{"/healthz", "/readyz"} {
		g.Eventually(func() (int, error) {
			resp, err := http.Get("http://" + probeAddr + path)
			if err != nil {
				return 0, err
			}
			_ = resp.Body.Close()
			return resp.StatusCode, nil
		}, 30*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK), "GET %s", path)
	}

	// Metrics are served over HTTPS and refuse an anonymous caller.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test certificate
	g.Eventually(func() (int, error) {
		resp, err := insecure.Get("https://" + metricsAddr + "/metrics")
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}, 30*time.Second, 100*time.Millisecond).Should(BeElementOf(http.StatusUnauthorized, http.StatusForbidden))

	// --pprof-bind-address serves the heap profile a platform engineer
	// reads the live heap from (go tool pprof -sample_index=inuse_space).
	g.Eventually(func() (string, error) {
		resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/heap?debug=1")
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, body), err
	}, 30*time.Second, 100*time.Millisecond).Should(And(HavePrefix("200 heap profile:"), ContainSubstring("# HeapInuse =")))

	g.Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	var err error
	g.Eventually(exited, 20*time.Second).Should(Receive(&err), "the manager exits after SIGTERM")
	g.Expect(err).NotTo(HaveOccurred(), "the manager exits cleanly")
	g.Expect(logs.String()).To(ContainSubstring("Manager stopped"))
	c, err := cp.NewClient(client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	kubeSystem := &corev1.Namespace{}
	g.Expect(c.Get(t.Context(), client.ObjectKey{Name: "kube-system"}, kubeSystem)).To(Succeed())
	g.Expect(logs.String()).To(ContainSubstring(`"ownerID":"%s","ownerIDFrom":"the kube-system namespace's UID"`, kubeSystem.UID),
		"the start-up line shows the default owner ID and where it came from")
}

func TestManagerRefusesInvalidFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "--dns-url is required"},
		{nil, "--backup-url is required"},
		{[]string{"--dns-url=ftp://dns.example.com", "--dns-token-file=/t"}, "--dns-url must be an http or https URL"},
		{[]string{"--dns-url=https://dns.example.com", "--dns-token-file=/t", "--dns-record-ttl=10"}, "--dns-record-ttl must be in the DNS service's range: 10 is outside 30-86400"},
		{[]string{"--dns-default-target=2001:db8::1"}, "is an IPv6 address"},
		{[]string{"--dns-default-target=not a host"}, "neither an IPv4 address nor a host name"},
		{[]string{"--max-concurrent-reconciles=0"}, "--max-concurrent-reconciles must be at least 1"},
		{[]string{"--dns-orphan-sweep-interval=-1m"}, "--dns-orphan-sweep-interval must not be negative"},
		{[]string{"--owner-id-claim-interval=-1s"}, "--owner-id-claim-interval must not be negative"},
		{[]string{"--dns-drift-check=poll"}, `--dns-drift-check must be "list" or "read", not "poll"`},
		{[]string{"--owner-id=Cluster/A"}, `--owner-id: owner ID "Cluster/A" is not valid`},
		{[]string{"--owner-id=" + strings.Repeat("a", 64)}, "--owner-id: owner ID"},
		{[]string{"--max-retry-after=0"}, "--max-retry-after must be between 1s and 1h0m0s, got 0s"},
		{[]string{"--max-retry-after=24h"}, "--max-retry-after must be between 1s and 1h0m0s, got 24h0m0s"},
		{[]string{"--backup-url=https://backup.example.com"}, "--backup-url needs --backup-token-file or --backup-token-secret"},
		{[]string{"--dns-token-file=/t", "--dns-token-secret=ns/name"}, "--dns-token-file and --dns-token-secret are exclusive"},
		{[]string{"--backup-token-secret=name-only"}, "want namespace/name"},
		{[]string{"--kube-api-qps=-1"}, "--kube-api-qps and --kube-api-burst must not be negative"},
		{[]string{"--backup-timeout=0s"}, "--backup-timeout must be positive"},
		{[]string{"--final-backup-attempts=0"}, "--final-backup-attempts must be at least 1, got 0"},
		{[]string{"--final-backup-teardown-limit=0s"}, "--final-backup-teardown-limit must be positive"},
		{[]string{"--dns-provider=route53"}, `--dns-provider must be http, rfc2136 or webhook, not "route53"`},
		{[]string{"--dns-provider=webhook"}, "--dns-webhook-zone is required with --dns-provider=webhook"},
		{[]string{"--dns-provider=webhook", "--dns-url=https://dns.example.com"}, "--dns-url is for --dns-provider=http; webhook uses --dns-webhook-url"},
		{[]string{"--dns-provider=webhook", "--dns-webhook-url=unix:///run/dns.sock"}, "--dns-webhook-url must be an http or https URL"},
		{[]string{"--dns-provider=webhook", "--dns-webhook-zone=Example_com"}, `--dns-webhook-zone "Example_com"`},
		{[]string{"--dns-provider=webhook", "--dns-webhook-max-body-size=0"}, "--dns-webhook-max-body-size must be positive"},
		{[]string{"--dns-provider=webhook", "--dns-webhook-read-interval=0s"}, "--dns-webhook-read-interval must be positive"},
		{[]string{"--dns-provider=rfc2136"}, "--rfc2136-server is required with --dns-provider=rfc2136"},
		{[]string{"--dns-provider=rfc2136"}, "--rfc2136-zone is required"},
		{[]string{"--dns-provider=rfc2136"}, "needs --rfc2136-tsig-key-file or --rfc2136-tsig-key-secret"},
		{[]string{"--dns-provider=rfc2136", "--dns-url=https://dns.example.com"}, "--dns-url is for --dns-provider=http"},
		{[]string{"--dns-provider=rfc2136", "--rfc2136-tsig-key-file=/k", "--rfc2136-tsig-key-secret=ns/n"}, "are exclusive"},
		{[]string{"--backup-provider=glacier"}, `--backup-provider must be http or s3, not "glacier"`},
		{[]string{"--backup-provider=s3"}, "--s3-bucket is required with --backup-provider=s3"},
		{[]string{"--backup-provider=s3"}, "needs --s3-access-key-id-file and --s3-secret-access-key-file"},
		{[]string{"--backup-provider=s3", "--backup-url=https://backup.example.com"}, "--backup-url and --backup-token-* are for --backup-provider=http"},
		{[]string{"--backup-provider=s3", "--s3-endpoint=ftp://s3.example.com"}, "--s3-endpoint must be an http or https URL"},
		{[]string{"--backup-provider=s3", "--s3-region="}, "--s3-region must not be empty"},
		{[]string{"--s3-bucket=backups"}, "the --s3-* flags are for --backup-provider=s3"},
		{[]string{"--watch-namespaces=team-a,Team_B"}, `--watch-namespaces: "Team_B" is not a namespace name`},
		{[]string{"--watch-namespaces=team-a,team-a"}, `--watch-namespaces names "team-a" twice`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			g := NewWithT(t)
			err := run(t.Context(), tc.args)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// TestPprofIsOffByDefault: the profiles expose the manager's memory and
// stacks without authentication, so they are served only when
// --pprof-bind-address asks (TestManagerServesProbesAndStopsOnSIGTERM reads
// one).
func TestPprofIsOffByDefault(t *testing.T) {
	g := NewWithT(t)
	fs, opts, _ := newFlagSet()
	g.Expect(fs.Parse(nil)).To(Succeed())
	g.Expect(opts.pprofAddr).To(BeEmpty())
	g.Expect(fs.Parse([]string{"--pprof-bind-address=127.0.0.1:6060"})).To(Succeed())
	g.Expect(opts.pprofAddr).To(Equal("127.0.0.1:6060"))
}

// TestLoadConfigRateLimit: with --kubeconfig as with $KUBECONFIG (the path
// controller-runtime's GetConfig takes, as in a cluster), the client-side
// limiter is off unless --kube-api-qps asks for one. client-go's default of
// 5 QPS once made `make run` converge 1,000 MyApps 2.5 times slower.
func TestLoadConfigRateLimit(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		flags     []string
		env       string
		wantQPS   float32
		wantBurst int
	}{
		{"--kubeconfig", []string{"--kubeconfig=" + kubeconfig}, "", -1, 0},
		{"$KUBECONFIG", nil, kubeconfig, -1, 0},
		{"--kube-api-qps", []string{"--kubeconfig=" + kubeconfig, "--kube-api-qps=50"}, "", 50, 100},
		{"--kube-api-burst", []string{"--kube-api-qps=50", "--kube-api-burst=70"}, kubeconfig, 50, 70},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			t.Setenv("KUBECONFIG", tc.env)
			fs := flag.NewFlagSet("manager", flag.ContinueOnError)
			opts := bindOptions(fs)
			g.Expect(fs.Parse(tc.flags)).To(Succeed())
			cfg, err := loadConfig(opts)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(strings.TrimSuffix(cfg.Host, "/")).To(Equal(strings.TrimSuffix(cp.Config.Host, "/")))
			g.Expect(cfg.QPS).To(Equal(tc.wantQPS))
			g.Expect(cfg.Burst).To(Equal(tc.wantBurst))
		})
	}
}
