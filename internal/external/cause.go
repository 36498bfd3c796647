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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// NoAnswerCause names why a call got no answer (err, a transport error
// with whatever the caller wrapped around it) in words that stay the same
// from one failure of that cause to the next: never the error's own text,
// which holds the client's ephemeral port or the time a certificate was
// checked, so a condition that carries it does not churn. The clients of
// both backup providers say it after the endpoint they called; tlsFailure
// says the handshake failed, for which each names its CA file flag.
func NoAnswerCause(err error) (cause string, tlsFailure bool) {
	cause = noAnswerCause(err)
	return cause, strings.HasPrefix(cause, tlsPrefix)
}

// tlsPrefix starts the cause of every failed TLS handshake.
const tlsPrefix = "TLS: "

func noAnswerCause(err error) string {
	var (
		unknownAuthority x509.UnknownAuthorityError
		wrongHost        x509.HostnameError
		invalidCert      x509.CertificateInvalidError
		notTLS           tls.RecordHeaderError
		alert            tls.AlertError
		dnsErr           *net.DNSError
		netErr           net.Error
	)
	switch {
	case errors.As(err, &unknownAuthority):
		return tlsPrefix + "its certificate is signed by an authority the operator does not trust"
	case errors.As(err, &wrongHost):
		return tlsPrefix + "its certificate is not valid for host " + wrongHost.Host
	case errors.As(err, &invalidCert):
		return tlsPrefix + "its certificate is not valid (" + certificateProblem(invalidCert.Reason) + ")"
	case errors.As(err, &notTLS), errors.Is(err, http.ErrSchemeMismatch):
		return tlsPrefix + "the server does not speak TLS (is the endpoint http://, not https://?)"
	case errors.As(err, &alert):
		return tlsPrefix + "the server refused the handshake (" + alert.Error() + ")"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "its host name " + dnsErr.Name + " does not resolve"
		}
		return "its host name " + dnsErr.Name + " could not be looked up"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: nothing listens there"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "the host cannot be reached"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the connection was reset before an answer"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before an answer"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "it did not answer in time"
	case errors.Is(err, context.Canceled):
		return "the call was abandoned (the manager is stopping or lost its lease)"
	default:
		return "the connection failed"
	}
}

// certificateProblem says what is wrong with a certificate, by the reason
// x509 gives, without the times its message carries.
func certificateProblem(reason x509.InvalidReason) string {
	switch reason {
	case x509.Expired:
		return "expired or not yet valid"
	case x509.NotAuthorizedToSign:
		return "signed by a certificate that is not a CA"
	case x509.IncompatibleUsage:
		return "not for serving"
	case x509.NameMismatch, x509.NameConstraintsWithoutSANs, x509.CANotAuthorizedForThisName:
		return "not for this name"
	default:
		return "refused by the verifier"
	}
}
