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
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/backupconfig"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp"
)

// options are the manager's flags.
type options struct {
	kubeconfig string
	// kubeAPIQPS and kubeAPIBurst pace the manager's requests to the API
	// server on the client side; a QPS of 0 leaves that to the server.
	kubeAPIQPS    float64
	kubeAPIBurst  int
	metricsAddr   string
	secureMetrics bool
	enableHTTP2   bool
	probeAddr     string
	// pprofAddr is where Go's profiles (/debug/pprof/) are served; "" or
	// "0" serves none.
	pprofAddr               string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	leaseDuration           time.Duration
	renewDeadline           time.Duration
	retryPeriod             time.Duration
	gracefulShutdownTimeout time.Duration
	// warmStandby starts every controller's watches before this manager is
	// elected (controller-runtime's warm-up), so a standby takes over with
	// its caches filled.
	warmStandby bool
	// priorityQueue gives the controllers controller-runtime's priority
	// queue, which puts the objects of an initial list behind edits.
	priorityQueue bool
	// watchNamespaces, when set, limits both controllers and their caches
	// to these namespaces (--watch-namespaces=a,b): one install per tenant.
	watchNamespaces []string

	// dnsProvider picks the DNS backend: the HTTP service (dns), an RFC
	// 2136 server (rfc2136) or a webhook server (webhook).
	dnsProvider string
	dns         serviceOptions
	rfc2136     rfc2136Options
	webhook     webhookOptions
	backup      serviceOptions
	// backupProvider picks where backups are kept: the HTTP backup service
	// (http) or an S3 bucket (s3).
	backupProvider string
	s3             s3Options
	// externalCAFile is a PEM bundle trusted, in addition to the system
	// roots, for both external services.
	externalCAFile string
	// maxRetryAfter caps the wait a service's Retry-After imposes on its
	// client.
	maxRetryAfter time.Duration

	myApp myAppOptions
	// backupPollInterval is how often a RUNNING backup is polled.
	backupPollInterval time.Duration
	// backupTimeout is how long a backup may stay RUNNING before it is
	// treated as failed.
	backupTimeout time.Duration
	// finalBackupAttempts is how many final backups are tried for a MyApp
	// being deleted before they are given up.
	finalBackupAttempts int
	// finalBackupTeardownLimit is how long a BackupConfig deleted with its
	// MyApp waits for the MyApp's final backup.
	finalBackupTeardownLimit time.Duration
	// maxConcurrentReconciles is the number of workers of each controller.
	maxConcurrentReconciles int
}

// myAppOptions tune the MyApp controller.
type myAppOptions struct {
	defaultTarget       string
	ingressClassName    string
	pendingPollInterval time.Duration
	driftCheckInterval  time.Duration
	recordTTL           int
	// driftCheck is how ACTIVE records are checked for drift: list or read.
	driftCheck string
	// orphanSweepInterval is how often records of MyApps that are gone are
	// looked for; zero turns the sweep off.
	orphanSweepInterval time.Duration
	// ownerID is this installation's part of every record owner; empty
	// means the kube-system namespace's UID (resolveOwnerID).
	ownerID string
	// ownerIDClaimInterval is how often the leader reads its claim of the
	// owner ID back from the DNS service; zero turns the claim off.
	ownerIDClaimInterval time.Duration
}

// serviceOptions say where an external service is and where its token comes
// from: a file (a mounted Secret, re-read when it rotates) or a Secret read
// through the API.
type serviceOptions struct {
	url         string
	tokenFile   string
	tokenSecret string
}

// DNS providers --dns-provider accepts.
const (
	dnsProviderHTTP    = "http"
	dnsProviderRFC2136 = "rfc2136"
)

// rfc2136Options say how to reach an RFC 2136 server and where its TSIG key
// comes from.
type rfc2136Options struct {
	server      string
	zone        string
	keyFile     string
	keySecret   string
	nameservers string
	timeout     time.Duration
}

// tsigKeySecretKey is the key a TSIG key Secret holds the key under.
const tsigKeySecretKey = "tsig-key"

