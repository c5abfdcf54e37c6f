package sqlsanitizerprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/internal/metadata"
	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/sanitize"
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

// telemetry holds the counters (metadata.yaml) and their precomputed
// attribute sets. Every attribute value comes from a fixed set (outcome,
// dialect, signal): no query text, value or key ever becomes a label.
type telemetry struct {
	*metadata.TelemetryBuilder

	queryAttrs  [2][sanitize.NumDialects]metric.AddOption // [partial][dialect]
	signalAttrs [signalCount]metric.AddOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, fmt.Errorf("sqlsanitizer: create metrics: %w", err)
	}
	t := &telemetry{TelemetryBuilder: b}
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
				tel.ProcessorSqlsanitizerQueries.Add(ctx, n, tel.queryAttrs[p][d])
			}
		}
	}
	if t.changed > 0 {
		tel.ProcessorSqlsanitizerRecordsChanged.Add(ctx, t.changed, tel.signalAttrs[s])
	}
	if t.paramsDropped > 0 {
		tel.ProcessorSqlsanitizerParametersDropped.Add(ctx, t.paramsDropped, tel.signalAttrs[s])
	}
}
