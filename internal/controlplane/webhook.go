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

package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// WebhookServerEnv names a webhook server binary to use instead of
// bin/external-dns-webhook.
const WebhookServerEnv = "EXTERNAL_DNS_WEBHOOK"

// InstallWebhookServerHint is the one line a test prints when the webhook
// server is not built.
const InstallWebhookServerHint = "external-dns's webhook server is not built: run `make external-dns-webhook` " +
	"(hack/external-dns-webhook, external-dns v0.23.0 with Go 1.27 from the module proxy)"

// ErrNoWebhookServer is StartWebhookServer's error when the binary is
// missing; its text is InstallWebhookServerHint.
var ErrNoWebhookServer = errors.New(InstallWebhookServerHint)

// Webhook providers StartWebhookServer runs.
const (
	// WebhookInMemory is external-dns's inmemory provider: atomic.
	WebhookInMemory = "inmemory"
	// WebhookRFC2136 is external-dns's rfc2136 provider, here in front of a
	// BIND: last writer wins.
	WebhookRFC2136 = "rfc2136"
	// WebhookPDNS is external-dns's pdns provider, in front of a PowerDNS
	// with its HTTP API: last writer wins.
	WebhookPDNS = "pdns"
)

// defaultTestZone is the zone the webhook server and PowerDNS serve when
// none is given, as BIND's.
const defaultTestZone = "example.com"

// WebhookOptions configure StartWebhookServer.
type WebhookOptions struct {
	// Provider is WebhookInMemory, WebhookRFC2136 or WebhookPDNS.
	Provider string
	// Zone is the zone served and the domain filter; "example.com" when
	// empty, and BIND's or PowerDNS's zone with those providers.
	Zone string
	// BIND is the server the rfc2136 provider updates. Required with
	// WebhookRFC2136.
	BIND *BIND
	// PowerDNS is the server the pdns provider calls. Required with
	// WebhookPDNS.
	PowerDNS *PowerDNS
	// Addr is the loopback address to listen on; a free port when empty.
	Addr string
	// ExtraArgs are more of external-dns's flags.
	ExtraArgs []string
	// StateRoot is where run directories are created;
	// $TMPDIR/myapp-webhook when empty.
	StateRoot string
}

// WebhookServer is external-dns's webhook server (hack/external-dns-webhook)
// serving one provider on loopback, as the sidecar of a deployment does.
type WebhookServer struct {
	// URL is the server's root, for the webhook DNS client.
	URL string
	// Provider and Zone are what it serves.
	Provider, Zone string
	// Dir is the run directory, with the server's log.
	Dir string

	proc *process
}

// WebhookServerPath finds the webhook server binary: $EXTERNAL_DNS_WEBHOOK,
// or bin/external-dns-webhook in this repository. The error is
// ErrNoWebhookServer.
func WebhookServerPath() (string, error) {
	return builtBinary(WebhookServerEnv, "external-dns-webhook", ErrNoWebhookServer)
}

// RequireWebhookServer ends a test that needs a webhook server when err,
// from StartWebhookServer, is not nil: when the binary (or PowerDNS) is
// missing it is skipped with the line that says how to build or install
// it, or fails when ServersRequired, as make test builds and installs them
// first; it fails for any other reason.
func RequireWebhookServer(t TB, err error) {
	t.Helper()
	missing := errors.Is(err, ErrNoWebhookServer) || errors.Is(err, ErrNoPowerDNS)
	switch {
	case err == nil:
	case missing && ServersRequired():
		t.Fatal(fmt.Sprintf("%v; this run requires the webhook servers (CI=true or MYAPP_REQUIRE_SERVERS=1, which make test "+
			"sets) rather than skipping their tests", err))
	case missing:
		t.Skip(err)
	default:
		t.Fatal(err)
	}
}

