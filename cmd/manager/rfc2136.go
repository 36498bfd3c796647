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
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
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

// newRFC2136DNSClient builds the RFC 2136 client. The TSIG key is read,
// cached and rotated like a bearer token.
func newRFC2136DNSClient(mgr ctrl.Manager, r rfc2136Options) (dns.Client, error) {
	key := rfc2136.KeyFromTokenSource(tokenSource(mgr.GetAPIReader(),
		serviceOptions{tokenFile: r.keyFile, tokenSecret: r.keySecret}, tsigKeySecretKey))
	return rfc2136.New(rfc2136.Config{
		Server:      r.server,
		Zone:        r.zone,
		Key:         key,
		Nameservers: r.nameserverList(),
		Timeout:     r.timeout,
		Logger:      ctrl.Log.WithName("external").WithName("rfc2136"),
	})
}
