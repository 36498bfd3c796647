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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TokenSource supplies the bearer token for a call.
type TokenSource interface {
	// Token returns the current token. It is called once per logical call, so
	// a rotated credential is picked up without restarting anything. The
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

// NewSecretTokenSource reads the token from the dataKey entry of the Secret
// named by key. The reader is usually the manager's cached client, so every
// call sees the current Secret without a round trip to the API server.
func NewSecretTokenSource(r client.Reader, key types.NamespacedName, dataKey string) TokenSource {
	return &secretTokenSource{reader: r, key: key, dataKey: dataKey}
}

type secretTokenSource struct {
	reader  client.Reader
	key     types.NamespacedName
	dataKey string
}

func (s *secretTokenSource) Token(ctx context.Context) (string, error) {
	var secret corev1.Secret
	if err := s.reader.Get(ctx, s.key, &secret); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return "", fmt.Errorf("token secret %s: %w", s.key, err)
		}
		// Anything else (a timeout, a cache not yet synced) may pass by itself.
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
