package replay

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
)

// TenantAttribute is the resource attribute replay spans name their tenant
// with.
const TenantAttribute = conventions.TenantAttribute

// Tracing sends every replay as an OTLP span, as an instrumented
// application would send its LLM calls, so a running collector sees them:
// a run is one trace, each replay a client span with the GenAI attributes
// of its ledger row and a link to the call it replays. The spans carry the
// row's trace and span IDs, so a ledger exporter that receives them writes
// the same key as the run's own row and the ledger keeps one row per
// replay. Spans never carry content.
type Tracing struct {
	exporter sdktrace.SpanExporter

	mu        sync.Mutex
	providers map[string]*sdktrace.TracerProvider // by tenant; "" for the run span
}

// NewTracing sends spans through exporter.
func NewTracing(exporter sdktrace.SpanExporter) *Tracing {
	return &Tracing{exporter: exporter, providers: map[string]*sdktrace.TracerProvider{}}
}

func (t *Tracing) tracer(tenant string) trace.Tracer {
	t.mu.Lock()
	defer t.mu.Unlock()
	tp, ok := t.providers[tenant]
	if !ok {
		attrs := []attribute.KeyValue{attribute.String("service.name", replayService)}
		if tenant != "" {
			attrs = append(attrs, attribute.String(TenantAttribute, tenant))
		}
		// Batching per provider with one shared exporter; Shutdown
		// flushes them all.
		tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(sharedExporter{t.exporter}),
			sdktrace.WithResource(resource.NewSchemaless(attrs...)), sdktrace.WithSampler(sdktrace.AlwaysSample()))
		t.providers[tenant] = tp
	}
	return tp.Tracer("github.com/docketlabs/docket/replay")
}

// sharedExporter keeps one provider's shutdown from closing the exporter
// the others still send through.
type sharedExporter struct{ sdktrace.SpanExporter }

func (sharedExporter) Shutdown(context.Context) error { return nil }

// Shutdown flushes every span and closes the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, tp := range t.providers {
		errs = append(errs, tp.Shutdown(ctx))
	}
	errs = append(errs, t.exporter.Shutdown(ctx))
	return errors.Join(errs...)
}

// startRun starts the run's span; its trace ID is the run ID.
func (t *Tracing) startRun(ctx context.Context, sel Selection) (context.Context, trace.Span) {
	return t.tracer("").Start(ctx, "docket replay", trace.WithAttributes(attribute.String(conventions.ReplayPrefix+"selection", sel.String())))
}

// emit sends the span of one replay under the run's span, and gives the
// row that span's IDs.
func (t *Tracing) emit(ctx context.Context, row *ledger.Call, sendErr error) {
	_, span := t.tracer(row.Tenant).Start(ctx, row.SpanName, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(row.StartTime), trace.WithAttributes(replayAttributes(row)...),
		trace.WithLinks(trace.Link{SpanContext: originalSpan(row)}))
	if sendErr != nil {
		// The error's words may quote a provider message; the type says
		// enough and carries no content.
		span.SetStatus(codes.Error, "replay failed")
	} else {
		span.SetStatus(codes.Ok, "")
	}
	span.End(trace.WithTimestamp(row.EndTime))
	sc := span.SpanContext()
	row.TraceID, row.SpanID = sc.TraceID().String(), sc.SpanID().String()
	row.ParentSpanID = trace.SpanContextFromContext(ctx).SpanID().String()
}

func originalSpan(row *ledger.Call) trace.SpanContext {
	tid, _ := trace.TraceIDFromHex(row.RequestParams[paramOfTraceID])
	sid, _ := trace.SpanIDFromHex(row.RequestParams[paramOfSpanID])
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, Remote: true})
}

// replayAttributes are the GenAI attributes the ledger extracts a row
// from, with the link to the replayed call as docket.replay.* attributes.
func replayAttributes(c *ledger.Call) []attribute.KeyValue {
	a := []attribute.KeyValue{
		attribute.String(conventions.OperationName, c.Operation),
		attribute.String(conventions.ProviderName, c.Provider),
		attribute.String(conventions.RequestModel, c.RequestModel),
		attribute.String(conventions.ContentStatus, c.ContentStatus),
	}
	for k, v := range c.RequestParams {
		a = append(a, attribute.String(k, v))
	}
	str := func(key, v string) {
		if v != "" {
			a = append(a, attribute.String(key, v))
		}
	}
	i64 := func(key string, v *int64) {
		if v != nil {
			a = append(a, attribute.Int64(key, *v))
		}
	}
	f64 := func(key string, v *float64) {
		if v != nil {
			a = append(a, attribute.Float64(key, *v))
		}
	}
	str(conventions.ResponseModel, c.ResponseModel)
	str(conventions.ResponseID, c.ResponseID)
	str(conventions.ErrorType, c.ErrorType)
	i64(conventions.UsageInput, c.InputTokens)
	i64(conventions.UsageOutput, c.OutputTokens)
	i64(conventions.UsageCacheRead, c.CacheReadTokens)
	i64(conventions.UsageCacheCreation, c.CacheWriteTokens)
	i64(conventions.UsageReasoning, c.ReasoningTokens)
	i64(conventions.Columns[conventions.ColHTTPStatus][0].Name, c.HTTPStatus)
	i64(conventions.RequestMaxTokens, c.MaxTokens)
	i64(conventions.RequestSeed, c.Seed)
	f64(conventions.RequestTemperature, c.Temperature)
	f64(conventions.RequestTopP, c.TopP)
	f64(conventions.RequestTopK, c.TopK)
	if c.TTFTMS != nil {
		a = append(a, attribute.Float64(conventions.TimeToFirstChunk, *c.TTFTMS/float64(time.Second/time.Millisecond)))
	}
	if len(c.FinishReasons) > 0 {
		a = append(a, attribute.StringSlice(conventions.FinishReasons, c.FinishReasons))
	}
	if len(c.StopSequences) > 0 {
		a = append(a, attribute.StringSlice(conventions.RequestStop, c.StopSequences))
	}
	return a
}
