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

// Command devenv runs the operator for a developer, in the foreground.
//
// With no reachable cluster in the current kubeconfig context (or with
// --local), it first starts a local cluster from internal/controlplane (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok with a
// fake node) with the CRDs installed. It always starts the DNS and backup
// simulator unless --dns-url and --backup-url name real services, then runs
// the manager binary against all of it. With --dns-provider=rfc2136 the DNS
// records go to a local BIND (named) serving example.com instead, so `dig`
// shows what the operator wrote; with --backup-provider=s3 the backups go
// to a bucket of a local S3 server (versitygw, whose posix backend keeps
// each backup as a file), so `find` and `gunzip` show what the operator
// stored. Ctrl-C stops everything it started; a run that crashed is
// cleaned up by the next one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

type options struct {
	local          bool
	stateDir       string
	managerBinary  string
	simulatorAddr  string
	token          string
	dnsURL         string
	backupURL      string
	dnsProvider    string
	bindAddr       string
	backupProvider string
	s3Addr         string
	webhookAddr    string
	managerArgs    []string
	whichCluster   bool
}

// bindZone is the zone the local named serves: the samples' hosts are in it.
const bindZone = "example.com"

// s3Bucket is the bucket the local S3 server holds the backups in.
const s3Bucket = "myapp-backups"

func main() {
	opts := options{}
	flag.BoolVar(&opts.local, "local", os.Getenv("LOCAL_CLUSTER") == "true",
		"Start a local cluster even if the current kubeconfig context reaches one (default from LOCAL_CLUSTER=true).")
	flag.StringVar(&opts.stateDir, "state-dir", ".local",
		"Where the local cluster, its kubeconfig and the simulator's token live.")
	flag.StringVar(&opts.managerBinary, "manager", "bin/manager", "The manager binary to run.")
	flag.StringVar(&opts.simulatorAddr, "simulator-addr", "127.0.0.1:8090", "Where the simulator listens.")
	flag.StringVar(&opts.token, "token", "devtoken", "The simulator's bearer token.")
	flag.StringVar(&opts.dnsURL, "dns-url", "", "A real DNS service to use instead of the simulator (needs a token file in the manager args).")
	flag.StringVar(&opts.backupURL, "backup-url", "", "A real backup service to use instead of the simulator.")
	flag.BoolVar(&opts.whichCluster, "which-cluster", false,
		"Print \"local\" when a run would start a local cluster and \"current\" when it would use the current context, "+
			"and exit: `make run` builds the control plane only for a local cluster.")
	flag.StringVar(&opts.dnsProvider, "dns-provider", "http",
		"http keeps DNS records in the simulator; rfc2136 in a local BIND (named) serving "+bindZone+
			"; webhook in external-dns's webhook server with its inmemory provider (`make external-dns-webhook`).")
	flag.StringVar(&opts.bindAddr, "bind-addr", "127.0.0.1:8053", "Where the local named listens with --dns-provider=rfc2136.")
	flag.StringVar(&opts.webhookAddr, "webhook-addr", "127.0.0.1:8888",
		"Where external-dns's webhook server listens with --dns-provider=webhook.")
	flag.StringVar(&opts.backupProvider, "backup-provider", "http",
		"http keeps backups in the simulator; s3 in bucket "+s3Bucket+" of a local S3 server (versitygw, `make versitygw`).")
	flag.StringVar(&opts.s3Addr, "s3-addr", "127.0.0.1:8070", "Where the local S3 server listens with --backup-provider=s3.")
	flag.Parse()
	opts.managerArgs = flag.Args()

	if opts.whichCluster {
		fmt.Println(whichCluster(opts.local))
		return
	}

	if err := run(opts); err != nil {
		fmt.Fprintf(os.Stderr, "devenv: %v\n", err)
		os.Exit(1)
	}
}

