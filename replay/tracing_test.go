package replay

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"

	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/extract"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

// TestReplaysAreTracedOverOTLP sends the replay spans to a real OTLP
// receiver, extracts ledger rows from what arrived as the ledger exporter
// does, and finds exactly the rows the run wrote itself: same keys, same
// link to the replayed call, same usage.
func TestReplaysAreTracedOverOTLP(t *testing.T) {
	ctx := context.Background()
	sink := new(consumertest.TracesSink)
	factory := otlpreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
	endpoint := "127.0.0.1:" + proctest.FreePort(t)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = endpoint
	cfg.Protocols.HTTP = configoptional.None[otlpreceiver.HTTPConfig]()
	recv, err := factory.CreateTraces(ctx, receivertest.NewNopSettings(factory.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := recv.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer recv.Shutdown(ctx)

	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nil)
	e.runner.Tracing = NewTracing(exp)
	trace := ledgertest.TraceID(t)
	insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "Where is my refund?", "It is on its way."))
	rep, err := e.runner.ReplayTrace(ctx, auditor, trace, Options{N: 3, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.runner.Tracing.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	written, err := ledgerStore.CallsByTrace(ctx, rep.RunID)
	if err != nil || len(written) != 3 {
		t.Fatalf("the run wrote %d rows under its trace %s: %v", len(written), rep.RunID, err)
	}
	x := &extract.Extractor{DefaultTenant: "default"}
	var traced []ledger.Call
	var runSpans int
	deadline := time.Now().Add(10 * time.Second)
	for len(traced) < 3 && time.Now().Before(deadline) {
		traced, runSpans = traced[:0], 0
		for _, td := range sink.AllTraces() {
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, span := range ss.Spans().All() {
						call, _, kind := x.Extract(rs.Resource(), ss.Scope().Name(), span, time.Now())
						if kind != extract.KindCall {
							runSpans++
							continue
						}
						traced = append(traced, call)
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(traced) != 3 || runSpans != 1 {
		t.Fatalf("received %d replay spans and %d other spans, want 3 and the run's 1", len(traced), runSpans)
	}
	key := func(c ledger.Call) string { return c.Tenant + "/" + c.TraceID + "/" + c.SpanID }
	byKey := map[string]ledger.Call{}
	for _, c := range written {
		byKey[key(c)] = c
	}
	for _, got := range traced {
		want, ok := byKey[key(got)]
		if !ok {
			t.Fatalf("span %s has no row of the run: a collector would write a second row", key(got))
		}
		if got.RequestParams[paramOfTraceID] != trace || got.RequestParams[paramOfSpanID] != "00f067aa0ba902b7" ||
			got.RequestParams[paramRunID] != rep.RunID {
			t.Errorf("span %s does not name the replayed call: %v", got.SpanID, got.RequestParams)
		}
		if got.ParentSpanID != want.ParentSpanID || got.ParentSpanID == "" || got.ServiceName != replayService ||
			got.ResponseModel != want.ResponseModel || got.ResponseID != want.ResponseID || got.Status != want.Status ||
			*got.InputTokens != *want.InputTokens || *got.OutputTokens != *want.OutputTokens || got.ContentStatus != want.ContentStatus ||
			!slices.Equal(got.FinishReasons, want.FinishReasons) {
			t.Errorf("traced row differs from the written one:\n got %+v\nwant %+v", got, want)
		}
	}
}
