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
	"path/filepath"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/httpbackup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
)

// Backup providers --backup-provider accepts.
const (
	backupProviderHTTP = "http"
	backupProviderS3   = "s3"
)

// s3DefaultRegion is what S3-compatible servers sign for unless told
// otherwise; AWS buckets elsewhere need --s3-region.
const s3DefaultRegion = "us-east-1"

// s3Options say where the S3 bucket is and where its keys come from: files,
// such as the keys of a Secret mounted as a volume (the chart mounts
// s3.credentialsSecret), re-read when they change.
type s3Options struct {
	endpoint            string
	bucket              string
	region              string
	pathStyle           bool
	prefix              string
	accessKeyIDFile     string
	secretAccessKeyFile string
	sessionTokenFile    string
	caFile              string
}

func (s *s3Options) bind(fs *flag.FlagSet) {
	fs.StringVar(&s.endpoint, "s3-endpoint", "",
		"With --backup-provider=s3: the S3 server's URL, such as https://s3.example.com; empty means AWS S3 in --s3-region.")
	fs.StringVar(&s.bucket, "s3-bucket", "", "With --backup-provider=s3: the bucket the backups are kept in. It must exist.")
	fs.StringVar(&s.region, "s3-region", s3DefaultRegion, "With --backup-provider=s3: the bucket's region.")
	fs.BoolVar(&s.pathStyle, "s3-path-style", false,
		"With --backup-provider=s3: address the bucket in the URL's path (endpoint/bucket/key) rather than its host name, "+
			"as most S3-compatible servers need.")
	fs.StringVar(&s.prefix, "s3-prefix", "",
		"With --backup-provider=s3: where in the bucket the backups go; each installation keeps its own under "+
			"<prefix>/<owner-id>/<namespace>/<backupconfig-uid>/.")
	fs.StringVar(&s.accessKeyIDFile, "s3-access-key-id-file", "",
		"With --backup-provider=s3: a file holding the access key ID (re-read when it changes).")
	fs.StringVar(&s.secretAccessKeyFile, "s3-secret-access-key-file", "",
		"With --backup-provider=s3: a file holding the secret access key (re-read when it changes).")
	fs.StringVar(&s.sessionTokenFile, "s3-session-token-file", "",
		"With --backup-provider=s3: a file holding a session token, for temporary credentials; optional.")
	fs.StringVar(&s.caFile, "s3-ca-file", "",
		"With --backup-provider=s3: a PEM bundle of CA certificates to trust for the S3 server, besides the system roots; "+
			"--external-ca-file when empty.")
}

// validate checks the S3 flags for --backup-provider=s3.
func (s *s3Options) validate() error {
	var errs []error
	if s.bucket == "" {
		errs = append(errs, errors.New("--s3-bucket is required with --backup-provider=s3"))
	}
	if s.region == "" {
		errs = append(errs, errors.New("--s3-region must not be empty"))
	}
	if s.endpoint != "" {
		if u, ok := httpURL(s.endpoint); !ok || u.User != nil {
			errs = append(errs, fmt.Errorf("--s3-endpoint must be an http or https URL without user information, got %q", s.endpoint))
		}
	}
	if s.accessKeyIDFile == "" || s.secretAccessKeyFile == "" {
		errs = append(errs, errors.New("--backup-provider=s3 needs --s3-access-key-id-file and --s3-secret-access-key-file"))
	}
	return errors.Join(errs...)
}

// anySet reports whether an S3 flag other than the region (which has a
// default) was given, which only makes sense with --backup-provider=s3.
func (s *s3Options) anySet() bool {
	return s.endpoint != "" || s.bucket != "" || s.pathStyle || s.prefix != "" || s.accessKeyIDFile != "" ||
		s.secretAccessKeyFile != "" || s.sessionTokenFile != "" || s.caFile != ""
}

// backupProvider is one backup provider --backup-provider can pick: the
// flags it reads, their checks and its client. A new provider is a package
// beside internal/external/backup/s3 and a row in backupProviders.
type backupProvider struct {
	// name is its --backup-provider value; about says what it is, in the
	// flag's help.
	name, about string
	// bind adds its own flags.
	bind func(fs *flag.FlagSet, o *options)
	// flags names its flags, for the error of one given with another
	// provider; flagsSet reports whether one of them was given.
	flags    string
	flagsSet func(o *options) bool
	// validate checks its flags once it is picked.
	validate func(o *options) error
	// newClient builds its client; the owner ID is resolved by then.
	newClient func(mgr ctrl.Manager, o *options) (backup.Client, error)
}