func run(opts options) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	stateDir, err := filepath.Abs(opts.stateDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return err
	}
	kubeconfig := filepath.Join(stateDir, "kubeconfig")

	stopCluster, err := pickCluster(ctx, opts.local, stateDir, kubeconfig)
	if err != nil {
		return err
	}
	defer stopCluster()

	dns, err := startDNS(ctx, opts, stateDir)
	if err != nil {
		return err
	}
	defer dns.stop()
	bind, hook, dnsArgs := dns.bind, dns.hook, dns.args
	localDNS := bind != nil || hook != nil

	var backupArgs []string
	var s3srv *controlplane.S3Server
	if opts.backupProvider == "s3" {
		if s3srv, backupArgs, err = startS3(ctx, opts.s3Addr, stateDir); err != nil {
			return err
		}
		defer stopS3(s3srv)
	}

	// The simulator runs in this process unless real services are named,
	// or local ones stand in for both.
	dnsURL, backupURL := opts.dnsURL, opts.backupURL
	var simURL string
	if (dnsURL == "" && !localDNS) || (backupURL == "" && s3srv == nil) {
		srv, url, err := startSimulator(opts.simulatorAddr, opts.token)
		if err != nil {
			return err
		}
		defer func() { _ = srv.Close() }()
		simURL = url
		if dnsURL == "" {
			dnsURL = url
		}
		if backupURL == "" {
			backupURL = url
		}
	}
	tokenFile := filepath.Join(stateDir, "token")
	if err := os.WriteFile(tokenFile, []byte(opts.token+"\n"), 0o600); err != nil {
		return err
	}

	printBanner(kubectlCommand(), kubeconfig, simURL, opts.token, bind, filepath.Join(opts.stateDir, "tsig.key"), s3srv)
	if hook != nil {
		fmt.Print(webhookBanner(hook))
	}

	if !localDNS {
		dnsArgs = []string{"--dns-url=" + dnsURL, "--dns-token-file=" + tokenFile}
	}
	if s3srv == nil {
		backupArgs = []string{"--backup-url=" + backupURL, "--backup-token-file=" + tokenFile}
	}
	args := managerArgs(kubeconfig, dnsArgs, backupArgs, opts.managerArgs)
	return runManager(ctx, opts.managerBinary, args)
}

// dnsServer is the DNS server a run started for the manager, if any: a
// BIND for rfc2136, external-dns's webhook server for webhook, none for
// http (the simulator, or --dns-url).
type dnsServer struct {
	bind *controlplane.BIND
	hook *controlplane.WebhookServer
	// args are the manager's DNS flags for it.
	args []string
}

// startDNS starts the server opts.dnsProvider keeps the records in.
func startDNS(ctx context.Context, opts options, stateDir string) (dnsServer, error) {
	var d dnsServer
	var err error
	switch opts.dnsProvider {
	case "http":
	case "rfc2136":
		d.bind, d.args, err = startBIND(ctx, opts.bindAddr, stateDir)
	case "webhook":
		d.hook, d.args, err = startWebhook(ctx, opts.webhookAddr, stateDir)
	default:
		err = fmt.Errorf("no DNS provider %q for a local run: want http, rfc2136 or webhook", opts.dnsProvider)
	}
	return d, err
}

// stop stops the server startDNS started.
func (d dnsServer) stop() {
	if d.bind != nil {
		stopBIND(d.bind)
	}
	if d.hook != nil {
		stopWebhook(d.hook)
	}
}

// whichCluster is the cluster a run would use, "local" or "current", by the
// same check run itself makes.
func whichCluster(local bool) string {
	if local {
		return "local"
	}
	if current, _ := reachableCurrentContext(); current == nil {
		return "local"
	}
	return "current"
}

// localClusterOptions are the options of the local cluster a run starts.
// Its kube-controller-manager gets the QPS of `make bench`'s cluster: at its
// default of 20, the cluster's own controllers, not the operator, would set
// how fast many MyApps converge.
func localClusterOptions(stateDir string) controlplane.Options {
	return controlplane.Options{
		Tier:                 controlplane.TierCluster,
		StateRoot:            filepath.Join(stateDir, "controlplane"),
		ControllerManagerQPS: controlplane.LocalClusterControllerManagerQPS,
	}
}

