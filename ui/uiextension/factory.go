// Package uiextension runs the evidence UI and its JSON API inside the
// collector process. In embedded mode chDB allows one process per data
// directory, so the UI lives where the ledger exporter lives.
package uiextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/backend"
	"github.com/docketlabs/docket/ui/api"
)

var componentType = component.MustNewType("docketui")

// NewFactory returns the factory of the UI extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(componentType, createDefaultConfig, create, component.StabilityLevelDevelopment)
}

func createDefaultConfig() component.Config {
	return &Config{Endpoint: "127.0.0.1:8080"}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &uiExtension{cfg: cfg.(*Config), set: set}, nil
}

type uiExtension struct {
	cfg    *Config
	set    extension.Settings
	store  *ledger.Store
	server *api.Server
}

func (u *uiExtension) Start(ctx context.Context, _ component.Host) error {
	store, err := backend.Open(ctx, u.cfg.Storage)
	if err != nil {
		return err
	}
	logger := slogFrom(u.set)
	srv, err := api.Listen(u.cfg.Endpoint, store, logger)
	if err != nil {
		store.Engine().Close()
		return err
	}
	u.store, u.server = store, srv
	logger.Info("evidence API listening", "addr", srv.Addr())
	return nil
}

func (u *uiExtension) Shutdown(ctx context.Context) error {
	if u.server != nil {
		if err := u.server.Shutdown(ctx); err != nil {
			return err
		}
	}
	if u.store != nil {
		return u.store.Engine().Close()
	}
	return nil
}
