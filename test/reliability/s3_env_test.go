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
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/controlplane"
	"github.com/myapp-operator/myapp-operator/internal/external/backup"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3/s3test"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// A scenario on the S3 path keeps its backups in a bucket of its own on the
// campaign's versitygw (one server for the test binary, started by the
// first such scenario), written by the s3 provider through the manager's
// crash gate, and read by the oracle with the server's root keys, around
// the provider.

// s3Prefix is the campaign managers' --s3-prefix.
const s3Prefix = "campaign"

// scenarioS3 is where a scenario on the S3 path keeps its backups.
type scenarioS3 struct {
	srv    *controlplane.S3Server
	bucket string
}

// useS3 makes the scenario keep its backups in a new bucket, through the
// s3 provider, and its oracle read them from there. Call it before the
// first manager starts.
func (s *scenario) useS3() {
	s.t.Helper()
	srv, err := s3test.Shared()
	controlplane.RequireS3(s.t, err)
	bucket, err := s3test.NewBucket(s.t.Context(), srv, "rel")
	if err != nil {
		s.t.Fatal(err)
	}
	s.s3 = &scenarioS3{srv: srv, bucket: bucket}
	s.oracle.backupsOf = s.s3.backups
}

// newBackupClient is the s3 provider of the scenario's bucket, its calls
// through transport (the manager's crash gate), on the clock the
// BackupConfig controller reads, as cmd/manager builds it with the
// external timings of the campaign's HTTP clients.
func (b *scenarioS3) newBackupClient(transport http.RoundTripper, now func() time.Time) (backup.Client, error) {
	return s3.New(s3.Config{
		ReadContent: backupcontent.Identity,
		Endpoint:    b.srv.Endpoint, Bucket: b.bucket, Region: b.srv.Region, PathStyle: true,
		Prefix: s3Prefix, OwnerID: ownerID,
		Credentials:       s3.StaticCredentials(b.srv.AccessKey, b.srv.SecretKey),
		CredentialsSource: "the campaign's keys",
		AttemptTimeout:    2 * time.Second,
		MaxRetries:        1,
		MaxRetryWait:      100 * time.Millisecond,
		Transport:         transport,
		Now:               now,
	})
}

// backups reads every object of the bucket as the backup it is, for the
// oracle: an object is a backup that succeeded, under the owner and key its
// metadata names. Each object must hold content a restore can read, filed
// where its own metadata says: one that does not is a problem the oracle
// counts.
func (b *scenarioS3) backups(ctx context.Context) ([]simulator.Backup, []string, error) {
	objects, err := s3test.Objects(ctx, b.srv, b.bucket)
	if err != nil {
		return nil, nil, err
	}
	base := s3Prefix + "/" + ownerID
	out := make([]simulator.Backup, 0, len(objects))
	var problems []string
	for _, o := range objects {
		id, ok := o.ID(base)
		if !ok {
			problems = append(problems, fmt.Sprintf("object %s is outside the installation's prefix %s/", o.Key, base))
			continue
		}
		started, _ := time.Parse(time.RFC3339Nano, o.Metadata["myapp-started-at"])
		out = append(out, simulator.Backup{
			ID: id, App: o.App(), Owner: o.Owner(), IdempotencyKey: o.IdempotencyKey(),
			Phase: simulator.PhaseSucceeded, SizeBytes: o.Size, Labels: o.Labels(), StartedAt: started,
		})
		switch p := o.Payload; {
		case o.PayloadErr != nil:
			problems = append(problems, fmt.Sprintf("backup %s holds content a restore cannot read: %v", id, o.PayloadErr))
		case p.Metadata.IdempotencyKey != o.IdempotencyKey() || p.Metadata.Owner != o.Owner() ||
			"backupconfig/"+p.Metadata.BackupConfig.UID != o.Owner() || p.Metadata.OwnerID != ownerID:
			problems = append(problems, fmt.Sprintf("backup %s (owner %s, key %s) holds the content of owner %s, key %s, installation %s",
				id, o.Owner(), o.IdempotencyKey(), p.Metadata.Owner, p.Metadata.IdempotencyKey, p.Metadata.OwnerID))
		case !strings.HasPrefix(id, p.MyApp.Namespace+"/"):
			problems = append(problems, fmt.Sprintf("backup %s holds MyApp %s/%s", id, p.MyApp.Namespace, p.MyApp.Name))
		}
	}
	return out, problems, nil
}
