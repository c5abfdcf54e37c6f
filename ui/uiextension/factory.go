// Package uiextension runs the evidence UI and its JSON API inside the
// collector process. In embedded mode chDB allows one process per data
// directory, so the UI lives where the ledger exporter lives.
package uiextension

//go:generate mdatagen metadata.yaml

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/providers"
	"github.com/docketlabs/docket/replay/retirement"
	"github.com/docketlabs/docket/replay/runs"
	"github.com/docketlabs/docket/ui/api"
	"github.com/docketlabs/docket/ui/apiclient"
	"github.com/docketlabs/docket/ui/auth"
	"github.com/docketlabs/docket/ui/uiextension/internal/metadata"
)

// NewFactory returns the factory of the UI extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{
		Endpoint:          "127.0.0.1:8080",
		Auth:              auth.DefaultConfig(filepath.Join("data", "ui-users.json")),
		Retention:         lifecycle.DefaultPolicy(),
		LifecycleInterval: time.Hour,
		ExportDirectory:   filepath.Join("data", "exports"),
		MaxConnections:    api.DefaultMaxConnections,
		Replay:            ReplayConfig{OpenAIAPI: string(providers.ChatCompletions)},
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &uiExtension{cfg: cfg.(*Config), set: set}, nil
}

type uiExtension struct {
	cfg    *Config
	set    extension.Settings
	store  *ledgerstore.Store
	ledger *storageconfig.Reopening
	watch  chan struct{} // closed to stop watching the ledger's state
	server *api.Server
	runner *lifecycle.Runner
	replay *runs.Manager
	tel    *metadata.TelemetryBuilder
}

// Dependencies makes the collector start the content store first.
func (u *uiExtension) Dependencies() []component.ID {
	if u.cfg.ContentStore == nil {
		return nil
	}
	return []component.ID{*u.cfg.ContentStore}
}

func (u *uiExtension) Start(ctx context.Context, host component.Host) error {
	logger := slogFrom(u.set)
	content, err := u.contentStore(host)
	if err != nil {
		return err
	}
	authn, oneTime, err := auth.New(u.cfg.Auth)
	if err != nil {
		return err
	}
	if oneTime != "" {
		// The collector's own log goes to stderr too, often into a log
		// store: the password goes to a terminal or a 0600 file only.
		file, deliverErr := auth.DeliverOneTimePassword(os.Stderr, u.cfg.Auth.UsersFile, oneTime)
		if deliverErr != nil {
			return deliverErr
		}
		if file != "" {
			logger.Warn("created UI user admin; its one-time password is in a file readable only by this user: change it at first sign-in, then delete the file", "file", file)
		}
	}
	// The UI starts without its ledger and says so (ledgerstate.go).
	u.ledger = u.openLedger(ctx, host, logger)
	store := u.ledger.Store()
	deps := api.Deps{Ledger: store, LedgerState: u.ledger.State, Content: content, Auth: authn, ExportDir: u.cfg.ExportDirectory, Logger: logger,
		Account: completeness.Process}
	if content != nil {
		if deps.Lifecycle, err = lifecycle.New(store, content, lifecycle.Options{Policy: u.cfg.Retention, Logger: logger}); err != nil {
			_ = store.Engine().Close()
			return err
		}
	}
	if u.cfg.Replay.Enabled {
		if deps.Replays, err = u.replays(store, content); err != nil {
			_ = store.Engine().Close()
			return err
		}
	}
	switch {
	case deps.Lifecycle != nil && u.cfg.LifecycleInterval > 0:
		// The runner outlives Start's context; Shutdown stops it.
		deps.Runner = lifecycle.NewRunner(deps.Lifecycle, u.cfg.LifecycleInterval)
		if u.tel, err = lifecycleMetrics(u.set.TelemetrySettings, deps.Runner); err != nil {
			_ = store.Engine().Close()
			return err
		}
		if err = deps.Runner.Start(context.WithoutCancel(ctx)); err != nil {
			u.tel.Shutdown()
			_ = store.Engine().Close()
			return err
		}
	case deps.Lifecycle != nil:
		logger.Warn("lifecycle_interval is 0: retention is applied only by `docket lifecycle expire`")
	case u.cfg.LifecycleInterval > 0:
		logger.Warn("no content_store: the lifecycle (retention, deletions) does not run here")
	}
	srv, err := api.Listen(api.Listener{Addr: u.cfg.Endpoint, TLSCertFile: u.cfg.TLS.CertFile, TLSKeyFile: u.cfg.TLS.KeyFile,
		BehindProxy: u.cfg.Auth.Mode == auth.ModeProxy, MaxConnections: u.cfg.MaxConnections}, api.Handler(deps), logger)
	if err != nil {
		if deps.Runner != nil {
			deps.Runner.Stop()
			u.tel.Shutdown()
		}
		_ = store.Engine().Close()
		return err
	}
	u.store, u.server, u.runner, u.replay = store, srv, deps.Runner, deps.Replays
	logger.Info("evidence UI listening", "addr", srv.Addr(), "auth", u.cfg.Auth.Mode)
	if emb := u.cfg.Storage.Embedded; emb != nil {
		// The CLI finds this process's API here when the ledger is held.
		scheme := "http://"
		if u.cfg.TLS.CertFile != "" {
			scheme = "https://"
		}
		if err := apiclient.Announce(emb.Path, scheme+srv.Addr()); err != nil {
			logger.Warn("the CLI will not find this UI's address beside the ledger", "err", err)
		}
	}
	return nil
}

