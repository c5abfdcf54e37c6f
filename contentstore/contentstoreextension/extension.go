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
		_ = st.Close()
		return err
	}
	e.store, e.gauge = st, reg
	return nil
}

// registerMetrics reports what the store accepted and its quota; the values
// carry no labels at all. The bytes the store holds are not reported: they
// grow only for new content, so they would tell anyone who can read the
// metrics whether a given message had been stored before.
func registerMetrics(meter metric.Meter, st contentstore.Store) (metric.Registration, error) {
	accepted, err := meter.Int64ObservableCounter("docket_contentstore_accepted_bytes",
		metric.WithDescription("Bytes of content the store accepted (canonical form), counted alike whether the content was new or already stored."),
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
		o.ObserveInt64(accepted, st.Usage().AcceptedBytes)
		o.ObserveInt64(quota, st.Limits().MaxTotalBytes)
		return nil
	}, accepted, quota)
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