// StartWebhookServer starts the webhook server for opts.Provider in a new
// run directory and returns once it answers the protocol's negotiation.
func StartWebhookServer(ctx context.Context, opts WebhookOptions) (*WebhookServer, error) {
	bin, err := WebhookServerPath()
	if err != nil {
		return nil, err
	}
	if opts.StateRoot == "" {
		opts.StateRoot = filepath.Join(os.TempDir(), "myapp-webhook")
	}
	if opts.Addr == "" {
		if opts.Addr, err = FreeAddress(); err != nil {
			return nil, err
		}
	}
	args := []string{"--webhook-server", "--source=fake", "--listen-address=" + opts.Addr, "--log-level=debug"}
	switch opts.Provider {
	case WebhookInMemory:
		if opts.Zone == "" {
			opts.Zone = defaultTestZone
		}
		args = append(args, "--provider=inmemory", "--inmemory-zone="+opts.Zone)
	case WebhookRFC2136:
		b := opts.BIND
		if b == nil {
			return nil, errors.New("the rfc2136 webhook provider needs a BIND")
		}
		host, port, err := net.SplitHostPort(b.Addr)
		if err != nil {
			return nil, err
		}
		opts.Zone = b.Zone
		args = append(args, "--provider=rfc2136", "--rfc2136-host="+host, "--rfc2136-port="+port, "--rfc2136-zone="+b.Zone,
			"--rfc2136-tsig-keyname="+b.KeyName, "--rfc2136-tsig-secret="+b.KeySecret, "--rfc2136-tsig-secret-alg=hmac-sha256",
			"--rfc2136-axfr")
	case WebhookPDNS:
		p := opts.PowerDNS
		if p == nil {
			return nil, errors.New("the pdns webhook provider needs a PowerDNS")
		}
		opts.Zone = p.Zone
		args = append(args, "--provider=pdns", "--pdns-server="+p.APIURL, "--pdns-api-key="+p.APIKey)
	default:
		return nil, fmt.Errorf("no webhook provider %q: want %s, %s or %s", opts.Provider, WebhookInMemory, WebhookRFC2136, WebhookPDNS)
	}
	args = append(args, "--domain-filter="+opts.Zone)
	args = append(args, opts.ExtraArgs...)
	if err := sweepStaleRuns(opts.StateRoot); err != nil {
		return nil, fmt.Errorf("sweeping stale webhook server runs in %s: %w", opts.StateRoot, err)
	}
	dir, err := newRunDir(opts.StateRoot)
	if err != nil {
		return nil, err
	}
	w := &WebhookServer{URL: "http://" + opts.Addr, Provider: opts.Provider, Zone: opts.Zone, Dir: dir}
	if w.proc, err = startProcess("external-dns-webhook", bin, args, dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if err := waitHTTP(ctx, w.proc, w.URL+"/", nil, w.Log); err != nil {
		return nil, errors.Join(err, w.Close())
	}
	return w, nil
}

// waitHTTP waits up to 30 seconds for url to answer 200, while the process
// runs.
func waitHTTP(ctx context.Context, p *process, url string, header http.Header, logs func() string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s exited (%v); its log: %s", p.name, err, tailLines(logs(), 10))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header = header
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not answer %s within 30s; its log: %s", p.name, url, tailLines(logs(), 10))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Log is the server's log so far.
func (w *WebhookServer) Log() string {
	data, _ := os.ReadFile(filepath.Join(w.Dir, "external-dns-webhook.log"))
	return string(data)
}

// Close stops the server and removes its run directory.
func (w *WebhookServer) Close() error {
	var err error
	if w.proc != nil {
		err = w.proc.stop(10 * time.Second)
	}
	return errors.Join(err, os.RemoveAll(w.Dir))
}

// InstallPowerDNSHint is the one line a test prints when PowerDNS is
// missing.
const InstallPowerDNSHint = "PowerDNS is not installed: `sudo apt-get install -y pdns-server pdns-backend-sqlite3`"

// ErrNoPowerDNS is StartPowerDNS's error when pdns_server or its sqlite3
// backend is missing; its text is InstallPowerDNSHint.
var ErrNoPowerDNS = errors.New(InstallPowerDNSHint)

// powerDNSSchema is where Debian's pdns-backend-sqlite3 keeps the schema.
const powerDNSSchema = "/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql"

// PowerDNS is a PowerDNS Authoritative server with the sqlite3 backend and
// its HTTP API on loopback, serving one zone.
type PowerDNS struct {
	// Addr is the DNS address, APIURL the API's root (for external-dns's
	// --pdns-server) and APIKey its key.
	Addr, APIURL, APIKey string
	// Zone is the zone served.
	Zone string
	// Dir is the run directory: pdns.conf, the database and pdns.log.
	Dir string

	proc *process
}

// StartPowerDNS starts PowerDNS serving zone (example.com when empty) in a
// new run directory and returns once its API answers.
func StartPowerDNS(ctx context.Context, zone, stateRoot string) (*PowerDNS, error) {
	server, err := exec.LookPath("pdns_server")
	if err != nil {
		server = "/usr/sbin/pdns_server"
	}
	pdnsutil, err2 := exec.LookPath("pdnsutil")
	sqlite, err3 := exec.LookPath("sqlite3")
	if _, err := os.Stat(server); err != nil || err2 != nil || err3 != nil {
		return nil, ErrNoPowerDNS
	}
	if _, err := os.Stat(powerDNSSchema); err != nil {
		return nil, ErrNoPowerDNS
	}
	if zone == "" {
		zone = defaultTestZone
	}
	if stateRoot == "" {
		stateRoot = filepath.Join(os.TempDir(), "myapp-pdns")
	}
	if err := sweepStaleRuns(stateRoot); err != nil {
		return nil, err
	}
	dir, err := newRunDir(stateRoot)
	if err != nil {
		return nil, err
	}
	dnsAddr, err := FreeAddress()
	if err != nil {
		return nil, err
	}
	apiAddr, err := FreeAddress()
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	p := &PowerDNS{Addr: dnsAddr, APIURL: "http://" + apiAddr, APIKey: hex.EncodeToString(key), Zone: zone, Dir: dir}
	if err := p.setUp(ctx, pdnsutil, sqlite); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if p.proc, err = startProcess("pdns", server, []string{"--config-dir=" + dir}, dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	header := http.Header{"X-Api-Key": {p.APIKey}}
	if err := waitHTTP(ctx, p.proc, p.APIURL+"/api/v1/servers/localhost/zones/"+zone+".", header, p.Log); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// setUp writes pdns.conf, creates the database and the zone.
func (p *PowerDNS) setUp(ctx context.Context, pdnsutil, sqlite string) error {
	dnsHost, dnsPort, _ := net.SplitHostPort(p.Addr)
	apiHost, apiPort, _ := net.SplitHostPort(strings.TrimPrefix(p.APIURL, "http://"))
	db := filepath.Join(p.Dir, "pdns.sqlite3")
	conf := strings.Join([]string{
		"launch=gsqlite3",
		"gsqlite3-database=" + db,
		"local-address=" + dnsHost,
		"local-port=" + dnsPort,
		"api=yes",
		"api-key=" + p.APIKey,
		"webserver=yes",
		"webserver-address=" + apiHost,
		"webserver-port=" + apiPort,
		"webserver-allow-from=127.0.0.0/8",
		"socket-dir=" + p.Dir,
		"guardian=no",
		"daemon=no",
		"disable-syslog=yes",
		"loglevel=4",
		// One receiver thread and no distributor pool to speak of: a test
		// server on a shared machine.
		"receiver-threads=1",
		"distributor-threads=1",
		"",
	}, "\n")
	if err := os.WriteFile(filepath.Join(p.Dir, "pdns.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	schema, err := os.ReadFile(powerDNSSchema)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, sqlite, db)
	cmd.Stdin = strings.NewReader(string(schema))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("creating the PowerDNS database: %v: %s", err, out)
	}
	for _, args := range [][]string{
		{"--config-dir=" + p.Dir, "create-zone", p.Zone, "ns." + p.Zone},
		{"--config-dir=" + p.Dir, "add-record", p.Zone, "ns", "A", strconv.Itoa(300), "127.0.0.1"},
	} {
		if out, err := exec.CommandContext(ctx, pdnsutil, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("pdnsutil %s: %v: %s", strings.Join(args[1:], " "), err, out)
		}
	}
	return nil
}

// Log is PowerDNS's log so far.
func (p *PowerDNS) Log() string {
	data, _ := os.ReadFile(filepath.Join(p.Dir, "pdns.log"))
	return string(data)
}

// Close stops PowerDNS and removes its run directory.
func (p *PowerDNS) Close() error {
	var err error
	if p.proc != nil {
		err = p.proc.stop(10 * time.Second)
	}
	return errors.Join(err, os.RemoveAll(p.Dir))
}