// pickCluster writes the kubeconfig of the cluster the operator runs
// against: the current context's when it answers (and local is false),
// else a local one it starts. The returned function stops what it started.
func pickCluster(ctx context.Context, local bool, stateDir, kubeconfig string) (func(), error) {
	current, reason := reachableCurrentContext()
	if local || current == nil {
		if !local {
			fmt.Printf("No cluster reachable (%s): starting a local one.\n", reason)
		}
		fmt.Println("Starting the local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok ...")
		start := time.Now()
		cp, err := controlplane.Start(ctx, localClusterOptions(stateDir))
		if err != nil {
			return nil, fmt.Errorf("starting the local cluster: %w", err)
		}
		stop := func() {
			fmt.Println("Stopping the local cluster")
			if err := cp.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "devenv: stopping the local cluster: %v\n", err)
			}
		}
		if err := cp.WriteKubeconfig(kubeconfig); err != nil {
			stop()
			return nil, err
		}
		fmt.Printf("Local cluster ready in %s (logs in %s/logs)\n", time.Since(start).Round(100*time.Millisecond), cp.Dir)
		return stop, nil
	}
	if err := clientcmd.WriteToFile(current.raw, kubeconfig); err != nil {
		return nil, err
	}
	fmt.Printf("Using the cluster of the current kubeconfig context %q (%s)\n", current.raw.CurrentContext, current.config.Host)
	if err := checkCRDsInstalled(ctx, current.config); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// currentContext is a kubeconfig whose current context answered.
type currentContext struct {
	config *rest.Config
	// raw is the current context alone, with credentials inlined, so the
	// manager gets exactly what was checked, whatever $KUBECONFIG merges.
	raw clientcmdapi.Config
}

// reachableCurrentContext loads the default kubeconfig ($KUBECONFIG, which
// may merge several files, or ~/.kube/config) and asks the current
// context's server for its version with a short timeout. No kubeconfig at
// all counts as no cluster, even inside a pod.
func reachableCurrentContext() (*currentContext, string) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	raw, err := loader.RawConfig()
	if err != nil || raw.CurrentContext == "" {
		return nil, "no current kubeconfig context"
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, err.Error()
	}
	cfg.Timeout = 3 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err.Error()
	}
	if _, err := dc.ServerVersion(); err != nil {
		return nil, fmt.Sprintf("the current context's server %s does not answer", cfg.Host)
	}
	if err := clientcmdapi.MinifyConfig(&raw); err != nil {
		return nil, err.Error()
	}
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		return nil, err.Error()
	}
	return &currentContext{config: cfg, raw: raw}, ""
}

// checkCRDsInstalled fails with the command to run when the CRDs are not in
// the cluster: the operator cannot start without them.
func checkCRDsInstalled(ctx context.Context, cfg *rest.Config) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	for _, name := range []string{"myapps.apps.myapp.dev", "backupconfigs.backup.myapp.dev"} {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
			return fmt.Errorf("CRD %s is not in the cluster (%w): run `make install` first", name, err)
		}
	}
	return nil
}

// startSimulator serves a fresh simulator. Its state is not persisted: a new
// local cluster has new UIDs, and records from an earlier run would hold
// their hosts against the new MyApps.
func startSimulator(addr, token string) (*http.Server, string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("the simulator cannot listen on %s (another `make run`?): %w", addr, err)
	}
	sim := simulator.New(simulator.Options{
		Token:            token,
		PropagationDelay: 3 * time.Second,
		BackupDuration:   5 * time.Second,
	})
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return srv, "http://" + l.Addr().String(), nil
}

