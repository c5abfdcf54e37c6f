package contentstoreextension

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoreextension/internal/metadata"
)

// storeExtension opens the store at start and hands it to the components
// that look it up among the host's extensions (contentstore.Provider).
type storeExtension struct {
	cfg   *Config
	set   extension.Settings
	store contentstore.Store
	gauge metric.Registration
}

var _ contentstore.Provider = (*storeExtension)(nil)

func newExtension(cfg *Config, set extension.Settings) *storeExtension {
	return &storeExtension{cfg: cfg, set: set}
}

func (e *storeExtension) Start(ctx context.Context, host component.Host) error {
	// Start degraded, not at all.
	st := contentstore.OpenOrReopen(ctx, e.cfg.Config, e.set.Logger, StatusReporter(host))
	reg, err := registerMetrics(e.set.MeterProvider.Meter(metadata.ScopeName), st)
	if err == nil {
		err = registerAvailability(e.set.MeterProvider.Meter(metadata.ScopeName), st)
	}
	if err != nil {
		st.Close()
		return err
	}
	e.store, e.gauge = st, reg
	return nil
}

// registerMetrics reports the store's fill level; the values carry no
// labels at all.
func registerMetrics(meter metric.Meter, st contentstore.Store) (metric.Registration, error) {
	used, err := meter.Int64ObservableGauge("docket_contentstore_used_bytes",
		metric.WithDescription("Bytes the content store holds, as this process counts them (absent until the store was reachable once)."),
		metric.WithUnit("By"))
	if err != nil {
		return nil, fmt.Errorf("contentstore: create metrics: %w", err)
	}
	quota, err := meter.Int64ObservableGauge("docket_contentstore_max_total_bytes",
		metric.WithDescription("Quota of the content store (max_total_bytes)."), metric.WithUnit("By"))
	if err != nil {
		return nil, fmt.Errorf("contentstore: create metrics: %w", err)
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if u := st.Usage(); u.Known {
			o.ObserveInt64(used, u.UsedBytes)
		}
		o.ObserveInt64(quota, st.Limits().MaxTotalBytes)
		return nil
	}, used, quota)
	if err != nil {
		return nil, fmt.Errorf("contentstore: register metrics: %w", err)
	}
	return reg, nil
}

func (e *storeExtension) Shutdown(context.Context) error {
	var errs error
	if e.gauge != nil {
		errs = e.gauge.Unregister()
	}
	if e.store != nil {
		errs = errors.Join(errs, e.store.Close())
	}
	return errs
}

// ContentStore returns the store; nil before Start.
func (e *storeExtension) ContentStore() contentstore.Store { return e.store }
