package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// slowExporter takes its time with each batch, as an exporter does when the
// collector is busy, and counts what it received.
type slowExporter struct {
	delay    time.Duration
	exported atomic.Int64
}

func (e *slowExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	time.Sleep(e.delay)
	e.exported.Add(int64(len(spans)))
	return nil
}

func (e *slowExporter) Shutdown(context.Context) error { return nil }

// burst ends n spans from 8 goroutines as fast as they can and shuts the
// provider down; it returns what was exported and what the SDK says it
// dropped.
func burst(t *testing.T, cfg exportConfig, n int) (exported, dropped int64) {
	t.Helper()
	exp := &slowExporter{delay: 20 * time.Millisecond}
	self := newSDKSelfMetrics(resource.Empty())
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, cfg.spanProcessorOptions()...))
	tracer := tp.Tracer("burst")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				_, span := tracer.Start(context.Background(), "work")
				span.End()
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	dropped, err := self.DroppedSpans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return exp.exported.Load(), dropped
}

// The SDK's default shape (a queue that drops when full) loses spans in a
// burst, and the self-metrics see exactly the loss; the app's shape loses
// none.
func TestSpanExportUnderBurst(t *testing.T) {
	const n = 20000
	exported, dropped := burst(t, exportConfig{QueueSize: 256, BatchSize: 64}, n)
	if dropped == 0 || exported+dropped != n {
		t.Fatalf("dropping queue: exported %d + dropped %d, want a loss that adds up to %d", exported, dropped, n)
	}
	t.Logf("dropping queue: %d of %d spans dropped, all counted", dropped, n)

	exported, dropped = burst(t, exportConfig{QueueSize: 256, BatchSize: 64, Block: true}, n)
	if dropped != 0 || exported != n {
		t.Fatalf("blocking queue: exported %d, dropped %d, want %d and 0", exported, dropped, n)
	}
}
