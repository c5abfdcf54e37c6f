// Package contentrefprocessor provides the contentref processor, which moves
// GenAI content (prompts, responses, system instructions, tool definitions,
// tool call arguments and results, content events and log records) out of
// spans and logs into the content store, leaving a reference and a status.
package contentrefprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/processors/contentrefprocessor/internal/metadata"
)

// NewFactory returns the factory of the contentref processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		DefaultTenant:    conventions.DefaultTenant,
		Capture:          true,
		WriteConcurrency: 8,
		MaxInflightBytes: 64 << 20,
		UnknownKeys:      UnknownStore,
		UnknownKeysScope: ScopeGenAI,
	}
}

func newProcessor(set processor.Settings, cfg component.Config) (*contentRef, error) {
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return newContentRef(cfg.(*Config), set.Logger, tel), nil
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newProcessor(set, cfg)
	if err != nil {
		return nil, fmt.Errorf("contentref: create traces processor: %w", err)
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(p.start))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newProcessor(set, cfg)
	if err != nil {
		return nil, fmt.Errorf("contentref: create logs processor: %w", err)
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(p.start))
}
