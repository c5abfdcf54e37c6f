// Package tenantprocessor provides the tenant processor: it runs first in
// every pipeline and sets each resource's tenant from the sender's
// authenticated identity (client.Info.Auth, from the receiver's
// authenticator), refusing or flagging a sender that names another tenant.
// It must run before anything that drops request context (batch, queues).
package tenantprocessor

//go:generate mdatagen metadata.yaml

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/processors/tenantprocessor/internal/metadata"
)

// NewFactory returns the factory of the tenant processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
		processor.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() *Config {
	return &Config{
		AuthAttribute: conventions.AuthTenantAttribute,
		OnMismatch:    MismatchRefuse,
		DefaultTenant: conventions.DefaultTenant,
	}
}

func newProcessor(set processor.Settings, cfg component.Config) (*tenantProcessor, error) {
	tel, err := newTelemetry(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &tenantProcessor{cfg: cfg.(*Config), tel: tel}, nil
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newProcessor(set, cfg)
	if err != nil {
		return nil, fmt.Errorf("tenant: create traces processor: %w", err)
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newProcessor(set, cfg)
	if err != nil {
		return nil, fmt.Errorf("tenant: create logs processor: %w", err)
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	p, err := newProcessor(set, cfg)
	if err != nil {
		return nil, fmt.Errorf("tenant: create metrics processor: %w", err)
	}
	return processorhelper.NewMetrics(ctx, set, cfg, next, p.processMetrics,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
}
