package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// options are the manager's flags.
type options struct {
	kubeconfig              string
	metricsAddr             string
	secureMetrics           bool
	enableHTTP2             bool
	probeAddr               string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	gracefulShutdownTimeout time.Duration

	dns    serviceOptions
	backup serviceOptions
	// externalCAFile is a PEM bundle trusted, in addition to the system
	// roots, for both external services.
	externalCAFile string
}

// serviceOptions say where an external service is and where its token comes
// from: a file (a mounted Secret, re-read when it rotates) or a Secret read
// through the API.
type serviceOptions struct {
	url         string
	tokenFile   string
	tokenSecret string
}

func bindOptions(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.kubeconfig, "kubeconfig", "",
		"A kubeconfig file; without it, $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"The address the metrics endpoint binds to, such as :8443 (HTTPS) or :8080 (HTTP); 0 disables it.")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS, to callers that RBAC allows to get /metrics.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Serve metrics over HTTP/2 as well; off because of the HTTP/2 rapid-reset CVEs.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081",
		"The address the /healthz and /readyz probes bind to.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Elect a leader so that only one of several managers reconciles.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "myapp-operator.myapp.dev",
		"The name of the Lease used for leader election.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"The namespace of the leader-election Lease; defaults to the manager's own namespace in a cluster.")
	fs.DurationVar(&o.gracefulShutdownTimeout, "graceful-shutdown-timeout", 30*time.Second,
		"How long in-flight reconciles may run after SIGTERM before the manager exits.")

	o.dns.bind(fs, "dns", "DNS", "https://dns.example.com")
	o.backup.bind(fs, "backup", "backup", "https://backup.example.com")
	fs.StringVar(&o.externalCAFile, "external-ca-file", "",
		"A PEM bundle of CA certificates to trust for the external services, besides the system roots.")
	return o
}

func (s *serviceOptions) bind(fs *flag.FlagSet, prefix, name, example string) {
	fs.StringVar(&s.url, prefix+"-url", "", fmt.Sprintf("The base URL of the %s service, such as %s.", name, example))
	fs.StringVar(&s.tokenFile, prefix+"-token-file", "",
		fmt.Sprintf("A file holding the %s service's bearer token, re-read when it changes.", name))
	fs.StringVar(&s.tokenSecret, prefix+"-token-secret", "",
		fmt.Sprintf("A Secret holding the %s service's bearer token under the key %q, as namespace/name.", name, tokenSecretKey))
}

// tokenSecretKey is the key a token Secret holds the token under.
const tokenSecretKey = "token"

func (o *options) validate() error {
	return errors.Join(o.dns.validate("dns"), o.backup.validate("backup"))
}

func (s *serviceOptions) validate(prefix string) error {
	var errs []error
	if s.url != "" {
		u, err := url.Parse(s.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
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

func parseNamespacedName(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("want namespace/name, got %q", s)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}
