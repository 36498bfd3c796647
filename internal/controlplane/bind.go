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
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// InstallBINDHint is the one line a test prints when named is missing.
const InstallBINDHint = "named (BIND 9) is not installed: run `make bind9` as root, or `sudo apt-get install -y bind9 bind9-dnsutils`"

// BINDOptions configure StartBIND. The zero value serves example.com on a
// free loopback port with a fresh hmac-sha256 key.
type BINDOptions struct {
	// Zone is the zone served; "example.com" when empty.
	Zone string
	// KeyName names the TSIG key; "myapp-operator" when empty.
	KeyName string
	// Addr is the loopback address to listen on, 127.0.0.1:port; a free
	// port when empty.
	Addr string
	// Primary, when set, makes this server a secondary of the zone that
	// transfers it from Primary with Primary's key, once when it starts
	// and whenever it is notified.
	Primary *BIND
	// StateRoot is where run directories are created; $TMPDIR/myapp-bind
	// when empty.
	StateRoot string
	// Seed, when set, writes zone-file lines (names relative to the zone)
	// after the SOA and NS of a primary's zone, so a test or a benchmark
	// starts with a large zone without sending an update per record.
	Seed func(w io.Writer) error
}

// BIND is a named serving one zone that accepts updates and transfers
// signed with its key. It runs in its own run directory, like the control
// plane's components, and dies with the process that started it.
type BIND struct {
	// Addr is where it listens, over UDP and TCP.
	Addr string
	// Zone is the zone it serves, without a trailing dot.
	Zone string
	// KeyName and KeySecret are the TSIG key (hmac-sha256).
	KeyName, KeySecret string
	// Dir is the run directory: named.conf, the zone, its journal and
	// named.log.
	Dir string

	named string
	mu    sync.Mutex
	proc  *process
}

// Key is the key in nsupdate's -y form, "hmac-sha256:name:secret".
func (b *BIND) Key() string { return "hmac-sha256:" + b.KeyName + ":" + b.KeySecret }

// ErrNoNamed is NamedPath's error, and StartBIND's, when BIND is not
// installed; its text is InstallBINDHint.
var ErrNoNamed = errors.New(InstallBINDHint)

// BINDInstallable reports whether `make bind9` installs BIND on this
// machine: the user is root and apt-get is there.
func BINDInstallable() bool {
	_, err := exec.LookPath("apt-get")
	return os.Geteuid() == 0 && err == nil
}

// TB is the part of testing.TB that RequireBIND uses.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// RequireBIND ends a test that needs BIND when err, from StartBIND or
// NamedPath, is not nil. Where named is missing and this machine cannot
// install it (not root, or no apt-get) the test is skipped with the line
// that says how to install it; where `make bind9` could have installed it,
// or named failed for another reason, the test fails, so `make test` as
// root never skips the RFC 2136 tests silently.
func RequireBIND(t TB, err error) {
	t.Helper()
	requireBIND(t, err, BINDInstallable())
}

func requireBIND(t TB, err error, installable bool) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, ErrNoNamed) && !installable:
		t.Skip(err)
	default:
		t.Fatal(err)
	}
}

