package sqlsanitizerprocessor

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/internal/metadata"
	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/sanitize"
)

// Metric names. Every attribute value comes from a fixed set (outcome,
// dialect, signal): no query text, value or key ever becomes a label.
const (
	metricQueries        = "docket_sqlsanitizer_queries"
	metricRecordsChanged = "docket_sqlsanitizer_records_changed"
	metricParamsDropped  = "docket_sqlsanitizer_parameters_dropped"
)

const (
	outcomeFull    = "full"
	outcomePartial = "partial"
)

type signal int

const (
	signalTraces signal = iota
	signalLogs
	signalCount
)

var signalNames = [signalCount]string{signalTraces: "traces", signalLogs: "logs"}

// telemetry holds the counters and their precomputed attribute sets.
type telemetry struct {
	queries        metric.Int64Counter
	recordsChanged metric.Int64Counter
	paramsDropped  metric.Int64Counter

	queryAttrs  [2][sanitize.NumDialects]metric.AddOption // [partial][dialect]
	signalAttrs [signalCount]metric.AddOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	meter := set.MeterProvider.Meter(metadata.ScopeName)
	t := &telemetry{}
	var err, errs error
	t.queries, err = meter.Int64Counter(metricQueries,
		metric.WithDescription("Query texts sanitized, by outcome (full or partial) and dialect."),
		metric.WithUnit("{query}"))
	errs = errors.Join(errs, err)
	t.recordsChanged, err = meter.Int64Counter(metricRecordsChanged,
		metric.WithDescription("Spans, span events and log records whose query text was rewritten or whose query parameters were removed."),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	t.paramsDropped, err = meter.Int64Counter(metricParamsDropped,
		metric.WithDescription("db.query.parameter.* attributes removed."),
		metric.WithUnit("{attribute}"))
	errs = errors.Join(errs, err)
	if errs != nil {
		return nil, fmt.Errorf("sqlsanitizer: create metrics: %w", errs)
	}
	for p, outcome := range []string{outcomeFull, outcomePartial} {
		for _, d := range sanitize.Dialects() {
			t.queryAttrs[p][d] = metric.WithAttributeSet(attribute.NewSet(
				attribute.String("outcome", outcome), attribute.String("dialect", d.String())))
		}
	}
	for s, name := range signalNames {
		t.signalAttrs[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", name)))
	}
	return t, nil
}

// tally counts one batch; it is flushed to the counters once per batch.
type tally struct {
	queries       [2][sanitize.NumDialects]int64 // [partial][dialect]
	changed       int64
	paramsDropped int64
}

func (t *tally) query(d sanitize.Dialect, partial bool) {
	p := 0
	if partial {
		p = 1
	}
	t.queries[p][d]++
}

func (t *tally) count(changed bool) {
	if changed {
		t.changed++
	}
}

func (tel *telemetry) record(ctx context.Context, s signal, t *tally) {
	for p := range t.queries {
		for d, n := range t.queries[p] {
			if n > 0 {
				tel.queries.Add(ctx, n, tel.queryAttrs[p][d])
			}
		}
	}
	if t.changed > 0 {
		tel.recordsChanged.Add(ctx, t.changed, tel.signalAttrs[s])
	}
	if t.paramsDropped > 0 {
		tel.paramsDropped.Add(ctx, t.paramsDropped, tel.signalAttrs[s])
	}
}
