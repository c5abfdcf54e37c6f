package ledgerexporter

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.43.0/otelconv"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/ledgerexporter/internal/metadata"
)

// sdkSpansProcessed is the OpenTelemetry SDKs' self-observability metric
// of the spans their processors handled; points with an error.type are
// spans dropped before export (the Go SDK's batch processor: queue_full).
var sdkSpansProcessed = otelconv.SDKProcessorSpanProcessed{}.Name()

// appDrops is the exporter of the metrics pipeline. Of what applications
// send it reads only their SDK's own count of the spans it dropped, and
// counts it per tenant in the completeness account (stage dropped_in_app):
// losses before the collector that it would otherwise never see. The rest
// is discarded; nothing is queued, so nothing is written.
type appDrops struct {
	defaultTenant string
	logger        *zap.Logger
	tel           *metadata.TelemetryBuilder
	meter         metric.Meter
	account       *completeness.Account
	registered    bool
	// overflowLogged says the account's series bound was reported once.
	overflowLogged atomic.Bool
}

func createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	c := cfg.(*Config)
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("ledger: create metrics: %w", err)
	}
	d := &appDrops{defaultTenant: c.DefaultTenant, logger: set.Logger, tel: tel,
		meter: metadata.Meter(set.TelemetrySettings), account: completeness.Process}
	return exporterhelper.NewMetrics(ctx, set, cfg, d.push,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithStart(d.start),
		exporterhelper.WithShutdown(d.shutdown))
}

func (d *appDrops) start(context.Context, component.Host) error {
	if err := d.account.Register(d.meter, d.tel.ExporterLedgerCompletenessSpans, d.tel.ExporterLedgerCompletenessRequestsRefused); err != nil {
		return err
	}
	d.registered = true
	return nil
}

func (d *appDrops) shutdown(context.Context) error {
	d.tel.Shutdown()
	if d.registered {
		d.registered = false
		return d.account.Unregister()
	}
	return nil
}

func (d *appDrops) push(_ context.Context, md pmetric.Metrics) error {
	for _, rm := range md.ResourceMetrics().All() {
		tenant := conventions.Tenant(rm.Resource().Attributes(), d.defaultTenant)
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				if m.Name() != sdkSpansProcessed || m.Type() != pmetric.MetricTypeSum {
					continue
				}
				delta := m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityDelta
				for _, dp := range m.Sum().DataPoints().All() {
					if _, failed := dp.Attributes().Get(conventions.ErrorType); !failed {
						continue
					}
					n := dp.IntValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
						n = int64(dp.DoubleValue())
					}
					if n <= 0 {
						continue
					}
					if delta {
						d.account.Add(tenant, completeness.DroppedInApp, n)
						continue
					}
					key := seriesKey(tenant, rm.Resource().Attributes().AsRaw(), sm.Scope().Name(), dp)
					if !d.account.ReportTotal(tenant, completeness.DroppedInApp, key, n) && !d.overflowLogged.Swap(true) {
						d.logger.Warn("ledger: too many applications report dropped spans; the ones beyond the bound are not counted",
							zap.Int("max_series", completeness.MaxSeries))
					}
				}
			}
		}
	}
	return nil
}

// seriesKey identifies one running total: the sending process (its
// resource), the SDK component and its start time. fmt prints maps in key
// order, so a series always gets the same key; hashed, so a sender's
// attributes do not grow the account's memory.
func seriesKey(tenant string, resource map[string]any, scope string, dp pmetric.NumberDataPoint) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%q %v %q %v %d", tenant, resource, scope, dp.Attributes().AsRaw(), dp.StartTimestamp()))
	return string(sum[:16])
}
