// Package uiextension runs the evidence UI and its JSON API inside the
// collector process, on the ledger of a ledgerstorage extension. In
// embedded mode chDB allows one process per data directory, so the UI lives
// where the ledger exporter lives.
package uiextension

//go:generate mdatagen metadata.yaml

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/hostext"
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
		Endpoint:        "127.0.0.1:8080",
		Auth:            auth.DefaultConfig(filepath.Join("data", "ui-users.json")),
		Retention:       lifecycle.DefaultPolicy(),
		ExportDirectory: filepath.Join("data", "exports"),
		MaxConnections:  api.DefaultMaxConnections,
		Replay:          ReplayConfig{OpenAIAPI: string(providers.ChatCompletions)},
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return &uiExtension{cfg: cfg.(*Config), set: set}, nil
}

type uiExtension struct {
	cfg    *Config
	set    extension.Settings
	ledger *storageconfig.Reopening
	// ownLedger: the engine is the UI's own (deprecated inline storage),
	// which it closes; else the ledgerstorage extension's.
	ownLedger bool
	watch     chan struct{} // closed to stop watching the ledger's state
	server    *api.Server
	replay    *runs.Manager
}

// Dependencies makes the collector start the ledger, the content store and
// the lifecycle first.
func (u *uiExtension) Dependencies() []component.ID {
	deps := u.cfg.Storage.Dependencies()
	for _, id := range []*component.ID{u.cfg.ContentStore, u.cfg.Lifecycle} {
		if id != nil {
			deps = append(deps, *id)
		}
	}
	return deps
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
	if err = u.openLedger(ctx, host, logger); err != nil {
		return err
	}
	store := u.ledger.Store()
	deps := api.Deps{Ledger: store, LedgerState: u.ledger.State, Content: content, Auth: authn, ExportDir: u.cfg.ExportDirectory, Logger: logger,
		Account: completeness.Process}
	if deps.Lifecycle, deps.Runner, err = u.lifecycle(host, store, content, logger); err != nil {
		_ = u.closeLedger()
		return err
	}
	if u.cfg.Replay.Enabled {
		if deps.Replays, err = u.replays(store, content); err != nil {
			_ = u.closeLedger()
			return err
		}
	}
	srv, err := api.Listen(api.Listener{Addr: u.cfg.Endpoint, TLSCertFile: u.cfg.TLS.CertFile, TLSKeyFile: u.cfg.TLS.KeyFile,
		BehindProxy: u.cfg.Auth.Mode == auth.ModeProxy, MaxConnections: u.cfg.MaxConnections}, api.Handler(deps), logger)
	if err != nil {
		_ = u.closeLedger()
		return err
	}
	u.server, u.replay = srv, deps.Replays
	logger.Info("evidence UI listening", "addr", srv.Addr(), "auth", u.cfg.Auth.Mode)
	if emb := u.ledger.Config().Embedded; emb != nil {
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

// lifecycle is the holds/deletions manager and the background runner: the
// lifecycle extension's when one is named, else a manager of the UI's own
// (no runner), or none without a content store.
func (u *uiExtension) lifecycle(host component.Host, store *ledgerstore.Store, content contentstore.Store, logger *slog.Logger) (*lifecycle.Manager, *lifecycle.Runner, error) {
	if id := u.cfg.Lifecycle; id != nil {
		prov, err := hostext.Find[lifecycle.Provider](host, *id, "lifecycle")
		if err != nil {
			return nil, nil, fmt.Errorf("docketui: lifecycle: %w", err)
		}
		m, r := prov.Lifecycle()
		if m == nil {
			return nil, nil, fmt.Errorf("docketui: lifecycle extension %s has not started", id)
		}
		return m, r, nil
	}
	if content == nil {
		return nil, nil, nil
	}
	// Loud: retention used to run here.
	logger.Warn("no lifecycle extension named (lifecycle:): this UI runs no retention expiry and no deletion retries; run the lifecycle extension in this or another collector sharing the ledger")
	m, err := lifecycle.New(store, content, lifecycle.Options{Policy: u.cfg.Retention, Logger: logger})
	return m, nil, err
}

func (u *uiExtension) contentStore(host component.Host) (contentstore.Store, error) {
	if u.cfg.ContentStore == nil {
		return nil, nil
	}
	st, err := contentstore.Lookup(host, *u.cfg.ContentStore)
	if err != nil {
		return nil, fmt.Errorf("docketui: %w", err)
	}
	return st, nil
}

// closeLedger closes the engine if it is the UI's own.
func (u *uiExtension) closeLedger() error {
	if u.ledger == nil || !u.ownLedger {
		return nil
	}
	return u.ledger.Close()
}

func (u *uiExtension) Shutdown(ctx context.Context) error {
	if u.ledger != nil && u.server != nil {
		if emb := u.ledger.Config().Embedded; emb != nil {
			apiclient.Withdraw(emb.Path)
		}
	}
	if u.watch != nil {
		close(u.watch)
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
	return u.closeLedger()
}
