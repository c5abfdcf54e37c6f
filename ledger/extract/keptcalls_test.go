package extract

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
)

// The calls of a trace are read from the rows kept for it (migration
// 0012), which follow the view as the trace's spans arrive: a call whose
// outer span arrives in a later batch moves to that span's key, leaving no
// row under the inner span's; a rewrite that read the ledger earlier but
// landed later (two writers racing) is not shown; and a call whose rows
// are gone is gone.
func TestKeptCallsFollowTheirTrace(t *testing.T) {
	ctx := context.Background()
	x := testExtractor(t)
	now := time.Now().UTC()
	trace := pcommon.TraceID{0x12, 0x34, 0x56}
	attrs := map[string]any{conventions.OperationName: "chat", conventions.ProviderName: "openai", conventions.RequestModel: "gpt-4o"}
	res, inner := testSpan(attrs)
	inner.SetTraceID(trace)
	inner.SetSpanID(pcommon.SpanID{0xc1})
	inner.SetParentSpanID(pcommon.SpanID{0xc0})
	_, outer := testSpan(attrs)
	outer.SetTraceID(trace)
	outer.SetSpanID(pcommon.SpanID{0xc0})
	outer.SetParentSpanID(pcommon.SpanID{0xaa})
	for i, span := range []struct {
		name string
		span ptrace.Span
	}{{"inner", inner}, {"outer", outer}} {
		c, _, kind := x.Extract(res, "", span.span, now)
		if kind != KindCall {
			t.Fatalf("the %s span is not a call", span.name)
		}
		if err := testStore.InsertCalls(ctx, []ledger.Call{c}); err != nil {
			t.Fatal(err)
		}
		got, err := testStore.CallsByTrace(ctx, trace.String())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].SpanID != c.SpanID {
			t.Fatalf("after the %s span (batch %d): %+v, want one call keyed by %s", span.name, i+1, got, c.SpanID)
		}
		if i == 1 && !slices.Equal(got[0].EvidenceSpanIDs, []string{inner.SpanID().String()}) {
			t.Fatalf("the outer span's call has evidence spans %v, want the inner span", got[0].EvidenceSpanIDs)
		}
	}

	// An older rewrite that landed last, under a key the newest one did not
	// see, so left no tombstone for.
	if err := testStore.Engine().Exec(ctx, "INSERT INTO provider_call_rows SELECT * REPLACE ('"+pcommon.SpanID{0xc2}.String()+
		"' AS span_id, version - INTERVAL 1 SECOND AS version) FROM provider_call_rows FINAL WHERE trace_id = '"+trace.String()+"'"); err != nil {
		t.Fatal(err)
	}
	if got, err := testStore.CallsByTrace(ctx, trace.String()); err != nil || len(got) != 1 || got[0].SpanID != outer.SpanID().String() {
		t.Fatalf("with an older rewrite landed late: %+v, %v", got, err)
	}

	if err := testStore.Engine().Exec(ctx, "DELETE FROM llm_calls WHERE trace_id = '"+trace.String()+"'"); err != nil {
		t.Fatal(err)
	}
	if err := testStore.RefreshCalls(ctx, []string{trace.String()}); err != nil {
		t.Fatal(err)
	}
	if got, err := testStore.CallsByTrace(ctx, trace.String()); err != nil || len(got) != 0 {
		t.Fatalf("after its rows were removed: %+v, %v", got, err)
	}
}
