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

package s3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// FileCredentials reads an access key ID and a secret access key (and, when
// sessionTokenFile is set, a session token) from files, such as the keys of
// a Secret mounted as a volume. Each file is read again whenever its size or
// modification time changes, so a rotated Secret is picked up by the next
// call without a restart, as the token files of the HTTP services are.
func FileCredentials(accessKeyIDFile, secretAccessKeyFile, sessionTokenFile string) aws.CredentialsProvider {
	return &fileCredentials{
		accessKey: watchedFile{path: accessKeyIDFile},
		secretKey: watchedFile{path: secretAccessKeyFile},
		session:   watchedFile{path: sessionTokenFile},
	}
}

// StaticCredentials returns the same keys every time; tests use it.
func StaticCredentials(accessKeyID, secretAccessKey string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey, Source: "static"}, nil
	})
}

type fileCredentials struct {
	mu                            sync.Mutex
	accessKey, secretKey, session watchedFile
}

// Retrieve returns the keys as the files hold them now. Its errors name
// the file, never its content.
func (f *fileCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, err := f.accessKey.read("access key ID")
	if err != nil {
		return aws.Credentials{}, err
	}
	secret, err := f.secretKey.read("secret access key")
	if err != nil {
		return aws.Credentials{}, err
	}
	var token string
	if f.session.path != "" {
		if token, err = f.session.read("session token"); err != nil {
			return aws.Credentials{}, err
		}
	}
	return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: token, Source: "files"}, nil
}

// watchedFile is a file read again when it changes.
type watchedFile struct {
	path    string
	size    int64
	modTime time.Time
	value   string
}

func (w *watchedFile) read(what string) (string, error) {
	// Stat follows the ..data symlink a projected volume swaps on
	// rotation, so the size and time belong to the current file.
	info, err := os.Stat(w.path)
	if err != nil {
		return "", fmt.Errorf("%s file: %w", what, err)
	}
	if w.value != "" && info.Size() == w.size && info.ModTime().Equal(w.modTime) {
		return w.value, nil
	}
	data, err := os.ReadFile(w.path)
	if err != nil {
		return "", fmt.Errorf("%s file: %w", what, err)
	}
	value := strings.TrimSpace(string(data))
	if value == "" {
		return "", fmt.Errorf("%s file %s is empty", what, w.path)
	}
	if strings.ContainsFunc(value, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", errors.New(what + " file " + w.path + " contains whitespace or control characters")
	}
	w.value, w.size, w.modTime = value, info.Size(), info.ModTime()
	return value, nil
}
