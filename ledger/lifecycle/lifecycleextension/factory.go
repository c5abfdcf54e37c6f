// Package lifecycleextension provides the lifecycle extension: retention
// expiry, deletion jobs and legal-hold processing in the background, on
// the ledger of a ledgerstorage extension and the objects of a contentstore
// extension, independent of the UI. Replicas sharing one ledger each run
// it; a lease in the ledger elects the one that runs the cycles.
package lifecycleextension

//go:generate mdatagen metadata.yaml

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/lifecycle/lifecycleextension/internal/metadata"
)

// NewFactory returns the factory of the lifecycle extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{
		Storage:      component.MustNewID("ledgerstorage"),
		ContentStore: component.MustNewID("contentstore"),
		Retention:    lifecycle.DefaultPolicy(),
		Interval:     time.Hour,
		Lease:        LeaseConfig{TTL: 30 * time.Second, RenewInterval: 10 * time.Second},
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &lifecycleExtension{cfg: cfg.(*Config), set: set}, nil
}