// startBIND starts a named serving bindZone on addr, writes its TSIG key
// where the manager reads it, and returns the manager's DNS flags. Like the
// simulator, it starts empty: records of an earlier run would belong to
// MyApps that no longer exist.
func startBIND(ctx context.Context, addr, stateDir string) (*controlplane.BIND, []string, error) {
	b, err := controlplane.StartBIND(ctx, controlplane.BINDOptions{
		Zone:      bindZone,
		Addr:      addr,
		StateRoot: filepath.Join(stateDir, "bind"),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("starting named on %s (another `make run`?): %w", addr, err)
	}
	keyFile := filepath.Join(stateDir, "tsig.key")
	if err := os.WriteFile(keyFile, []byte(b.Key()+"\n"), 0o600); err != nil {
		return nil, nil, errors.Join(err, b.Close())
	}
	fmt.Printf("named serves %s on %s (log in %s/named.log)\n", bindZone, addr, b.Dir)
	return b, []string{
		"--dns-provider=rfc2136",
		"--rfc2136-server=" + addr,
		"--rfc2136-zone=" + bindZone,
		"--rfc2136-tsig-key-file=" + keyFile,
	}, nil
}

// startS3 starts versitygw serving bucket s3Bucket on addr, writes its keys
// where the manager reads them (as a mounted Secret would give them), and
// returns the manager's backup flags. Like the simulator, it starts empty:
// a new local cluster has a new owner ID, under which an earlier run's
// backups would never be found.
func startS3(ctx context.Context, addr, stateDir string) (*controlplane.S3Server, []string, error) {
	srv, err := controlplane.StartS3(ctx, controlplane.S3Options{
		Addr:      addr,
		StateRoot: filepath.Join(stateDir, "s3"),
		Buckets:   []string{s3Bucket},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("starting the S3 server on %s (another `make run`? `make versitygw` builds it): %w", addr, err)
	}
	keys := filepath.Join(stateDir, "s3-keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		return nil, nil, errors.Join(err, srv.Close())
	}
	for name, value := range map[string]string{"access-key-id": srv.AccessKey, "secret-access-key": srv.SecretKey} {
		if err := os.WriteFile(filepath.Join(keys, name), []byte(value+"\n"), 0o600); err != nil {
			return nil, nil, errors.Join(err, srv.Close())
		}
	}
	fmt.Printf("versitygw serves bucket %s on %s (its files in %s)\n", s3Bucket, addr, srv.DataDir)
	return srv, []string{
		"--backup-provider=s3",
		"--s3-endpoint=" + srv.Endpoint,
		"--s3-bucket=" + s3Bucket,
		"--s3-region=" + srv.Region,
		"--s3-path-style",
		"--s3-access-key-id-file=" + filepath.Join(keys, "access-key-id"),
		"--s3-secret-access-key-file=" + filepath.Join(keys, "secret-access-key"),
	}, nil
}

func stopS3(srv *controlplane.S3Server) {
	fmt.Println("Stopping the S3 server")
	if err := srv.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "devenv: stopping the S3 server: %v\n", err)
	}
}

// managerArgs are the manager's flags: the cluster, the DNS backend's flags,
// the backup provider's, settings for a quick local loop, then the user's.
func managerArgs(kubeconfig string, dnsArgs, backupArgs, extra []string) []string {
	args := append(append(append([]string{"--kubeconfig=" + kubeconfig}, dnsArgs...), backupArgs...),
		// kwok gives Ingresses no load-balancer address; records point here.
		"--dns-default-target=192.0.2.10",
		"--dns-pending-poll-interval=2s",
		"--backup-poll-interval=1s",
		"--health-probe-bind-address=0",
		"--metrics-bind-address=0",
		"--zap-devel",
	)
	return append(args, extra...)
}

// startWebhook starts external-dns's webhook server with its inmemory
// provider serving bindZone on addr, as the sidecar of a deployment would,
// and returns the manager's DNS flags. The inmemory provider is atomic, so
// the manager needs no --dns-webhook-single-writer. It starts empty, like
// the simulator, and forgets everything when it stops.
func startWebhook(ctx context.Context, addr, stateDir string) (*controlplane.WebhookServer, []string, error) {
	w, err := controlplane.StartWebhookServer(ctx, controlplane.WebhookOptions{
		Provider:  controlplane.WebhookInMemory,
		Zone:      bindZone,
		Addr:      addr,
		StateRoot: filepath.Join(stateDir, "webhook"),
	})
	switch {
	case errors.Is(err, controlplane.ErrNoWebhookServer):
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("starting external-dns's webhook server on %s (another `make run`?): %w", addr, err)
	}
	fmt.Printf("external-dns's webhook server (inmemory) serves %s at %s (log in %s)\n", w.Zone, w.URL, w.Dir)
	return w, []string{
		"--dns-provider=webhook",
		"--dns-webhook-url=" + w.URL,
		"--dns-webhook-zone=" + w.Zone,
	}, nil
}

func stopWebhook(w *controlplane.WebhookServer) {
	fmt.Println("Stopping external-dns's webhook server")
	if err := w.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "devenv: stopping the webhook server: %v\n", err)
	}
}

