package contentrefprocessor

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/processors/contentrefprocessor/internal/metadata"
)

// Metric names. Labels are signal and (except metricPlanted) status, both
// from fixed sets: no tenant, key, reference or content ever becomes a
// label.
const (
	metricItems   = "docket_contentref_items"
	metricBytes   = "docket_contentref_bytes"
	metricRecords = "docket_contentref_records"
	metricPlanted = "docket_contentref_planted_attributes"
	metricUnknown = "docket_contentref_unknown_keys"
	metricDropped = "docket_contentref_dropped_keys"
	// metricDroppedRecords counts spans and log records that lost
	// attributes (their own or their events') under unknown_keys: drop.
	metricDroppedRecords = "docket_contentref_dropped_records"
)

type signal int

const (
	signalTraces signal = iota
	signalLogs
	signalCount
)

var signalNames = [signalCount]string{signalTraces: "traces", signalLogs: "logs"}

type telemetry struct {
	items, bytes, records, planted, unknown metric.Int64Counter
	dropped, droppedRecords                 metric.Int64Counter
	attrs                                   [signalCount][]metric.AddOption // [signal][severity(status)]
	signalAttrs                             [signalCount]metric.AddOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	meter := set.MeterProvider.Meter(metadata.ScopeName)
	t := &telemetry{}
	var err, errs error
	t.items, err = meter.Int64Counter(metricItems,
		metric.WithDescription("Content items taken off spans, span events and log records, by what became of them."),
		metric.WithUnit("{item}"))
	errs = errors.Join(errs, err)
	t.bytes, err = meter.Int64Counter(metricBytes,
		metric.WithDescription("Bytes of content taken off the telemetry (as received), by what became of them."),
		metric.WithUnit("By"))
	errs = errors.Join(errs, err)
	t.records, err = meter.Int64Counter(metricRecords,
		metric.WithDescription("Spans and log records that carried content, by summary status."),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	t.planted, err = meter.Int64Counter(metricPlanted,
		metric.WithDescription("Attributes that arrived in Docket's namespace or as content references, which only the collector may write, and were removed."),
		metric.WithUnit("{attribute}"))
	errs = errors.Join(errs, err)
	t.unknown, err = meter.Int64Counter(metricUnknown,
		metric.WithDescription("Attributes of GenAI telemetry that were neither content keys nor metadata, treated as content (stored or dropped), by family."),
		metric.WithUnit("{attribute}"))
	errs = errors.Join(errs, err)
	t.dropped, err = meter.Int64Counter(metricDropped,
		metric.WithDescription("Unknown attributes of GenAI telemetry removed without being stored (unknown_keys: drop), by family."),
		metric.WithUnit("{attribute}"))
	errs = errors.Join(errs, err)
	t.droppedRecords, err = meter.Int64Counter(metricDroppedRecords,
		metric.WithDescription("Spans and log records that lost unknown attributes without their being stored (unknown_keys: drop)."),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	if errs != nil {
		return nil, fmt.Errorf("contentref: create metrics: %w", errs)
	}
	for s, name := range signalNames {
		t.signalAttrs[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String("signal", name)))
		for _, st := range statuses {
			t.attrs[s] = append(t.attrs[s], metric.WithAttributeSet(attribute.NewSet(
				attribute.String("signal", name), attribute.String("status", st))))
		}
	}
	return t, nil
}

// tally counts one batch by status; it is flushed once per batch.
type tally struct {
	items, bytes, records []int64 // by severity(status)
}

func (t *telemetry) newTally() *tally {
	n := len(statuses)
	return &tally{items: make([]int64, n), bytes: make([]int64, n), records: make([]int64, n)}
}

func (t *tally) item(status string, size int64) {
	if i := severity(status); i >= 0 {
		t.items[i]++
		t.bytes[i] += size
	}
}

func (t *tally) record(status string) {
	if i := severity(status); i >= 0 {
		t.records[i]++
	}
}

func (t *telemetry) flush(ctx context.Context, s signal, n *tally) {
	for i, attrs := range t.attrs[s] {
		if n.items[i] > 0 {
			t.items.Add(ctx, n.items[i], attrs)
			t.bytes.Add(ctx, n.bytes[i], attrs)
		}
		if n.records[i] > 0 {
			t.records.Add(ctx, n.records[i], attrs)
		}
	}
}

func (t *telemetry) countPlanted(ctx context.Context, s signal, n int64) {
	if n > 0 {
		t.planted.Add(ctx, n, t.signalAttrs[s])
	}
}

// countUnknown adds a batch's unknown attributes, and those of them
// dropped; family names come from the conventions contract, a fixed set.
func (t *telemetry) countUnknown(ctx context.Context, s signal, byFamily, dropped map[string]int64, droppedRecords int64) {
	for family, n := range byFamily {
		t.unknown.Add(ctx, n, metric.WithAttributes(attribute.String("family", family), attribute.String("signal", signalNames[s])))
	}
	for family, n := range dropped {
		t.dropped.Add(ctx, n, metric.WithAttributes(attribute.String("family", family), attribute.String("signal", signalNames[s])))
	}
	if droppedRecords > 0 {
		t.droppedRecords.Add(ctx, droppedRecords, t.signalAttrs[s])
	}
}
