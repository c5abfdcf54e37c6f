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
	tel   *metadata.TelemetryBuilder
}

var _ contentstore.Provider = (*storeExtension)(nil)

func newExtension(cfg *Config, set extension.Settings) *storeExtension {
	return &storeExtension{cfg: cfg, set: set}
}

func (e *storeExtension) Start(ctx context.Context, host component.Host) error {
	// Start degraded, not at all.
	st := contentstore.OpenOrReopen(ctx, e.cfg.Config, e.set.Logger, StatusReporter(host))
	tel, err := newTelemetry(e.set.TelemetrySettings, st)
	if err != nil {
		_ = st.Close()
		return err
	}
	e.store, e.tel = st, tel
	return nil
}

// newTelemetry reports what the store accepted, its quota and whether it
// is open (metadata.yaml); the values carry no labels at all. The bytes the
// store holds are not reported: they grow only for new content, so they
// would tell anyone who can read the metrics whether a given message had
// been stored before.
func newTelemetry(set component.TelemetrySettings, st contentstore.Store) (*metadata.TelemetryBuilder, error) {
	tel, err := metadata.NewTelemetryBuilder(set)
	if err == nil {
		err = errors.Join(
			tel.RegisterExtensionContentstoreAcceptedBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(st.Usage().AcceptedBytes)
				return nil
			}),
			tel.RegisterExtensionContentstoreMaxTotalBytesCallback(func(_ context.Context, o metric.Int64Observer) error {
				o.Observe(st.Limits().MaxTotalBytes)
				return nil
			}),
			tel.RegisterExtensionContentstoreAvailableCallback(availability(st)))
	}
	if err != nil {
		tel.Shutdown()
		return nil, fmt.Errorf("contentstore: metrics: %w", err)
	}
	return tel, nil
}

func (e *storeExtension) Shutdown(context.Context) error {
	if e.tel != nil {
		e.tel.Shutdown()
	}
	if e.store != nil {
		return e.store.Close()
	}
	return nil
}

// ContentStore returns the store; nil before Start.
func (e *storeExtension) ContentStore() contentstore.Store { return e.store }
