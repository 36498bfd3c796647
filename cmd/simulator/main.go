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

// Command simulator serves the simulated external DNS and backup services
// (docs/external-api.md) for local runs, demos and end-to-end tests:
//
//	go run ./cmd/simulator --token devtoken
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// shutdownTimeout bounds how long in-flight requests may take to finish after
// SIGTERM; hung requests are ended at once by closing the simulator first.
const shutdownTimeout = 10 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "simulator:", err)
		os.Exit(1)
	}
}

type config struct {
	addr             string
	token            string
	tokenFile        string
	propagationDelay time.Duration
	backupDuration   time.Duration
	stateFile        string
	tlsCertFile      string
	tlsKeyFile       string
}

func parseFlags(args []string, output io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("simulator", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8090", "address to listen on")
	fs.StringVar(&c.token, "token", "", "bearer token clients must send (or use --token-file)")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the bearer token")
	fs.DurationVar(&c.propagationDelay, "propagation-delay", simulator.DefaultPropagationDelay,
		"how long a changed DNS record stays PENDING")
	fs.DurationVar(&c.backupDuration, "backup-duration", simulator.DefaultBackupDuration,
		"how long a backup stays RUNNING")
	fs.StringVar(&c.stateFile, "state-file", "", "file that keeps records and backups across restarts (default: memory only)")
	fs.StringVar(&c.tlsCertFile, "tls-cert-file", "", "serve HTTPS with this certificate (PEM)")
	fs.StringVar(&c.tlsKeyFile, "tls-key-file", "", "private key for --tls-cert-file (PEM)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	switch {
	case c.token != "" && c.tokenFile != "":
		return c, errors.New("--token and --token-file are mutually exclusive")
	case c.tokenFile != "":
		data, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return c, fmt.Errorf("--token-file: %w", err)
		}
		c.token = strings.TrimSpace(string(data))
		if c.token == "" {
			return c, fmt.Errorf("--token-file %s is empty", c.tokenFile)
		}
	case c.token == "":
		// Both services are specified with bearer authentication, so the
		// simulator never runs open.
		return c, errors.New("a token is required: pass --token or --token-file")
	}
	if (c.tlsCertFile == "") != (c.tlsKeyFile == "") {
		return c, errors.New("--tls-cert-file and --tls-key-file go together")
	}
	if c.propagationDelay < 0 || c.backupDuration < 0 {
		return c, errors.New("durations must not be negative")
	}
	return c, nil
}

// run serves until ctx is done, then shuts down cleanly. ready, when not nil,
// is told the address actually listened on.
func run(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := logr.FromSlogHandler(slog.NewTextHandler(stderr, nil))

	sim, err := simulator.Open(simulator.Options{
		Token:            cfg.token,
		PropagationDelay: cfg.propagationDelay,
		BackupDuration:   cfg.backupDuration,
		StateFile:        cfg.stateFile,
		Logger:           log,
	})
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	server := &http.Server{
		Handler:           sim,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(slog.NewTextHandler(stderr, nil), slog.LevelWarn),
	}

	scheme := "http"
	if cfg.tlsCertFile != "" {
		scheme = "https"
	}
	log.Info("Serving simulated DNS and backup services", "url", scheme+"://"+listener.Addr().String(),
		"propagationDelay", cfg.propagationDelay.String(), "backupDuration", cfg.backupDuration.String(),
		"stateFile", cfg.stateFile)
	if ready != nil {
		ready(listener.Addr().String())
	}

	serveErr := make(chan error, 1)
	go func() {
		if cfg.tlsCertFile != "" {
			serveErr <- server.ServeTLS(listener, cfg.tlsCertFile, cfg.tlsKeyFile)
		} else {
			serveErr <- server.Serve(listener)
		}
	}()

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	log.Info("Shutting down")
	// Closing the simulator first ends hung requests, which would otherwise
	// keep Shutdown waiting for their clients to give up.
	sim.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("Stopped")
	return nil
}
