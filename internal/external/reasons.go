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

import "cmp"

// Reasons names, for one service, the condition reason a reconciler reports
// for each kind of failure. The mapping from an error to a reason is written
// once, in For, so both controllers classify the same error the same way;
// each fills in the reasons of its own API.
type Reasons struct {
	// Unauthorized is the reason for KindUnauthorized: the credentials are wrong.
	Unauthorized string
	// Throttled is the reason for KindThrottled: the service asked to slow down.
	Throttled string
	// Unavailable is the reason for KindTransient: the service is down or failing.
	Unavailable string
	// Rejected is the reason for KindInvalid: the request itself was refused.
	Rejected string
	// TooLarge is the reason for KindTooLarge: an answer above the
	// client's cap. Other when empty.
	TooLarge string
	// Other is the reason for any other failure: a conflict or a missing
	// object that reached the reconciler, or an error that is not an *Error.
	Other string
}

// For returns the reason for err.
func (r Reasons) For(err error) string {
	switch KindOf(err) {
	case KindUnauthorized:
		return r.Unauthorized
	case KindThrottled:
		return r.Throttled
	case KindTransient:
		return r.Unavailable
	case KindInvalid:
		return r.Rejected
	case KindTooLarge:
		return cmp.Or(r.TooLarge, r.Other)
	default:
		return r.Other
	}
}