// replays is the replay service of the complaint pages, with the
// providers' endpoints and keys from the environment as `docket replay`.
func (u *uiExtension) replays(store *ledgerstore.Store, content contentstore.Store) (*runs.Manager, error) {
	clients, err := replay.ClientsFromEnv(providers.API(u.cfg.Replay.OpenAIAPI), false, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("docketui: replay: %w", err)
	}
	lc, err := retirement.Default()
	if err != nil {
		return nil, fmt.Errorf("docketui: replay: %w", err)
	}
	prices, err := pricing.Default()
	if err != nil {
		return nil, fmt.Errorf("docketui: replay: %w", err)
	}
	r := &replay.Runner{Ledger: store, Reader: &access.Reader{Content: content, Ledger: store}, Retirements: lc, Clients: clients, Prices: prices,
		SampledTokens: u.cfg.Replay.SampledTokens}
	c := u.cfg.Replay
	return runs.New(r, runs.Limits{MaxN: c.MaxN, MaxCostUSD: c.MaxCostUSD, Timeout: c.Timeout, MaxRunning: c.MaxRunning})
}

// lifecycleMetrics reports the runner's last orphan scan (metadata.yaml;
// counts only, no labels).
func lifecycleMetrics(set component.TelemetrySettings, r *lifecycle.Runner) (*metadata.TelemetryBuilder, error) {
	tel, err := metadata.NewTelemetryBuilder(set)
	if err == nil {
		err = tel.RegisterExtensionDocketuiLifecycleOrphanObjectsCallback(func(_ context.Context, o metric.Int64Observer) error {
			if scan := r.Status().Orphans; scan != nil {
				o.Observe(int64(scan.Orphans))
			}
			return nil
		})
	}
	if err != nil {
		tel.Shutdown()
		return nil, fmt.Errorf("docketui: metrics: %w", err)
	}
	return tel, nil
}

func (u *uiExtension) contentStore(host component.Host) (contentstore.Store, error) {
	if u.cfg.ContentStore == nil {
		return nil, nil
	}
	ext, ok := host.GetExtensions()[*u.cfg.ContentStore]
	if !ok {
		return nil, fmt.Errorf("docketui: content store extension %s is not in service.extensions", u.cfg.ContentStore)
	}
	prov, ok := ext.(contentstore.Provider)
	if !ok {
		return nil, fmt.Errorf("docketui: extension %s is not a content store", u.cfg.ContentStore)
	}
	st := prov.ContentStore()
	if st == nil {
		return nil, fmt.Errorf("docketui: content store extension %s has not started", u.cfg.ContentStore)
	}
	return st, nil
}

func (u *uiExtension) Shutdown(ctx context.Context) error {
	if emb := u.cfg.Storage.Embedded; emb != nil && u.server != nil {
		apiclient.Withdraw(emb.Path)
	}
	if u.watch != nil {
		close(u.watch)
	}
	if u.runner != nil {
		// An expiry run it interrupts is recorded as failed.
		u.runner.Stop()
		u.tel.Shutdown()
	}
	if u.replay != nil {
		// Replays in flight end as cancelled, with what they did recorded.
		u.replay.Close()
	}
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