// NamedPath finds named, also in /usr/sbin, which is not on every user's
// PATH. The error is ErrNoNamed.
func NamedPath() (string, error) {
	if p, err := exec.LookPath("named"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/named", "/usr/local/sbin/named"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNoNamed
}

// StartBIND writes a configuration, a zone and a key into a new run
// directory and starts named on it, returning once it answers for the zone.
// Runs whose owner died are swept first.
func StartBIND(ctx context.Context, opts BINDOptions) (*BIND, error) {
	named, err := NamedPath()
	if err != nil {
		return nil, err
	}
	if opts.Zone == "" {
		opts.Zone = "example.com"
	}
	if opts.KeyName == "" {
		opts.KeyName = "myapp-operator"
	}
	if opts.StateRoot == "" {
		opts.StateRoot = filepath.Join(os.TempDir(), "myapp-bind")
	}
	if opts.Addr == "" {
		if opts.Addr, err = FreeAddress(); err != nil {
			return nil, err
		}
	}
	if err := sweepStaleRuns(opts.StateRoot); err != nil {
		return nil, fmt.Errorf("sweeping stale BIND runs in %s: %w", opts.StateRoot, err)
	}
	dir, err := newRunDir(opts.StateRoot)
	if err != nil {
		return nil, err
	}
	b := &BIND{Addr: opts.Addr, Zone: strings.TrimSuffix(opts.Zone, "."), KeyName: opts.KeyName, Dir: dir, named: named}
	if opts.Primary != nil {
		b.KeyName, b.KeySecret = opts.Primary.KeyName, opts.Primary.KeySecret
	} else {
		secret := make([]byte, 32)
		_, _ = rand.Read(secret)
		b.KeySecret = base64.StdEncoding.EncodeToString(secret)
	}
	if err := b.writeConfig(opts.Primary, opts.Seed); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if err := b.Start(ctx); err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return b, nil
}

func (b *BIND) writeConfig(primary *BIND, seed func(io.Writer) error) error {
	host, port, err := net.SplitHostPort(b.Addr)
	if err != nil {
		return err
	}
	zoneFile := filepath.Join(b.Dir, "db."+b.Zone)
	zone := fmt.Sprintf(`zone %q {
	type primary;
	file %q;
	allow-update { key %q; };
	allow-transfer { key %q; };
};
`, b.Zone, zoneFile, b.KeyName, b.KeyName)
	if primary != nil {
		phost, pport, err := net.SplitHostPort(primary.Addr)
		if err != nil {
			return err
		}
		zone = fmt.Sprintf(`zone %q {
	type secondary;
	file %q;
	primaries { %s port %s key %q; };
};
`, b.Zone, zoneFile, phost, pport, b.KeyName)
	} else {
		if err := writeZone(zoneFile, b.Zone, seed); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`options {
	directory %[1]q;
	pid-file %[2]q;
	session-keyfile %[3]q;
	listen-on port %[4]s { %[5]s; };
	listen-on-v6 { none; };
	recursion no;
	dnssec-validation no;
	notify no;
};
controls { };
key %[6]q {
	algorithm hmac-sha256;
	secret %[7]q;
};
`, b.Dir, filepath.Join(b.Dir, "named.pid"), filepath.Join(b.Dir, "session.key"), port, host, b.KeyName, b.KeySecret) + zone
	return os.WriteFile(filepath.Join(b.Dir, "named.conf"), []byte(conf), 0o600)
}

// writeZone writes a primary's zone file: its SOA and NS, then seed's
// lines.
func writeZone(path, zone string, seed func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	w := bufio.NewWriter(f)
	const head = "$TTL 300\n@ IN SOA ns.%[1]s. hostmaster.%[1]s. 1 60 60 3600 30\n@ IN NS ns.%[1]s.\nns IN A 127.0.0.1\n"
	if _, err := fmt.Fprintf(w, head, zone); err != nil {
		return err
	}
	if seed != nil {
		if err := seed(w); err != nil {
			return err
		}
	}
	return w.Flush()
}

// Start starts named again after Stop, on the same address with the zone
// as it was (the journal keeps every update). It returns once named answers
// for the zone.
func (b *BIND) Start(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc != nil {
		if done, _ := b.proc.exited(); !done {
			return nil
		}
	}
	// -g keeps named in the foreground logging to stderr; -n 1 is one
	// worker thread, plenty for tests on a shared machine.
	args := []string{"-g", "-4", "-n", "1", "-c", filepath.Join(b.Dir, "named.conf")}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "root")
	}
	p, err := startProcess("named", b.named, args, b.Dir)
	if err != nil {
		return err
	}
	b.proc = p
	deadline := time.Now().Add(30 * time.Second)
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("named exited (%v); its log: %s", err, b.tail())
		}
		if b.answers() {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = p.stop(5 * time.Second)
			return fmt.Errorf("named did not answer for %s on %s within 30s; its log: %s", b.Zone, b.Addr, b.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answers reports whether named serves the zone's SOA.
func (b *BIND) answers() bool {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(b.Zone), dns.TypeSOA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, b.Addr)
	return err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0
}

func (b *BIND) tail() string {
	data, _ := os.ReadFile(filepath.Join(b.Dir, "named.log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// Stop stops named and keeps its directory, for an outage; Start brings it
// back.
func (b *BIND) Stop() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == nil {
		return nil
	}
	_ = syscall.Kill(-b.proc.cmd.Process.Pid, syscall.SIGCONT) // a paused named cannot handle SIGTERM
	return b.proc.stop(10 * time.Second)
}

// Pause freezes named (SIGSTOP): connections are accepted by the kernel
// and never answered, like a server too slow to answer. Resume thaws it.
func (b *BIND) Pause() error { return b.signal(syscall.SIGSTOP) }

// Resume undoes Pause.
func (b *BIND) Resume() error { return b.signal(syscall.SIGCONT) }

func (b *BIND) signal(sig syscall.Signal) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == nil {
		return errors.New("named is not running")
	}
	return syscall.Kill(-b.proc.cmd.Process.Pid, sig)
}

// Log is named's log so far.
func (b *BIND) Log() string {
	data, _ := os.ReadFile(filepath.Join(b.Dir, "named.log"))
	return string(data)
}

// Close stops named and removes its run directory.
func (b *BIND) Close() error {
	err := b.Stop()
	if err == nil {
		err = killProcessesUsing(b.Dir)
	}
	if err == nil {
		err = os.RemoveAll(b.Dir)
	}
	return err
}
