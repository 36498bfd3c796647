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
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/myapp-operator/myapp-operator/internal/external/backup"
)

// checkEndpoint refuses an endpoint the client cannot use; empty means
// AWS's.
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return fmt.Errorf("s3: endpoint: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("s3: endpoint scheme must be http or https, not %q", u.Scheme)
	case u.Host == "":
		return errors.New("s3: endpoint has no host")
	case u.User != nil:
		return errors.New("s3: endpoint must not contain user information; credentials come from files")
	}
	return nil
}

// checkPayload refuses content a restore could not read, or that says it is
// the backup of another owner, key, namespace or installation than the one
// it would be filed as.
func (c *Client) checkPayload(req backup.StartRequest, ref objectRef) error {
	m, err := c.readContent(req.Payload)
	if err != nil {
		return err
	}
	switch {
	case m.Owner != req.Owner:
		return fmt.Errorf("the content names owner %q, the start %q", m.Owner, req.Owner)
	case m.IdempotencyKey != req.IdempotencyKey:
		return fmt.Errorf("the content names idempotency key %q, the start %q", m.IdempotencyKey, req.IdempotencyKey)
	case m.BackupConfigNamespace != ref.namespace || m.BackupConfigUID != ref.uid:
		return fmt.Errorf("the content is of BackupConfig %s (UID %s), the start of one in %s with UID %s",
			m.BackupConfigNamespace+"/"+m.BackupConfigName, m.BackupConfigUID, ref.namespace, ref.uid)
	case m.OwnerID != c.ownerID:
		return fmt.Errorf("the content names owner ID %q, this installation's is %q", m.OwnerID, c.ownerID)
	}
	return nil
}

// objectMetadata is the user metadata a backup's object is written with.
func objectMetadata(req backup.StartRequest, startedAt time.Time) (map[string]string, error) {
	meta := map[string]string{
		metaApp:       req.App,
		metaOwner:     req.Owner,
		metaKey:       req.IdempotencyKey,
		metaStartedAt: startedAt.Format(time.RFC3339Nano),
	}
	if req.StartToken != "" {
		meta[metaStartToken] = req.StartToken
	}
	if len(req.Labels) > 0 {
		labels, err := asciiJSON(req.Labels)
		if err != nil {
			return nil, fmt.Errorf("labels: %w", err)
		}
		meta[metaLabels] = labels
	}
	size := 0
	for k, v := range meta {
		if !isASCII(v) {
			return nil, fmt.Errorf("%s must be ASCII to be stored as S3 metadata", k)
		}
		size += len(k) + len(v)
	}
	if size > maxMetadataBytes {
		return nil, fmt.Errorf("the backup's app, owner, key and labels take %d bytes of S3 metadata, "+
			"more than the %d S3 stores: use fewer or shorter labels", size, maxMetadataBytes)
	}
	return meta, nil
}

// asciiJSON encodes v as JSON with every character outside ASCII escaped,
// so it can travel in an HTTP header.
func asciiJSON(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range string(data) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16Surrogates(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String(), nil
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
