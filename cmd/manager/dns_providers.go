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
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/httpdns"
	"github.com/myapp-operator/myapp-operator/internal/reconcile/myapp/dnsplan"
)

// DNS providers --dns-provider accepts.
const (
	dnsProviderHTTP    = "http"
	dnsProviderRFC2136 = "rfc2136"
	dnsProviderWebhook = "webhook"
)

// dnsProvider is one row of the DNS provider table: a DNS backend, the
// flags it binds and how it is built. A new backend is a package under
// internal/external/dns and one row here (docs/development.md, "A new DNS
// backend").
type dnsProvider struct {
	// name is --dns-provider's value.
	name string
	// bind registers the backend's own flags.
	bind func(fs *flag.FlagSet, o *options)
	// validate checks them, when the backend is the one picked.
	validate func(o *options) error
	// newClient builds the backend's client.
	newClient func(ctx context.Context, mgr ctrl.Manager, o *options) (dns.Client, error)
}

// dnsProviders is the table --dns-provider picks from; the first row is the
// default.
var dnsProviders = []dnsProvider{
	{
		name: dnsProviderHTTP,
		bind: func(fs *flag.FlagSet, o *options) { o.dns.bind(fs, "dns", "DNS", "https://dns.example.com") },
		validate: func(o *options) error {
			if o.dns.url == "" {
				return errors.New("--dns-url is required: the MyApp controller registers every MyApp's host there")
			}
			return nil
		},
		newClient: func(_ context.Context, mgr ctrl.Manager, o *options) (dns.Client, error) {
			return httpdns.New(externalConfig(mgr, o, o.dns, "dns"))
		},
	},
	{
		name: dnsProviderRFC2136,
		bind: func(fs *flag.FlagSet, o *options) { o.rfc2136.bind(fs) },
		validate: func(o *options) error {
			return errors.Join(noDNSURL(o, "rfc2136 uses --rfc2136-server"), o.rfc2136.validate())
		},
		newClient: func(_ context.Context, mgr ctrl.Manager, o *options) (dns.Client, error) {
			return newRFC2136DNSClient(mgr, o.rfc2136)
		},
	},
	{
		name: dnsProviderWebhook,
		bind: func(fs *flag.FlagSet, o *options) { o.webhook.bind(fs) },
		validate: func(o *options) error {
			return errors.Join(noDNSURL(o, "webhook uses --dns-webhook-url"), o.webhook.validate())
		},
		newClient: func(ctx context.Context, _ ctrl.Manager, o *options) (dns.Client, error) {
			return newWebhookDNSClient(ctx, ctrl.Log.WithName("external"), o.webhook)
		},
	},
}

// noDNSURL refuses --dns-url with a backend other than the HTTP service's.
func noDNSURL(o *options, instead string) error {
	if o.dns.url != "" {
		return errors.New("--dns-url is for --dns-provider=http; " + instead)
	}
	return nil
}

// bindDNSProviders registers --dns-provider and every backend's flags.
func bindDNSProviders(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.dnsProvider, "dns-provider", dnsProviders[0].name,
		"Where DNS records are kept: http (the DNS service at --dns-url), rfc2136 (a DNS server that accepts "+
			"TSIG-signed dynamic updates, see the --rfc2136-* flags) or webhook (any DNS provider external-dns reaches, "+
			"through its webhook protocol, see the --dns-webhook-* flags).")
	for _, p := range dnsProviders {
		p.bind(fs, o)
	}
}

// pickedDNSProvider is the row --dns-provider names.
func (o *options) pickedDNSProvider() (dnsProvider, bool) {
	return rowNamed(dnsProviders, func(p dnsProvider) string { return p.name }, o.dnsProvider)
}

// rowNamed is the row of a provider table (dnsProviders, backupProviders)
// whose name a flag gives.
func rowNamed[T any](rows []T, name func(T) string, want string) (T, bool) {
	for _, r := range rows {
		if name(r) == want {
			return r, true
		}
	}
	var none T
	return none, false
}

// validateDNSProvider checks --dns-provider and the flags of the backend it
// names.
func (o *options) validateDNSProvider() error {
	if p, ok := o.pickedDNSProvider(); ok {
		return p.validate(o)
	}
	names := make([]string, len(dnsProviders))
	for i, p := range dnsProviders {
		names[i] = p.name
	}
	return fmt.Errorf("--dns-provider must be %s or %s, not %q", strings.Join(names[:len(names)-1], ", "),
		names[len(names)-1], o.dnsProvider)
}

// newDNSClient builds the client of the DNS backend --dns-provider picks.
func newDNSClient(ctx context.Context, mgr ctrl.Manager, opts *options) (dns.Client, error) {
	p, ok := opts.pickedDNSProvider()
	if !ok {
		return nil, opts.validateDNSProvider()
	}
	return p.newClient(ctx, mgr, opts)
}

// dnsClassOf is the planner's word for the class of the DNS client's
// provider: only a client that measures its provider (a dns.Classer, the
// webhook client) can be last-writer-wins.
func dnsClassOf(c dns.Client) dnsplan.Class {
	if dns.ClassOf(c) == dns.ClassLastWriterWins {
		return dnsplan.ClassLastWriterWins
	}
	return dnsplan.ClassAtomic
}
