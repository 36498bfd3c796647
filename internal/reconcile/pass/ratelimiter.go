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

package pass

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
)

// RateLimiter is the retry policy of both controllers: controller-runtime's
// default rate limiter with the per-object backoff capped at maxDelay
// instead of 1000 seconds. Every event starts a pass at once but still
// counts its failure, so an object that fails while events keep coming (a
// namespace being deleted refuses every child a MyApp recreates while its
// DNS service is down; a deleted BackupConfig is poked while the backup
// service is down) reaches the cap within seconds; with 1000 seconds it then
// waited up to 16 minutes after the service came back, since nothing else
// brings it back. The overall bucket (10 per second, bursts of 100) still
// bounds what all failing objects send a failing service.
func RateLimiter(maxDelay time.Duration) workqueue.TypedRateLimiter[ctrl.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](BaseRetryDelay, maxDelay),
		&workqueue.TypedBucketRateLimiter[ctrl.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
