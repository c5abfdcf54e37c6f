// Package ledgerstorageextension provides the ledgerstorage extension: the
// one owner of the ledger's engine in a collector — the embedded chDB
// directory or a ClickHouse server or cluster — which the ledger exporter,
// the UI and the lifecycle runner name by ID (`storage: ledgerstorage`)
// instead of each configuring, opening and migrating an engine of its own.
package ledgerstorageextension

//go:generate mdatagen metadata.yaml

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/ledger/ledgerstorageextension/internal/metadata"
)

// NewFactory returns the factory of the ledgerstorage extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config { return &Config{} }

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &storageExtension{cfg: cfg.(*Config), set: set}, nil
}
