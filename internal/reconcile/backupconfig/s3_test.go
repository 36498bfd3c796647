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

package backupconfig

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/myapp-operator/myapp-operator/api/apps/v1alpha1"
	backupv1alpha1 "github.com/myapp-operator/myapp-operator/api/backup/v1alpha1"
	"github.com/myapp-operator/myapp-operator/internal/backupcontent"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/backuptest"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3"
	"github.com/myapp-operator/myapp-operator/internal/external/backup/s3/s3test"
	"github.com/myapp-operator/myapp-operator/test/fixtures"
)

// What only the S3 provider has to prove at the controller's level: each
// way a bucket can be unusable is a condition that names the cause and the
// way out, and once a person took that way the backup owed is written
// once; and two installations sharing a bucket never touch each other's
// objects.

// s3Keys are credentials files, as a mounted Secret gives them, which the
// client reads again when they change.
type s3Keys struct {
	dir string
}

func newS3Keys(t *testing.T, accessKey, secretKey string) s3Keys {
	k := s3Keys{dir: t.TempDir()}
	k.write(t, accessKey, secretKey)
	return k
}

// write replaces the keys, as a rotated Secret does.
func (k s3Keys) write(t *testing.T, accessKey, secretKey string) {
	t.Helper()
	for name, value := range map[string]string{"access-key-id": accessKey, "secret-access-key": secretKey} {
		// A new file renamed into place, as the kubelet swaps a projected
		// volume, so the client never reads half a key.
		tmp := filepath.Join(k.dir, "."+name)
		if err := os.WriteFile(tmp, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(k.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// The client notices a change by size or modification time; a rewrite
	// within the file system's time granularity and of the same size would
	// look unchanged.
	later := time.Now().Add(time.Duration(len(accessKey)+len(secretKey)) * time.Second)
	for _, name := range []string{"access-key-id", "secret-access-key"} {
		if err := os.Chtimes(filepath.Join(k.dir, name), later, later); err != nil {
			t.Fatal(err)
		}
	}
}

// client is a client of the test's proxy for bucket, reading these keys.
func (k s3Keys) client(e *testEnv, bucket string) *s3.Client {
	e.t.Helper()
	c, err := s3.New(s3.Config{
		ReadContent: backupcontent.Identity,
		Endpoint:    e.s3.proxy.URL, Bucket: bucket, Region: e.s3.srv.Region, PathStyle: true,
		Prefix: s3Prefix, OwnerID: testOwnerID,
		Credentials: s3.FileCredentials(filepath.Join(k.dir, "access-key-id"),
			filepath.Join(k.dir, "secret-access-key"), ""),
		CredentialsSource: "the files in " + k.dir,
		AttemptTimeout:    2 * time.Second,
		MaxRetries:        1,
		MinRetryWait:      time.Millisecond,
		MaxRetryWait:      20 * time.Millisecond,
		Now:               e.now,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// s3Only returns an environment on the S3 provider.
func s3Only(t *testing.T) *testEnv {
	t.Helper()
	for _, p := range backupProviders() {
		if p.name == backuptest.S3 {
			return newTestEnvOn(t, p)
		}
	}
	t.Fatal("no s3 provider")
	return nil
}

// readOnlyPolicy lets user list and read the bucket's objects, and delete
// them, but not write them.
func bucketPolicy(bucket, user string, actions ...string) string {
	quoted := make([]string, 0, len(actions))
	for _, a := range actions {
		quoted = append(quoted, `"s3:`+a+`"`)
	}
	return fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":[%q]},`+
		`"Action":[%s],"Resource":["arn:aws:s3:::%s","arn:aws:s3:::%s/*"]}]}`,
		user, strings.Join(quoted, ","), bucket, bucket)
}

// TestS3FailuresNameTheCauseAndTheWayOut: a missing bucket, an access key
// the server does not know, a wrong secret key, a write the bucket's policy
// refuses and a server that keeps asking to slow down each turn Ready False
// with a reason by kind and a message that names the cause (the bucket, the
// endpoint, the credentials' files, the permission) and the way out, with
// one BackupServiceFailed warning; nothing is written meanwhile, and once a
// person took the way out (created the bucket, rotated the keys in their
// files, granted the write) or the server recovered, the backup owed is
// taken once.
func TestS3FailuresNameTheCauseAndTheWayOut(t *testing.T) {
	type setup struct {
		// bucket is the bucket the client is configured with.
		bucket string
		keys   s3Keys
		// fix takes the way out.
		fix func()
	}
	tests := []struct {
		name       string
		arrange    func(t *testing.T, e *testEnv) setup
		wantReason string
		want       func(e *testEnv, s setup) []string
	}{{
		name: "a missing bucket",
		arrange: func(t *testing.T, e *testEnv) setup {
			name := e.s3.bucket + "-missing"
			return setup{bucket: name, keys: newS3Keys(t, e.s3.srv.AccessKey, e.s3.srv.SecretKey), fix: func() {
				NewWithT(t).Expect(e.s3.srv.CreateBucket(t.Context(), name)).To(Succeed())
			}}
		},
		wantReason: backupv1alpha1.BackupServiceErrorReason,
		want: func(e *testEnv, s setup) []string {
			return []string{fmt.Sprintf(`Bucket %q does not exist at %s: create it, or correct --s3-bucket, --s3-endpoint and --s3-region`,
				s.bucket, e.s3.proxy.URL), "the operator retries with backoff"}
		},
	}, {
		name: "an unknown access key",
		arrange: func(t *testing.T, e *testEnv) setup {
			keys := newS3Keys(t, "nobody", e.s3.srv.SecretKey)
			return setup{bucket: e.s3.bucket, keys: keys, fix: func() { keys.write(t, e.s3.srv.AccessKey, e.s3.srv.SecretKey) }}
		},
		wantReason: backupv1alpha1.BackupServiceUnauthorizedReason,
		want: func(e *testEnv, s setup) []string {
			return []string{"The S3 server at " + e.s3.proxy.URL + " does not know the access key ID (the files in " + s.keys.dir +
				"): correct the access key in the credentials Secret"}
		},
	}, {
		name: "a wrong secret key",
		arrange: func(t *testing.T, e *testEnv) setup {
			keys := newS3Keys(t, e.s3.srv.AccessKey, "not-the-secret-key")
			return setup{bucket: e.s3.bucket, keys: keys, fix: func() { keys.write(t, e.s3.srv.AccessKey, e.s3.srv.SecretKey) }}
		},
		wantReason: backupv1alpha1.BackupServiceUnauthorizedReason,
		want: func(e *testEnv, s setup) []string {
			return []string{"The secret access key does not match the access key ID (the files in " + s.keys.dir +
				") at " + e.s3.proxy.URL + ": correct the secret key in the credentials Secret"}
		},
	}, {
		name: "a write the bucket's policy refuses",
		arrange: func(t *testing.T, e *testEnv) setup {
			g := NewWithT(t)
			user, secret := fmt.Sprintf("writer%d", time.Now().UnixNano()%1e9), "writer-secret-1234"
			g.Expect(e.s3.srv.AddUser(t.Context(), user, secret)).To(Succeed())
			setPolicy := func(actions ...string) {
				_, err := e.s3.srv.Client().PutBucketPolicy(t.Context(), &awss3.PutBucketPolicyInput{
					Bucket: aws.String(e.s3.bucket), Policy: aws.String(bucketPolicy(e.s3.bucket, user, actions...)),
				})
				g.Expect(err).NotTo(HaveOccurred())
			}
			setPolicy("ListBucket", "GetObject", "DeleteObject")
			return setup{bucket: e.s3.bucket, keys: newS3Keys(t, user, secret), fix: func() {
				setPolicy("ListBucket", "GetObject", "DeleteObject", "PutObject")
			}}
		},
		wantReason: backupv1alpha1.BackupServiceUnauthorizedReason,
		want: func(e *testEnv, s setup) []string {
			return []string{"The S3 server at " + e.s3.proxy.URL + " refused the write of the backup (AccessDenied): the credentials (the files in " +
				s.keys.dir + ") need s3:PutObject", fmt.Sprintf("on bucket %q under %q", e.s3.bucket, s3Prefix+"/"+testOwnerID+"/")}
		},
	}, {
		name: "a server that keeps asking to slow down",
		arrange: func(t *testing.T, e *testEnv) setup {
			e.s3.proxy.Fail(http.MethodPut, -1, http.StatusServiceUnavailable, "SlowDown")
			return setup{bucket: e.s3.bucket, keys: newS3Keys(t, e.s3.srv.AccessKey, e.s3.srv.SecretKey), fix: e.s3.proxy.Clear}
		},
		wantReason: backupv1alpha1.BackupServiceUnavailableReason,
		want: func(e *testEnv, _ setup) []string {
			return []string{"The S3 server at " + e.s3.proxy.URL + " asked to slow down (SlowDown) and still did after 2 attempts; " +
				"the operator retries with backoff."}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			e := s3Only(t)
			s := tt.arrange(t, e)
			e.backups = s.keys.client(e, s.bucket)
			e.startManager(func(r *Reconciler) { r.MaxRetryDelay = 2 * time.Second })
			app := e.newApp("web")
			bc := e.newBackupConfig("web", "web")
			e.create(app, bc)

			var ready metav1.Condition
			g.Eventually(func(g Gomega) string {
				ready = condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition)
				return ready.Reason
			}, eventually, tick).Should(Equal(tt.wantReason))
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			for _, w := range tt.want(e, s) {
				g.Expect(ready.Message).To(ContainSubstring(w))
			}
			g.Expect(ready.Message).NotTo(ContainSubstring("--backup-token"), "nothing of the HTTP service's settings")
			g.Eventually(func(g Gomega) []eventReason { return e.eventReasons(g, bc) }, eventually, tick).
				Should(ContainElement(eventBackupServiceFailed))
			// The condition does not churn while the cause stays.
			g.Consistently(func(g Gomega) string {
				return condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition).Message
			}, 3*time.Second, tick).Should(Equal(ready.Message))
			g.Expect(e.allObjects()).To(BeEmpty(), "nothing was written")

			s.fix()
			current := e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
			g.Eventually(func(g Gomega) string {
				return condition(e.fetchBackupConfig(bc)(g), backupv1alpha1.ReadyCondition).Reason
			}, eventually, tick).Should(Equal(backupv1alpha1.ReadyReason))
			objects, err := s3test.Objects(t.Context(), e.s3.srv, s.bucket)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(objects).To(HaveLen(1), "the backup owed, once")
			g.Expect(objects[0].Key).To(HaveSuffix(strings.TrimPrefix(current.Status.LastBackup.ID, e.ns) + ".json.gz"))
			g.Expect(objects[0].PayloadErr).NotTo(HaveOccurred())
		})
	}
}

// TestTwoInstallationsShareABucket: two installations (two managers with
// their own owner IDs) keep backups in one bucket. Each writes under its own
// <prefix>/<owner-id>/ only; retention and deletionPolicy Delete of one
// delete its own objects and never the other's, even an object of the other
// filed for a BackupConfig of the same namespace and UID (a cluster restored
// from an etcd snapshot has the same UIDs).
func TestTwoInstallationsShareABucket(t *testing.T) {
	g := NewWithT(t)
	e := s3Only(t)
	e.startManager()
	app := e.newApp("shop")
	bc := e.newBackupConfig("shop", "shop", fixtures.WithKeepLast(1),
		fixtures.WithBackupDeletionPolicy(backupv1alpha1.DeletionPolicyDelete))
	e.create(app, bc)
	current := e.waitForLastBackup(bc, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)

	// The other installation, with its own manager and owner ID, in its
	// own namespace, backs its MyApp up into the same bucket; and, as a
	// clone of this cluster would, stores backups for this BackupConfig's
	// UID and namespace.
	other := &testEnv{t: t, ns: fixtures.CreateNamespace(t, e.c, "bc-other"), c: e.c, sim: e.sim, provider: "s3", s3: e.s3}
	other.store = s3Store{srv: e.s3.srv, bucket: e.s3.bucket, base: s3Prefix + "/other-cluster", proxy: e.s3.proxy}
	other.backups = e.newS3Client("other-cluster", e.s3.srv.AccessKey, e.s3.srv.SecretKey)
	other.startManager(func(r *Reconciler) { r.OwnerID = "other-cluster" })
	otherApp := other.newApp("shop")
	otherBC := other.newBackupConfig("shop", "shop")
	other.create(otherApp, otherBC)
	other.waitForLastBackup(otherBC, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	clone := foreignOwner{what: "the clone", client: other.backups, owner: "backupconfig/" + string(bc.UID), ownerID: "other-cluster"}
	cloneIDs := []string{
		clone.start(e, "shop", clone.owner+"/change/"+string(app.UID)+"/1"),
		clone.start(e, "shop", clone.owner+"/manual/clone"),
	}

	keysUnder := func(base string) []string {
		var out []string
		for _, k := range e.allObjects() {
			if strings.HasPrefix(k, base+"/") {
				out = append(out, k)
			}
		}
		return out
	}
	otherKeys := keysUnder(s3Prefix + "/other-cluster")
	g.Expect(otherKeys).To(HaveLen(3))

	// Retention (keepLast 1) prunes this installation's older backup only.
	update(e, app, func(a *appsv1alpha1.MyApp) { a.Spec.Image = "shop:2" })
	current = e.waitForBackupAfter(bc, current, backupv1alpha1.BackupSucceeded, backupv1alpha1.TriggerAppChange)
	g.Eventually(func() []string { return backupIDs(e.ownBackups(bc)) }, eventually, tick).
		Should(Equal([]string{current.Status.LastBackup.ID}))
	g.Expect(keysUnder(s3Prefix + "/other-cluster")).To(Equal(otherKeys))

	// Deleting the BackupConfig deletes its own backups, not the clone's
	// of the same UID.
	g.Expect(e.c.Delete(t.Context(), bc)).To(Succeed())
	g.Eventually(e.get(bc), eventually, tick).Should(MatchError(ContainSubstring("not found")))
	g.Expect(keysUnder(s3Prefix + "/" + testOwnerID)).To(BeEmpty())
	g.Expect(keysUnder(s3Prefix + "/other-cluster")).To(Equal(otherKeys))
	for _, id := range cloneIDs {
		_, err := other.backups.Get(t.Context(), id)
		g.Expect(err).NotTo(HaveOccurred())
	}
	// And the other installation's own BackupConfig never saw a change.
	g.Expect(other.ownBackups(otherBC)).To(HaveLen(1))
}
