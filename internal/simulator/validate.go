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

package simulator

import (
	"errors"
	"fmt"
	"strings"

	"github.com/myapp-operator/myapp-operator/internal/contract"
)

// Limits of the contract, as documented in docs/external-api.md. The DNS
// service's rules (names, targets, TTLs, and owners, which the backup service
// shares) live in package contract, where the operator finds them too, so
// the operator checks its values against the rules this simulator enforces.
const (
	maxKeyLen      = 255
	maxLabels      = 32
	maxLabelKeyLen = 63
	maxLabelValLen = 253
	maxAppNameLen  = contract.MaxLabelLength
)

func validateRecord(req upsertRequest) error {
	if err := contract.ValidateTarget(req.Type, req.Value); err != nil {
		return err
	}
	if err := contract.ValidateTTL(int64(req.TTL)); err != nil {
		return fmt.Errorf("ttl %w", err)
	}
	if err := contract.ValidateOwner(req.Owner); err != nil {
		return fmt.Errorf("owner: %w", err)
	}
	return nil
}

func validateAppName(app string) error {
	if app == "" {
		return errors.New("is required")
	}
	if len(app) > maxAppNameLen {
		return fmt.Errorf("must be at most %d characters", maxAppNameLen)
	}
	return contract.ValidateLabel(app)
}

func validateIdempotencyKey(key string) error {
	if key == "" {
		return errors.New("the Idempotency-Key header is required")
	}
	if len(key) > maxKeyLen {
		return fmt.Errorf("the Idempotency-Key header must be at most %d characters", maxKeyLen)
	}
	for _, c := range key {
		if c <= ' ' || c > '~' {
			return errors.New("the Idempotency-Key header must be printable ASCII without spaces")
		}
	}
	return nil
}

func validateLabels(labels map[string]string) error {
	if len(labels) > maxLabels {
		return fmt.Errorf("at most %d labels are allowed", maxLabels)
	}
	for k, v := range labels {
		if k == "" || len(k) > maxLabelKeyLen {
			return fmt.Errorf("label key %q must be 1-%d characters", k, maxLabelKeyLen)
		}
		for _, c := range k {
			if !isAlnum(c) && !strings.ContainsRune("-._/", c) {
				return fmt.Errorf("label key %q has character %q", k, c)
			}
		}
		if len(v) > maxLabelValLen {
			return fmt.Errorf("label %q: value must be at most %d characters", k, maxLabelValLen)
		}
	}
	return nil
}

func isAlnum(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