// backupProviders is every provider --backup-provider accepts; the first
// is the default.
var backupProviders = []backupProvider{{
	name:  backupProviderHTTP,
	about: "the backup service at --backup-url",
	bind: func(fs *flag.FlagSet, o *options) {
		o.backup.bind(fs, "backup", "backup", "https://backup.example.com")
	},
	flags: "--backup-url and --backup-token-*",
	flagsSet: func(o *options) bool {
		return o.backup.url != "" || o.backup.tokenFile != "" || o.backup.tokenSecret != ""
	},
	validate: func(o *options) error {
		if o.backup.url == "" {
			return errors.New("--backup-url is required: the BackupConfig controller takes backups there")
		}
		return nil
	},
	newClient: func(mgr ctrl.Manager, o *options) (backup.Client, error) {
		return httpbackup.New(externalConfig(mgr, o, o.backup, "backup"))
	},
}, {
	name:      backupProviderS3,
	about:     "an S3 bucket, see the --s3-* flags",
	bind:      func(fs *flag.FlagSet, o *options) { o.s3.bind(fs) },
	flags:     "the --s3-* flags",
	flagsSet:  func(o *options) bool { return o.s3.anySet() },
	validate:  func(o *options) error { return o.s3.validate() },
	newClient: newS3Client,
}}

// bindBackupProviders adds --backup-provider and every provider's flags.
func (o *options) bindBackupProviders(fs *flag.FlagSet) {
	about := make([]string, 0, len(backupProviders))
	for _, p := range backupProviders {
		about = append(about, fmt.Sprintf("%s (%s)", p.name, p.about))
	}
	fs.StringVar(&o.backupProvider, "backup-provider", backupProviders[0].name,
		"Where backups are kept: "+strings.Join(about, " or ")+".")
	for _, p := range backupProviders {
		p.bind(fs, o)
	}
}

// pickedBackupProvider is the provider --backup-provider names.
func (o *options) pickedBackupProvider() (backupProvider, bool) {
	return rowNamed(backupProviders, func(p backupProvider) string { return p.name }, o.backupProvider)
}

// validateBackupProvider checks --backup-provider, the flags of the
// provider it names, and that no other provider's flags were given.
func (o *options) validateBackupProvider() error {
	picked, ok := o.pickedBackupProvider()
	if !ok {
		names := make([]string, 0, len(backupProviders))
		for _, p := range backupProviders {
			names = append(names, p.name)
		}
		return fmt.Errorf("--backup-provider must be %s, not %q", strings.Join(names, " or "), o.backupProvider)
	}
	errs := []error{picked.validate(o)}
	for _, p := range backupProviders {
		if p.name != picked.name && p.flagsSet(o) {
			errs = append(errs, fmt.Errorf("%s are for --backup-provider=%s", p.flags, p.name))
		}
	}
	return errors.Join(errs...)
}

// newBackupClient builds the client of the backup provider --backup-provider
// picks.
func newBackupClient(mgr ctrl.Manager, opts *options) (backup.Client, error) {
	p, ok := opts.pickedBackupProvider()
	if !ok {
		return nil, fmt.Errorf("unknown backup provider %q", opts.backupProvider)
	}
	return p.newClient(mgr, opts)
}

// newS3Client builds the S3 provider's client.
func newS3Client(mgr ctrl.Manager, opts *options) (backup.Client, error) {
	s := opts.s3
	caFile := s.caFile
	if caFile == "" {
		caFile = opts.externalCAFile
	}
	return s3.New(s3.Config{
		ReadContent:       backupcontent.Identity,
		Endpoint:          s.endpoint,
		Bucket:            s.bucket,
		Region:            s.region,
		PathStyle:         s.pathStyle,
		Prefix:            s.prefix,
		OwnerID:           opts.myApp.ownerID,
		Credentials:       s3.FileCredentials(s.accessKeyIDFile, s.secretAccessKeyFile, s.sessionTokenFile),
		CredentialsSource: "the files in " + filepath.Dir(s.accessKeyIDFile),
		CAFile:            caFile,
		AttemptTimeout:    externalAttemptTimeout,
		MaxRetries:        externalMaxRetries,
		MaxRetryWait:      externalMaxRetryWait,
		Logger:            ctrl.Log.WithName("external").WithName("backup"),
	})
}
