// Package contentstoreextension provides the contentstore extension: the
// content store (a local directory or S3) that the contentref processor
// writes to and that the UI and tools read from, shared through the
// collector host.
package contentstoreextension

//go:generate mdatagen metadata.yaml

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoreextension/internal/metadata"
)

// NewFactory returns the factory of the contentstore extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{Config: contentstore.NewDefaultConfig()}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newExtension(cfg.(*Config), set), nil
}
