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
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
)

// TestBackupProviderPicksTheClient: --backup-provider=s3 with its flags
// validates without a --backup-url and builds the S3 client; the default
// stays the HTTP backup service.
func TestBackupProviderPicksTheClient(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	for _, f := range []string{"access-key-id", "secret-access-key"} {
		g.Expect(os.WriteFile(filepath.Join(dir, f), []byte("value\n"), 0o600)).To(Succeed())
	}
	fs, opts, _ := newFlagSet()
	g.Expect(fs.Parse([]string{
		"--dns-url=https://dns.example.com", "--dns-token-file=/t",
		"--backup-provider=s3", "--s3-endpoint=http://127.0.0.1:7070", "--s3-bucket=backups", "--s3-path-style",
		"--s3-prefix=team-a", "--s3-access-key-id-file=" + filepath.Join(dir, "access-key-id"),
		"--s3-secret-access-key-file=" + filepath.Join(dir, "secret-access-key"),
	})).To(Succeed())
	g.Expect(opts.validate()).To(Succeed())
	opts.myApp.ownerID = "cluster-a"
	c, err := newBackupClient(nil, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c).To(BeAssignableToTypeOf(&s3.Client{}))

	fs, opts, _ = newFlagSet()
	g.Expect(fs.Parse(nil)).To(Succeed())
	g.Expect(opts.backupProvider).To(Equal(backupProviderHTTP), "http stays the default")
}
