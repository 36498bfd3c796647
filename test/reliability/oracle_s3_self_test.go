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

package reliability

import (
	"bytes"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// TestOracleReadsTheS3Path plants, in a scenario's bucket and with no
// manager running, a backup of a BackupConfig that is gone (a leak), an
// object whose content a restore could not read, one whose content is of
// another key than its own, and one outside the installation's prefix, and
// expects the oracle to count each exactly once: on the S3 path it reads
// the bucket, not the simulator, and an oracle blind there would let
// family 1's S3 lifecycles pass.
func TestOracleReadsTheS3Path(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	s := newScenario(t)
	s.useS3()
	provider, err := s.s3.newBackupClient(nil, time.Now)
	g.Expect(err).NotTo(HaveOccurred())

	payload := func(owner, key string) []byte {
		data, err := backupcontent.EncodePayload(&backupcontent.Payload{
			Metadata: backupcontent.PayloadMetadata{Trigger: "Manual", MyAppUID: "app-uid", MyAppGeneration: 1, TakenAt: time.Now(),
				BackupConfig: backupcontent.ObjectIdentity{Namespace: s.ns, Name: "bc", UID: owner[len("backupconfig/"):]},
				OwnerID:      ownerID, Owner: owner, IdempotencyKey: key},
			MyApp: backupcontent.AppSnapshot{APIVersion: "apps.myapp.dev/v1alpha1", Kind: "MyApp", Namespace: s.ns, Name: "web"},
		})
		g.Expect(err).NotTo(HaveOccurred())
		return data
	}
	// The leak, through the provider.
	gone := "backupconfig/gone"
	_, err = provider.Start(ctx, backup.StartRequest{App: "web", Owner: gone, IdempotencyKey: gone + "/manual/x",
		Namespace: s.ns, Payload: payload(gone, gone+"/manual/x")})
	g.Expect(err).NotTo(HaveOccurred())

	// The others written around the provider, which refuses them, under an
	// owner whose backups are retained, so none of them is a leak.
	s.oracle.retain("kept")
	kept := "backupconfig/kept"
	put := func(key, idempotencyKey string, body []byte) {
		_, err := s.s3.srv.Client().PutObject(ctx, &awss3.PutObjectInput{
			Bucket: aws.String(s.s3.bucket), Key: aws.String(key), Body: bytes.NewReader(body),
			Metadata: map[string]string{"myapp-owner": kept, "myapp-idempotency-key": idempotencyKey, "myapp-app": "web"},
		})
		g.Expect(err).NotTo(HaveOccurred())
	}
	base := s3Prefix + "/" + ownerID + "/" + s.ns + "/kept/"
	put(base+"manual/garbage.json.gz", kept+"/manual/garbage", []byte("not gzip"))
	put(base+"manual/swapped.json.gz", kept+"/manual/swapped", payload(kept, kept+"/manual/other"))
	put("elsewhere/"+s.ns+"/kept/manual/outside.json.gz", kept+"/manual/outside", payload(kept, kept+"/manual/outside"))

	r, err := s.oracle.check(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Problems).To(HaveLen(4), "%v", r.Problems)
	g.Expect(r).To(And(HaveField("LeakedBackups", 1), HaveField("StatusMismatches", 3)), "%v", r.Problems)
	g.Expect(r.Problems).To(ContainElements(
		ContainSubstring("holds content a restore cannot read"),
		ContainSubstring("holds the content of owner "+kept+", key "+kept+"/manual/other"),
		ContainSubstring("outside the installation's prefix"),
	))
}
