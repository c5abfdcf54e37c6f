// Package otlpcheckextension is an HTTP server middleware for the OTLP
// receiver: a malformed OTLP/JSON request gets 400 with an OTLP status
// rather than 500.
package otlpcheckextension

//go:generate mdatagen metadata.yaml

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/extensions/otlpcheckextension/internal/metadata"
)

// NewFactory returns the factory of the otlpcheck extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config { return &Config{} }

func create(context.Context, extension.Settings, component.Config) (extension.Extension, error) {
	return &otlpCheck{}, nil
}
