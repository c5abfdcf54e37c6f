package extract

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
)

// serverSpan is an HTTP server span as instrumentations send it, with
// everything the ledger must not keep: the query string, full URL, raw
// path, headers, bodies, the client's address and agent.
func serverSpan(name string) (pcommon.Resource, ptrace.Span) {
	res, span := testSpan(map[string]any{
		conventions.HTTPRequestMethod: "POST", conventions.HTTPRoute: "/ask?token=route-secret", conventions.HTTPResponseStatusCode: int64(200),
		"url.full": "https://app.example/ask?token=full-secret", "url.query": "token=query-secret", "url.path": "/ask/alice@example.com",
		"http.request.header.authorization": []any{"Bearer header-secret"}, "http.request.header.cookie": "sid=cookie-secret",
		"http.response.header.set-cookie": "sid=set-cookie-secret", "http.request.body.content": `{"question":"body-secret"}`,
		"client.address": "203.0.113.9", "user_agent.original": "agent-secret",
	})
	span.SetKind(ptrace.SpanKindServer)
	span.SetName(name)
	span.SetParentSpanID(pcommon.SpanID{})
	return res, span
}

func TestRequestSpanKeepsOnlyContractKeys(t *testing.T) {
	res, span := serverSpan("POST /ask?token=name-secret")
	e, ok := evidenceOf(testExtractor(t), res, span, time.Now().UTC())
	if !ok || e.Category != conventions.CategoryRequest {
		t.Fatalf("server span: evidence %v, category %q", ok, e.Category)
	}
	want := map[string]string{conventions.HTTPRequestMethod: "POST", conventions.HTTPRoute: "/ask", conventions.HTTPResponseStatusCode: "200"}
	if !maps.Equal(e.SpanAttributes, want) || e.SpanName != "POST /ask" {
		t.Fatalf("kept %v named %q, want %v named %q", e.SpanAttributes, e.SpanName, want, "POST /ask")
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if row := string(b); strings.Contains(row, "secret") || strings.Contains(row, "203.0.113") || strings.Contains(row, "alice") {
		t.Fatalf("the evidence row carries what it must not: %s", row)
	}
}

func TestRequestPathCategories(t *testing.T) {
	x := testExtractor(t)
	for kind, want := range map[ptrace.SpanKind]string{
		ptrace.SpanKindServer: conventions.CategoryRequest, ptrace.SpanKindProducer: conventions.CategoryQueue,
		ptrace.SpanKindConsumer: conventions.CategoryWorker, ptrace.SpanKindClient: "", ptrace.SpanKindInternal: "",
	} {
		res, span := testSpan(map[string]any{conventions.MessagingDestination: "ask-jobs", conventions.MessagingOperationType: "process"})
		span.SetKind(kind)
		e, ok := evidenceOf(x, res, span, time.Now().UTC())
		if ok != (want != "") || e.Category != want {
			t.Fatalf("%v: evidence %v category %q, want %q", kind, ok, e.Category, want)
		}
		if ok && e.SpanAttributes[conventions.MessagingDestination] != "ask-jobs" {
			t.Fatalf("%v: destination not kept: %v", kind, e.SpanAttributes)
		}
	}
	// A consumer span that queries a database is a database span.
	res, span := testSpan(map[string]any{conventions.DBSystemName: "postgresql"})
	span.SetKind(ptrace.SpanKindConsumer)
	if e, _ := evidenceOf(x, res, span, time.Now().UTC()); e.Category != "db" || e.SpanAttributes != nil {
		t.Fatalf("db span: category %q attributes %v", e.Category, e.SpanAttributes)
	}
}

// The kept attributes round-trip through the ledger, and a redelivery that
// differs only in them is a visible conflict, not silently collapsed.
func TestRequestSpanRoundTripAndConflict(t *testing.T) {
	ctx := context.Background()
	res, span := serverSpan("POST /ask")
	span.SetTraceID(pcommon.TraceID{0xee, 0x11})
	at := time.Now().UTC().Truncate(time.Millisecond)
	e, _ := evidenceOf(testExtractor(t), res, span, at)
	if err := testStore.InsertEvidence(ctx, []ledger.EvidenceSpan{e, e}); err != nil {
		t.Fatal(err)
	}
	got, err := testStore.EvidenceByTrace(ctx, e.TraceID)
	if err != nil || len(got) != 1 || !maps.Equal(got[0].SpanAttributes, e.SpanAttributes) {
		t.Fatalf("read back %v: %+v", err, got)
	}
	other := e
	other.SpanAttributes = map[string]string{conventions.HTTPRequestMethod: "POST", conventions.HTTPRoute: "/ask", conventions.HTTPResponseStatusCode: "500"}
	other.IngestedAt = at.Add(time.Second)
	if err := testStore.InsertEvidence(ctx, []ledger.EvidenceSpan{other}); err != nil {
		t.Fatal(err)
	}
	conflicts, err := testStore.ConflictsByTrace(ctx, e.TraceID)
	if err != nil || len(conflicts) != 1 {
		t.Fatalf("conflicts %v: %+v", err, conflicts)
	}
	if got, _ := testStore.EvidenceByTrace(ctx, e.TraceID); got[0].SpanAttributes[conventions.HTTPResponseStatusCode] != "200" {
		t.Fatalf("the first write must stay: %+v", got[0].SpanAttributes)
	}
}
