package extract

import (
	"context"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

// One embedded engine per test process: chDB allows one data directory.
var testStore *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &testStore) }

func TestInsertIsIdempotentAndRoundTrips(t *testing.T) {
	ctx := context.Background()
	x := testExtractor(t)
	var calls []ledger.Call
	for i := 0; i < 50; i++ {
		attrs := map[string]any{conventions.OperationName: "chat", conventions.ProviderName: "openai",
			conventions.RequestModel: "gpt-4o", conventions.ResponseModel: "gpt-4o-2024-08-06", conventions.ResponseID: fmt.Sprintf("resp-%d", i)}
		if i%2 == 0 {
			attrs[conventions.UsageInput] = int64(100 + i)
			attrs[conventions.UsageOutput] = int64(10)
		}
		res, span := testSpan(attrs)
		res.Attributes().PutStr(conventions.TenantAttribute, "idem")
		span.SetSpanID(pcommon.SpanID{byte(i), 9, 9, 9, 9, 9, 9, 9})
		calls = append(calls, x.Call(res, span, time.Now().UTC().Truncate(time.Millisecond)))
	}
	// The same batch twice, then an overlapping batch in another order,
	// then a batch holding a call twice: an at-least-once queue can deliver
	// any of these.
	for _, batch := range [][]ledger.Call{calls, calls, append(append([]ledger.Call{}, calls[40:]...), calls[:20]...),
		append(append([]ledger.Call{}, calls[:10]...), calls[:10]...)} {
		if err := testStore.InsertCalls(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testStore.CallsByTrace(ctx, calls[0].TraceID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range got {
		if c.Tenant == "idem" {
			n++
		}
	}
	if n != 50 {
		t.Fatalf("got %d rows for 50 calls inserted 3 to 5 times", n)
	}
	byID := map[string]ledger.Call{}
	for _, c := range got {
		byID[c.SpanID] = c
	}
	want := calls[0]
	c := byID[want.SpanID]
	if !c.StartTime.Equal(want.StartTime) || c.ResponseModel != want.ResponseModel || *c.InputTokens != 100 || c.CostStatus != "ok" || c.CostUSD == nil {
		t.Fatalf("round trip: got %+v, want %+v", c, want)
	}
	odd := byID[calls[1].SpanID]
	if odd.InputTokens != nil || odd.OutputTokens != nil || odd.CostUSD != nil || odd.CostStatus != "missing_usage" {
		t.Fatalf("NULLs must stay NULL: %+v", odd)
	}
}

func TestEvidenceRoundTrip(t *testing.T) {
	ctx := context.Background()
	td, spans := spantest.Traces(map[string]any{conventions.ServiceName: "support-bot"})
	span := spantest.Retrieval(spans, "", `[{"id":"doc-7","version":"v2","score":0.5}]`)
	spantest.At(span, pcommon.TraceID{0xee, 1}, pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1}, time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC))
	e, ok := evidenceOf(testExtractor(t), td.ResourceSpans().At(0).Resource(), span, time.Now().UTC())
	if !ok {
		t.Fatal("not evidence")
	}
	for i := 0; i < 2; i++ {
		if err := testStore.InsertEvidence(ctx, []ledger.EvidenceSpan{e}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testStore.EvidenceByTrace(ctx, e.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Documents[0].ID != "doc-7" || got[0].Documents[0].Version != "v2" || *got[0].Documents[0].Score != 0.5 {
		t.Fatalf("got %+v", got)
	}
}

// Every column survives the RowBinary insert and the JSON read back.
func TestEveryColumnRoundTrips(t *testing.T) {
	ctx := context.Background()
	res, span := testSpan(map[string]any{
		conventions.OperationName: "chat", conventions.ProviderName: "openai", conventions.RequestModel: "gpt-4o",
		conventions.ResponseModel: "gpt-4o-2024-08-06", conventions.ResponseID: "chatcmpl-\x00rt\xff",
		conventions.FinishReasons: []any{"stop", "length"}, conventions.TimeToFirstChunk: 0.125,
		conventions.UsageInput: int64(1000), conventions.UsageOutput: int64(200),
		conventions.UsageCacheRead: int64(400), conventions.UsageCacheCreation: int64(100),
		conventions.UsageReasoning: int64(50), conventions.RequestTemperature: 0.2, conventions.RequestTopP: 0.9,
		conventions.RequestTopK: 40.0, conventions.RequestMaxTokens: int64(512), conventions.RequestSeed: int64(-7),
		conventions.RequestStop: []any{"\n\n", "END"}, "gen_ai.request.frequency_penalty": 0.5,
		"gen_ai.request.choice.count": int64(2), conventions.EndUser: "u-93f", "http.request.resend_count": int64(3),
		conventions.HTTPResponseStatusCode: int64(429), conventions.ErrorType: "rate_limit_exceeded",
		AttrInputRef: "docket-content://acme/input/aa", AttrOutputRef: "docket-content://acme/output/bb",
		AttrSystemInstructionsRef: "docket-content://acme/system_instructions/cc", AttrToolDefinitionsRef: "docket-content://acme/tool_definitions/dd",
		AttrContentStatus: "stored", AttrContentBytes: int64(4096),
	})
	res.Attributes().PutStr(conventions.TenantAttribute, "roundtrip")
	span.SetTraceID(pcommon.TraceID{0xab, 0xcd})
	span.Status().SetCode(2)
	want := testExtractor(t).Call(res, span, time.Now().UTC().Truncate(time.Millisecond))
	if err := testStore.InsertCalls(ctx, []ledger.Call{want}); err != nil {
		t.Fatal(err)
	}
	got, err := testStore.CallsByTrace(ctx, want.TraceID)
	if err != nil || len(got) != 1 {
		t.Fatalf("read back: %v, %d rows", err, len(got))
	}
	g := got[0]
	// The column is a decimal: 0.0123 may read back as 0.012300000000.
	sameCost := want.CostUSD == nil && g.CostUSD == nil
	if want.CostUSD != nil && g.CostUSD != nil {
		w, okW := new(big.Rat).SetString(*want.CostUSD)
		r, okR := new(big.Rat).SetString(*g.CostUSD)
		sameCost = okW && okR && w.Cmp(r) == 0
	}
	if !sameCost {
		t.Fatalf("cost %v, want %v", g.CostUSD, want.CostUSD)
	}
	g.CostUSD, want.CostUSD = nil, nil
	// A call read back lists the other spans describing it: none here.
	want.EvidenceSpanIDs, want.MemberRefs = []string{}, want.Refs()
	slices.Sort(want.MemberRefs)
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", g, want)
	}
}
