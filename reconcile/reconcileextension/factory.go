// Package reconcileextension provides the reconcile extension: on a
// schedule inside the collector, it pulls the providers' usage reports
// with their admin keys into the ledger, reconciles the ledger with them
// and exposes the result as metrics (otelcol_extension_reconcile_*), so a
// call lost on its way to the ledger raises an alert. The ledger is the
// ledgerstorage extension's that its storage key names.
package reconcileextension

//go:generate mdatagen metadata.yaml

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/reconcile"
	"github.com/docketlabs/docket/reconcile/reconcileextension/internal/metadata"
)

// NewFactory returns the factory of the reconcile extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{Interval: time.Hour, LookbackDays: 3, TolerancePercent: reconcile.DefaultTolerancePercent}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newExtension(cfg.(*Config), set)
}
