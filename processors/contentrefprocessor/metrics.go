package contentrefprocessor

//go:generate mdatagen metadata.yaml

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/processors/contentrefprocessor/internal/metadata"
)

type signal int

const (
	signalTraces signal = iota
	signalLogs
	signalCount
)

var signalNames = [signalCount]string{signalTraces: "traces", signalLogs: "logs"}

// telemetry holds the counters (metadata.yaml) and their precomputed
// attribute sets. Labels are signal, status and family, all from fixed
// sets: no tenant, key, reference or content ever becomes a label.
type telemetry struct {
	*metadata.TelemetryBuilder
	attrs       [signalCount][]metric.AddOption // [signal][severity(status)]
	signalAttrs [signalCount]metric.AddOption
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, fmt.Errorf("contentref: create metrics: %w", err)
	}
	t := &telemetry{TelemetryBuilder: b}
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
			t.ProcessorContentrefItems.Add(ctx, n.items[i], attrs)
			t.ProcessorContentrefBytes.Add(ctx, n.bytes[i], attrs)
		}
		if n.records[i] > 0 {
			t.ProcessorContentrefRecords.Add(ctx, n.records[i], attrs)
		}
	}
}

func (t *telemetry) countPlanted(ctx context.Context, s signal, n int64) {
	if n > 0 {
		t.ProcessorContentrefPlantedAttributes.Add(ctx, n, t.signalAttrs[s])
	}
}

// countUnknown adds a batch's unknown attributes, and those of them
// dropped; family names come from the conventions contract, a fixed set.
func (t *telemetry) countUnknown(ctx context.Context, s signal, byFamily, dropped map[string]int64, droppedRecords int64) {
	for family, n := range byFamily {
		t.ProcessorContentrefUnknownKeys.Add(ctx, n, metric.WithAttributes(attribute.String("family", family), attribute.String("signal", signalNames[s])))
	}
	for family, n := range dropped {
		t.ProcessorContentrefDroppedKeys.Add(ctx, n, metric.WithAttributes(attribute.String("family", family), attribute.String("signal", signalNames[s])))
	}
	if droppedRecords > 0 {
		t.ProcessorContentrefDroppedRecords.Add(ctx, droppedRecords, t.signalAttrs[s])
	}
}
