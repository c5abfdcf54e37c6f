package reconcileextension

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
	"github.com/docketlabs/docket/reconcile/reconcileextension/internal/metadata"
)

type reconcileExtension struct {
	cfg   *Config
	set   extension.Settings
	actor string
	now   func() time.Time
	store *ledgerstore.Store
	// ledger is the storage extension's engine, or (deprecated inline
	// storage) this extension's own, which it closes: ownLedger.
	ledger    *storageconfig.Reopening
	ownLedger bool
	pulls     []usage.Client
	stop      context.CancelFunc
	done      chan struct{}
	tel       *metadata.TelemetryBuilder

	mu   sync.Mutex
	last *reconcile.Report // the latest reconciliation, observed by the gauges
}

func newExtension(cfg *Config, set extension.Settings) (*reconcileExtension, error) {
	return &reconcileExtension{cfg: cfg, set: set, actor: "collector " + set.ID.String(), now: time.Now}, nil
}

// Dependencies makes the collector start the ledger's storage first.
func (e *reconcileExtension) Dependencies() []component.ID { return e.cfg.Storage.Dependencies() }

func (e *reconcileExtension) Start(ctx context.Context, host component.Host) error {
	for _, p := range e.cfg.Providers {
		key, err := usage.AdminKey(p.Provider, p.AdminKeyFile)
		if err != nil {
			return err
		}
		e.pulls = append(e.pulls, usage.Client{Provider: p.Provider, BaseURL: p.BaseURL, AdminKey: key})
	}
	tel, err := e.metrics()
	if err != nil {
		return err
	}
	ledger, owned, err := e.cfg.Storage.Ledger(ctx, host)
	if err != nil {
		tel.Shutdown()
		return fmt.Errorf("reconcile: %w", err)
	}
	if owned {
		e.set.Logger.Warn(storageconfig.Deprecation)
	}
	// A ledger that is unavailable now fails the runs until it opens;
	// each run logs why.
	e.tel, e.ledger, e.ownLedger = tel, ledger, owned
	e.store = ledger.Store()
	run, stop := context.WithCancel(context.WithoutCancel(ctx))
	e.stop, e.done = stop, make(chan struct{})
	go e.loop(run)
	return nil
}

// metrics creates the count of failed pulls and registers the gauges of
// the latest reconciliation (metadata.yaml). The gauges report only the
// latest run's cells, so days leave the series as the window moves on.
func (e *reconcileExtension) metrics() (*metadata.TelemetryBuilder, error) {
	tel, err := metadata.NewTelemetryBuilder(e.set.TelemetrySettings)
	if err == nil {
		err = errors.Join(tel.RegisterExtensionReconcileCellsCallback(e.observeCells),
			tel.RegisterExtensionReconcileDriftPercentCallback(e.observeDrift))
	}
	if err != nil {
		tel.Shutdown()
		return nil, fmt.Errorf("reconcile: metrics: %w", err)
	}
	return tel, nil
}

func (e *reconcileExtension) observeCells(_ context.Context, o metric.Int64Observer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		return nil
	}
	for _, s := range reconcile.States {
		o.Observe(int64(e.last.States[s]), metric.WithAttributes(attribute.String("state", s)))
	}
	return nil
}

func (e *reconcileExtension) observeDrift(_ context.Context, o metric.Float64Observer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		return nil
	}
	for _, c := range e.last.Cells {
		for _, d := range []struct {
			measure string
			v       *float64
		}{{"requests", c.Drift.Requests}, {"input_tokens", c.Drift.InputTokens}, {"output_tokens", c.Drift.OutputTokens}} {
			if d.v != nil {
				o.Observe(*d.v, metric.WithAttributes(attribute.String("day", c.Day), attribute.String("provider", c.Provider),
					attribute.String("model", c.Model), attribute.String("api_key_id", c.APIKeyID), attribute.String("measure", d.measure)))
			}
		}
	}
	return nil
}

func (e *reconcileExtension) loop(ctx context.Context) {
	defer close(e.done)
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	for {
		e.runOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runOnce pulls every configured report for the lookback window and
// reconciles it. A failed pull is logged and counted; the others go on.
func (e *reconcileExtension) runOnce(ctx context.Context) {
	to := e.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -e.cfg.LookbackDays-1)
	for _, c := range e.pulls {
		imp, err := c.Import(ctx, e.store, from, to, e.actor)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.tel.ExtensionReconcilePullFailures.Add(ctx, 1, metric.WithAttributes(attribute.String("provider", c.Provider)))
			e.set.Logger.Warn("provider usage pull failed", zap.String("provider", c.Provider), zap.Error(err))
			continue
		}
		e.set.Logger.Info("provider usage imported", zap.String("provider", c.Provider), zap.String("import_id", imp.ID), zap.Uint64("rows", imp.Rows))
	}
	rep, err := reconcile.Reconcile(ctx, e.store, reconcile.Options{From: from, To: to, TolerancePercent: e.cfg.TolerancePercent, Keys: e.cfg.Keys})
	if err != nil {
		if ctx.Err() == nil {
			e.set.Logger.Warn("reconciliation failed", zap.Error(err))
		}
		return
	}
	e.mu.Lock()
	e.last = &rep
	e.mu.Unlock()
	if off := len(rep.Cells) - rep.States[reconcile.StateOK] - rep.States[reconcile.StateNotImported]; off > 0 {
		e.set.Logger.Warn("ledger and provider reports disagree", zap.Int("cells", off), zap.Any("states", rep.States))
	}
}

func (e *reconcileExtension) Shutdown(context.Context) error {
	if e.stop != nil {
		e.stop()
		<-e.done
	}
	if e.tel != nil {
		e.tel.Shutdown()
	}
	if e.ownLedger {
		return e.ledger.Close()
	}
	return nil
}
