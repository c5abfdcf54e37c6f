package main

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/otelconv"
)

// exportConfig sizes the SDK's batch span processor. The SDK's defaults (a
// 2,048-span queue that drops when full) lost 15% of a 500-request demo
// run at ~820 req/s on 2 cores: six spans a request outran one exporter
// goroutine. Every LLM call is evidence, so the app blocks instead of
// dropping: under overload a request waits a little for queue room rather
// than losing its trace.
type exportConfig struct {
	// QueueSize is the spans the processor holds before Block applies; it
	// absorbs bursts (about 7 s of the demo's peak rate).
	QueueSize int
	// BatchSize is the spans per OTLP export request.
	BatchSize int
	// BatchTimeout is the longest a span waits for its batch to be sent.
	// It sets how often the app exports at ordinary rates, and so how large
	// each export's burst of work is, in the app and in the collector: at
	// 150 req/s on 2 cores, every 100 ms rather than every second took
	// the traced app's p99 from 1.6–2.6× the untraced app's to 1.3–1.6×
	// in three runs (bench/appoverhead); shorter cost more CPU than it
	// gained. (The SDK's default is 5 s.)
	BatchTimeout time.Duration
	// Block makes span.End wait for queue room instead of dropping.
	Block bool
	// ExportTimeout bounds one batch's export, retries included; a batch
	// still failing then is lost. The exporter's default (10 s) lost every
	// batch in flight when the collector was down for 7 s
	// (bench/appoverhead); with a minute, an outage that the queue can
	// absorb (about 36 s of the demo's 900 spans/s) loses nothing.
	ExportTimeout time.Duration
}

var defaultExport = exportConfig{QueueSize: 32768, BatchSize: 2048, BatchTimeout: 100 * time.Millisecond, Block: true, ExportTimeout: time.Minute}

// exporterOptions retry a failed export until ExportTimeout, at most 5 s
// apart so that a collector back from an outage is found soon.
func (cfg exportConfig) exporterOptions() []otlptracegrpc.Option {
	return []otlptracegrpc.Option{
		otlptracegrpc.WithTimeout(cfg.ExportTimeout),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: time.Second, MaxInterval: 5 * time.Second, MaxElapsedTime: cfg.ExportTimeout}),
	}
}

// spanProcessorOptions are the batch processor options of cfg.
func (cfg exportConfig) spanProcessorOptions() []sdktrace.BatchSpanProcessorOption {
	opts := []sdktrace.BatchSpanProcessorOption{
		sdktrace.WithMaxQueueSize(cfg.QueueSize),
		sdktrace.WithMaxExportBatchSize(cfg.BatchSize),
		sdktrace.WithBatchTimeout(cfg.BatchTimeout),
		sdktrace.WithExportTimeout(cfg.ExportTimeout),
	}
	if cfg.Block {
		opts = append(opts, sdktrace.WithBlocking())
	}
	return opts
}

// sdkSelfMetrics reads the Go SDK's own telemetry about its span processor
// (OTEL_GO_X_OBSERVABILITY): the one place the SDK counts the spans it
// dropped. It sends it to the collector with the spans, where Docket counts
// it per tenant as dropped in the app before export, and reads it at exit
// for the app's log. It must be created before the tracer provider, whose
// batch processor registers its instruments with the global meter provider.
type sdkSelfMetrics struct {
	provider *sdkmetric.MeterProvider
	reader   *sdkmetric.ManualReader
}

// newSDKSelfMetrics turns on the SDK's self-observability unless the
// environment already decides it, and installs a meter provider that sends
// it to the collector at endpoint (every 60 s, or OTEL_METRIC_EXPORT_INTERVAL
// ms, and at exit) and reads it at exit.
func newSDKSelfMetrics(ctx context.Context, res *resource.Resource, endpoint string, useTLS bool) (*sdkSelfMetrics, error) {
	if _, set := os.LookupEnv("OTEL_GO_X_OBSERVABILITY"); !set {
		_ = os.Setenv("OTEL_GO_X_OBSERVABILITY", "true")
	}
	opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(endpoint)}
	if !useTLS {
		opts = append(opts, otlpmetricgrpc.WithInsecure())
	}
	exp, err := otlpmetricgrpc.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp metric exporter: %w", err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)),
		sdkmetric.WithResource(res), sdkmetric.WithView(onlyDroppedSpans))
	otel.SetMeterProvider(mp)
	return &sdkSelfMetrics{provider: mp, reader: reader}, nil
}

// onlyDroppedSpans drops every instrument but the processors' span count.
// The app sends no metrics of its own; the rest cost CPU on every request
// for nobody (profiled under bench/appoverhead's load): otelhttp's request
// histograms, and the SDK's per-span otel.sdk.span.started and .live,
// which the self-observability switch turns on with the one wanted here.
// A dropped instrument reports itself disabled, and the SDK skips it.
func onlyDroppedSpans(inst sdkmetric.Instrument) (sdkmetric.Stream, bool) {
	if inst.Name == processedSpansMetric {
		return sdkmetric.Stream{}, false
	}
	return sdkmetric.Stream{Aggregation: sdkmetric.AggregationDrop{}}, true
}

// Shutdown sends the last counts.
func (m *sdkSelfMetrics) Shutdown(ctx context.Context) error {
	if err := m.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("send SDK self-metrics: %w", err)
	}
	return nil
}

// processedSpansMetric is the SDK's count of spans its processors handled;
// error.type=queue_full marks the ones dropped for a full queue.
var processedSpansMetric = otelconv.SDKProcessorSpanProcessed{}.Name()

// DroppedSpans is how many spans the SDK's processors dropped because their
// queue was full.
func (m *sdkSelfMetrics) DroppedSpans(ctx context.Context) (int64, error) {
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(ctx, &rm); err != nil {
		return 0, fmt.Errorf("read SDK self-metrics: %w", err)
	}
	var dropped int64
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if mt.Name != processedSpansMetric {
				continue
			}
			sum, ok := mt.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				if v, ok := dp.Attributes.Value(semconv.ErrorTypeKey); ok && v.AsString() == "queue_full" {
					dropped += dp.Value
				}
			}
		}
	}
	return dropped, nil
}

// spanAccount counts the sampled spans the application ended and the spans
// the exporter delivered, so that every loss shows — a full queue, a failed
// export, or a shutdown flush that ran out of time, which the SDK counts
// nowhere.
type spanAccount struct {
	ended, exported atomic.Int64
}

// Exporter wraps exp to count the spans it delivered.
func (a *spanAccount) Exporter(exp sdktrace.SpanExporter) sdktrace.SpanExporter {
	return &countingExporter{SpanExporter: exp, exported: &a.exported}
}

// Processor counts ended spans; register it beside the batch processor.
func (a *spanAccount) Processor() sdktrace.SpanProcessor { return (*endCounter)(&a.ended) }

// Lost is how many ended spans were not delivered (so far).
func (a *spanAccount) Lost() int64 { return a.ended.Load() - a.exported.Load() }

type countingExporter struct {
	sdktrace.SpanExporter
	exported *atomic.Int64
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		e.exported.Add(int64(len(spans)))
	}
	return err
}

type endCounter atomic.Int64

func (c *endCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (c *endCounter) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() {
		(*atomic.Int64)(c).Add(1)
	}
}

func (c *endCounter) Shutdown(context.Context) error   { return nil }
func (c *endCounter) ForceFlush(context.Context) error { return nil }
