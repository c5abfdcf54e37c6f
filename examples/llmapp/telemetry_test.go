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
// provider down within flush; it returns what was exported, what the SDK
// says it dropped, and what the app's account says was lost.
func burst(t *testing.T, cfg exportConfig, n int, flush time.Duration) (exported, dropped, lost int64) {
	t.Helper()
	exp := &slowExporter{delay: 20 * time.Millisecond}
	// Nothing listens there: the counts are read from the app's side only.
	self, err := newSDKSelfMetrics(context.Background(), resource.Empty(), "127.0.0.1:1", false)
	if err != nil {
		t.Fatal(err)
	}
	var account spanAccount
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(account.Exporter(exp), cfg.spanProcessorOptions()...),
		sdktrace.WithSpanProcessor(account.Processor()))
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
	ctx, cancel := context.WithTimeout(context.Background(), flush)
	defer cancel()
	_ = tp.Shutdown(ctx) // a flush that runs out of time is one of the losses measured
	dropped, err = self.DroppedSpans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return exp.exported.Load(), dropped, account.Lost()
}

// The SDK's default shape (a queue that drops when full) loses spans in a
// burst, and the self-metrics see exactly the loss; the app's shape loses
// none.
func TestSpanExportUnderBurst(t *testing.T) {
	const n = 20000
	exported, dropped, lost := burst(t, exportConfig{QueueSize: 256, BatchSize: 64}, n, time.Minute)
	if dropped == 0 || exported+dropped != n || lost != dropped {
		t.Fatalf("dropping queue: exported %d + dropped %d (account: %d lost), want a loss that adds up to %d", exported, dropped, lost, n)
	}
	t.Logf("dropping queue: %d of %d spans dropped, all counted", dropped, n)

	exported, dropped, lost = burst(t, exportConfig{QueueSize: 256, BatchSize: 64, Block: true}, n, time.Minute)
	if dropped != 0 || lost != 0 || exported != n {
		t.Fatalf("blocking queue: exported %d, dropped %d, lost %d; want %d, 0, 0", exported, dropped, lost, n)
	}
}

// A queue that still holds spans when the shutdown flush runs out of time
// loses them without the SDK counting a drop: only the app's account sees
// it.
func TestShutdownFlushLossIsCounted(t *testing.T) {
	const n = 20000
	exported, dropped, lost := burst(t, exportConfig{QueueSize: n, BatchSize: 64, Block: true}, n, 50*time.Millisecond)
	if dropped != 0 || lost == 0 || exported+lost != n {
		t.Fatalf("exported %d, dropped %d, lost %d: want the unflushed spans counted as lost and no SDK drop", exported, dropped, lost)
	}
	t.Logf("flush timeout: %d of %d spans lost, none counted by the SDK", lost, n)
}
