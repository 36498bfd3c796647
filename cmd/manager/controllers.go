package main

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
)

// setupControllers registers the controllers with the manager.
func setupControllers(_ context.Context, _ ctrl.Manager, _ *options) error {
	return nil
}
