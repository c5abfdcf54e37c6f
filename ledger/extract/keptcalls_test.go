package extract

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
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
	// The ledger views read a time window of the kept rows by the same rule.
	if got := keptInWindow(t, trace.String()); !slices.Equal(got, []string{outer.SpanID().String()}) {
		t.Fatalf("kept_calls over the window with an older rewrite landed late: %v, want the outer span's call", got)
	}
	// So do the ledger's totals (GET /api/v1/ledger/stats), which agree with the
	// merge of the ledger's rows.
	if err := ledgertest.CountsMatchTheMerge(ctx, testStore); err != nil {
		t.Fatalf("with an older rewrite landed late: %v", err)
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
	if got := keptInWindow(t, trace.String()); len(got) != 0 {
		t.Fatalf("kept_calls after its rows were removed: %v", got)
	}
}

// keptInWindow returns the span IDs of trace's calls in kept_calls over a
// window of decades around the test spans' start.
func keptInWindow(t *testing.T, trace string) []string {
	t.Helper()
	q, err := storage.Bind("SELECT span_id FROM kept_calls(from = {from:DateTime64}, to = {to:DateTime64}) WHERE trace_id = {trace:String} ORDER BY span_id",
		map[string]any{"from": time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), "to": time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), "trace": trace})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if err = testStore.Engine().QueryJSON(context.Background(), q, func(row []byte) error {
		var r struct {
			SpanID string `json:"span_id"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		out = append(out, r.SpanID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
