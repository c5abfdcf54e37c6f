package lifecycleextension

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap/exp/zapslog"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/lease"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/lifecycle/lifecycleextension/internal/metadata"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// leaseName is the lease the lifecycle runners of one ledger compete for.
const leaseName = "lifecycle"

type lifecycleExtension struct {
	cfg     *Config
	set     extension.Settings
	manager *lifecycle.Manager
	keeper  *lease.Keeper
	runner  *lifecycle.Runner
	tel     *metadata.TelemetryBuilder
}

var _ lifecycle.Provider = (*lifecycleExtension)(nil)

// Dependencies makes the collector start the ledger and the content store
// first.
func (e *lifecycleExtension) Dependencies() []component.ID {
	return []component.ID{e.cfg.Storage, e.cfg.ContentStore}
}

func (e *lifecycleExtension) Start(ctx context.Context, host component.Host) error {
	ledger, err := storageconfig.Lookup(host, e.cfg.Storage)
	if err != nil {
		return fmt.Errorf("lifecycle: %w", err)
	}
	content, err := contentstore.Lookup(host, e.cfg.ContentStore)
	if err != nil {
		return fmt.Errorf("lifecycle: %w", err)
	}
	logger := slog.New(zapslog.NewHandler(e.set.Logger.Core()))
	store := ledger.Store()
	m, err := lifecycle.New(store, content, lifecycle.Options{Policy: e.cfg.Retention, Logger: logger})
	if err != nil {
		return err
	}
	l, err := lease.New(store.Engine(), leaseName, lease.NewHolderID(), e.cfg.Lease.TTL)
	if err != nil {
		return fmt.Errorf("lifecycle: %w", err)
	}
	keeper := lease.NewKeeper(l, e.cfg.Lease.RenewInterval, logger)
	runner := lifecycle.NewRunner(m, e.cfg.Interval, keeper)
	tel, err := telemetry(e.set.TelemetrySettings, runner, keeper)
	if err != nil {
		return err
	}
	keeper.Start()
	// The runner outlives Start's context; Shutdown stops it.
	if err = runner.Start(context.WithoutCancel(ctx)); err != nil {
		_ = keeper.Stop(ctx, true)
		tel.Shutdown()
		return err
	}
	e.manager, e.keeper, e.runner, e.tel = m, keeper, runner, tel
	e.set.Logger.Info("lifecycle runner started; the replica holding the lease runs the cycles")
	return nil
}

// telemetry reports the runner's last orphan scan and whether this replica
// holds the lease (metadata.yaml; no labels).
func telemetry(set component.TelemetrySettings, r *lifecycle.Runner, k *lease.Keeper) (*metadata.TelemetryBuilder, error) {
	tel, err := metadata.NewTelemetryBuilder(set)
	if err == nil {
		err = errors.Join(
			tel.RegisterExtensionLifecycleOrphanObjectsCallback(func(_ context.Context, o metric.Int64Observer) error {
				if scan := r.Status().Orphans; scan != nil {
					o.Observe(int64(scan.Orphans))
				}
				return nil
			}),
			tel.RegisterExtensionLifecycleLeaseHeldCallback(func(_ context.Context, o metric.Int64Observer) error {
				v := int64(0)
				if k.Held() {
					v = 1
				}
				o.Observe(v)
				return nil
			}))
	}
	if err != nil {
		tel.Shutdown()
		return nil, fmt.Errorf("lifecycle: metrics: %w", err)
	}
	return tel, nil
}

// Shutdown stops the runner (a run it interrupts is recorded as failed) and
// gives the lease up, so another replica takes over at its next renewal.
func (e *lifecycleExtension) Shutdown(ctx context.Context) error { return e.stop(ctx, true) }

// stop with release false leaves the lease to expire, as a replica that
// dies does.
func (e *lifecycleExtension) stop(ctx context.Context, release bool) error {
	if e.runner == nil {
		return nil
	}
	e.runner.Stop()
	err := e.keeper.Stop(ctx, release)
	e.tel.Shutdown()
	e.runner = nil
	return err
}

// Lifecycle returns the manager and the runner; nil before Start.
func (e *lifecycleExtension) Lifecycle() (*lifecycle.Manager, *lifecycle.Runner) {
	return e.manager, e.runner
}
