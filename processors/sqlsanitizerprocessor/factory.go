// Package sqlsanitizerprocessor provides the sqlsanitizer processor, which
// replaces every literal in database query text (db.query.text,
// db.statement) on spans and log records with '?', per dialect, and marks
// each handled record with db.query.sanitization = full | partial.
package sqlsanitizerprocessor

//go:generate mdatagen metadata.yaml

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/internal/metadata"
)

// NewFactory returns the factory of the sqlsanitizer processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
	)
}

func newProcessor(set processor.Settings, cfg component.Config) (*sqlSanitizer, error) {
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return newSQLSanitizer(cfg.(*Config), tel), nil
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newProcessor(set, cfg)
	if err != nil {
		return nil, fmt.Errorf("sqlsanitizer: create traces processor: %w", err)
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newProcessor(set, cfg)
	if err != nil {
		return nil, fmt.Errorf("sqlsanitizer: create logs processor: %w", err)
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}
