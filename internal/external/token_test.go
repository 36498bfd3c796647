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

package external_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

func TestFileTokenSourceFollowsRotation(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "token")
	write := func(content string, mtime time.Time) {
		g.Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
		// Set the time explicitly: two writes within the file system's
		// timestamp granularity would otherwise look unchanged.
		g.Expect(os.Chtimes(path, mtime, mtime)).To(Succeed())
	}
	src := external.NewFileTokenSource(path)

	write("first-token\n", time.Unix(1000, 0))
	g.Expect(src.Token(ctx)).To(Equal("first-token"))

	write("  second-token \n", time.Unix(2000, 0))
	g.Expect(src.Token(ctx)).To(Equal("second-token"))

	// A projected Secret is rotated by swapping a symlink to a new file.
	dir := t.TempDir()
	target := filepath.Join(dir, "v3")
	g.Expect(os.WriteFile(target, []byte("third-token"), 0o600)).To(Succeed())
	link := filepath.Join(dir, "token")
	g.Expect(os.Symlink(target, link)).To(Succeed())
	linked := external.NewFileTokenSource(link)
	g.Expect(linked.Token(ctx)).To(Equal("third-token"))
	next := filepath.Join(dir, "v4")
	g.Expect(os.WriteFile(next, []byte("fourth-token-longer"), 0o600)).To(Succeed())
	g.Expect(os.Rename(filepath.Join(dir, "v4"), target)).To(Succeed())
	g.Expect(linked.Token(ctx)).To(Equal("fourth-token-longer"))
}

func TestTokenSourceErrorsNeverContainTheToken(t *testing.T) {
	const secret = "very secret\tvalue"
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		src  external.TokenSource
		want string
	}{
		{name: "missing file", src: external.NewFileTokenSource(filepath.Join(dir, "absent")), want: "no such file"},
		{name: "empty file", src: external.NewFileTokenSource(empty), want: "is empty"},
		{name: "token with control characters", src: external.NewFileTokenSource(bad), want: "whitespace or control characters"},
		{name: "empty static token", src: external.StaticTokenSource(""), want: "static token is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := tt.src.Token(t.Context())
			g.Expect(err).To(MatchError(ContainSubstring(tt.want)))
			g.Expect(err.Error()).NotTo(ContainSubstring("secret"))
		})
	}
}

func TestSecretTokenSource(t *testing.T) {
	key := types.NamespacedName{Namespace: "ops", Name: "dns-credentials"}
	secret := func(data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: data}
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		objects  []client.Object
		getErr   error
		want     string
		wantErr  string
		wantKind external.Kind
	}{
		{name: "token under the key", objects: []client.Object{secret(map[string][]byte{"token": []byte("abc123\n")})}, want: "abc123"},
		{name: "missing Secret", wantErr: "not found"},
		{name: "missing key", objects: []client.Object{secret(map[string][]byte{"other": []byte("x")})}, wantErr: `has no key "token"`},
		{name: "empty value", objects: []client.Object{secret(map[string][]byte{"token": {}})}, wantErr: "is empty"},
		{name: "API server unreachable", getErr: errors.New("connection refused"), wantErr: "connection refused", wantKind: external.KindTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			builder := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objects...)
			if tt.getErr != nil {
				builder = builder.WithInterceptorFuncs(interceptor.Funcs{
					Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
						return tt.getErr
					},
				})
			}
			src := external.NewSecretTokenSource(builder.Build(), key, "token")
			got, err := src.Token(t.Context())
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				g.Expect(external.KindOf(err)).To(Equal(tt.wantKind))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestSecretTokenSourceCachesTheToken(t *testing.T) {
	key := types.NamespacedName{Namespace: "ops", Name: "dns-credentials"}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// newReader returns a fake API server holding the Secret, which counts the
	// reads and fails them while failing is set.
	newReader := func(token string) (c client.Client, reads *atomic.Int32, failing *atomic.Bool) {
		reads, failing = &atomic.Int32{}, &atomic.Bool{}
		c = fake.NewClientBuilder().WithScheme(scheme).
			WithObjects(&corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Data:       map[string][]byte{"token": []byte(token)},
			}).
			WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					reads.Add(1)
					if failing.Load() {
						return errors.New("connection refused")
					}
					return c.Get(ctx, k, obj, opts...)
				},
			}).
			Build()
		return c, reads, failing
	}
	rotate := func(g *WithT, c client.Client, token string) {
		var secret corev1.Secret
		g.Expect(c.Get(t.Context(), key, &secret)).To(Succeed())
		secret.Data["token"] = []byte(token)
		g.Expect(c.Update(t.Context(), &secret)).To(Succeed())
	}

	t.Run("a token is reused until the TTL has passed", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		c, reads, _ := newReader("first")
		src := external.NewSecretTokenSource(c, key, "token", external.WithSecretClock(clock))

		for range 3 {
			g.Expect(src.Token(ctx)).To(Equal("first"))
		}
		g.Expect(reads.Load()).To(BeEquivalentTo(1), "one read serves every call within the TTL")

		rotate(g, c, "second")
		reads.Store(0)
		clock.SetTime(clock.Now().Add(external.DefaultSecretTokenCacheTTL - time.Second))
		g.Expect(src.Token(ctx)).To(Equal("first"), "the cached token is still fresh")
		g.Expect(reads.Load()).To(BeZero())

		clock.SetTime(clock.Now().Add(time.Second))
		g.Expect(src.Token(ctx)).To(Equal("second"), "the rotated token is read once the TTL has passed")
		g.Expect(reads.Load()).To(BeEquivalentTo(1))
	})

	t.Run("a failed read is not cached", func(t *testing.T) {
		g := NewWithT(t)
		ctx := t.Context()
		clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		c, reads, failing := newReader("first")
		src := external.NewSecretTokenSource(c, key, "token", external.WithSecretClock(clock))

		failing.Store(true)
		_, err := src.Token(ctx)
		g.Expect(external.KindOf(err)).To(Equal(external.KindTransient))
		failing.Store(false)
		g.Expect(src.Token(ctx)).To(Equal("first"), "the next call reads again at once")
		g.Expect(reads.Load()).To(BeEquivalentTo(2))

		// Once expired, a failing read is reported rather than answered
		// with the stale token: the Secret may have been revoked.
		clock.SetTime(clock.Now().Add(external.DefaultSecretTokenCacheTTL))
		failing.Store(true)
		_, err = src.Token(ctx)
		g.Expect(err).To(MatchError(ContainSubstring("connection refused")))
	})

	t.Run("a TTL of zero reads the Secret on every call", func(t *testing.T) {
		g := NewWithT(t)
		c, reads, _ := newReader("first")
		src := external.NewSecretTokenSource(c, key, "token", external.WithSecretCacheTTL(0))
		for range 3 {
			g.Expect(src.Token(t.Context())).To(Equal("first"))
		}
		g.Expect(reads.Load()).To(BeEquivalentTo(3))
	})
}