// webhookBanner says how to list the records the operator wrote through
// the webhook protocol, as external-dns itself reads them.
func webhookBanner(w *controlplane.WebhookServer) string {
	return fmt.Sprintf(`
  DNS records are in external-dns's webhook server (inmemory provider) at %[1]s, zone %[2]s:

    curl -s -H 'Accept: %[3]s' %[1]s/records                 # every record, owner TXTs too
    curl -s -H 'Accept: %[3]s' %[1]s/records | tr '{' '\n' | grep 'web.%[2]s'   # the sample MyApp's
`, w.URL, w.Zone, webhook.MediaType)
}

func stopBIND(b *controlplane.BIND) {
	fmt.Println("Stopping named")
	if err := b.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "devenv: stopping named: %v\n", err)
	}
}

// runManager runs the manager in the foreground until ctx is cancelled, then
// stops it with SIGTERM, as a kubelet would.
func runManager(ctx context.Context, binary string, args []string) error {
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = controlplane.KilledWithParent()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the manager %s (run `make build`?): %w", binary, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return fmt.Errorf("the manager exited: %w", err)
	case <-ctx.Done():
	}
	fmt.Println("\nStopping the manager")
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			return err
		}
	case <-time.After(40 * time.Second):
		_ = cmd.Process.Kill()
		err := <-exited
		fmt.Fprintf(os.Stderr, "devenv: the manager did not stop within 40s and was killed (%v)\n", err)
	}
	return nil
}

// kubectlCommand is the kubectl `make controlplane` links into bin/, or the
// one on PATH when there is none.
func kubectlCommand() string {
	if _, err := os.Stat("bin/kubectl"); err == nil {
		return "bin/kubectl"
	}
	return "kubectl"
}

func printBanner(kubectl, kubeconfig, simURL, token string, bind *controlplane.BIND, keyFile string,
	s3srv *controlplane.S3Server) {
	fmt.Printf(`
==> The operator is starting. In another terminal, in this directory:

    export KUBECONFIG=%[2]s
    %[1]s apply -f config/samples/
    %[1]s get myapps,backupconfigs -w
`, kubectl, kubeconfig)
	switch {
	case simURL != "" && s3srv != nil:
		fmt.Printf(`
  The DNS simulator is at %[1]s (token %[2]s):

    curl -s -H 'Authorization: Bearer %[2]s' %[1]s/dns/v1/records
`, simURL, token)
	case simURL != "":
		fmt.Printf(`
  The DNS and backup simulator is at %[1]s (token %[2]s):

    curl -s -H 'Authorization: Bearer %[2]s' %[1]s/dns/v1/records
    curl -s -H 'Authorization: Bearer %[2]s' %[1]s/backup/v1/backups
    curl -s -H 'Authorization: Bearer %[2]s' %[1]s/admin/v1/state   # everything it holds
`, simURL, token)
	}
	if bind != nil {
		host, port, _ := net.SplitHostPort(bind.Addr)
		fmt.Printf(`
  DNS records are in a local named serving %[1]s (TSIG key in %[4]s):

    dig @%[2]s -p %[3]s +short web.%[1]s                       # the sample MyApp's record
    dig @%[2]s -p %[3]s +short TXT _myapp-owner.web.%[1]s      # who owns it
    dig @%[2]s -p %[3]s -y "$(cat %[4]s)" AXFR %[1]s         # the whole zone
`, bind.Zone, host, port, keyFile)
	}
	if s3srv != nil {
		fmt.Print(s3Banner(s3srv))
	}
	fmt.Print("\n  Ctrl-C stops the operator, the simulator and the local cluster.\n\n")
}

// s3Banner says where the backups are and how to look at them: the posix
// backend keeps each object as a file named by its key, its content as it
// was written (gzip'd JSON), and curl signs a request itself.
func s3Banner(srv *controlplane.S3Server) string {
	dir := filepath.Join(srv.DataDir, s3Bucket)
	return fmt.Sprintf(`
  Backups are objects in bucket %[1]s of a local S3 server (versitygw) at %[2]s,
  kept as files under %[3]s:

    find %[3]s -name '*.json.gz'                                # one file per backup
    gunzip -c "$(find %[3]s -name '*.json.gz' | head -1)"       # what one holds
    curl -s --aws-sigv4 aws:amz:%[4]s:s3 --user %[5]s:%[6]s -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
      '%[2]s/%[1]s?list-type=2'                                  # the bucket, as S3 lists it
`, s3Bucket, srv.Endpoint, dir, srv.Region, srv.AccessKey, srv.SecretKey)
}
