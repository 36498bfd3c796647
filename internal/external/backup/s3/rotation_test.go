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

package s3_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
)

// TestARotatedKeyIsUsedByTheNextCall: the keys are files, as a mounted
// Secret gives them; a person who corrects the secret access key (the way
// out a SignatureDoesNotMatch names), or rotates both keys, is heard on the
// next call, without a restart. The access key ID stays the same in the
// first case, which is what a signer that derives its signing key once per
// access key ID and day would miss.
func TestARotatedKeyIsUsedByTheNextCall(t *testing.T) {
	srv := s3Server(t)
	for _, tt := range []struct {
		name                 string
		accessKey, secretKey string
	}{
		{name: "the secret key corrected", accessKey: srv.AccessKey, secretKey: "not-the-secret-key"},
		{name: "both keys replaced", accessKey: "nobody", secretKey: "not-the-secret-key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			bucket := newBucket(t, srv)
			dir := t.TempDir()
			write := func(accessKey, secretKey string, at time.Time) {
				for name, value := range map[string]string{"id": accessKey, "secret": secretKey} {
					path := filepath.Join(dir, name)
					g.Expect(os.WriteFile(path, []byte(value), 0o600)).To(Succeed())
					g.Expect(os.Chtimes(path, at, at)).To(Succeed())
				}
			}
			write(tt.accessKey, tt.secretKey, time.Now().Add(-time.Hour))
			c, err := s3.New(s3.Config{
				ReadContent: backupcontent.Identity,
				Endpoint:    srv.Endpoint, Bucket: bucket, Region: srv.Region, PathStyle: true, OwnerID: "cluster-a",
				Credentials: s3.FileCredentials(filepath.Join(dir, "id"), filepath.Join(dir, "secret"), ""),
				MaxRetries:  -1,
			})
			g.Expect(err).NotTo(HaveOccurred())
			_, err = c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
			g.Expect(err).To(MatchError(external.ErrUnauthorized))

			write(srv.AccessKey, srv.SecretKey, time.Now())
			_, err = c.List(t.Context(), "backupconfig/bc-1", backup.InNamespace("shop"))
			g.Expect(err).NotTo(HaveOccurred(), "the keys in the files now are the ones used")
			b, err := c.Start(t.Context(), startRequest(t, "cluster-a", "bc-1", "manual/rotated"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objects(t, srv, bucket)).To(ConsistOf(HaveSuffix(b.ID + ".json.gz")))
		})
	}
}
