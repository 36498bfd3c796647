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
	"time"

	"github.com/go-logr/logr"

	"github.com/myapp-operator/myapp-operator/internal/contract"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/dns"
	"github.com/myapp-operator/myapp-operator/internal/external/dns/webhook"
)

// webhookOptions say how to reach the webhook server, usually a sidecar on
// loopback, and what the operator accepts of its provider.
type webhookOptions struct {
	url          string
	zone         string
	timeout      time.Duration
	readInterval time.Duration
	maxBodyBytes int64
	// singleWriter is the operator's word that this installation is the
	// only writer of its names in the zone, which a last-writer-wins
	// provider needs before the manager starts.
	singleWriter bool
}

func (w *webhookOptions) bind(fs *flag.FlagSet) {
	fs.StringVar(&w.url, "dns-webhook-url", "http://127.0.0.1:8888",
		"With --dns-provider=webhook: the webhook server's URL, the sidecar that runs a DNS provider (external-dns's "+
			"protocol), listening on loopback.")
	fs.StringVar(&w.zone, "dns-webhook-zone", "",
		"With --dns-provider=webhook: the zone every MyApp host must be in, such as example.com; the server's domain filter must cover it.")
	fs.DurationVar(&w.timeout, "dns-webhook-timeout", webhook.DefaultTimeout,
		"How long one request to the webhook server may take (external-dns's read plus write timeout).")
	fs.DurationVar(&w.readInterval, "dns-webhook-read-interval", webhook.DefaultReadInterval,
		"How long one read of the whole zone (the protocol's only read) serves the operator's reads; a record written "+
			"reads PENDING until the next zone read shows it.")
	fs.Int64Var(&w.maxBodyBytes, "dns-webhook-max-body-size", webhook.DefaultMaxBodyBytes,
		"The largest request or answer body, in bytes: external-dns's --webhook-provider-max-body-size, which must match "+
			"the server's (32 MiB: the records of about 92,000 MyApps in a zone with nothing else).")
	fs.BoolVar(&w.singleWriter, "dns-webhook-single-writer", false,
		"State that this installation is the only writer of its names in the zone. Required on a last-writer-wins "+
			"provider (the start-up probe says which), where a race with another writer is detected, not prevented: "+
			"without it the manager does not start there.")
}

func (w *webhookOptions) validate() error {
	var errs []error
	if _, ok := httpURL(w.url); !ok {
		errs = append(errs, fmt.Errorf("--dns-webhook-url must be an http or https URL, got %q", w.url))
	}
	if w.zone == "" {
		errs = append(errs, errors.New("--dns-webhook-zone is required with --dns-provider=webhook"))
	} else if err := contract.ValidateName(w.zone); err != nil {
		errs = append(errs, fmt.Errorf("--dns-webhook-zone %q: %w", w.zone, err))
	}
	if w.timeout <= 0 || w.readInterval <= 0 {
		errs = append(errs, errors.New("--dns-webhook-timeout and --dns-webhook-read-interval must be positive"))
	}
	if w.maxBodyBytes <= 0 {
		errs = append(errs, errors.New("--dns-webhook-max-body-size must be positive"))
	}
	return errors.Join(errs...)
}

// webhookStartTimeout bounds how long the manager waits at start for the
// webhook server (a sidecar starting beside it) to answer and for the
// probe to finish.
const webhookStartTimeout = 2 * time.Minute

// newWebhookDNSClient builds the webhook client and measures the
// provider's class before any controller runs. A server that is not up yet
// is waited for; one that answers wrongly (another protocol, a domain
// filter without the zone) stops the start at once.
func newWebhookDNSClient(ctx context.Context, log logr.Logger, w webhookOptions) (*webhook.Client, error) {
	c, err := webhook.New(webhook.Config{
		URL:          w.url,
		Zone:         w.zone,
		Timeout:      w.timeout,
		ReadInterval: w.readInterval,
		MaxBodyBytes: w.maxBodyBytes,
		MaxRetries:   externalMaxRetries,
		Logger:       log,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, webhookStartTimeout)
	defer cancel()
	var res webhook.ProbeResult
	for {
		log.Info("Probing the webhook DNS provider", "url", w.url, "zone", w.zone)
		if res, err = c.Start(ctx); err == nil {
			break
		}
		if !external.IsRetryable(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("the webhook DNS provider at %s: %w", w.url, err)
		}
		log.Info("The webhook DNS provider is not ready; retrying", "error", err.Error())
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the webhook DNS provider at %s did not answer within %s: %w", w.url, webhookStartTimeout, err)
		case <-time.After(2 * time.Second):
		}
	}
	if err := webhookClassAllowed(res, w.singleWriter); err != nil {
		return nil, err
	}
	if res.Class == dns.ClassLastWriterWins {
		log.Info("The webhook DNS provider is last-writer-wins; --dns-webhook-single-writer says this installation is "+
			"the zone's only writer", "probe", res.Message())
	}
	return c, nil
}

// webhookClassAllowed refuses a last-writer-wins provider unless the
// operator stated that this installation writes its names alone: there,
// several installations on one zone, and the orphan sweep deleting a name
// another writer took meanwhile, are promises the operator cannot keep.
func webhookClassAllowed(res webhook.ProbeResult, singleWriter bool) error {
	if res.Class == dns.ClassAtomic || singleWriter {
		return nil
	}
	return fmt.Errorf("the webhook DNS provider is last-writer-wins (a second create of a name took: %v; a delete of a "+
		"wrong value was refused: %v), so a race between writers of one name is detected, not prevented, and the "+
		"orphan sweep could delete a name another writer took meanwhile; run one installation per zone (or give each "+
		"--owner-id its own domain filter) and start the manager with --dns-webhook-single-writer, or use an atomic "+
		"provider (docs/webhook.md)", !res.CreateRefused, res.WrongDeleteRefused)
}
