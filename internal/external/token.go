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

package external

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TokenSource supplies the bearer token for a call.
type TokenSource interface {
	// Token returns the current token. It is called once per logical call, so
	// a rotated credential is picked up without restarting anything (a source
	// may cache a token for a short while, and says for how long). The
	// returned error never contains the token; an *Error with KindTransient
	// marks a failure worth retrying (the API server was unreachable), any
	// other error is treated as KindUnauthorized.
	Token(ctx context.Context) (string, error)
}

// StaticTokenSource returns the same token every time. Tests and the simulator
// command use it; the manager reads tokens from a file or a Secret.
func StaticTokenSource(token string) TokenSource {
	return staticTokenSource(token)
}

type staticTokenSource string

func (s staticTokenSource) Token(context.Context) (string, error) {
	return checkToken(string(s), "static token")
}

// NewFileTokenSource reads the token from path, trimming surrounding
// whitespace. The file is read again whenever its size or modification time
// changes, so a Secret mounted as a volume keeps working after the kubelet
// rotates it.
func NewFileTokenSource(path string) TokenSource {
	return &fileTokenSource{path: path}
}

type fileTokenSource struct {
	path string

	mu      sync.Mutex
	size    int64
	modTime time.Time
	token   string
}

func (s *fileTokenSource) Token(context.Context) (string, error) {
	// Stat follows the ..data symlink that projected volumes swap on rotation,
	// so the size and time below belong to the current file.
	info, err := os.Stat(s.path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && info.Size() == s.size && info.ModTime().Equal(s.modTime) {
		return s.token, nil
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	token, err := checkToken(string(data), "token file "+s.path)
	if err != nil {
		return "", err
	}
	s.token, s.size, s.modTime = token, info.Size(), info.ModTime()
	return token, nil
}

// DefaultSecretTokenCacheTTL is how long a Secret token source reuses a token
// before it reads the Secret again.
const DefaultSecretTokenCacheTTL = 30 * time.Second

// SecretTokenOption configures NewSecretTokenSource.
type SecretTokenOption func(*secretTokenSource)

// WithSecretCacheTTL sets how long a token read from the Secret is reused;
// zero or less reads the Secret on every call.
func WithSecretCacheTTL(ttl time.Duration) SecretTokenOption {
	return func(s *secretTokenSource) { s.ttl = ttl }
}

// NewSecretTokenSource reads the token from the dataKey entry of the Secret
// named by key. The manager passes its API reader, which is not cached:
// caching Secrets in an informer would need permission to list and watch
// every Secret in the cluster. So that each external call does not cost a
// GET on the API server, a token that was read successfully is reused for
// DefaultSecretTokenCacheTTL (see WithSecretCacheTTL), which is also the
// longest a rotated token takes to be picked up. Failed reads are not
// cached, so a Secret that was missing is found as soon as it exists.
func NewSecretTokenSource(r client.Reader, key types.NamespacedName, dataKey string, opts ...SecretTokenOption) TokenSource {
	s := &secretTokenSource{reader: r, key: key, dataKey: dataKey, ttl: DefaultSecretTokenCacheTTL, clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

type secretTokenSource struct {
	reader  client.Reader
	key     types.NamespacedName
	dataKey string
	ttl     time.Duration
	clock   clock.PassiveClock

	mu      sync.Mutex
	token   string
	expires time.Time
}

func (s *secretTokenSource) Token(ctx context.Context) (string, error) {
	if token, ok := s.cached(); ok {
		return token, nil
	}
	// The lock is not held while reading, so a caller whose context ends is
	// never stuck behind another's slow read. Callers that miss the cache at
	// the same moment each read the Secret once, which is harmless.
	token, err := s.read(ctx)
	if err != nil {
		return "", err
	}
	if s.ttl > 0 {
		s.mu.Lock()
		s.token, s.expires = token, s.clock.Now().Add(s.ttl)
		s.mu.Unlock()
	}
	return token, nil
}

// cached returns the token from the last successful read while it is fresh.
func (s *secretTokenSource) cached() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == "" || !s.clock.Now().Before(s.expires) {
		return "", false
	}
	return s.token, true
}

func (s *secretTokenSource) read(ctx context.Context) (string, error) {
	var secret corev1.Secret
	if err := s.reader.Get(ctx, s.key, &secret); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return "", fmt.Errorf("token secret %s: %w", s.key, err)
		}
		// Anything else (a timeout, an unreachable API server) may pass by
		// itself.
		return "", &Error{Kind: KindTransient, Message: "read token secret " + s.key.String(), Err: err}
	}
	data, ok := secret.Data[s.dataKey]
	if !ok {
		return "", fmt.Errorf("token secret %s has no key %q", s.key, s.dataKey)
	}
	return checkToken(string(data), fmt.Sprintf("token secret %s key %q", s.key, s.dataKey))
}

// checkToken trims a token and refuses one that cannot be sent in a header.
// The messages name where the token came from, never what it contains.
func checkToken(raw, source string) (string, error) {
	token := strings.TrimSpace(raw)
	if token == "" {
		return "", errors.New(source + " is empty")
	}
	for _, r := range token {
		if r <= ' ' || r == 0x7f {
			return "", errors.New(source + " contains whitespace or control characters")
		}
	}
	return token, nil
}
