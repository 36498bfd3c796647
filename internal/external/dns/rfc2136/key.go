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

package rfc2136

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"github.com/myapp-operator/myapp-operator/internal/external"
)

// DefaultAlgorithm is the TSIG algorithm of a key that does not name one.
const DefaultAlgorithm = "hmac-sha256"

// algorithms maps the names BIND's key clauses use to miekg/dns's.
var algorithms = map[string]string{
	"hmac-sha1":   dns.HmacSHA1,
	"hmac-sha224": dns.HmacSHA224,
	"hmac-sha256": dns.HmacSHA256,
	"hmac-sha384": dns.HmacSHA384,
	"hmac-sha512": dns.HmacSHA512,
}

// Key is a TSIG key. Its String never shows the secret.
type Key struct {
	// Name is the key's name as the server knows it, such as "myapp-operator".
	Name string
	// Algorithm is one of hmac-sha1, hmac-sha224, hmac-sha256 (the default),
	// hmac-sha384 and hmac-sha512.
	Algorithm string
	// Secret is the base64 shared secret.
	Secret string
}

// String names the key and its algorithm, never the secret, so a Key can be
// logged or put in an error by mistake without leaking it.
func (k Key) String() string { return fmt.Sprintf("TSIG key %q (%s)", k.Name, k.Algorithm) }

// ParseKey reads a key in nsupdate's -y form, "[algorithm:]name:secret",
// such as "hmac-sha256:myapp-operator:c2VjcmV0...". The algorithm defaults
// to DefaultAlgorithm. Errors never contain the secret, whatever order the
// fields were written in: a key written in the wrong order puts the secret
// where the algorithm or the name goes, so an error names a field by its
// position and quotes none. A name that could be the secret (it holds the
// characters of base64 that no key name has, or decodes as base64 to a
// secret's length) is refused too, since the key's String, and every error
// about the key a server returns, name it.
func ParseKey(s string) (Key, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	var k Key
	// nameField and secretField are the positions of the name and secret,
	// for errors.
	var nameField, secretField string
	switch len(parts) {
	case 2:
		k = Key{Name: parts[0], Algorithm: DefaultAlgorithm, Secret: parts[1]}
		nameField, secretField = "first", "second"
	case 3:
		k = Key{Algorithm: strings.ToLower(parts[0]), Name: parts[1], Secret: parts[2]}
		nameField, secretField = "second", "third"
	default:
		return Key{}, errors.New(`want "[algorithm:]name:secret"`)
	}
	if _, ok := algorithms[k.Algorithm]; !ok {
		// The field is not quoted: in a key written secret first
		// ("secret:name:algorithm") it is the secret.
		return Key{}, errors.New(`the first field of "algorithm:name:secret", the algorithm, is not one of hmac-sha256, ` +
			`hmac-sha512, hmac-sha384, hmac-sha224 or hmac-sha1 (are the fields in another order?)`)
	}
	k.Name = strings.ToLower(strings.TrimSuffix(k.Name, "."))
	if _, ok := dns.IsDomainName(k.Name); !ok || k.Name == "" {
		return Key{}, fmt.Errorf(`the %s field of "[algorithm:]name:secret", the key name, is not a domain name `+
			`(are name and secret swapped?)`, nameField)
	}
	if mayBeSecret(parts[len(parts)-2]) {
		return Key{}, fmt.Errorf(`the %s field of "[algorithm:]name:secret", the key name, looks like a base64 secret `+
			`(are name and secret swapped?); a key name is a domain name such as myapp-operator`, nameField)
	}
	if _, err := base64.StdEncoding.DecodeString(k.Secret); err != nil || k.Secret == "" {
		return Key{}, fmt.Errorf(`the %s field of "[algorithm:]name:secret", the secret, is not base64 `+
			`(are name and secret swapped?)`, secretField)
	}
	return k, nil
}

// minSecretBytes is the shortest secret mayBeSecret takes a name for.
// tsig-keygen and ddns-confgen write a secret as long as the algorithm's
// digest, 20 bytes at least (HMAC-SHA1); 16 leaves room below that and
// still lets any name of up to 21 letters and digits through.
const minSecretBytes = 16

// mayBeSecret reports whether a key name field, as written, could be a
// base64 secret: it holds '+', '/' or '=', which a secret almost always
// has and a key name never does, or it decodes as base64 to a secret's
// length. A real key name is a domain name such as "myapp-operator" or
// "ddns.example.com": hyphens and dots are not base64.
func mayBeSecret(field string) bool {
	if strings.ContainsAny(field, "+/=") {
		return true
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(field); err == nil && len(b) >= minSecretBytes {
			return true
		}
	}
	return false
}

// KeySource supplies the TSIG key for a call. It is asked once per call, so
// a rotated key is picked up without a restart.
type KeySource interface {
	Key(ctx context.Context) (Key, error)
}

// StaticKey returns the same key every time.
func StaticKey(k Key) KeySource { return staticKey(k) }

type staticKey Key

func (k staticKey) Key(context.Context) (Key, error) { return Key(k), nil }

// KeyFromTokenSource reads the key through a token source, so a key in a
// file or a Secret is read, cached and rotated exactly as the HTTP
// service's bearer token is (external.NewFileTokenSource,
// external.NewSecretTokenSource). The token is the key in ParseKey's form.
func KeyFromTokenSource(ts external.TokenSource) KeySource { return tokenKey{ts} }

type tokenKey struct{ ts external.TokenSource }

func (t tokenKey) Key(ctx context.Context) (Key, error) {
	token, err := t.ts.Token(ctx)
	if err != nil {
		return Key{}, err
	}
	k, err := ParseKey(token)
	if err != nil {
		return Key{}, fmt.Errorf("TSIG key: %w", err)
	}
	return k, nil
}

// fqdn is the key name as it travels in a TSIG record.
func (k Key) fqdn() string { return dns.Fqdn(k.Name) }

// algorithm is the key's algorithm as miekg/dns names it.
func (k Key) algorithm() string { return algorithms[k.Algorithm] }
