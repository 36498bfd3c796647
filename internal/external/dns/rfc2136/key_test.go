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

package rfc2136_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/myapp-operator/myapp-operator/internal/external/dns/rfc2136"
)

// TestParseKeyNeverQuotesTheSecretInAnyFieldOrder (issue 32 item 6, the
// residual of audit 2's F8): a key written with its fields in any order,
// in either of nsupdate's forms, is either read as the key it is or
// refused, and neither the error nor the key's String ever shows the
// secret, in any case. The secrets are what tsig-keygen writes for each
// algorithm (its digest length, base64), so some have padding and some do
// not; and secrets made by hand, of a length base64 writes without padding
// and of letters and digits only, which pass for a DNS label. The names
// include one that is itself valid base64.
func TestParseKeyNeverQuotesTheSecretInAnyFieldOrder(t *testing.T) {
	type secretKind struct {
		alg    string
		bytes  int
		byHand bool
	}
	kinds := []secretKind{{"hmac-sha1", 20, false}, {"hmac-sha224", 28, false}, {"hmac-sha256", 32, false},
		{"hmac-sha384", 48, false}, {"hmac-sha512", 64, false}, {"hmac-sha256", 24, true}, {"hmac-sha256", 30, true}}
	names := []string{"myapp-operator", "operator", "ddns.example.com"}
	for _, kind := range kinds {
		alg := kind.alg
		for range 50 {
			secret := randomSecret(kind.bytes)
			for kind.byHand && strings.ContainsAny(secret, "+/") {
				secret = randomSecret(kind.bytes)
			}
			for _, name := range names {
				fields := map[string]string{"alg": alg, "name": name, "secret": secret}
				for _, order := range [][]string{
					{"alg", "name", "secret"}, {"alg", "secret", "name"}, {"name", "alg", "secret"},
					{"name", "secret", "alg"}, {"secret", "alg", "name"}, {"secret", "name", "alg"},
					{"name", "secret"}, {"secret", "name"}, {"secret", "alg"},
				} {
					parts := make([]string, len(order))
					for i, f := range order {
						parts[i] = fields[f]
					}
					in := strings.Join(parts, ":")
					form := strings.Join(order, ":")
					k, err := rfc2136.ParseKey(in)
					if err != nil {
						if leaks(err.Error(), secret) {
							t.Fatalf("ParseKey of a %s key written %s: the error shows the secret: %v", alg, form, err)
						}
						continue
					}
					if k.Secret != secret || k.Name != name {
						t.Fatalf("ParseKey of a %s key written %s read name %d characters long and a secret that is not the secret",
							alg, form, len(k.Name))
					}
					if leaks(k.String(), secret) || leaks(fmt.Sprint(k), secret) {
						t.Fatalf("a %s key written %s shows its secret: %v", alg, form, k)
					}
				}
			}
		}
	}
}

// randomSecret is n random bytes in base64, as tsig-keygen writes a secret.
func randomSecret(n int) string {
	raw := make([]byte, n)
	_, _ = rand.Read(raw)
	return base64.StdEncoding.EncodeToString(raw)
}

// leaks reports whether text shows secret or a large part of it, in any
// case: ParseKey lower-cases the algorithm and the name.
func leaks(text, secret string) bool {
	text, secret = strings.ToLower(text), strings.ToLower(secret)
	for i := 0; i+12 <= len(secret); i += 4 {
		if strings.Contains(text, secret[i:i+12]) {
			return true
		}
	}
	return false
}