func (r *rfc2136Options) bind(fs *flag.FlagSet) {
	fs.StringVar(&r.server, "rfc2136-server", "", "With --dns-provider=rfc2136: the primary server, host:port (port 53 by default).")
	fs.StringVar(&r.zone, "rfc2136-zone", "", "With --dns-provider=rfc2136: the zone every MyApp host must be in, such as example.com.")
	fs.StringVar(&r.keyFile, "rfc2136-tsig-key-file", "",
		"A file holding the TSIG key as [algorithm:]name:secret (nsupdate -y form; hmac-sha256 by default), re-read when it changes.")
	fs.StringVar(&r.keySecret, "rfc2136-tsig-key-secret", "",
		fmt.Sprintf("Instead, a Secret holding the TSIG key under the key %q, as namespace/name.", tsigKeySecretKey))
	fs.StringVar(&r.nameservers, "rfc2136-nameservers", "",
		"Comma-separated host:port of every nameserver that must serve a record before it is ACTIVE; empty means the primary.")
	fs.DurationVar(&r.timeout, "rfc2136-timeout", externalAttemptTimeout,
		"How long one exchange with a DNS server may take; in a zone transfer, how long each envelope may take.")
}

func (r *rfc2136Options) validate() error {
	var errs []error
	if r.server == "" {
		errs = append(errs, errors.New("--rfc2136-server is required with --dns-provider=rfc2136"))
	}
	if r.zone == "" {
		errs = append(errs, errors.New("--rfc2136-zone is required with --dns-provider=rfc2136"))
	}
	switch {
	case r.keyFile == "" && r.keySecret == "":
		errs = append(errs, errors.New("--dns-provider=rfc2136 needs --rfc2136-tsig-key-file or --rfc2136-tsig-key-secret"))
	case r.keyFile != "" && r.keySecret != "":
		errs = append(errs, errors.New("--rfc2136-tsig-key-file and --rfc2136-tsig-key-secret are exclusive"))
	case r.keySecret != "":
		if _, err := parseNamespacedName(r.keySecret); err != nil {
			errs = append(errs, fmt.Errorf("--rfc2136-tsig-key-secret: %w", err))
		}
	}
	if r.timeout <= 0 {
		errs = append(errs, errors.New("--rfc2136-timeout must be positive"))
	}
	return errors.Join(errs...)
}

