// Package tenantauthextension provides the tenantauth extension: a server
// authenticator for OTLP receivers that accepts bearer tokens, each bound to
// one tenant, and tells the pipeline which tenant a sender authenticated as
// (client.Info.Auth attribute "tenant"), so the tenant processor can stamp
// it instead of trusting what the sender wrote.
package tenantauthextension

//go:generate mdatagen metadata.yaml

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/extensions/tenantauthextension/internal/metadata"
)

// NewFactory returns the factory of the tenantauth extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config { return &Config{} }

func create(_ context.Context, _ extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &authenticator{cfg: cfg.(*Config), account: completeness.Process}, nil
}
