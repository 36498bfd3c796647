//go:build ignore

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

// This directory is not a Go module in the tree: external-dns v0.23.0 needs Go
// 1.27, and a go.mod saying so would break every tool that walks the
// repository's modules with this repository's Go (controller-gen in `make
// manifests` loads every go.mod it finds). The ignore tag keeps this file out
// of the main module's builds and of `go mod tidy`; `make
// external-dns-webhook` builds it in a temporary module made of go.mod.pinned
// and go.sum.pinned.

// Command external-dns-webhook is external-dns's own webhook server
// (sigs.k8s.io/external-dns/provider/webhook/api) in front of one of
// external-dns's in-tree providers, as `external-dns --webhook-server
// --provider=X` runs it, for the tests of the operator's webhook DNS
// provider. It takes external-dns's own flags (--provider, --domain-filter,
// --inmemory-zone, --rfc2136-*, --pdns-*, ...) and differs from the
// external-dns binary in three ways:
//
//   - it listens on --listen-address (127.0.0.1:8888 by default) instead of
//     the hard-coded 127.0.0.1:8888, so several tests on one machine each
//     run their own;
//   - only the inmemory, rfc2136 and pdns providers are compiled in: the
//     full binary needs modules the build machines' module proxy does not
//     serve (github.com/civo/civogo, github.com/exoscale/egoscale/v3,
//     github.com/openshift/api), and it would take far longer to build;
//   - calls to the provider are serialised by one mutex, as a real DNS
//     provider's API serialises the changes it accepts. external-dns calls
//     its provider from one loop, so the inmemory provider keeps its zones
//     in plain maps without a lock; two batches served at once would race
//     inside it (and can stop the process with "concurrent map writes").
//     Serialising does not make a provider atomic: rfc2136 and pdns still
//     apply a batch without conditions.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	log "github.com/sirupsen/logrus"
	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/pkg/apis/externaldns"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/provider"
	"sigs.k8s.io/external-dns/provider/inmemory"
	"sigs.k8s.io/external-dns/provider/pdns"
	"sigs.k8s.io/external-dns/provider/rfc2136"
	"sigs.k8s.io/external-dns/provider/webhook/api"
)

const listenFlag = "--listen-address="

func main() {
	listen := "127.0.0.1:8888"
	var args []string
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, listenFlag); ok {
			listen = v
			continue
		}
		args = append(args, a)
	}
	cfg := externaldns.NewConfig()
	if err := cfg.ParseFlags(args); err != nil {
		fmt.Fprintf(os.Stderr, "external-dns-webhook: %v\n", err)
		os.Exit(2)
	}
	if level, err := log.ParseLevel(cfg.LogLevel); err == nil {
		log.SetLevel(level)
	}
	ctx := context.Background()
	domainFilter := endpoint.NewDomainFilterWithOptions(
		endpoint.WithDomainFilter(cfg.DomainFilter),
		endpoint.WithDomainExclude(cfg.DomainExclude),
		endpoint.WithRegexDomainFilter(cfg.RegexDomainFilter),
		endpoint.WithRegexDomainExclude(cfg.RegexDomainExclude),
	)
	var p provider.Provider
	var err error
	switch cfg.Provider {
	case "inmemory":
		p, err = inmemory.New(ctx, cfg, domainFilter)
	case "rfc2136":
		p, err = rfc2136.New(ctx, cfg, domainFilter)
	case "pdns":
		p, err = pdns.New(ctx, cfg, domainFilter)
	default:
		err = fmt.Errorf("--provider=%s is not compiled into this server; it has inmemory, rfc2136 and pdns", cfg.Provider)
	}
	if err != nil {
		log.Fatal(err)
	}
	log.Infof("Serving the %s provider as a webhook on %s", cfg.Provider, listen)
	api.StartHTTPApi(api.ServerOptions{
		Provider:          &serialised{Provider: p},
		ProviderPort:      listen,
		ReadTimeout:       cfg.WebhookProviderReadTimeout,
		WriteTimeout:      cfg.WebhookProviderWriteTimeout,
		ReadHeaderTimeout: cfg.WebhookProviderReadHeaderTimeout,
		IdleTimeout:       cfg.WebhookProviderIdleTimeout,
		MaxBodySize:       cfg.WebhookProviderMaxBodySize,
	})
}

// serialised makes one call to the provider at a time.
type serialised struct {
	provider.Provider
	mu sync.Mutex
}

func (s *serialised) Records(ctx context.Context) ([]*endpoint.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Provider.Records(ctx)
}

func (s *serialised) ApplyChanges(ctx context.Context, changes *plan.Changes) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Provider.ApplyChanges(ctx, changes)
}

func (s *serialised) AdjustEndpoints(eps []*endpoint.Endpoint) ([]*endpoint.Endpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Provider.AdjustEndpoints(eps)
}