// nameserverList splits --rfc2136-nameservers.
func (r *rfc2136Options) nameserverList() []string {
	var out []string
	for ns := range strings.SplitSeq(r.nameservers, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

func bindOptions(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.kubeconfig, "kubeconfig", "",
		"A kubeconfig file; without it, $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 0,
		"Requests per second the manager sends the API server at most; 0 turns the client-side limit off, as "+
			"controller-runtime does, and leaves pacing to the server's API Priority and Fairness.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 0,
		"Requests the manager may send at once above --kube-api-qps; 0 is twice the QPS.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to, such as :8443 (HTTPS) or :8080 (HTTP); 0 disables it.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, to callers that RBAC allows to get /metrics.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Serve metrics over HTTP/2 as well; off because of the HTTP/2 rapid-reset CVEs.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081",
		"The address the /healthz and /readyz probes bind to.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "",
		"The address Go's profiles (/debug/pprof/, such as heap for the live heap) are served on over plain HTTP "+
			"without authentication, such as 127.0.0.1:6060 (reach it with kubectl port-forward); empty or 0 disables it.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader so that only one of several managers reconciles.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "myapp-operator.myapp.dev",
		"The name of the Lease used for leader election.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"The namespace of the leader-election Lease; defaults to the manager's own namespace in a cluster.")
	fs.BoolVar(&o.warmStandby, "warm-standby", true,
		"With --leader-elect, start every watch and fill every cache before this manager is elected, so a "+
			"standby that takes over reconciles at once instead of listing the cluster first; false starts them at election.")
	fs.BoolVar(&o.priorityQueue, "priority-queue", true,
		"Queue the objects of a start's initial list behind edits (controller-runtime's priority queue), so an edit "+
			"made right after a restart or failover is not kept waiting behind every object.")
	fs.DurationVar(&o.leaseDuration, "leader-election-lease-duration", 15*time.Second,
		"How long a standby waits after the last renewal before it takes over from a leader that died.")
	fs.DurationVar(&o.renewDeadline, "leader-election-renew-deadline", 10*time.Second,
		"How long the leader keeps retrying to renew before it gives up leading (and exits).")
	fs.DurationVar(&o.retryPeriod, "leader-election-retry-period", 2*time.Second,
		"How often leader-election clients retry acquiring or renewing the lease.")
	fs.DurationVar(&o.gracefulShutdownTimeout, "graceful-shutdown-timeout", 30*time.Second,
		"How long in-flight reconciles may run after SIGTERM before the manager exits.")

	fs.Func("watch-namespaces", "Comma-separated namespaces the manager reconciles MyApps, BackupConfigs and Restores in, "+
		"caching only those (one install per tenant); empty, the default, means every namespace.",
		func(v string) error {
			o.watchNamespaces = nil
			for _, ns := range strings.Split(v, ",") {
				if ns = strings.TrimSpace(ns); ns != "" {
					o.watchNamespaces = append(o.watchNamespaces, ns)
				}
			}
			return nil
		})

	fs.StringVar(&o.dnsProvider, "dns-provider", dnsProviderHTTP,
		"Where DNS records are kept: http (the DNS service at --dns-url), rfc2136 (a DNS server that accepts "+
			"TSIG-signed dynamic updates, see the --rfc2136-* flags) or webhook (any DNS provider external-dns reaches, "+
			"through its webhook protocol, see the --dns-webhook-* flags).")
	o.dns.bind(fs, "dns", "DNS", "https://dns.example.com")
	o.rfc2136.bind(fs)
	o.webhook.bind(fs)
	o.bindBackupProviders(fs)
	fs.StringVar(&o.externalCAFile, "external-ca-file", "",
		"A PEM bundle of CA certificates to trust for the external services, besides the system roots.")
	fs.DurationVar(&o.maxRetryAfter, "max-retry-after", external.DefaultMaxRetryAfter,
		"The longest wait an external service's Retry-After can impose; a longer one is honoured for this long and logged "+
			fmt.Sprintf("(%s to %s).", minMaxRetryAfter, maxMaxRetryAfter))

	fs.StringVar(&o.myApp.defaultTarget, "dns-default-target", "",
		"What a MyApp's record points at while its Ingress has no load-balancer address: an IP (A record) or a host name "+
			"(CNAME). Empty waits for the address.")
	fs.StringVar(&o.myApp.ingressClassName, "ingress-class-name", "",
		"The IngressClass of every MyApp's Ingress; empty uses the cluster's default class.")
	fs.DurationVar(&o.myApp.pendingPollInterval, "dns-pending-poll-interval", myapp.DefaultPendingPollInterval,
		"How often a PENDING DNS record is polled until it is ACTIVE (jittered by up to 20%).")
	fs.DurationVar(&o.myApp.driftCheckInterval, "dns-drift-check-interval", myapp.DefaultDriftCheckInterval,
		"How often each ACTIVE DNS record is checked for changes made outside the operator, as --dns-drift-check says.")
	fs.StringVar(&o.myApp.driftCheck, "dns-drift-check", string(myapp.DriftCheckList),
		"How ACTIVE DNS records are checked for drift once per --dns-drift-check-interval: list (the leader lists this "+
			"installation's records, a page at a time spread over the interval, and reads only those that differ or are "+
			"gone) or read (each record is read at its MyApp's point of the interval).")
	fs.DurationVar(&o.myApp.orphanSweepInterval, "dns-orphan-sweep-interval", myapp.DefaultOrphanSweepInterval,
		"How often the DNS records of MyApps that are gone (a finalizer removed by hand) are looked for and deleted "+
			"(the first sweep after a start comes after a random part of it); 0 turns the sweep off. The sweep "+
			"judges only this installation's records (--owner-id).")
	fs.StringVar(&o.myApp.ownerID, "owner-id", "",
		"This installation's owner ID, part of the owner of every DNS record it writes (as external-dns's "+
			"--txt-owner-id): clusters sharing one DNS service must each have their own, and then never sweep, "+
			"replace or adopt each other's records. A DNS label of at most 63 characters. Empty (the default) "+
			"means the UID of this cluster's kube-system namespace.")
	fs.DurationVar(&o.myApp.ownerIDClaimInterval, "owner-id-claim-interval", myapp.DefaultOwnerIDClaimInterval,
		"How often the leader reads back its claim of --owner-id in the DNS service, which it writes at start: another "+
			"installation's claim there means two clusters use one owner ID, and the orphan sweep is refused until "+
			"they do not (a Warning event OwnerIDShared, the MyAppOwnerIDShared alert). At least four times per "+
			"--dns-orphan-sweep-interval. 0 turns the claim off.")
	fs.IntVar(&o.myApp.recordTTL, "dns-record-ttl", int(myapp.DefaultRecordTTL), "The TTL, in seconds, of the DNS records written.")
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", myapp.DefaultMaxConcurrentReconciles,
		"How many objects each controller reconciles at once.")
	fs.DurationVar(&o.backupPollInterval, "backup-poll-interval", backupconfig.DefaultBackupPollInterval,
		"How often a RUNNING backup is polled until it finishes (jittered).")
	fs.DurationVar(&o.backupTimeout, "backup-timeout", backupconfig.DefaultBackupTimeout,
		"How long a backup may stay RUNNING before it is treated as failed, so a job the backup service wedged "+
			"blocks no new backup, retention or final backup.")
	fs.IntVar(&o.finalBackupAttempts, "final-backup-attempts", backupconfig.DefaultFinalBackupAttempts,
		"How many final backups are tried for a MyApp being deleted before they are given up "+
			"(a Warning event and the FinalBackupAbandoned reason ask a person to decide).")
	fs.DurationVar(&o.finalBackupTeardownLimit, "final-backup-teardown-limit", backupconfig.DefaultFinalBackupTeardownLimit,
		"How long a BackupConfig deleted with its MyApp (a namespace teardown) waits for the MyApp's final backup, "+
			"from its own deletion, before it gives it up and releases the MyApp: the longest a namespace waits on "+
			"an unreachable backup service.")
	return o
}

func (s *serviceOptions) bind(fs *flag.FlagSet, prefix, name, example string) {
	fs.StringVar(&s.url, prefix+"-url", "", fmt.Sprintf("The base URL of the %s service, such as %s.", name, example))
	fs.StringVar(&s.tokenFile, prefix+"-token-file", "",
		fmt.Sprintf("A file holding the %s service's bearer token, re-read when it changes.", name))
	fs.StringVar(&s.tokenSecret, prefix+"-token-secret", "",
		fmt.Sprintf("A Secret holding the %s service's bearer token under the key %q, as namespace/name.", name, tokenSecretKey))
}

// The bounds of --max-retry-after: below a second, a throttling service
// would be called again almost at once; above an hour, one wrong answer
// would stall every deletion for longer than anyone waits for it.
const (
	minMaxRetryAfter = time.Second
	maxMaxRetryAfter = time.Hour
)

// validateDriftCheck refuses a --dns-drift-check that is neither list nor
// read.
func (o *myAppOptions) validateDriftCheck() error {
	if d := myapp.DriftCheckMode(o.driftCheck); d != myapp.DriftCheckList && d != myapp.DriftCheckRead {
		return fmt.Errorf("--dns-drift-check must be %q or %q, not %q", myapp.DriftCheckList, myapp.DriftCheckRead, d)
	}
	return nil
}

// validateOwnerID checks --owner-id when it is set; empty means the
// kube-system namespace's UID, read at start.
func (o *myAppOptions) validateOwnerID() error {
	if o.ownerID == "" {
		return nil
	}
	if err := myapp.ValidateOwnerID(o.ownerID); err != nil {
		return fmt.Errorf("--owner-id: %w", err)
	}
	return nil
}

// tokenSecretKey is the key a token Secret holds the token under.
const tokenSecretKey = "token"

func (o *options) validate() error {
	errs := []error{o.dns.validate("dns"), o.backup.validate("backup")}
	switch o.dnsProvider {
	case dnsProviderHTTP:
		if o.dns.url == "" {
			errs = append(errs, errors.New("--dns-url is required: the MyApp controller registers every MyApp's host there"))
		}
	case dnsProviderRFC2136:
		if o.dns.url != "" {
			errs = append(errs, errors.New("--dns-url is for --dns-provider=http; rfc2136 uses --rfc2136-server"))
		}
		errs = append(errs, o.rfc2136.validate())
	case dnsProviderWebhook:
		if o.dns.url != "" {
			errs = append(errs, errors.New("--dns-url is for --dns-provider=http; webhook uses --dns-webhook-url"))
		}
		errs = append(errs, o.webhook.validate())
	default:
		errs = append(errs, fmt.Errorf("--dns-provider must be %s, %s or %s, not %q", dnsProviderHTTP, dnsProviderRFC2136,
			dnsProviderWebhook, o.dnsProvider))
	}
	errs = append(errs, o.validateBackups(), validateWatchNamespaces(o.watchNamespaces))
	if o.myApp.pendingPollInterval <= 0 || o.myApp.driftCheckInterval <= 0 {
		errs = append(errs, errors.New("--dns-pending-poll-interval and --dns-drift-check-interval must be positive"))
	}
	errs = append(errs, o.myApp.validateDriftCheck(), o.myApp.validateOwnerID())
	if o.myApp.orphanSweepInterval < 0 {
		errs = append(errs, errors.New("--dns-orphan-sweep-interval must not be negative (0 turns the sweep off)"))
	}
	if o.myApp.ownerIDClaimInterval < 0 {
		errs = append(errs, errors.New("--owner-id-claim-interval must not be negative (0 turns the claim off)"))
	}
	if o.leaderElect && !o.leaseTimingsOrdered() {
		errs = append(errs, errors.New("leader election needs 0 < --leader-election-retry-period < "+
			"--leader-election-renew-deadline < --leader-election-lease-duration"))
	}
	if err := contract.ValidateTTL(int64(o.myApp.recordTTL)); err != nil {
		errs = append(errs, fmt.Errorf("--dns-record-ttl must be in the DNS service's range: %w", err))
	}
	if err := validateDefaultTarget(o.myApp.defaultTarget); err != nil {
		errs = append(errs, err)
	}
	if o.kubeAPIQPS < 0 || o.kubeAPIBurst < 0 {
		errs = append(errs, errors.New("--kube-api-qps and --kube-api-burst must not be negative; 0 turns the client-side limit off"))
	}
	if o.maxRetryAfter < minMaxRetryAfter || o.maxRetryAfter > maxMaxRetryAfter {
		errs = append(errs, fmt.Errorf("--max-retry-after must be between %s and %s, got %s",
			minMaxRetryAfter, maxMaxRetryAfter, o.maxRetryAfter))
	}
	if o.maxConcurrentReconciles < 1 {
		errs = append(errs, errors.New("--max-concurrent-reconciles must be at least 1"))
	}
	return errors.Join(errs...)
}

// validateBackups checks the BackupConfig controller's flags.
func (o *options) validateBackups() error {
	errs := []error{o.validateBackupProvider()}
	if o.backupPollInterval <= 0 {
		errs = append(errs, errors.New("--backup-poll-interval must be positive"))
	}
	if o.backupTimeout <= 0 {
		errs = append(errs, errors.New("--backup-timeout must be positive"))
	}
	if o.finalBackupAttempts < 1 {
		errs = append(errs, fmt.Errorf("--final-backup-attempts must be at least 1, got %d", o.finalBackupAttempts))
	}
	if o.finalBackupTeardownLimit <= 0 {
		errs = append(errs, errors.New("--final-backup-teardown-limit must be positive"))
	}
	return errors.Join(errs...)
}

// httpURL parses raw as an http or https URL with a host, the only kind
// of URL a flag naming a server takes.
func httpURL(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return u, true
}

func (s *serviceOptions) validate(prefix string) error {
	var errs []error
	if s.url != "" {
		if _, ok := httpURL(s.url); !ok {
			errs = append(errs, fmt.Errorf("--%s-url must be an http or https URL, got %q", prefix, s.url))
		}
		if s.tokenFile == "" && s.tokenSecret == "" {
			errs = append(errs, fmt.Errorf("--%s-url needs --%s-token-file or --%s-token-secret", prefix, prefix, prefix))
		}
	}
	if s.tokenFile != "" && s.tokenSecret != "" {
		errs = append(errs, fmt.Errorf("--%s-token-file and --%s-token-secret are exclusive", prefix, prefix))
	}
	if s.tokenSecret != "" {
		if _, err := parseNamespacedName(s.tokenSecret); err != nil {
			errs = append(errs, fmt.Errorf("--%s-token-secret: %w", prefix, err))
		}
	}
	return errors.Join(errs...)
}

// leaseTimingsOrdered reports whether 0 < retry period < renew deadline <
// lease duration, which client-go's leader election requires.
func (o *options) leaseTimingsOrdered() bool {
	return o.retryPeriod > 0 && o.retryPeriod < o.renewDeadline && o.renewDeadline < o.leaseDuration
}

// validateDefaultTarget accepts what the DNS service can hold: an IPv4
// address (an A record) or a host name (a CNAME). It has no AAAA records.
func validateDefaultTarget(target string) error {
	if target == "" {
		return nil
	}
	if ip := net.ParseIP(target); ip != nil && ip.To4() == nil {
		return fmt.Errorf("--dns-default-target %q is an IPv6 address; the DNS service holds A and CNAME records only", target)
	}
	if err := contract.ValidateTarget(myapp.TargetType(target), target); err != nil {
		return fmt.Errorf("--dns-default-target %q is neither an IPv4 address nor a host name: %w", target, err)
	}
	return nil
}

// validateWatchNamespaces checks --watch-namespaces: namespace names, each
// once.
func validateWatchNamespaces(names []string) error {
	var errs []error
	seen := map[string]bool{}
	for _, ns := range names {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--watch-namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
		}
		if seen[ns] {
			errs = append(errs, fmt.Errorf("--watch-namespaces names %q twice", ns))
		}
		seen[ns] = true
	}
	return errors.Join(errs...)
}

func parseNamespacedName(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("want namespace/name, got %q", s)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}
