// Package otlpcheckextension is a server middleware for the OTLP receiver:
// a malformed OTLP/JSON request gets 400 with an OTLP status rather than
// 500, and every request refused as malformed, over HTTP or gRPC, is
// counted per tenant in the completeness account.
package otlpcheckextension

//go:generate mdatagen metadata.yaml

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/extensions/otlpcheckextension/internal/metadata"
)

// NewFactory returns the factory of the otlpcheck extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{MaxRequestBodySize: defaultMaxRequestBodySize}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &otlpCheck{cfg: cfg.(*Config), account: completeness.Process, logger: set.Logger}, nil
}
