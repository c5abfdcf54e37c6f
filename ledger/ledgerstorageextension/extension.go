package ledgerstorageextension

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/ledger/ledgerstorageextension/internal/metadata"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// storageExtension opens the engine at start, migrated, and hands it to the
// components that look it up among the host's extensions
// (storageconfig.Provider).
type storageExtension struct {
	cfg    *Config
	set    extension.Settings
	ledger *storageconfig.Reopening
	tel    *metadata.TelemetryBuilder
	watch  chan struct{} // closed to stop retrying the engine
}

var _ storageconfig.Provider = (*storageExtension)(nil)

// Start opens the engine, or starts without it: a collector whose ledger
// is down still receives calls, which wait in the exporter's queue. It
// reports a recoverable error until the engine opens, tried every
// storageconfig.RetryInterval and by the components' calls.
func (e *storageExtension) Start(ctx context.Context, host component.Host) error {
	r := storageconfig.OpenReopening(ctx, e.cfg.Config, storageconfig.RetryInterval)
	tel, err := metadata.NewTelemetryBuilder(e.set.TelemetrySettings)
	if err == nil {
		err = tel.RegisterExtensionLedgerstorageAvailableCallback(func(_ context.Context, o metric.Int64Observer) error {
			v := int64(0)
			if r.State().Available {
				v = 1
			}
			o.Observe(v)
			return nil
		})
	}
	if err != nil {
		tel.Shutdown()
		_ = r.Close()
		return fmt.Errorf("ledgerstorage: metrics: %w", err)
	}
	e.ledger, e.tel = r, tel
	if st := r.State(); !st.Available {
		e.set.Logger.Error("ledger storage unavailable: the collector starts without it and opens it when it can", zap.String("err", st.Error))
		componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(storageconfig.ErrUnavailable))
		e.watch = make(chan struct{})
		go r.Watch(e.watch, func() {
			e.set.Logger.Info("ledger storage available")
			componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
		})
	}
	return nil
}

func (e *storageExtension) Shutdown(context.Context) error {
	if e.watch != nil {
		close(e.watch)
	}
	if e.tel != nil {
		e.tel.Shutdown()
	}
	if e.ledger != nil {
		return e.ledger.Close()
	}
	return nil
}

// LedgerStorage returns the ledger; nil before Start.
func (e *storageExtension) LedgerStorage() *storageconfig.Reopening { return e.ledger }
