package extract

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
)

// testRef is a well-formed content reference of tenant.
func testRef(tenant, kind string, n byte) string {
	return "docket-content://" + tenant + "/" + kind + "/" + strings.Repeat(string("0123456789abcdef"[n%16]), 64)
}

func testLog(res pcommon.Resource, trace pcommon.TraceID, span pcommon.SpanID, attrs map[string]any) plog.LogRecord {
	lr := plog.NewLogRecord()
	lr.SetTraceID(trace)
	lr.SetSpanID(span)
	lr.SetEventName("gen_ai.user.message")
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC)))
	if err := lr.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
	return lr
}

// A call's log records (instrumentation-openai's gen_ai.*.message and
// gen_ai.choice, carrying the call span's IDs) and the extra references on
// the call span itself are in the call's one set of references, whichever
// arrives first; records of another span, without a span context or with a
// string that is not a reference are not.
func TestLogRecordRefsBelongToTheirCall(t *testing.T) {
	ctx := context.Background()
	x := testExtractor(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	in, out, extra, other := testRef("logs", "user.message", 1), testRef("logs", "choice", 2), testRef("logs", "unknown", 3), testRef("logs", "user.message", 4)
	res, span := testSpan(map[string]any{conventions.OperationName: "chat", conventions.ProviderName: "openai", conventions.RequestModel: "gpt-4o",
		"docket.unknown_ref": extra})
	res.Attributes().PutStr(conventions.TenantAttribute, "logs")
	span.SetTraceID(pcommon.TraceID{0x10, 0x9})
	records := []plog.LogRecord{
		testLog(res, span.TraceID(), span.SpanID(), map[string]any{conventions.ContentBodyRef: in}),
		testLog(res, span.TraceID(), span.SpanID(), map[string]any{conventions.ContentBodyRef: out, "not_a_ref": "docket-content://x"}),
		testLog(res, span.TraceID(), pcommon.SpanID{7, 7, 7, 7, 7, 7, 7, 7}, map[string]any{conventions.ContentBodyRef: other}),
	}
	var links []ledger.LogContentRef
	for _, lr := range records {
		rows, ok := x.LogRefs(res, lr, now)
		if !ok || len(rows) != 1 {
			t.Fatalf("log record %v: %d links, linked %v", lr.Attributes().AsRaw(), len(rows), ok)
		}
		links = append(links, rows...)
	}
	unlinked := testLog(res, pcommon.TraceID{}, pcommon.SpanID{}, map[string]any{conventions.ContentBodyRef: in})
	if rows, ok := x.LogRefs(res, unlinked, now); ok || rows != nil {
		t.Fatalf("a record without a span context linked %v", rows)
	}
	if rows, ok := x.LogRefs(res, testLog(res, span.TraceID(), span.SpanID(), map[string]any{"x": 1}), now); !ok || rows != nil {
		t.Fatalf("a record without references: %v %v", rows, ok)
	}
	// Logs first (twice: at-least-once delivery), then the span.
	for range 2 {
		if err := testStore.InsertLogRefs(ctx, links); err != nil {
			t.Fatal(err)
		}
	}
	c, ev, kind := x.Extract(res, "", span, now)
	if kind != KindCall {
		t.Fatal("not a call")
	}
	if err := testStore.InsertCalls(ctx, []ledger.Call{c}); err != nil {
		t.Fatal(err)
	}
	if err := testStore.InsertEvidence(ctx, []ledger.EvidenceSpan{ev}); err != nil {
		t.Fatal(err)
	}
	got, err := testStore.CallsByTrace(ctx, span.TraceID().String())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d calls", len(got))
	}
	want := []string{in, out, extra}
	slices.Sort(want)
	if refs := got[0].Refs(); !slices.Equal(got[0].MemberRefs, want) || len(refs) != 3 {
		t.Fatalf("call's references %v (member_refs %v), want %v", refs, got[0].MemberRefs, want)
	}
}
