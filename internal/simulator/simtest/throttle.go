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

package simtest

import (
	"testing"
	"time"

	"github.com/onsi/gomega"

	"github.com/myapp-operator/myapp-operator/internal/external"
	"github.com/myapp-operator/myapp-operator/internal/simulator"
)

// ThrottledService is one service's client, as RunThrottleTests drives it.
type ThrottledService struct {
	// Service and Op name the operation whose 429 starts the wait.
	Service simulator.Service
	Op      simulator.Operation
	// Setup builds a client of the service at url with maxRetryAfter as its
	// MaxRetryAfter, makes the calls the others need (a record or a backup
	// to read), and returns every operation of the client by name. The call
	// named trigger performs Op: it meets the 429, and it is the call that
	// goes out once the wait is over.
	Setup func(t *testing.T, url string, maxRetryAfter time.Duration) (calls map[string]func() error, trigger string)
}

// RunThrottleTests proves that once the service asked to wait, no call of
// the client reaches it before the wait, capped at MaxRetryAfter, is over,
// whatever operation it is: one client serves every object, so N objects do
// not make N calls per wait.
func RunThrottleTests(t *testing.T, opts simulator.Options, svc ThrottledService) {
	tests := []struct {
		name     string
		asked    time.Duration
		maxAfter time.Duration
		// honoured is the wait the client keeps the service free for.
		honoured time.Duration
	}{
		{name: "a wait below the cap is honoured in full", asked: 2 * time.Second, honoured: 2 * time.Second},
		{name: "a day is honoured for the cap only", asked: 24 * time.Hour, maxAfter: 1500 * time.Millisecond, honoured: 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			sim, url := Start(t, opts)
			calls, trigger := svc.Setup(t, url, tt.maxAfter)
			sim.SetFault(svc.Service, svc.Op, simulator.Fault{Status: 429, RetryAfter: tt.asked, Count: 1})
			reached := func() int { return RequestTotal(sim, svc.Service) }

			err := calls[trigger]()
			answered := time.Now()
			g.Expect(err).To(gomega.MatchError(external.ErrThrottled))
			wait, _ := external.RetryAfter(err)
			g.Expect(wait).To(gomega.Equal(tt.honoured))
			// The simulator counts a request once its handler has returned.
			g.Eventually(func() int { return sim.RequestCountStatus(svc.Service, svc.Op, 429) }).Should(gomega.Equal(1))
			before := reached()

			// Every operation is held back, with the wait that is left.
			for name, call := range calls {
				err := call()
				g.Expect(err).To(gomega.MatchError(external.ErrThrottled), name)
				left, ok := external.RetryAfter(err)
				g.Expect(ok).To(gomega.BeTrue())
				g.Expect(left).To(gomega.And(gomega.BeNumerically(">", 0), gomega.BeNumerically("<=", tt.honoured)), name)
			}
			g.Expect(reached()).To(gomega.Equal(before), "no call reached the service")

			// Calls keep failing locally until the wait is over, then go out.
			g.Eventually(calls[trigger]).WithTimeout(tt.honoured + 5*time.Second).WithPolling(20 * time.Millisecond).Should(gomega.Succeed())
			g.Expect(time.Since(answered)).To(gomega.BeNumerically(">=", tt.honoured-50*time.Millisecond))
			g.Expect(reached()).To(gomega.Equal(before+1), "only the call after the wait reached the service")
			g.Expect(sim.RequestCountStatus(svc.Service, svc.Op, 429)).To(gomega.Equal(1))
		})
	}
}
