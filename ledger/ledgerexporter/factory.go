// Package ledgerexporter is the collector exporter that writes one ledger
// row per LLM call span — every one of them — plus the evidence spans of
// those traces, to ClickHouse.
package ledgerexporter

//go:generate mdatagen metadata.yaml

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
)

const typeStr = "ledger"

var componentType = component.MustNewType(typeStr)

// NewFactory returns the factory of the ledger exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(componentType, createDefaultConfig,
		exporter.WithTraces(createTraces, component.StabilityLevelDevelopment),
		exporter.WithLogs(createLogs, component.StabilityLevelDevelopment),
		exporter.WithMetrics(createMetrics, component.StabilityLevelDevelopment))
}

func createDefaultConfig() component.Config {
	retry := configretry.NewDefaultBackOffConfig()
	retry.MaxElapsedTime = 0
	retry.MaxInterval = 30 * time.Second
	queue := exporterhelper.NewDefaultQueueConfig()
	queue.BlockOnOverflow = false // a full queue answers with a retry delay (backpressure.go)
	queue.Sizer = exporterhelper.RequestSizerTypeItems
	queue.QueueSize = 200_000
	// Each insert costs the engine a fixed ~20 ms of CPU and leaves a part
	// to merge: big, rare inserts keep the ledger cheap. bench/ledger
	// measured 35 ms of collector CPU per 1,000 spans with batches of
	// 5,000-10,000 and 26 ms with 20,000-50,000. Below 20,000 spans in
	// the flush timeout, the timeout sets the insert rate: at the demo's
	// 900 spans/s, 5 s instead of 1 s cut the collector's CPU per request
	// by 40% (bench/appoverhead), which on a shared host is CPU the
	// application gets back; rows become queryable up to 5 s later.
	queue.Batch = configoptional.Some(exporterhelper.BatchConfig{
		FlushTimeout: 5 * time.Second,
		Sizer:        exporterhelper.RequestSizerTypeItems,
		MinSize:      20_000,
		MaxSize:      50_000,
	})
	// A write is a batch of up to 50,000 rows plus the refresh of their
	// traces' calls; on a busy 2-core host the embedded engine took more
	// than the collector's usual 5 s for 18,000 evidence rows, and since a
	// timed-out attempt is retried whole, a deadline shorter than the work
	// kept the queue from ever draining (docket dev, 10,000 demo requests).
	timeout := exporterhelper.NewDefaultTimeoutConfig()
	timeout.Timeout = 60 * time.Second
	return &Config{
		TimeoutConfig: timeout,
		QueueConfig:   configoptional.Some(queue),
		RetryConfig:   retry,
		DefaultTenant: conventions.DefaultTenant,
		Backpressure:  BackpressureConfig{RetryAfter: time.Second, DiskReserveMiB: 16},
		Validation:    ValidationConfig{MaxClockSkew: conventions.DefaultMaxClockSkew, MaxAge: conventions.DefaultMaxAge},
		RequestSpans:  defaultRequestSpans,
	}
}

func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	c := cfg.(*Config)
	exp, err := newTracesExporter(c, set)
	if err != nil {
		return nil, err
	}
	// Rows are extracted as spans arrive and the queue holds them encoded
	// (rows.go), not the spans.
	traces, err := xexporterhelper.NewTracesRequest(ctx, set, exp.convert, exp.push,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithStart(exp.start),
		exporterhelper.WithShutdown(exp.shutdown),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		xexporterhelper.WithQueueBatch(c.QueueConfig, xexporterhelper.QueueBatchSettings{Encoding: rowsEncoding{legacy: exp.convertQueued}}),
		exporterhelper.WithRetry(c.RetryConfig),
	)
	if err != nil {
		return nil, err
	}
	g := &guardedTraces{Traces: traces, guard: exp.guard, retryAfter: c.Backpressure.RetryAfter, account: exp.account, refused: exp.tel.ExporterLedgerSpansRefused,
		tenantOf: func(td ptrace.Traces) map[string]int64 { return spansByTenant(td, c.DefaultTenant) }}
	if c.QueueConfig.HasValue() {
		g.storageID = c.QueueConfig.Get().StorageID
	}
	return g, nil
}

// createLogs is the exporter of the logs pipeline: it links the content
// references on log records to their spans (logs.go). Its queue and
// retries are configured as the traces pipeline's.
func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	exp, err := newLedgerExporter(c, set)
	if err != nil {
		return nil, err
	}
	return xexporterhelper.NewLogsRequest(ctx, set, exp.convertLogs, exp.pushLogs,
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithStart(exp.start),
		exporterhelper.WithShutdown(exp.shutdown),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		xexporterhelper.WithQueueBatch(c.QueueConfig, xexporterhelper.QueueBatchSettings{Encoding: logLinksEncoding{}}),
		exporterhelper.WithRetry(c.RetryConfig),
	)
}
