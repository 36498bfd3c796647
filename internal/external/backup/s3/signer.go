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
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// rotationAwareSigner signs as the S3 client's default SigV4 signer does,
// and starts from a fresh one whenever the secret access key changes. The
// SDK's signer keeps the signing key it derived for an access key ID for
// the rest of the UTC day, whatever secret comes with that ID later: a
// person who corrects the secret key in the credentials Secret (the way out
// a SignatureDoesNotMatch names) would see every call refused until
// midnight. FileCredentials reads the files again when they change, and
// this makes the signer follow.
type rotationAwareSigner struct {
	mu     sync.Mutex
	secret string
	signer *v4.Signer
}

func newRotationAwareSigner() *rotationAwareSigner { return &rotationAwareSigner{} }

// SignHTTP signs r with credentials (the s3 package's HTTPSignerV4).
func (s *rotationAwareSigner) SignHTTP(ctx context.Context, credentials aws.Credentials, r *http.Request,
	payloadHash, service, region string, signingTime time.Time, optFns ...func(*v4.SignerOptions)) error {
	return s.signerFor(credentials.SecretAccessKey).SignHTTP(ctx, credentials, r, payloadHash, service, region,
		signingTime, optFns...)
}

// signerFor returns the signer of secret, a new one when it differs from
// the secret of the last call.
func (s *rotationAwareSigner) signerFor(secret string) *v4.Signer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signer == nil || secret != s.secret {
		// As the S3 client's own default: S3 keys are signed as they are
		// sent, not escaped a second time.
		s.signer = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		s.secret = secret
	}
	return s.signer
}
